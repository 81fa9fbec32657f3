"""The model's text values in the unit's forms: what its field normalizers make of them."""

from __future__ import annotations

import pytest

from aau.runner.runner import UnitRunner
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR


@pytest.mark.parametrize(
    ("unit", "output", "expected"),
    [
        ("extract_price", {"amount": 125, "currency": "Kč"}, {"amount": 125, "currency": "CZK"}),
        ("extract_price", {"amount": 5, "currency": "R$"}, {"amount": 5, "currency": "BRL"}),
        ("extract_price", {"amount": 5, "currency": "kr"}, {"amount": 5, "currency": "kr"}),
        ("extract_quantity", {"value": 12, "unit": "boxes"}, {"value": 12, "unit": "box"}),
        ("extract_quantity", {"value": 3, "unit": "Stunden"}, {"value": 3, "unit": "h"}),
        ("extract_quantity", {"value": None, "unit": None}, {"value": None, "unit": None}),
        ("extract_date", {"date": "2024-03-14"}, {"date": "2024-03-14"}),
        ("extract_date", {"date": "2024-02-3x"}, {"date": "2024-02-3x"}),  # its grammar judges
        ("extract_price", {"amount": 1, "currency": "x" * 99}, {"amount": 1, "currency": "x" * 99}),
    ],
)  # fmt: skip
def test_the_models_text_values_are_read_by_the_units_normalizers(
    unit: str, output: dict[str, object], expected: dict[str, object]
) -> None:
    runner = UnitRunner(UnitSpec.from_file(UNITS_DIR / f"{unit}.yaml"), None)
    assert runner.model_output(output) == expected
