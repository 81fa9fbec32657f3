"""Comparing values of one kind: numbers within a tolerance, money, dates, quantities in units.

Each side may be the value itself or text the kind's reader reads ("1.250,00", "EUR 12",
"15. Januar 2011", "2 km"), so a caller can compare an answer with a span without reading it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from aau.values.dates import read_date
from aau.values.money import read_money
from aau.values.numbers import close, read_number
from aau.values.quantities import read_quantity, read_unit, same_quantity

__all__ = ["Kind", "same_value"]

Kind = Literal["number", "money", "date", "quantity"]


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        read = read_number(value)
        return None if read is None else float(read)
    return None


def _as_money(value: Any) -> tuple[float, str | None] | None:
    if isinstance(value, str):
        money = read_money(value)
        return None if money is None else (float(money.amount), money.currency)
    if isinstance(value, dict):
        value = (value.get("amount"), value.get("currency"))
    if isinstance(value, tuple | list) and len(value) == 2:
        amount = _as_number(value[0])
        currency = value[1]
        if amount is not None and (currency is None or isinstance(currency, str)):
            return amount, currency.upper() if currency else None
    return None


def _as_date(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            return read_date(value)
    return None


def _as_quantity(value: Any) -> tuple[float, str] | None:
    if isinstance(value, str):
        quantity = read_quantity(value)
        return None if quantity is None else (float(quantity.value), quantity.unit)
    if isinstance(value, dict):
        value = (value.get("value"), value.get("unit"))
    if isinstance(value, tuple | list) and len(value) == 2:
        number = _as_number(value[0])
        if number is not None and isinstance(value[1], str):
            return number, read_unit(value[1]) or value[1]
    return None


def same_value(a: Any, b: Any, kind: Kind, *, rel_tol: float = 1e-6) -> bool:
    """Whether ``a`` and ``b`` are the same ``kind`` of value; False when either is unreadable.

    Numbers (and amounts) agree within ``rel_tol``; money needs the same currency (an unknown
    currency only matches an unknown one); dates compare as calendar days; quantities convert
    units through pint (1 km is 1000 m, 0 °C is 32 °F).
    """
    if kind == "number":
        x, y = _as_number(a), _as_number(b)
        return x is not None and y is not None and close(x, y, rel_tol)
    if kind == "money":
        m, n = _as_money(a), _as_money(b)
        return m is not None and n is not None and m[1] == n[1] and close(m[0], n[0], rel_tol)
    if kind == "date":
        d, e = _as_date(a), _as_date(b)
        return d is not None and d == e
    if kind == "quantity":
        p, q = _as_quantity(a), _as_quantity(b)
        return p is not None and q is not None and same_quantity(p, q, rel_tol=rel_tol)
    raise ValueError(f"unknown kind {kind!r}: expected number, money, date or quantity")
