"""The money normalizer: separator roles, ambiguity, the decimal option and symbols."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from aau.grammars import AmbiguousValue, InvalidValue, load_grammar
from aau.grammars.normalizers.money import SYMBOLS


@pytest.fixture(scope="module")
def money():
    return load_grammar("money_amount")


@pytest.mark.parametrize(
    "value", ["1,250", "1.250", "$1,250", "12.500 €", "EUR 999,000", "-€1.250"]
)
def test_lone_separator_before_three_digits_is_ambiguous(money, value: str) -> None:
    with pytest.raises(AmbiguousValue) as caught:
        money.normalize(value)
    assert 'pass decimal="." or decimal=","' in str(caught.value)
    assert caught.value.code == "ambiguous_value"


def test_ambiguous_amount_lists_grouped_then_decimal_reading(money) -> None:
    with pytest.raises(AmbiguousValue) as caught:
        money.normalize("1,250")
    assert caught.value.readings == ("1250", "1.250")
    assert str(caught.value) == (
        "money_amount: '1,250' is ambiguous: it reads as '1250' or '1.250'; "
        '\',\' may group digits or mark decimals; pass decimal="." or decimal=","'
    )


@pytest.mark.parametrize(
    ("value", "decimal", "amount"),
    [
        ("1,250", ".", "1250"),
        ("1,250", ",", "1.250"),
        ("1.250", ".", "1.250"),
        ("1.250", ",", "1250"),
        ("1,250.00", ".", "1250.00"),
        ("1.250,00", ",", "1250.00"),
        ("1 250", ",", "1250"),
        ("1,25", ",", "1.25"),
        ("1'250.5", ".", "1250.5"),
    ],
)
def test_decimal_option_fixes_the_separator_role(
    money, value: str, decimal: str, amount: str
) -> None:
    assert money.normalize(value, decimal=decimal)["amount"] == amount


@pytest.mark.parametrize(
    ("value", "decimal", "position", "reason"),
    [
        (
            "1,25",
            ".",
            1,
            "',' would group digits (decimal='.'), but the digit groups are not 1-3 then 3 each",
        ),
        ("1234,567", ".", 4, "',' would group digits (decimal='.')"),
        ("1,250,000.00", ",", 1, "',' groups digits here, but decimal=','"),
        ("1.250.000", ".", 1, "'.' groups digits here, but decimal='.'"),
    ],
)
def test_value_contradicting_the_decimal_option_is_invalid(
    money, value, decimal, position, reason
) -> None:
    with pytest.raises(InvalidValue) as caught:
        money.normalize(value, decimal=decimal)
    assert caught.value.position == position
    assert f"at position {position}: {reason}" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "amount"),
    [
        ("0,250", "0.250"),
        ("1,2500", "1.2500"),
        ("1,25", "1.25"),
        ("1234.567", "1234.567"),
        ("1,250.000", "1250.000"),
    ],
)
def test_lone_separator_that_cannot_group_is_decimal(money, value: str, amount: str) -> None:
    assert money.normalize(value)["amount"] == amount


@pytest.mark.parametrize("value", ["¥1,250", "1.250 JPY", "KRW 3,000", "₩3,000", "ISK 1.500"])
def test_lone_separator_groups_in_currencies_without_minor_units(money, value: str) -> None:
    assert "." not in money.normalize(value)["amount"]


def test_amount_converts_to_decimal_without_loss(money) -> None:
    result = money.normalize("EUR 12 345 678,90")
    assert Decimal(result["amount"]) == Decimal("12345678.90")
    assert result == {"amount": "12345678.90", "currency": "EUR"}


def test_negative_zero_has_no_sign(money) -> None:
    assert money.normalize("-0.00 €")["amount"] == "0.00"


def test_symbols_option_overrides_the_table(money) -> None:
    assert money.normalize("$5", symbols={"$": "CAD"}) == {"amount": "5", "currency": "CAD"}
    assert money.normalize("€5", symbols={"$": "CAD"})["currency"] == "EUR"


def test_unknown_decimal_option_is_a_value_error(money) -> None:
    with pytest.raises(ValueError, match='decimal must be "." or ","; got \';\''):
        money.normalize("1,250", decimal=";")


def test_every_symbol_in_the_grammar_maps_to_a_currency(repo_root: Path) -> None:
    source = (repo_root / "grammars" / "money_amount.g4").read_text(encoding="utf-8")
    block = source[source.index("SYMBOL\n") :]
    block = block[: block.index(";")]
    symbols = {
        re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1), 16)), literal)
        for literal in re.findall(r"'([^']*)'", block)
    }
    assert symbols == set(SYMBOLS)
    money = load_grammar("money_amount")
    for symbol, code in SYMBOLS.items():
        assert money.normalize(f"{symbol}12") == {"amount": "12", "currency": code}
