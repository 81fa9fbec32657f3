"""The records path: assembly by layout, grounding keys, "no records", models, hostile units."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import aau
from aau.answers import PathContext
from aau.errors import SpecError
from aau.fallbacks.crf import CrfModelMissing, CrfModelStale
from aau.fallbacks.crf_tagging import TaggedSpan
from aau.fallbacks.records import (
    RecordsFallback,
    assemble,
    list_property,
    normalized_text,
    records_equal,
)
from aau.ingest import Document
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec

UNITS_DIR = Path(__file__).resolve().parents[2] / "units"
UNIT = UNITS_DIR / "extract_penalty_clauses.yaml"
FILES = ("annotated.jsonl", "records.crf", "records.crf.json")


def _values(text: str, *pieces: tuple[str, str, Any]) -> list[tuple[str, Any, TaggedSpan]]:
    """``(field, surface, value)`` -> the values ``assemble`` takes, each span found in order."""
    out, position = [], 0
    for field, surface, value in pieces:
        start = text.index(surface, position)
        position = start + len(surface)
        out.append((field, value, TaggedSpan(field.upper(), start, position, (0.9,))))
    return out


def _records(text: str, *pieces: tuple[str, str, Any]) -> list[dict[str, Any]]:
    return [r.values for r in assemble(text, _values(text, *pieces), "amount")]


# -- assembly --------------------------------------------------------------------------------


def test_fields_in_one_table_row_form_one_record() -> None:
    text = (
        "| Event | Penalty | Cur. |\n| Late delivery | 500 | EUR |\n"
        "| Missed milestone | 900 | USD |"
    )
    records = _records(
        text,
        ("trigger", "Late delivery", "Late delivery"), ("amount", "500", 500.0),
        ("currency", "EUR", "EUR"), ("trigger", "Missed milestone", "Missed milestone"),
        ("amount", "900", 900.0), ("currency", "USD", "USD"),
    )  # fmt: skip
    assert records == [
        {"amount": 500.0, "trigger": "Late delivery", "currency": "EUR"},
        {"amount": 900.0, "trigger": "Missed milestone", "currency": "USD"},
    ]


def test_a_currency_in_a_table_header_fills_each_row() -> None:
    text = "Event\tPenalty (CHF)\nLate handover\t500\nDamage\t1,500"
    records = _records(
        text,
        ("currency", "CHF", "CHF"), ("trigger", "Late handover", "Late handover"),
        ("amount", "500", 500.0), ("trigger", "Damage", "Damage"), ("amount", "1,500", 1500.0),
    )  # fmt: skip
    assert [(r["amount"], r.get("currency"), r["trigger"]) for r in records] == [
        (500.0, "CHF", "Late handover"),
        (1500.0, "CHF", "Damage"),
    ]


def test_list_lines_without_sentence_punctuation_keep_their_fields() -> None:
    # One "sentence" over three lines would mix the records; each line is its own.
    text = "Penalties\nLate delivery - EUR 750 per day\nMissing documents - USD 300"
    records = _records(
        text,
        ("trigger", "Late delivery", "Late delivery"), ("currency", "EUR", "EUR"),
        ("amount", "750", 750.0), ("trigger", "Missing documents", "Missing documents"),
        ("currency", "USD", "USD"), ("amount", "300", 300.0),
    )  # fmt: skip
    assert records == [
        {"amount": 750.0, "trigger": "Late delivery", "currency": "EUR"},
        {"amount": 300.0, "trigger": "Missing documents", "currency": "USD"},
    ]


def test_a_trigger_joins_the_amount_of_its_own_sentence() -> None:
    text = (
        "The Supplier shall pay EUR 500 per day of delay. A breach of confidentiality costs "
        "USD 9,000. The price is fixed."
    )
    records = _records(
        text,
        ("currency", "EUR", "EUR"), ("amount", "500", 500.0),
        ("trigger", "per day of delay", "per day of delay"),
        ("trigger", "breach of confidentiality", "breach of confidentiality"),
        ("currency", "USD", "USD"), ("amount", "9,000", 9000.0),
    )  # fmt: skip
    assert records == [
        {"amount": 500.0, "currency": "EUR", "trigger": "per day of delay"},
        {"amount": 9000.0, "trigger": "breach of confidentiality", "currency": "USD"},
    ]


def test_a_sentence_wrapped_over_lines_stays_one_record() -> None:
    text = (
        "If the works are late, the Contractor shall pay liquidated damages of\n"
        "GBP 2,500 for each week of delay."
    )
    records = _records(
        text,
        ("currency", "GBP", "GBP"), ("amount", "2,500", 2500.0),
        ("trigger", "each week of delay", "each week of delay"),
    )  # fmt: skip
    assert records == [{"amount": 2500.0, "currency": "GBP", "trigger": "each week of delay"}]


def test_clauses_split_by_a_semicolon_keep_their_own_trigger() -> None:
    text = "Penalties: EUR 500 per day of delay; EUR 1,000 for each missed milestone."
    records = _records(
        text,
        ("currency", "EUR", "EUR"), ("amount", "500", 500.0),
        ("trigger", "per day of delay", "per day of delay"), ("currency", "EUR", "EUR"),
        ("amount", "1,000", 1000.0), ("trigger", "each missed milestone", "each missed milestone"),
    )  # fmt: skip
    assert [r["trigger"] for r in records] == ["per day of delay", "each missed milestone"]


def test_a_field_far_from_every_anchor_is_dropped_and_records_are_bounded() -> None:
    text = "Penalty: EUR 5.\n\nAll amounts are in USD."
    records = _records(text, ("amount", "5", 5.0), ("currency", "USD", "USD"))
    assert records == [{"amount": 5.0}]
    many = " ".join(f"EUR {n}." for n in range(30))
    values = [("amount", float(n), TaggedSpan("AMOUNT", many.index(f"EUR {n}.") + 4,
                                              many.index(f"EUR {n}.") + 4 + len(str(n)), (0.9,)))
              for n in range(30)]  # fmt: skip
    assert len(assemble(many, values, "amount", max_records=7)) == 7


# -- the path on the shipped unit ---------------------------------------------------------


@pytest.fixture(scope="module")
def unit() -> UnitSpec:
    return UnitSpec.from_file(UNIT)


def _run(unit: UnitSpec, text: str) -> aau.PathAnswer:
    path = unit.fallbacks[0].build(unit)
    return path.extract(text, PathContext(unit.name, unit.output))


def test_each_record_is_grounded_under_its_own_key(unit: UnitSpec) -> None:
    text = (
        "12.1 The Supplier shall pay a penalty of EUR 500 per day of delay. "
        "12.2 In the event of a breach of the confidentiality obligations, the Supplier shall "
        "pay liquidated damages of USD 20,000."
    )
    answer = _run(unit, text)
    jsonschema.validate(answer.output, unit.output)
    clauses = answer.output["clauses"]
    assert [(c["amount"], c["currency"]) for c in clauses] == [(500.0, "EUR"), (20000.0, "USD")]
    shown = {key: text[a:b] for key, (a, b) in answer.spans.items()}
    assert shown["clauses[0].amount"] == "500"
    assert shown["clauses[0].currency"] == "EUR"
    assert shown["clauses[1].amount"] == "20,000"
    assert shown["clauses[1].currency"] == "USD"
    assert answer.signals["records"] == 2.0
    assert 0.0 < answer.signals["record_score_min"] <= answer.signals["record_score_mean"] <= 1.0
    assert 0.0 < answer.confidence <= 1.0


@pytest.mark.parametrize(
    "text",
    [
        "Invoices are payable within 30 days. The contract price is EUR 84,300.",
        "Either party may terminate this Agreement with three months' notice.",
        "   ",
    ],
)
def test_a_text_without_penalties_answers_an_empty_list(unit: UnitSpec, text: str) -> None:
    answer = _run(unit, text)
    assert answer.output == {"clauses": []}
    assert answer.spans == {}
    assert answer.signals["records"] == 0.0
    assert 0.0 < answer.confidence <= 1.0


def test_flooded_text_gives_a_schema_valid_bounded_list(unit: UnitSpec) -> None:
    text = " ".join(f"The Supplier shall pay a penalty of EUR {n}00 per day of delay." for n in
                    range(1, 40))  # fmt: skip
    answer = _run(unit, text)
    jsonschema.validate(answer.output, unit.output)
    assert len(answer.output["clauses"]) == 10  # the list's maxItems


def test_a_pipeline_without_a_model_runs_the_records_path_with_dotted_sources(
    unit: UnitSpec,
) -> None:
    text = "Late delivery: the Seller shall pay EUR 750 per day of delay."
    result = aau.Pipeline([unit], engine=False).run(Document.from_text(text)).units[unit.name]
    assert result.path == "records"
    assert result.output is not None
    assert result.output["clauses"][0]["amount"] == 750.0
    source = result.sources["clauses[0].amount"]
    assert text[source.start : source.end] == "750"


# -- model files ---------------------------------------------------------------------------


def _copy(folder: Path, **block: Any) -> Path:
    data, _ = read_yaml(UNIT.read_text(encoding="utf-8"))
    data["fallbacks"][0].update(block)
    path = folder / UNIT.name
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for suffix in FILES:
        shutil.copy(UNITS_DIR / f"{UNIT.stem}.{suffix}", folder / f"{UNIT.stem}.{suffix}")
    return path


def test_the_shipped_model_is_current(unit: UnitSpec) -> None:
    assert unit.fallbacks[0].data_problems(unit) == []


def test_changed_examples_make_the_model_stale(tmp_path: Path) -> None:
    copy = UnitSpec.from_file(_copy(tmp_path))
    examples = tmp_path / f"{UNIT.stem}.annotated.jsonl"
    examples.write_text(examples.read_text(encoding="utf-8") + json.dumps(
        {"text": "The price is EUR 5.", "spans": []}) + "\n", encoding="utf-8")  # fmt: skip
    problems = copy.fallbacks[0].data_problems(copy)
    assert [p.check for p in problems] == ["S089"]
    assert "annotated examples" in str(problems[0])
    assert "aau train" in str(problems[0])
    with pytest.raises(CrfModelStale):
        _run(copy, "A penalty of EUR 5 per day of delay.")


def test_a_missing_model_is_flagged_and_the_path_refuses(tmp_path: Path) -> None:
    copy = UnitSpec.from_file(_copy(tmp_path))
    (tmp_path / f"{UNIT.stem}.records.crf").unlink()
    assert [p.check for p in copy.fallbacks[0].data_problems(copy)] == ["S088"]
    with pytest.raises(CrfModelMissing):
        _run(copy, "A penalty of EUR 5 per day of delay.")


@pytest.mark.slow
def test_train_writes_a_current_model_and_reports_record_scores(tmp_path: Path) -> None:
    copy = UnitSpec.from_file(_copy(tmp_path))
    examples = tmp_path / f"{UNIT.stem}.annotated.jsonl"
    lines = examples.read_text(encoding="utf-8").splitlines()[:120]
    examples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = copy.fallbacks[0].train(copy)
    assert report is not None
    assert "record_f1" in report
    assert copy.fallbacks[0].data_problems(copy) == []


# -- hostile or mistaken declarations ----------------------------------------------------


def _load(folder: Path, *, unit: dict[str, Any] | None = None, **block: Any) -> UnitSpec:
    path = _copy(folder, **block)
    if unit:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data.update(unit)
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False),
                        encoding="utf-8")  # fmt: skip
    return UnitSpec.from_file(path)


@pytest.mark.parametrize(
    ("block", "check", "words"),
    [
        ({"list": "items"}, "S081", "list 'items' is not an array-of-objects property"),
        ({"fields": {"amount": {"label": "AMOUNT", "normalize": "amount"},
                     "penalty": {"label": "AMOUNT"}}}, "S082", "field 'penalty' is not in"),
        ({"fields": {"amount": {"label": "SUM", "normalize": "amount"}}}, "S083", "label 'SUM'"),
        ({"fields": {"amount": {"label": "AMOUNT", "normalize": "rot13"}}}, "S084",
         "unknown normalizer 'rot13'"),
        ({"labels": ["AMOUNT", "B-CURRENCY", "TRIGGER"]}, "S085", "cannot be a BIO label"),
        ({"labels": ["AMOUNT", "AMOUNT", "TRIGGER"]}, "S085", "listed twice"),
        ({"anchor": "penalty"}, "S086", "anchor 'penalty' is not one of fields"),
        ({"model": "../../stolen.crf"}, "S061", "outside"),
        ({"examples": "/etc/passwd"}, "S061", "absolute path"),
    ],
)  # fmt: skip
def test_a_mistaken_declaration_fails_at_load_with_its_code(
    tmp_path: Path, block: dict[str, Any], check: str, words: str
) -> None:
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, **block)
    assert caught.value.check == check
    assert words in str(caught.value)


def test_a_field_that_may_stay_empty_must_accept_null(tmp_path: Path) -> None:
    data, _ = read_yaml(UNIT.read_text(encoding="utf-8"))
    output = data["output"]
    output["properties"]["clauses"]["items"]["properties"]["trigger"]["type"] = "string"
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, unit={"output": output})
    assert caught.value.check == "S087"
    assert "'trigger' must accept null" in str(caught.value)


def test_a_records_fallback_in_an_extract_unit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, unit={"kind": "extract"})
    assert caught.value.check == "S080"


def test_the_list_property_is_read_by_its_alias(unit: UnitSpec) -> None:
    spec = unit.fallbacks[0]
    assert isinstance(spec, RecordsFallback)
    assert spec.list_name == "clauses"
    assert list_property(unit.output, "clauses") is not None
    assert list_property(unit.output, "nothing") is None


# -- comparing records ---------------------------------------------------------------------


def test_records_compare_numbers_as_floats_and_texts_normalized_in_any_order() -> None:
    item = {"properties": {"amount": {}, "currency": {}, "trigger": {}}}
    expected = [{"amount": 500, "currency": "EUR", "trigger": "per day of delay"},
                {"amount": 9000, "currency": "USD", "trigger": None}]  # fmt: skip
    got = [{"amount": 9000.0, "currency": "USD", "trigger": None},
           {"amount": 500.0, "currency": "EUR", "trigger": "For each day of delay."}]  # fmt: skip
    assert normalized_text("For each day of delay.") == "day of delay"
    assert records_equal(expected, got, item)  # where the phrase starts is not what it says
    assert not records_equal(expected, [got[0], {**got[1], "trigger": "each week of delay"}], item)
    assert not records_equal(expected, got[:1], item)
    assert not records_equal(expected, [got[0], {**got[1], "amount": 501.0}], item)
    assert records_equal([], [], item)
