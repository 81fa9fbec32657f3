"""``same_value``: one comparison per kind, from values or from text."""

from __future__ import annotations

import datetime as dt

import pytest

from aau.values import same_value


@pytest.mark.parametrize(
    ("a", "b", "kind", "same"),
    [
        (12500, "12 500", "number", True),
        (1250.0, "1.250,00", "number", True),
        (75_000_000, "75 million", "number", True),
        (3, "three", "number", True),
        (0.1 + 0.2, 0.3, "number", True),
        (1, 2, "number", False),
        (True, 1, "number", False),
        ((1250, "EUR"), "EUR 1.250,00", "money", True),
        ({"amount": 10, "currency": "BRL"}, "R$ 10,00", "money", True),
        ((10, "USD"), "R$ 10,00", "money", False),
        ("2016-01-12", "January 12, 2016", "date", True),
        (dt.date(2016, 1, 12), "12 Ocak 2016", "date", True),
        ("2016-01-12", "2016-01-13", "date", False),
        ((1, "km"), "1000 m", "quantity", True),
        ((1, "kilometre"), (1000, "metres"), "quantity", True),
        ({"value": 0, "unit": "°C"}, "32 °F", "quantity", True),
        ((1, "km"), "1 kg", "quantity", False),
        ("garbage", "garbage", "number", False),
    ],
)
def test_same_value(a: object, b: object, kind: str, same: bool) -> None:
    assert same_value(a, b, kind) is same  # type: ignore[arg-type]


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        same_value(1, 1, "colour")  # type: ignore[arg-type]
