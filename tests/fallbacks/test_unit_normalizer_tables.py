"""A unit's own normalizer tables: its paths answer with its enum, in the words of three languages.

The newcomer's ``extract_notice_period`` (``tests/spec/notice_period_unit.py``) maps English,
French and German words to ``day|week|month|year`` in its YAML; the heuristic and a CRF trained
here on a small annotated file answer with the enum's values, a whole run (calibrator
included) delivers them, and the calibrator compares two paths' answers through the table.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import aau
from aau.answers import PathContext
from aau.calibration.features import _normalized, output_normalizers, same_output
from aau.fallbacks.annotated import load_annotated
from aau.fallbacks.crf import CrfPath
from aau.fallbacks.crf_training import crf_spec_of, gold_output, train_unit
from aau.fallbacks.heuristic import HeuristicPath
from aau.fallbacks.normalize import TableNormalizer, normalizer_for, table_normalizer
from aau.spec.model import UnitSpec
from aau.spec.sections import NormalizerTable
from tests.spec.notice_period_unit import NOTICE_PERIOD_YAML, TEXTS, replace_once, write_notice_unit


@pytest.fixture
def notice_unit(tmp_path: Path) -> UnitSpec:
    return UnitSpec.from_file(write_notice_unit(tmp_path))


def _context(unit: UnitSpec) -> PathContext:
    return PathContext(unit_name=unit.name, output_schema=unit.output)


def _heuristic(unit: UnitSpec) -> HeuristicPath:
    path = unit.fallbacks[-1].build(unit)
    assert isinstance(path, HeuristicPath)
    return path


# -- the table ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [("months", "month"), ("Monate", "month"), ("  mois ", "month"), ("JOURS", "day"),
     ("Wochen", "week"), ("années", "year"), ("fortnight", None), ("", None)],
)  # fmt: skip
def test_a_table_maps_words_casefolded_after_its_base(
    notice_unit: UnitSpec, word: str, expected: str | None
) -> None:
    assert normalizer_for("period_unit", notice_unit)(word) == expected


def test_unknown_keep_gives_the_base_value_and_case_sensitive_matches_exactly() -> None:
    keep = TableNormalizer("t", NormalizerTable(map={"mois": "month"}, unknown="keep"))
    assert keep("  mois ") == "month"
    assert keep("  fortnight  now ") == "fortnight now"  # the base, text, collapsed it
    exact = TableNormalizer("t", NormalizerTable(map={"EUR": "EUR", "Euro": "EUR"},
                                                 case_sensitive=True))  # fmt: skip
    assert exact("Euro") == "EUR"
    assert exact("euro") is None


def test_a_table_looks_up_a_non_text_base_value_by_its_json_and_maps_to_any_scalar() -> None:
    table = TableNormalizer(
        "t", NormalizerTable(base="number", map={"12": "dozen", "1": True, "2": 2.5, "3": None})
    )
    assert table("12") == "dozen"
    assert table("1") is True
    assert table("2") == 2.5
    assert table("3") is None
    assert table("4") is None


def test_a_table_normalizer_is_a_str_key_compiled_once_immutable_and_picklable(
    notice_unit: UnitSpec, tmp_path: Path
) -> None:
    first = normalizer_for("period_unit", notice_unit)
    assert first is normalizer_for("period_unit", notice_unit)  # compiled once per declaration
    assert isinstance(first, TableNormalizer)
    assert isinstance(first, str)
    assert first.startswith("table:period_unit:")
    # The same table in another unit is the same key; another table under that name is not.
    again = UnitSpec.from_file(write_notice_unit(_mkdir(tmp_path / "again")))
    assert normalizer_for("period_unit", again) == first
    changed = replace_once(NOTICE_PERIOD_YAML, "      mois: month\n", "      mois: year\n")
    other = UnitSpec.from_file(write_notice_unit(_mkdir(tmp_path / "other"), changed))
    assert normalizer_for("period_unit", other) != first
    assert hash(normalizer_for("period_unit", other)) != hash(first)
    with pytest.raises(AttributeError, match="immutable"):
        first.name = "x"  # type: ignore[misc]
    restored = pickle.loads(pickle.dumps(first))
    assert restored == first
    assert restored("Monate") == "month"
    assert copy.deepcopy(first) is first


def _mkdir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_large_table_compiles_and_looks_up_quickly() -> None:
    words = {f"word{i}": f"value{i % 7}" for i in range(10_000)}
    began = time.perf_counter()
    table = table_normalizer("big", NormalizerTable(map=words))
    assert table("WORD9999") == "value3"
    assert table("word10000") is None
    assert time.perf_counter() - began < 2.0


# -- the heuristic path ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value", "unit"), TEXTS)
def test_the_heuristic_answers_with_the_enum_in_three_languages(
    notice_unit: UnitSpec, text: str, value: int, unit: str
) -> None:
    answer = _heuristic(notice_unit).extract(text, _context(notice_unit))
    assert answer.output == {"value": value, "unit": unit}
    jsonschema.validate(answer.output, notice_unit.output)


def test_a_word_the_table_lacks_gives_no_unit(notice_unit: UnitSpec) -> None:
    answer = _heuristic(notice_unit).extract("Room 12 fortnights", _context(notice_unit))
    assert answer.output == {"value": 12, "unit": None}


def test_a_run_without_a_model_delivers_the_enum_with_the_calibrator(
    notice_unit: UnitSpec,
) -> None:
    pipeline = aau.Pipeline([notice_unit], engine=False)
    for text, value, unit in TEXTS[:3]:
        result = pipeline.run(text)["extract_notice_period"]
        assert result.output == {"value": value, "unit": unit}, text
        assert result.path == "heuristic"
        assert result.error is None
        assert 0 < result.confidence <= 1


# -- the calibrator's comparisons ----------------------------------------------------------------


def test_the_calibrator_compares_answers_through_the_unit_table(notice_unit: UnitSpec) -> None:
    normalizers = output_normalizers(notice_unit)
    assert normalizers["value"] == "number"
    assert isinstance(normalizers["unit"], TableNormalizer)
    assert same_output({"value": 3, "unit": "Monate"}, {"value": 3, "unit": "month"}, normalizers)
    assert same_output({"value": 2, "unit": "mois"}, {"value": 2.0, "unit": "months"}, normalizers)
    assert not same_output({"value": 3, "unit": "jours"}, {"value": 3, "unit": "month"},
                           normalizers)  # fmt: skip
    # Without the table the words differ.
    assert not same_output({"value": 3, "unit": "Monate"}, {"value": 3, "unit": "month"})


def test_two_units_tables_of_one_name_never_share_a_cached_reading(tmp_path: Path) -> None:
    first = UnitSpec.from_file(write_notice_unit(_mkdir(tmp_path / "a")))
    changed = replace_once(NOTICE_PERIOD_YAML, "      mois: month\n", "      mois: year\n")
    second = UnitSpec.from_file(write_notice_unit(_mkdir(tmp_path / "b"), changed))
    assert _normalized(output_normalizers(first)["unit"], "mois") == "month"
    assert _normalized(output_normalizers(second)["unit"], "mois") == "year"


# -- the CRF path, trained here on a small annotated file ------------------------------------

_WORDS = {
    "day": ["days", "jours", "Tage"], "week": ["weeks", "semaines", "Wochen"],
    "month": ["months", "mois", "Monate"], "year": ["years", "ans", "Jahre"],
}  # fmt: skip
_LEADS = ["Notice period:", "Préavis :", "Kündigungsfrist:", "Terminate with", "Délai de"]


def _notice_examples(count: int, seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    examples: list[dict[str, Any]] = []
    for _ in range(count):
        if rng.random() < 0.15:
            examples.append({"text": f"Invoice {rng.randint(100, 999)} is attached.", "spans": []})
            continue
        value = str(rng.randint(1, 90))
        word = rng.choice(_WORDS[rng.choice(list(_WORDS))])
        lead = rng.choice(_LEADS)
        text = f"{lead} {value} {word}."
        start = len(lead) + 1
        examples.append({"text": text, "spans": [
            {"start": start, "end": start + len(value), "label": "VALUE", "value": value},
            {"start": start + len(value) + 1, "end": start + len(value) + 1 + len(word),
             "label": "UNIT", "value": word},
        ]})  # fmt: skip
    return examples


_CRF_BLOCK = """\
fallbacks:
  - kind: crf
    labels: [VALUE, UNIT]
    fields:
      value: {label: VALUE, normalize: number}
      unit: {label: UNIT, normalize: period_unit}
    examples: notice.annotated.jsonl
    model: notice.crf
    training: {max_iterations: 60}
"""


def test_a_crf_trained_on_a_small_annotated_file_answers_with_the_enum(tmp_path: Path) -> None:
    lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in _notice_examples(80))
    (tmp_path / "notice.annotated.jsonl").write_text(lines, encoding="utf-8")
    unit = UnitSpec.from_file(
        write_notice_unit(tmp_path, replace_once(NOTICE_PERIOD_YAML, "fallbacks:\n", _CRF_BLOCK))
    )
    spec = crf_spec_of(unit)
    example = next(e for e in load_annotated(spec.examples_path(unit), spec.labels) if e.spans)
    word = next(example.text[s.start : s.end] for s in example.spans if s.label == "UNIT")
    meant = next(unit for unit, words in _WORDS.items() if word in words)
    assert gold_output(example, spec, unit)["unit"] == meant  # the gold answers read the table
    report = train_unit(unit)
    assert report.field_accuracy["unit"] >= 0.9
    path = unit.fallbacks[0].build(unit)
    assert isinstance(path, CrfPath)
    for text, value, expected in [("Kündigungsfrist: 4 Wochen.", 4, "week"),
                                  ("Préavis : 3 mois.", 3, "month"),
                                  ("Notice period: 10 days.", 10, "day")]:  # fmt: skip
        answer = path.extract(text, _context(unit))
        assert answer.output == {"value": value, "unit": expected}, text
        jsonschema.validate(answer.output, unit.output)
