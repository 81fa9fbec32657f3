"""The annotated-example format: good files load, each bad line is reported where it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aau.errors import SpecError
from aau.fallbacks.annotated import check_annotated, load_annotated

LABELS = ["AMOUNT", "CURRENCY"]
GOOD = {"text": "Total: EUR 5", "spans": [
    {"start": 7, "end": 10, "label": "CURRENCY", "value": "EUR"},
    {"start": 11, "end": 12, "label": "AMOUNT"},
]}  # fmt: skip


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "unit.annotated.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_good_file_loads_with_sorted_spans_and_line_numbers(tmp_path: Path) -> None:
    empty = {"text": "No price here.", "spans": []}
    path = _write(tmp_path, [json.dumps(GOOD), "", json.dumps(empty)])
    examples = load_annotated(path, LABELS)
    assert [e.line for e in examples] == [1, 3]
    first = examples[0]
    assert [(s.start, s.end, s.label) for s in first.spans] == [(7, 10, "CURRENCY"),
                                                                (11, 12, "AMOUNT")]  # fmt: skip
    assert examples[1].spans == ()
    assert check_annotated(path, LABELS) == []


def _bad(span: dict[str, object], text: str = "Total: EUR 5") -> str:
    return json.dumps({"text": text, "spans": [span]})


BAD_LINES = [
    ("not json", "{text: 1}", None, "S051", "not JSON"),
    ("not an object", "[1, 2]", None, "S051", "expected a JSON object"),
    ("text missing", json.dumps({"spans": []}), "text", "S051", "must be a string"),
    ("span past the end", _bad({"start": 11, "end": 40, "label": "AMOUNT"}), "spans[0]", "S052",
     "outside the text"),
    ("empty span", _bad({"start": 4, "end": 4, "label": "AMOUNT"}), "spans[0]", "S052",
     "outside the text"),
    ("negative start", _bad({"start": -1, "end": 4, "label": "AMOUNT"}), "spans[0]", "S052",
     "outside the text"),
    ("unknown label", _bad({"start": 11, "end": 12, "label": "PRICE"}), "spans[0].label", "S054",
     "unknown label 'PRICE'. Available: AMOUNT, CURRENCY"),
    ("value differs", _bad({"start": 11, "end": 12, "label": "AMOUNT", "value": "6"}),
     "spans[0].value", "S055", "value '6' differs from the text at 11..12: '5'"),
    ("offsets not integers", _bad({"start": "11", "end": 12, "label": "AMOUNT"}), "spans[0]",
     "S051", "start and end must be integers"),
    ("overlap", json.dumps({"text": "EUR 1,250", "spans": [
        {"start": 0, "end": 5, "label": "CURRENCY"}, {"start": 4, "end": 9, "label": "AMOUNT"}]}),
     "spans", "S053", "spans 0..5 (CURRENCY) and 4..9 (AMOUNT) overlap"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "field", "code", "message"),
    [case[1:] for case in BAD_LINES],
    ids=[case[0] for case in BAD_LINES],
)
def test_bad_line_is_reported_with_file_line_and_field(
    tmp_path: Path, line: str, field: str | None, code: str, message: str
) -> None:
    path = _write(tmp_path, [json.dumps(GOOD), json.dumps(GOOD), line])
    with pytest.raises(SpecError) as caught:
        load_annotated(path, LABELS)
    error = caught.value
    assert (error.file, error.line, error.field, error.spec_code) == (str(path), 3, field, code)
    assert message in str(error)
    assert str(error).startswith(f"{path}:3: ")


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, ["", "   "])
    with pytest.raises(SpecError, match=r"no annotated examples \(the file is empty\) \[S056\]"):
        load_annotated(path, LABELS)


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    errors = check_annotated(tmp_path / "absent.jsonl", LABELS)
    assert [e.spec_code for e in errors] == ["S050"]


def test_check_reports_every_problem_not_just_the_first(tmp_path: Path) -> None:
    lines = [case[1] for case in BAD_LINES]
    path = _write(tmp_path, [json.dumps(GOOD), *lines])
    errors = check_annotated(path, LABELS)
    assert [e.line for e in errors] == list(range(2, len(lines) + 2))
    assert [e.spec_code for e in errors] == [case[3] for case in BAD_LINES]


def test_load_notes_how_many_more_problems_there_are(tmp_path: Path) -> None:
    path = _write(tmp_path, ["oops", "nope", json.dumps(GOOD)])
    with pytest.raises(SpecError) as caught:
        load_annotated(path, LABELS)
    assert caught.value.line == 1
    assert caught.value.__notes__ == [f"1 more problem(s) in {path}; `aau validate` lists all"]
