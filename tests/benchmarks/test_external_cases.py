"""The external benchmark's case files (benchmarks/external/): well formed, valid against the
shipped units' output schemas, and split by whole (language, source file) groups."""

from __future__ import annotations

import collections
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aau.spec.model import UnitSpec
from tests.conftest import REPO, UNITS_DIR

EXTERNAL = REPO / "benchmarks" / "external"
PARTS = ("dev", "test")
UNITS = ("extract_price", "extract_date", "extract_quantity")
KEYS = {"id", "unit", "language", "source", "part", "kind", "text", "expected", "spans"}
COMMIT = "90e968ea44dc8fda3f2e1c3e4b20aa233817488d"


@cache
def cases(part: str) -> tuple[dict[str, Any], ...]:
    path = EXTERNAL / f"cases.{part}.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


@cache
def validator(unit: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(UnitSpec.from_file(UNITS_DIR / f"{unit}.yaml").output)


def has_value(output: dict[str, Any]) -> bool:
    return any(v is not None for v in output.values())


@pytest.mark.parametrize("part", PARTS)
def test_every_line_is_one_well_formed_case(part: str) -> None:
    lines = (EXTERNAL / f"cases.{part}.jsonl").read_text(encoding="utf-8").splitlines()

    assert lines
    assert all(line.strip() for line in lines)
    for case in cases(part):
        assert KEYS <= set(case) <= KEYS | {"markers"}, case["id"]
        assert case["part"] == part
        assert case["unit"] in UNITS
        assert case["kind"] in {"single", "multi", "none"}
        assert isinstance(case["text"], str)
        assert case["text"].strip()
        assert re.fullmatch(r"Specs/[A-Za-z]+/[A-Za-z]+/[A-Za-z]+\.json", case["source"])
        assert case["source"].split("/")[2] == case["language"]


@pytest.mark.parametrize("part", PARTS)
def test_expected_outputs_validate_against_their_units_schema(part: str) -> None:
    for case in cases(part):
        check = validator(case["unit"])
        expected = case["expected"]
        if case["kind"] == "multi":
            assert isinstance(expected, list), case["id"]
            assert len(expected) >= 2, case["id"]
            assert all(a != b for i, a in enumerate(expected) for b in expected[i + 1 :])
            outputs = expected
        else:
            outputs = [expected]
        for output in outputs:
            check.validate(output)
            assert has_value(output) is (case["kind"] != "none"), case["id"]
            if has_value(output):  # a value with all its fields: nothing half known is kept
                assert all(v is not None for v in output.values()), case["id"]


def test_dates_are_iso_and_currencies_iso_4217() -> None:
    from babel.numbers import list_currencies

    codes = set(list_currencies())
    for case in cases("dev") + cases("test"):
        outputs = case["expected"] if case["kind"] == "multi" else [case["expected"]]
        for output in filter(has_value, outputs):
            if case["unit"] == "extract_date":
                assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", output["date"]), case["id"]
            if case["unit"] == "extract_price":
                assert output["currency"] in codes, case["id"]


def test_ids_are_unique_and_no_text_is_in_both_parts() -> None:
    all_cases = cases("dev") + cases("test")
    ids = [c["id"] for c in all_cases]
    dev_texts = {(c["unit"], " ".join(c["text"].casefold().split())) for c in cases("dev")}
    test_texts = {(c["unit"], " ".join(c["text"].casefold().split())) for c in cases("test")}

    assert len(ids) == len(set(ids))
    assert not dev_texts & test_texts


def test_dev_and_test_share_no_language_source_group() -> None:
    groups = {part: {(c["language"], c["source"]) for c in cases(part)} for part in PARTS}

    assert groups["dev"]
    assert groups["test"]
    assert not groups["dev"] & groups["test"]


@pytest.mark.parametrize("part", PARTS)
def test_each_part_has_cases_of_every_unit(part: str) -> None:
    counts = collections.Counter((c["unit"], c["kind"]) for c in cases(part))

    for unit in UNITS:
        assert counts[(unit, "single")] > 0, unit
        assert counts[(unit, "none")] > 0, unit
    assert sum(counts.values()) == len(cases(part))


def test_the_folder_records_source_licence_and_converter() -> None:
    readme = (EXTERNAL / "README.md").read_text(encoding="utf-8")
    licence = (EXTERNAL / "LICENSE").read_text(encoding="utf-8")

    assert COMMIT in readme
    assert "microsoft/Recognizers-Text" in readme
    assert "MIT License" in licence
    assert "Microsoft Corporation" in licence
    assert (EXTERNAL / "convert.py").is_file()
    total = sum(p.stat().st_size for p in Path(EXTERNAL).iterdir() if p.is_file())
    assert total < 5_000_000
