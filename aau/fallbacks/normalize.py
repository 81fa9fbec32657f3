"""Named normalizers: turn a matched piece of text into the value a unit's schema wants.

Amounts use price-parser (locale group and decimal separators), dates use dateparser (many
written forms and languages, to ISO ``YYYY-MM-DD``), currency markers map to ISO-4217 codes
with babel's code list. Each normalizer returns ``None`` when the text cannot be normalized, so
the calling path can skip the candidate instead of emitting a wrong value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from aau.grammars import AmbiguousValue, GrammarNotFound, InvalidValue, load_grammar
from aau.registry import Registry

__all__ = ["NORMALIZERS", "currency_markers", "normalize"]

# Symbols that name one currency in practice. "$" alone is read as USD and "¥" as JPY: the
# common reading in the documents units see; a unit that needs otherwise maps it in its prompt.
_SYMBOLS = {
    "$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "euro": "EUR",
    "euros": "EUR", "£": "GBP", "gbp": "GBP", "¥": "JPY", "yen": "JPY", "円": "JPY",
    "元": "CNY", "rmb": "CNY", "₹": "INR", "rs": "INR", "rs.": "INR", "₩": "KRW", "₽": "RUB",
    "₺": "TRY", "₪": "ILS", "₫": "VND", "₴": "UAH", "₦": "NGN", "₱": "PHP", "fr.": "CHF",
    "chf": "CHF", "c$": "CAD", "ca$": "CAD", "a$": "AUD", "au$": "AUD", "hk$": "HKD",
    "s$": "SGD", "r$": "BRL", "kr": "SEK", "zł": "PLN", "dollar": "USD", "dollars": "USD",
    "pound": "GBP", "pounds": "GBP",
}  # fmt: skip


@cache
def _iso_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


def currency_markers(code: str) -> list[str]:
    """Symbols and words that stand for the ISO code ``code`` (``EUR`` -> ``€``, ``euro``…)."""
    return [marker for marker, iso in _SYMBOLS.items() if iso == code and marker != code.lower()]


def normalize_currency(text: str) -> str | None:
    """ISO-4217 code for a currency marker; the marker as written when none is known."""
    marker = text.strip()
    if not marker:
        return None
    if marker.upper() in _iso_codes():
        return marker.upper()
    return _SYMBOLS.get(marker.lower(), marker)


def normalize_amount(text: str) -> float | None:
    """A number written with any common group/decimal separators: ``1.250,00`` -> 1250.0."""
    from price_parser import Price

    amount = Price.fromstring(text.strip()).amount_float
    return None if amount is None else float(amount)


_INT = re.compile(r"^[+-]?\d+$")


def normalize_number(text: str) -> float | int | None:
    """Like ``amount``, but keeps integers as ``int``."""
    cleaned = re.sub(r"[\s'’_]", "", text.strip())
    if _INT.match(cleaned):
        return int(cleaned)
    return normalize_amount(text)


def normalize_date(text: str, *, order: str = "DMY") -> str | None:
    """ISO ``YYYY-MM-DD`` for a written date; ``order`` settles ``03/04/2024``."""
    import dateparser

    parsed = dateparser.parse(
        text.strip(),
        settings={"DATE_ORDER": order, "REQUIRE_PARTS": ["day", "month", "year"],
                  "PREFER_DATES_FROM": "past"},
    )  # fmt: skip
    return parsed.date().isoformat() if parsed else None


_UNITS = {
    "pcs": "pieces", "pc": "pieces", "piece": "pieces", "units": "units", "unit": "units",
    "kgs": "kg", "kilogram": "kg", "kilograms": "kg", "kilo": "kg", "kilos": "kg",
    "g": "g", "gram": "g", "grams": "g", "t": "t", "tonne": "t", "tonnes": "t", "tons": "t",
    "ton": "t", "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "l": "l",
    "liter": "l", "liters": "l", "litre": "l", "litres": "l", "ml": "ml", "m": "m",
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "km": "km", "cm": "cm",
    "mm": "mm", "box": "boxes", "boxes": "boxes", "pallet": "pallets", "pallets": "pallets",
    "hour": "hours", "hours": "hours", "hrs": "hours", "h": "hours", "day": "days",
    "days": "days", "kwh": "kWh", "mwh": "MWh", "sqm": "m2", "m²": "m2", "m2": "m2",
}  # fmt: skip


def normalize_unit(text: str) -> str | None:
    """A canonical unit name (``kgs`` -> ``kg``, ``boxes`` stays); unknown units as written."""
    unit = text.strip().rstrip(".")
    if not unit:
        return None
    return _UNITS.get(unit.lower(), unit.lower())


def normalize_text(text: str) -> str | None:
    """The text with outer whitespace removed and inner runs collapsed."""
    cleaned = " ".join(text.split())
    return cleaned or None


@cache
def _grammar_normalizer(name: str) -> Callable[..., Any] | None:
    if not name.startswith("grammar:"):
        return None
    grammar_name, _, key = name.removeprefix("grammar:").partition(".")
    try:
        grammar = load_grammar(grammar_name)
    except GrammarNotFound:
        return None

    def normalize_with_grammar(text: str, **locale: Any) -> Any:
        options = {k: v for k, v in locale.items() if v is not None and k in grammar.options}
        try:
            value = grammar.normalize(text.strip(), **options)
        except (AmbiguousValue, InvalidValue):
            return None
        if key:
            value = value.get(key) if isinstance(value, dict) else None
            if key == "amount" and value is not None:
                return float(value)
        return value

    return normalize_with_grammar


NORMALIZERS: Registry[Callable[..., Any]] = Registry(
    "normalizer", "aau.normalizers", resolve=_grammar_normalizer
)
"""Normalizer name -> function, as named by ``normalize:`` in unit files.

Besides the built-ins below, ``grammar:<name>[.<key>]`` names the normalizer of every
field-format grammar: it parses the text with the ANTLR grammar and returns its canonical value
(``grammar:date`` -> ``"2024-03-14"``; ``grammar:money_amount.amount`` -> 1250.0). It takes the
unit's locale as keyword options (``date_order``, ``decimal``); a value that is ambiguous without
them, or does not parse, normalizes to None, so the path skips it rather than guess. Other
packages add normalizers through the ``aau.normalizers`` entry-point group: a function from the
matched text to the value (or None).
"""
for _name, _function in {
    "amount": normalize_amount,
    "currency": normalize_currency,
    "date": normalize_date,
    "date_mdy": lambda text: normalize_date(text, order="MDY"),
    "number": normalize_number,
    "text": normalize_text,
    "unit": normalize_unit,
}.items():
    NORMALIZERS.add(_name, _function)


def normalize(name: str, text: str) -> Any:
    """Apply the normalizer ``name``; ``UnknownName`` lists the known names."""
    return NORMALIZERS.get(name)(text)
