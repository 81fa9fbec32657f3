"""The percentage normalizer: percent points as a canonical decimal string."""

from __future__ import annotations

from decimal import Decimal

import pytest

from aau.grammars import load_grammar


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("12.50%", "12.5"),
        ("12,500 %", "12.5"),
        ("1,250%", "1.25"),
        ("007%", "7"),
        ("+3%", "3"),
        ("−3%", "-3"),
        ("100.0 %", "100"),
        ("0,001%", "0.001"),
        ("1000%", "1000"),
    ],
)
def test_percentage_normalizes_to_percent_points(value: str, expected: str) -> None:
    result = load_grammar("percentage").normalize(value)
    assert result == expected
    assert isinstance(result, str)
    assert Decimal(result) == Decimal(expected)


def test_percentage_never_uses_exponent_notation() -> None:
    assert load_grammar("percentage").normalize("1200%") == "1200"
