"""The CRF path end to end: declaration checks, training, stale/missing/corrupt models, runs."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import aau.fallbacks.crf  # noqa: F401  # registers the "crf" kind
from aau.answers import PathContext
from aau.errors import SpecError, UnitRunError
from aau.fallbacks.crf import (
    CrfField,
    CrfModelCorrupt,
    CrfModelMissing,
    CrfModelStale,
    CrfPath,
    choose_fields,
    open_model,
)
from aau.fallbacks.crf_tagging import TaggedSpan
from aau.fallbacks.crf_training import crf_spec_of, format_report, split_held_out, train_unit
from aau.fallbacks.normalize import NORMALIZERS
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR, annotated_generator

UNITS = UNITS_DIR


GENERATOR = annotated_generator()


def _unit_data(name: str, **block_changes: Any) -> dict[str, Any]:
    """The shipped unit's YAML data with its crf block (declared, or the generator's)."""
    data, _ = read_yaml((UNITS / f"{name}.yaml").read_text(encoding="utf-8"))
    fallbacks = [f for f in data.get("fallbacks", []) if f.get("kind") != "crf"]
    declared = [f for f in data.get("fallbacks", []) if f.get("kind") == "crf"]
    block = dict(declared[0] if declared else GENERATOR.CRF_BLOCKS[name])
    block.update(block_changes)
    data["fallbacks"] = [block, *fallbacks]
    return data


def _write_unit(folder: Path, name: str, *, link: bool = True, **block_changes: Any) -> Path:
    """A copy of the shipped unit in ``folder``, with copies of its examples and model.

    Copies, not links: a unit's files must resolve inside its folder, links included.
    """
    data = _unit_data(name, **block_changes)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    if link:
        block = GENERATOR.CRF_BLOCKS[name]
        model = block["model"]
        for file in (block["examples"], model, f"{model}.json"):
            shutil.copyfile(UNITS / file, folder / file)
    return path


def _context(unit: UnitSpec) -> PathContext:
    return PathContext(unit_name=unit.name, output_schema=unit.output)


# -- a small training set, made here so that training tests take a fraction of a second -------

_MARKERS = [("EUR", "EUR"), ("€", "EUR"), ("$", "USD"), ("USD", "USD"), ("£", "GBP")]


def _small_examples(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    examples: list[dict[str, Any]] = []
    for _ in range(count):
        if rng.random() < 0.2:
            examples.append({"text": f"Meeting in room {rng.randint(1, 99)} on Friday.",
                             "spans": []})  # fmt: skip
            continue
        marker, _ = rng.choice(_MARKERS)
        amount = f"{rng.randint(1, 9)},{rng.randint(100, 999)}.{rng.randint(10, 99)}"
        lead = rng.choice(["Total due:", "Amount payable", "Please pay", "Balance of"])
        ref = f"Invoice {rng.randint(1000, 9999)}."
        text = f"{ref} {lead} {marker} {amount} by {rng.randint(1, 28)} May."
        start = len(f"{ref} {lead} ")
        examples.append({"text": text, "spans": [
            {"start": start, "end": start + len(marker), "label": "CURRENCY", "value": marker},
            {"start": start + len(marker) + 1, "end": start + len(marker) + 1 + len(amount),
             "label": "AMOUNT", "value": amount},
        ]})  # fmt: skip
    return examples


@pytest.fixture
def small_unit(tmp_path: Path) -> UnitSpec:
    """extract_price with a small examples file and no model yet, in a temporary folder."""
    lines = "".join(json.dumps(e) + "\n" for e in _small_examples(60))
    (tmp_path / "small.jsonl").write_text(lines, encoding="utf-8")
    path = _write_unit(
        tmp_path, "extract_price", link=False, examples="small.jsonl", model="small.crf",
        training={"max_iterations": 60},
    )  # fmt: skip
    return UnitSpec.from_file(path)


@pytest.fixture
def trained_unit(small_unit: UnitSpec) -> UnitSpec:
    train_unit(small_unit)
    return small_unit


# -- declaration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "code", "field", "message"),
    [
        ({"fields": {"price": {"label": "AMOUNT", "normalize": "amount"}}}, "S057",
         "fallbacks[0].fields.price", "field 'price' is not in the output schema. "
         "Available: amount, currency"),
        ({"fields": {"amount": {"label": "TOTAL", "normalize": "amount"}}}, "S058",
         "fallbacks[0].fields.amount.label", "label 'TOTAL' is not in labels. "
         "Available: AMOUNT, CURRENCY"),
        ({"fields": {"amount": {"label": "AMOUNT", "normalize": "money"}}}, "S059",
         "fallbacks[0].fields.amount.normalize", "unknown normalizer 'money'. Available: "),
        ({"examples": "nowhere.jsonl"}, "S050", "fallbacks[0].examples",
         "annotated examples file not found"),
    ],
)  # fmt: skip
def test_bad_crf_declaration_fails_at_load_with_its_line(
    tmp_path: Path, changes: dict[str, Any], code: str, field: str, message: str
) -> None:
    path = _write_unit(tmp_path, "extract_price", **changes)
    text = path.read_text(encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(path)
    error = caught.value
    assert (error.spec_code, error.field) == (code, field)
    assert message in error.message
    # The reported line is the one holding the offending key.
    key = field.rsplit(".", 1)[-1]
    assert error.line is not None
    assert text.splitlines()[error.line - 1].lstrip().startswith(f"{key}:")


@pytest.mark.parametrize("labels", [["O"], ["B-AMOUNT"], ["AMOUNT", "AMOUNT"]])
def test_labels_that_cannot_be_bio_labels_are_rejected(tmp_path: Path, labels: list[str]) -> None:
    path = _write_unit(tmp_path, "extract_price", labels=labels)
    with pytest.raises(SpecError, match=r"fallbacks\[0\]\.labels"):
        UnitSpec.from_file(path)


def test_unit_with_a_missing_model_still_loads(tmp_path: Path) -> None:
    path = _write_unit(tmp_path, "extract_price", model="not-trained-yet.crf")
    unit = UnitSpec.from_file(path)
    assert crf_spec_of(unit).model == "not-trained-yet.crf"


# -- choosing spans --------------------------------------------------------------------------


def test_best_span_of_each_label_fills_its_field_normalized() -> None:
    text = "Subtotal EUR 1.000,00, total EUR 1.190,00"
    sub, total = text.index("1.000,00"), text.index("1.190,00")
    spans = [
        TaggedSpan("AMOUNT", sub, sub + 8, (0.55,)),
        TaggedSpan("AMOUNT", total, total + 8, (0.9,)),
        TaggedSpan("CURRENCY", total - 4, total - 1, (0.8,)),
    ]
    fields = {"amount": CrfField(label="AMOUNT", normalize="amount"),
              "currency": CrfField(label="CURRENCY", normalize="currency")}  # fmt: skip
    schema = _unit_data("extract_price")["output"]["properties"]
    values, chosen = choose_fields(text, spans, fields, schema)
    assert values == {"amount": NORMALIZERS["amount"]("1.190,00"),
                      "currency": NORMALIZERS["currency"]("EUR")}  # fmt: skip
    assert chosen["amount"] is spans[1]
    assert chosen["currency"] is spans[2]


def test_span_that_does_not_normalize_or_fit_the_schema_gives_way_to_the_next() -> None:
    text = "amount abc or 42 in Unobtainium-dollars"
    spans = [
        TaggedSpan("AMOUNT", 7, 10, (0.9,)),  # "abc": amount normalizer returns None
        TaggedSpan("AMOUNT", 14, 16, (0.6,)),
        TaggedSpan("CURRENCY", 20, 39, (0.9,)),  # longer than the schema's maxLength 8
    ]
    fields = {"amount": CrfField(label="AMOUNT", normalize="amount"),
              "currency": CrfField(label="CURRENCY", normalize="currency")}  # fmt: skip
    schema = _unit_data("extract_price")["output"]["properties"]
    values, chosen = choose_fields(text, spans, fields, schema)
    assert values == {"amount": 42.0, "currency": None}
    assert set(chosen) == {"amount"}


@pytest.mark.parametrize(
    ("text", "digits", "amount", "span_text"),
    [
        ("Acme agreed to pay €2.4 billion to settle.", "2.4", 2_400_000_000, "2.4 billion"),
        ("a pre-tax profit of £1.2bn for 2023", "1.2", 1_200_000_000, "1.2bn"),
        ("a package of ₹1.5 lakh crore.", "1.5", 1_500_000_000_000, "1.5 lakh crore"),
        ("It costs EUR 5 for the ticket.", "5", 5, "5"),  # "for" is no scale word
    ],
)
def test_an_amount_span_takes_the_scale_word_after_it(
    text: str, digits: str, amount: float, span_text: str
) -> None:
    assert _one_span_chosen(text, digits, "amount", "extract_price") == (amount, span_text)


def _one_span_chosen(text: str, tagged: str, normalize: str, unit: str) -> tuple[Any, str]:
    """The value and span that ``choose_fields`` makes of one tagged span (the field is named
    after its normalizer)."""
    start = text.index(tagged)
    spans = [TaggedSpan("X", start, start + len(tagged), (0.9,))]
    fields = {normalize: CrfField(label="X", normalize=normalize)}
    schema = _unit_data(unit)["output"]["properties"]
    values, chosen = choose_fields(text, spans, fields, schema)
    span = chosen.get(normalize)
    return values[normalize], "" if span is None else text[span.start : span.end]


@pytest.mark.parametrize(
    ("text", "unit"),
    [("The team won 3 in a row, 12 in wide", "in"), ("She turned 30 in March", None)],
)
def test_a_unit_span_that_is_the_preposition_in_is_no_unit(text: str, unit: str | None) -> None:
    spans = [TaggedSpan("UNIT", m.start(), m.end(), (0.9 - 0.1 * i,))
             for i, m in enumerate(re.finditer(r"\bin\b", text))]  # fmt: skip
    fields = {"unit": CrfField(label="UNIT", normalize="unit")}
    schema = _unit_data("extract_quantity")["output"]["properties"]
    values, _ = choose_fields(text, spans, fields, schema)
    assert values["unit"] == unit


@pytest.mark.parametrize(
    ("text", "word", "unit", "span_text"),
    [
        ("98,6 graus f é uma temperatura normal", "graus", "°F", "graus f"),
        ("34.500 metrische ton koperkathodes", "metrische", "t", "metrische ton"),
        ("he drove 80 km per hour today", "km", "km/h", "km per hour"),
        ("a 10 kg box of apples", "kg", "kg", "kg"),  # "kg box" is no other unit
        ("ik ben 1,65m en 70 kilo", "m", "m", "m"),  # "m en" is no minute
        ("a 660 metros cuadrados en las ciudades", "metros", "m2", "metros cuadrados"),
    ],
)
def test_a_unit_span_takes_the_words_that_make_it_another_unit(
    text: str, word: str, unit: str, span_text: str
) -> None:
    assert _one_span_chosen(text, word, "unit", "extract_quantity") == (unit, span_text)


def test_a_scale_word_is_the_numbers_not_a_unit() -> None:
    text = "ongeveer 2,4 miljard liter vliegtuigbrandstof"
    spans = [TaggedSpan("VALUE", 9, 12, (0.9,)), TaggedSpan("UNIT", 13, 20, (0.9,))]
    fields = {"value": CrfField(label="VALUE", normalize="number"),
              "unit": CrfField(label="UNIT", normalize="unit")}  # fmt: skip
    schema = _unit_data("extract_quantity")["output"]["properties"]
    values, _ = choose_fields(text, spans, fields, schema)
    assert values == {"value": 2_400_000_000, "unit": None}  # was 2.4 miles


def test_a_scale_word_after_the_currency_code_is_the_amounts() -> None:
    text = "Eles perderam 75 USD milhões nos últimos três anos."
    spans = [TaggedSpan("AMOUNT", 14, 16, (0.9,)), TaggedSpan("CURRENCY", 17, 20, (0.9,))]
    fields = {"amount": CrfField(label="AMOUNT", normalize="amount"),
              "currency": CrfField(label="CURRENCY", normalize="currency")}  # fmt: skip
    schema = _unit_data("extract_price")["output"]["properties"]
    values, _ = choose_fields(text, spans, fields, schema)
    assert values == {"amount": 75_000_000, "currency": "USD"}  # was 75


# -- training --------------------------------------------------------------------------------


def test_held_out_split_is_deterministic_disjoint_and_sized(small_unit: UnitSpec) -> None:
    from aau.fallbacks.annotated import load_annotated

    spec = crf_spec_of(small_unit)
    examples = load_annotated(spec.examples_path(small_unit), spec.labels)
    train, held = split_held_out(examples, spec.training)
    again_train, again_held = split_held_out(list(reversed(examples)), spec.training)
    assert len(held) == round(len(examples) * spec.training.held_out)
    assert {e.text for e in train} | {e.text for e in held} == {e.text for e in examples}
    assert not {e.text for e in train} & {e.text for e in held}
    assert {e.text for e in again_held} == {e.text for e in held}
    assert {e.text for e in again_train} == {e.text for e in train}


def test_training_reports_scores_and_writes_model_with_record(small_unit: UnitSpec) -> None:
    report = train_unit(small_unit)
    spec = crf_spec_of(small_unit)
    assert (report.n_examples, report.n_train, report.n_held_out) == (60, 48, 12)
    assert [s.label for s in report.span_scores] == ["AMOUNT", "CURRENCY", "all"]
    for score in (*report.span_scores, *report.token_scores):
        assert 0.0 <= score.precision <= 1.0
        assert 0.0 <= score.recall <= 1.0
    assert report.span_scores[-1].gold == sum(s.gold for s in report.span_scores[:-1])
    assert report.trained_on == "all"
    assert report.model_path == spec.model_path(small_unit)
    record = json.loads(spec.record_path(small_unit).read_text(encoding="utf-8"))
    assert record["n_examples"] == 60
    assert record["held_out"]["span_f1"]["all"] == report.span_scores[-1].f1
    table = format_report(report)
    assert "AMOUNT" in table
    assert "held out, spans, exact match" in table
    # This set is easy: a CRF that learns anything finds most totals.
    assert report.span_scores[-1].f1 > 0.8


def test_training_names_the_spans_that_cut_a_token(tmp_path: Path) -> None:
    examples = _small_examples(40)
    cut = {"text": "Invoice 1234. Total due: EURO 9,250.00 by 3 May.", "spans": [
        {"start": 25, "end": 28, "label": "CURRENCY", "value": "EUR"},  # "EUR" of "EURO"
        {"start": 30, "end": 38, "label": "AMOUNT", "value": "9,250.00"},
    ]}  # fmt: skip
    lines = "".join(json.dumps(e) + "\n" for e in [*examples, cut])
    (tmp_path / "cut.jsonl").write_text(lines, encoding="utf-8")
    path = _write_unit(tmp_path, "extract_price", link=False, examples="cut.jsonl",
                       model="cut.crf", training={"max_iterations": 20})  # fmt: skip
    report = train_unit(UnitSpec.from_file(path), write=False)
    assert report.misaligned_spans == 1
    assert report.misaligned == ("line 41: CURRENCY 'EUR' in 'EURO'",)
    assert "line 41: CURRENCY 'EUR' in 'EURO'" in format_report(report)


def test_training_is_deterministic(small_unit: UnitSpec) -> None:
    spec = crf_spec_of(small_unit)
    train_unit(small_unit)
    first = spec.model_path(small_unit).read_bytes()
    train_unit(small_unit)
    assert spec.model_path(small_unit).read_bytes() == first


def test_training_without_write_leaves_no_files(small_unit: UnitSpec) -> None:
    report = train_unit(small_unit, write=False)
    assert report.model_path is None
    assert report.trained_on == "train"
    assert not crf_spec_of(small_unit).model_path(small_unit).exists()


def test_training_a_unit_without_crf_block_is_a_spec_error() -> None:
    unit = UnitSpec.from_file(UNITS / "extract_price.yaml")
    if any(f.kind == "crf" for f in unit.fallbacks):
        unit = unit.model_copy(update={"fallbacks": [f for f in unit.fallbacks if f.kind != "crf"]})
    with pytest.raises(SpecError, match=r"declares no crf fallback.*\[S060\]"):
        train_unit(unit)


# -- model health ----------------------------------------------------------------------------


def _extract_error(unit: UnitSpec, text: str = "Total due: EUR 12.00") -> UnitRunError:
    path = CrfPath(crf_spec_of(unit), unit)
    with pytest.raises(UnitRunError) as caught:
        path.extract(text, _context(unit))
    return caught.value


def test_missing_model_is_a_coded_error_at_extract(small_unit: UnitSpec) -> None:
    error = _extract_error(small_unit)
    assert isinstance(error, CrfModelMissing)
    assert error.code == "crf_model_missing"
    assert "small.crf not found" in str(error)
    assert f"run `aau train {small_unit.source}`" in str(error)


def test_missing_record_is_a_coded_error(trained_unit: UnitSpec) -> None:
    crf_spec_of(trained_unit).record_path(trained_unit).unlink()
    error = _extract_error(trained_unit)
    assert isinstance(error, CrfModelMissing)
    assert "training record" in str(error)


def test_changed_examples_make_the_model_stale(trained_unit: UnitSpec) -> None:
    spec = crf_spec_of(trained_unit)
    path = CrfPath(spec, trained_unit)
    assert path.extract("Total due: EUR 12.00", _context(trained_unit)).output
    with spec.examples_path(trained_unit).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"text": "Nothing due.", "spans": []}) + "\n")
    error = _extract_error(trained_unit)
    assert isinstance(error, CrfModelStale)
    assert error.code == "crf_model_stale"
    assert "is stale: the annotated examples" in str(error)
    assert str(error).endswith(f"since training; run `aau train {trained_unit.source}`")


def test_changed_training_config_makes_the_model_stale(trained_unit: UnitSpec) -> None:
    spec = crf_spec_of(trained_unit)
    changed = spec.model_copy(update={"training": spec.training.model_copy(update={"c1": 0.5})})
    unit = trained_unit.model_copy(update={"fallbacks": [changed, *trained_unit.fallbacks[1:]]})
    error = _extract_error(unit)
    assert isinstance(error, CrfModelStale)
    assert "crf labels, features or training settings changed" in str(error)


def test_changed_fields_do_not_make_the_model_stale(trained_unit: UnitSpec) -> None:
    spec = crf_spec_of(trained_unit)
    changed = spec.model_copy(update={"fields": {"amount": spec.fields["amount"]}})
    assert open_model(changed, trained_unit).tagger.labels()


def test_other_feature_recipe_makes_the_model_stale(trained_unit: UnitSpec) -> None:
    record_path = crf_spec_of(trained_unit).record_path(trained_unit)
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["feature_version"] = 0
    record_path.write_text(json.dumps(record), encoding="utf-8")
    error = _extract_error(trained_unit)
    assert isinstance(error, CrfModelStale)
    assert "feature recipe 0" in str(error)


def test_truncated_model_is_corrupt_not_a_crash(trained_unit: UnitSpec) -> None:
    model = crf_spec_of(trained_unit).model_path(trained_unit)
    model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])
    error = _extract_error(trained_unit)
    assert isinstance(error, CrfModelCorrupt)
    assert error.code == "crf_model_corrupt"
    assert "does not match its training record" in str(error)


def test_garbage_model_with_matching_record_is_corrupt(trained_unit: UnitSpec) -> None:
    import hashlib

    spec = crf_spec_of(trained_unit)
    garbage = b"not a crfsuite model at all"
    spec.model_path(trained_unit).write_bytes(garbage)
    record = json.loads(spec.record_path(trained_unit).read_text(encoding="utf-8"))
    record["model_sha256"] = hashlib.sha256(garbage).hexdigest()
    spec.record_path(trained_unit).write_text(json.dumps(record), encoding="utf-8")
    error = _extract_error(trained_unit)
    assert isinstance(error, CrfModelCorrupt)
    assert "not a crfsuite model" in str(error)


def test_unreadable_record_is_corrupt(trained_unit: UnitSpec) -> None:
    crf_spec_of(trained_unit).record_path(trained_unit).write_text("{oops", encoding="utf-8")
    assert isinstance(_extract_error(trained_unit), CrfModelCorrupt)


# -- the shipped units -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["extract_price", "extract_date", "extract_quantity"])
def test_shipped_examples_are_what_the_generator_makes(name: str) -> None:
    shipped = (UNITS / f"{name}.annotated.jsonl").read_text(encoding="utf-8")
    assert shipped == GENERATOR.to_jsonl(GENERATOR.generate(name))
    assert len(shipped.splitlines()) >= 300


@pytest.mark.parametrize("name", ["extract_price", "extract_date", "extract_quantity"])
def test_shipped_models_are_current(tmp_path: Path, name: str) -> None:
    unit = UnitSpec.from_file(_write_unit(tmp_path, name))
    assert open_model(crf_spec_of(unit), unit).tagger.labels()


def test_extract_price_answers_through_the_crf(tmp_path: Path) -> None:
    unit = UnitSpec.from_file(_write_unit(tmp_path, "extract_price"))
    path = CrfPath(crf_spec_of(unit), unit)
    text = (
        "Hello Ms Keller,\nplease find attached invoice RE-2024/0117 dated 12.03.2024. "
        "Net 1.050,42 EUR plus 19 % VAT 199,58 EUR; the total amount of 1.250,00 EUR is due "
        "within 14 days. Questions: +49 30 1234567."
    )
    answer = path.extract(text, _context(unit))
    jsonschema.validate(answer.output, unit.output)
    assert set(answer.spans) == {"amount", "currency"}
    start, end = answer.spans["amount"]
    assert answer.output["amount"] == NORMALIZERS["amount"](text[start:end])
    assert text[start:end] in {"1.050,42", "199,58", "1.250,00"}
    start, end = answer.spans["currency"]
    assert answer.output["currency"] == NORMALIZERS["currency"](text[start:end])
    assert 0.0 < answer.confidence <= 1.0
    assert answer.signals["crf_spans"] == 2.0
    assert answer.signals["crf_marginal_min"] <= answer.signals["crf_marginal_mean"]


@pytest.mark.parametrize("name", ["extract_price", "extract_date", "extract_quantity"])
def test_crf_answers_each_units_own_few_shot_examples(tmp_path: Path, name: str) -> None:
    unit = UnitSpec.from_file(_write_unit(tmp_path, name))
    path = CrfPath(crf_spec_of(unit), unit)
    for example in unit.prompt.examples:
        answer = path.extract(example.input, _context(unit))
        jsonschema.validate(answer.output, unit.output)
        assert answer.output == example.output, example.input


def test_no_value_is_answered_with_the_all_o_probability(tmp_path: Path) -> None:
    unit = UnitSpec.from_file(_write_unit(tmp_path, "extract_price"))
    answer = CrfPath(crf_spec_of(unit), unit).extract("See you next week.", _context(unit))
    assert answer.output == {"amount": None, "currency": None}
    assert answer.spans == {}
    assert answer.signals["crf_spans"] == 0.0
    assert 0.0 < answer.confidence <= answer.signals["crf_marginal_min"] <= 1.0
    empty = CrfPath(crf_spec_of(unit), unit).extract("", _context(unit))
    assert empty.output == {"amount": None, "currency": None}


def test_a_field_left_empty_beside_filled_ones_weighs_on_the_confidence() -> None:
    """{value: 2, unit: null} claims that no unit is written: a unit span the tagger saw but
    could not normalize ("quarters" is no notice unit of this unit's table) says otherwise."""
    unit = UnitSpec.from_file(UNITS / "extract_notice_period.yaml")  # its shipped model, read
    path = CrfPath(crf_spec_of(unit), unit)
    whole = path.extract("Termination on 12 weeks notice.", _context(unit))
    assert whole.output == {"value": 12, "unit": "week"}
    partial = path.extract("Notice of 2 quarters is required before termination.", _context(unit))
    assert partial.output == {"value": 2, "unit": None}
    assert partial.signals["crf_marginal_mean"] > 0.8  # the value span alone is sure of itself
    assert partial.confidence < 0.3 < 0.9 < whole.confidence


def test_the_absence_factor_reads_each_empty_fields_label_once() -> None:
    from aau.fallbacks.crf import _absence
    from aau.fallbacks.crf_tagging import Tagging

    fields = {"value": CrfField(label="VALUE", normalize="integer"),
              "unit": CrfField(label="UNIT"), "unit_again": CrfField(label="UNIT")}  # fmt: skip
    value_span = TaggedSpan("VALUE", 0, 1, (0.9,))
    tagging = Tagging((value_span,), 0.0, (0.1, 0.3), {"VALUE": (0.9, 0.0), "UNIT": (0.1, 0.7)})
    empty_unit = {"value": 2, "unit": None, "unit_again": None}
    assert _absence(tagging, fields, empty_unit, {"value": value_span}) == pytest.approx(0.3)
    filled = {"value": 2, "unit": "day", "unit_again": "day"}
    unit_span = TaggedSpan("UNIT", 2, 3, (0.7,))
    chosen = {"value": value_span, "unit": unit_span, "unit_again": unit_span}
    assert _absence(tagging, fields, filled, chosen) == 1.0
    # A label that fills another field is no evidence against this one.
    one_filled = {"value": 2, "unit": "day", "unit_again": None}
    assert _absence(tagging, fields, one_filled, {"value": value_span, "unit": unit_span}) == 1.0


@pytest.mark.parametrize(
    ("text", "digits", "amount", "span_text"),
    [
        # the tagger labels the whole part; the cents after the marker belong to it
        ("Hans bidrag var 5 euro och 50 cent", "5", 5.5, "5 euro och 50 cent"),
        ("1 USD et 23 centimes", "1", 1.23, "1 USD et 23 centimes"),
        ("paid 100 lira 75 kuruş today", "100", 100.75, "100 lira 75 kuruş"),
        # ... but not an amount that has its decimals, nor the next amount of a list
        ("5.50 EUR 20 cents", "5.50", 5.5, "5.50"),
        ("5 EUR, 23 EUR", "5", 5, "5"),
        ("EUR 5 and 3 items", "5", 5, "5"),
    ],
)
def test_an_amount_span_takes_the_minor_units_after_its_marker(
    text: str, digits: str, amount: float, span_text: str
) -> None:
    assert _one_span_chosen(text, digits, "amount", "extract_price") == (amount, span_text)
