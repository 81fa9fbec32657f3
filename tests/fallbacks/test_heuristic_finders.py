"""The heuristic path's finders: the values layer's readings as candidates, ranked by context."""

from __future__ import annotations

import pytest

from aau.answers import PathContext
from aau.errors import SpecError
from aau.fallbacks.heuristic import FINDER_GROUPS, HeuristicPath
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR


def shipped_heuristic(name: str) -> tuple[UnitSpec, HeuristicPath]:
    unit = UnitSpec.from_file(UNITS_DIR / f"{name}.yaml")
    fallback = next(f for f in unit.fallbacks if f.kind == "heuristic")
    return unit, fallback.build(unit)  # type: ignore[attr-defined]


def answer(name: str, text: str) -> dict[str, object]:
    unit, path = shipped_heuristic(name)
    return path.extract(text, PathContext(unit_name=unit.name, output_schema=unit.output)).output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Celkem k úhradě: 12 500 Kč.", {"amount": 12500, "currency": "CZK"}),
        ("Сумма: 1 250,50 руб.", {"amount": 1250.5, "currency": "RUB"}),
        ("Valor total: R$ 3.200,00", {"amount": 3200, "currency": "BRL"}),
        ("Subtotal 90 zł, total due 110 zł", {"amount": 110, "currency": "PLN"}),
        ("the deal is worth 75 million dollars", {"amount": 75_000_000, "currency": "USD"}),
        ("The meeting moved to Tuesday, room 4.", {"amount": None, "currency": None}),
    ],
)
def test_the_price_units_money_finder_reads_the_worlds_currencies(
    text: str, expected: dict[str, object]
) -> None:
    assert answer("extract_price", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Договор подписан 14 марта 2024 года.", "2024-03-14"),
        ("契約日：2024年3月14日", "2024-03-14"),
        ("Fecha: 5 de junio de 2025", "2025-06-05"),
    ],
)
def test_the_date_units_finder_reads_cldr_month_names(text: str, expected: str) -> None:
    assert answer("extract_date", text) == {"date": expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The probe measured 120 picometres.", {"value": 120, "unit": "pm"}),
        ("Heat the sample to 37 °C.", {"value": 37, "unit": "°C"}),
        ("Please deliver 12 boxes of A4 paper.", {"value": 12, "unit": "box"}),
        ("Consulting: 7.5 hours at $120 per hour.", {"value": 7.5, "unit": "h"}),
    ],
)
def test_the_quantity_units_finder_reads_physical_quantities(
    text: str, expected: dict[str, object]
) -> None:
    assert answer("extract_quantity", text) == expected


def test_a_finder_value_passes_through_a_units_table() -> None:
    unit = UnitSpec.from_dict({
        "name": "billed_hours", "version": 1, "description": "Billed time.",
        "output": {"type": "object", "required": ["value", "unit"],
                   "additionalProperties": False,
                   "properties": {"value": {"type": ["number", "null"]},
                                  "unit": {"enum": ["hours", "days", None]}}},
        "normalizers": {"time_unit": {"base": "unit", "map": {"h": "hours", "d": "days"}}},
        "prompt": {"system": "Extract.", "template": "{{ text }}"},
        "fallbacks": [{"kind": "heuristic", "finders": [{"find": "quantity"}],
                       "fields": {"value": {"group": "value", "normalize": "number"},
                                  "unit": {"group": "unit", "normalize": "time_unit"}}}],
    })  # fmt: skip
    path = unit.fallbacks[0].build(unit)  # type: ignore[attr-defined]
    found = path.extract("Billed: 3 Stunden.", PathContext(unit.name, unit.output))
    assert found.output == {"value": 3, "unit": "hours"}
    assert found.spans == {"value": (8, 17), "unit": (8, 17)}


def test_a_heuristic_path_needs_a_finder_or_a_pattern() -> None:
    data = {
        "name": "empty_rules", "version": 1, "description": "Nothing.",
        "output": {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
                   "required": ["x"], "additionalProperties": False},
        "prompt": {"system": "Extract.", "template": "{{ text }}"},
        "fallbacks": [{"kind": "heuristic", "fields": {"x": {"group": "date"}}}],
    }  # fmt: skip
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(data)
    assert caught.value.spec_code == "S044"
    data["fallbacks"][0]["finders"] = [{"find": "date"}]  # type: ignore[index]
    assert UnitSpec.from_dict(data).fallbacks[0].finders[0].find == "date"  # type: ignore[attr-defined]


def test_a_field_may_name_only_groups_its_finders_or_patterns_fill() -> None:
    data = {
        "name": "wrong_group", "version": 1, "description": "A date.",
        "output": {"type": "object", "properties": {"x": {"type": ["string", "null"]}},
                   "required": ["x"], "additionalProperties": False},
        "prompt": {"system": "Extract.", "template": "{{ text }}"},
        "fallbacks": [{"kind": "heuristic", "finders": [{"find": "date"}],
                       "fields": {"x": {"group": "amount"}}}],
    }  # fmt: skip
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(data)
    assert caught.value.spec_code == "S033"
    assert set(FINDER_GROUPS["money"]) == {"amount", "currency", "money"}
