"""Money amounts to ``{"amount": "1250.00", "currency": "EUR"}``, for ``money_amount``.

``amount`` is a plain decimal string: optional ``-``, the integer digits without leading zeros
or separators, and the fraction digits exactly as written (``1.250,5 €`` gives ``"1250.5"``).
It converts to ``decimal.Decimal`` without loss. ``currency`` is an ISO 4217 code, or None when
the value names no currency.

Which separator is the decimal one follows from the value when it can:

* a separator that occurs more than once groups digits (``1,250,000``, ``1.250.000``);
* the last separator, when it is ``.`` or ``,`` and a different separator comes before it,
  is the decimal one (``1,250.00``, ``1.250,00``, ``1 250,50``, ``1'250.00``);
* a lone ``.`` or ``,`` is decimal unless it could group: followed by exactly three digits after
  one to three leading digits that do not start with 0. Then ``1,250`` and ``1.250`` are
  ambiguous, and :class:`~aau.grammars.errors.AmbiguousValue` is raised, except for currencies
  without minor units (ISO 4217 exponent 0: JPY, KRW, ...), where it can only group.

``decimal="."`` or ``decimal=","`` fixes the role instead; a value that contradicts it (``1,25``
with ``decimal="."``) is invalid. Symbols map to currencies by :data:`SYMBOLS` (CLDR's English
defaults: ``$`` is USD, ``¥`` is JPY); ``symbols={"$": "CAD"}`` overrides entries.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from aau._generated.money_amount.money_amountParser import money_amountParser
from aau._generated.money_amount.money_amountVisitor import money_amountVisitor
from aau.grammars.normalizers import ValueVisitor

__all__ = ["SYMBOLS", "ZERO_DECIMAL_CURRENCIES", "MoneyNormalizer"]

SYMBOLS: Mapping[str, str] = {
    "$": "USD",
    "US$": "USD",
    "CA$": "CAD",
    "A$": "AUD",
    "AU$": "AUD",
    "NZ$": "NZD",
    "HK$": "HKD",
    "S$": "SGD",
    "R$": "BRL",
    "MX$": "MXN",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "CN¥": "CNY",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₪": "ILS",
    "₫": "VND",
    "฿": "THB",
    "₴": "UAH",
    "₦": "NGN",
    "₱": "PHP",
    "zł": "PLN",
    "Kč": "CZK",
}
"""Currency symbol -> ISO 4217 code; every SYMBOL of money_amount.g4 has an entry."""

ZERO_DECIMAL_CURRENCIES = frozenset(
    "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split()
)
"""ISO 4217 currencies whose minor unit is 0: a lone separator in their amounts groups digits."""

_SEPARATOR = re.compile(r"[^0-9]")


class MoneyNormalizer(ValueVisitor, money_amountVisitor):
    """Normalizes ``money_amount`` values; see the module docstring for the rules."""

    accepts = frozenset({"decimal", "symbols"})

    def visitMoney_value(self, ctx: money_amountParser.Money_valueContext) -> dict[str, Any]:
        """The ``{amount, currency}`` dict of the whole value."""
        currency = self._currency(ctx.currency())
        amount = self._amount(ctx.amount(), currency)
        negative = ctx.MINUS() is not None and Decimal(amount) != 0  # no "-0.00"
        return {"amount": ("-" if negative else "") + amount, "currency": currency}

    def _currency(self, ctx: money_amountParser.CurrencyContext | None) -> str | None:
        if ctx is None:
            return None
        text = ctx.getText()
        if ctx.CURRENCY_CODE() is not None:
            return text
        table = {**SYMBOLS, **(self.options.get("symbols") or {})}
        return table[text]

    def _amount(self, ctx: money_amountParser.AmountContext, currency: str | None) -> str:
        text, base = ctx.getText(), ctx.start.start
        decimal = self.options.get("decimal")
        if decimal not in (None, ".", ","):
            raise ValueError(f'decimal must be "." or ","; got {decimal!r}')
        separators = [(m.start(), m.group()) for m in _SEPARATOR.finditer(text)]
        if not separators:
            return _digits(text)
        last_at, last = separators[-1]
        is_lone = last in ".," and [s for _, s in separators].count(last) == 1
        if decimal is not None:
            wrong = next(
                ((at, s) for at, s in separators if s == decimal and (at, s) != separators[-1]),
                None,
            )
            if wrong is not None:
                raise self.invalid(
                    base + wrong[0], f"{decimal!r} groups digits here, but decimal={decimal!r}"
                )
            if last == decimal:
                return _digits(text[:last_at]) + "." + text[last_at + 1 :]
            if not _groups_well(text):
                raise self.invalid(
                    base + last_at,
                    f"{last!r} would group digits (decimal={decimal!r}), "
                    "but the digit groups are not 1-3 then 3 each",
                )
            return _digits(text)
        if not is_lone:
            return _digits(text)
        whole, fraction = text[:last_at], text[last_at + 1 :]
        could_group = (
            len(separators) == 1
            and len(fraction) == 3
            and len(whole) <= 3
            and not whole.startswith("0")
        )
        if not could_group:
            return _digits(whole) + "." + fraction
        if currency in ZERO_DECIMAL_CURRENCIES:
            return _digits(text)
        readings = [_digits(text), _digits(whole) + "." + fraction]
        raise self.ambiguous(
            readings, f'{last!r} may group digits or mark decimals; pass decimal="." or decimal=","'
        )


def _digits(text: str) -> str:
    """The integer written in ``text``, separators removed, without leading zeros."""
    return str(int(_SEPARATOR.sub("", text)))


def _groups_well(text: str) -> bool:
    groups = _SEPARATOR.split(text)
    return 1 <= len(groups[0]) <= 3 and all(len(group) == 3 for group in groups[1:])
