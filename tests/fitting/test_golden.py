"""Golden cases: the file format's checks and how an output is compared with the expected one."""

from __future__ import annotations

from pathlib import Path

import pytest

from aau.errors import SpecError
from aau.fitting.golden import compare, field_normalizers, load_cases
from aau.spec.model import UnitSpec
from aau.spec.problems import every_problem
from tests.conftest import FIND_TOTAL_YAML, UNITS_DIR


@pytest.fixture
def unit(tmp_path: Path) -> UnitSpec:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML, encoding="utf-8")
    return UnitSpec.from_file(path)


def test_numbers_compare_within_the_tolerance_only() -> None:
    assert compare({"amount": 10.004}, {"amount": 10.0}, tolerance={"amount": 0.01}) == []
    (diff,) = compare({"amount": 10.02}, {"amount": 10.0}, tolerance={"amount": 0.01})
    assert str(diff) == "amount: expected 10.0, got 10.02"
    assert compare({"amount": 10.0000001}, {"amount": 10.0}) != [], "no tolerance: exact"


def test_strings_compare_after_the_unit_normalizer() -> None:
    price = UnitSpec.from_file(UNITS_DIR / "extract_price.yaml")
    normalizers = field_normalizers(price)

    assert compare({"currency": "€"}, {"currency": "EUR"}, normalizers=normalizers) == []
    assert compare({"currency": "USD"}, {"currency": "EUR"}, normalizers=normalizers) != []
    assert compare({"currency": "€"}, {"currency": "EUR"}) != [], "without it: exact"


def test_nulls_booleans_and_arrays_compare_exactly_element_by_element() -> None:
    assert compare({"a": None}, {"a": None}) == []
    assert [d.path for d in compare({"a": 0}, {"a": None})] == ["a"]
    assert [d.path for d in compare({"ok": 1}, {"ok": True})] == ["ok"], "1 is not true"
    got = {"items": [{"amount": 5.001, "label": "x"}, {"amount": 7, "label": "y"}]}
    wanted = {"items": [{"amount": 5, "label": "x"}, {"amount": 7, "label": "z"}]}
    diffs = compare(got, wanted, tolerance={"items.amount": 0.01})
    assert [d.path for d in diffs] == ["items[1].label"]
    assert [d.path for d in compare({"items": [1]}, {"items": [1, 2]})] == ["items"]
    assert [d.path for d in compare({"a": 1, "extra": 2}, {"a": 1})] == ["extra"]


def test_a_case_no_run_could_pass_is_refused_at_load(unit: UnitSpec) -> None:
    golden = unit.base_dir / "find_total.golden.yaml"
    golden.write_text(
        "cases:\n"
        "  - input: 'Total: 10 USD'\n"
        "    expected: {amount: 10, currency: GBP}\n"
        "  - input: 'Total: 10 USD'\n"
        "    expected: {amount: 10, currency: USD}\n"
        "    tolerance: {currency: 0.1}\n",
        encoding="utf-8",
    )

    with pytest.raises(SpecError) as caught:
        load_cases(unit)

    problems = every_problem(caught.value)
    assert [(p.line, p.field, p.check) for p in problems] == [
        (3, "cases.0.expected", "G002"),
        (6, "cases.1.tolerance.currency", "G003"),
    ]
    assert "'GBP' is not one of" in problems[0].message


def test_a_golden_file_out_of_format_is_located(unit: UnitSpec) -> None:
    golden = unit.base_dir / "find_total.golden.yaml"
    golden.write_text("cases:\n  - input: 'x'\n    expect: {amount: 1}\n", encoding="utf-8")

    with pytest.raises(SpecError) as caught:
        load_cases(unit)

    found = {(p.field, p.check) for p in every_problem(caught.value)}
    assert found == {("cases.0.expected", "G001"), ("cases.0.expect", "G001")}
