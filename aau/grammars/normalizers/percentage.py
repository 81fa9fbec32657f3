"""Percentages to a decimal string of percent points: ``12,5 %`` gives ``"12.5"``.

The result is the number in front of the percent sign, not a fraction of one (``"12.5"``, not
``0.125``), as a plain decimal string without trailing fraction zeros, leading zeros or a plus
sign: ``+012.50 %`` gives ``"12.5"``, ``100%`` gives ``"100"``, ``-0,0%`` gives ``"0"``.
Percentages have no group separators, so a lone ``,`` or ``.`` is always the decimal one.
"""

from __future__ import annotations

from decimal import Decimal

from aau._generated.percentage.percentageParser import percentageParser
from aau._generated.percentage.percentageVisitor import percentageVisitor
from aau.grammars.normalizers import ValueVisitor

__all__ = ["PercentageNormalizer"]


class PercentageNormalizer(ValueVisitor, percentageVisitor):
    """Normalizes ``percentage`` values to percent points as a decimal string."""

    def visitPercentage_value(self, ctx: percentageParser.Percentage_valueContext) -> str:
        """Percent points as a decimal string."""
        value = Decimal(ctx.number().getText().replace(",", "."))
        sign = ctx.SIGN()
        if sign is not None and sign.getText() != "+":
            value = -value
        if value == 0:
            return "0"
        return format(value.normalize(), "f")
