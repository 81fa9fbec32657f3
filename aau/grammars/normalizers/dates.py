"""Dates to ISO 8601 ``YYYY-MM-DD`` strings, for the ``date`` and ``iso_date`` grammars.

The grammar fixes the shape; this visitor checks what a regex cannot say compactly and decides
the field order:

* the day must exist in that month and year (29 February only in leap years);
* an ordinal suffix must fit its number (1st, 2nd, 3rd, 4th, 11th, 21st);
* a weekday name, when given, must be that date's weekday;
* a numeric date whose year comes first is year-month-day. When the year comes last, the first
  two numbers are day and month in an order the value itself may not tell: ``25/03/2024`` can
  only be day first, ``03/25/2024`` only month first, ``04/04/2024`` reads the same either way,
  but ``03/04/2024`` raises :class:`~aau.grammars.errors.AmbiguousValue` unless the caller
  passes ``date_order="DMY"`` or ``"MDY"``. A given order is applied strictly: under ``"MDY"``,
  ``25/03/2024`` is invalid. ``"YMD"`` describes year-first values, which need no option, and
  leaves year-last values to the rule above.
"""

from __future__ import annotations

import datetime
from typing import Any

from antlr4 import ParserRuleContext

from aau._generated.date.dateParser import dateParser
from aau._generated.date.dateVisitor import dateVisitor
from aau._generated.iso_date.iso_dateParser import iso_dateParser
from aau._generated.iso_date.iso_dateVisitor import iso_dateVisitor
from aau.grammars.normalizers import ValueVisitor

__all__ = ["DateNormalizer", "IsoDateNormalizer"]

DATE_ORDERS = ("DMY", "MDY", "YMD")
_MONTHS = {
    dateParser.JANUARY: 1,
    dateParser.FEBRUARY: 2,
    dateParser.MARCH: 3,
    dateParser.APRIL: 4,
    dateParser.MAY: 5,
    dateParser.JUNE: 6,
    dateParser.JULY: 7,
    dateParser.AUGUST: 8,
    dateParser.SEPTEMBER: 9,
    dateParser.OCTOBER: 10,
    dateParser.NOVEMBER: 11,
    dateParser.DECEMBER: 12,
}
# English names for messages (strftime's would follow the process locale).
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def ordinal_suffix(day: int) -> str:
    """The English ordinal suffix of ``day``: st, nd, rd or th."""
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


class _CalendarMixin(ValueVisitor):
    def make_date(self, year: int, month: int, day: int, where: ParserRuleContext) -> datetime.date:
        """The date, or an InvalidValue located at ``where`` when it does not exist."""
        if not 1 <= month <= 12:
            raise self.invalid(where, f"there is no month {month}")
        try:
            return datetime.date(year, month, day)
        except ValueError:
            if year < datetime.MINYEAR:
                raise self.invalid(where, f"there is no year {year}") from None
            name = _MONTH_NAMES[month - 1]
            raise self.invalid(where, f"there is no day {day} in {name} {year}") from None


class DateNormalizer(_CalendarMixin, dateVisitor):
    """Normalizes the ``date`` grammar's values; see the module docstring for the rules."""

    accepts = frozenset({"date_order"})

    def visitDate_value(self, ctx: dateParser.Date_valueContext) -> str:
        """The ISO date of the whole value, weekday checked."""
        order = self.options.get("date_order")
        if order is not None and order not in DATE_ORDERS:
            raise ValueError(f"date_order must be one of {', '.join(DATE_ORDERS)}; got {order!r}")
        body = ctx.numeric_date() or ctx.day_first() or ctx.month_first()
        value: datetime.date = self.visit(body)
        weekday = ctx.WEEKDAY()
        if weekday is not None:
            named = [n[:3].lower() for n in _WEEKDAY_NAMES].index(weekday.getText()[:3].lower())
            if named != value.weekday():
                raise self.invalid(
                    weekday,
                    f"{value.isoformat()} is a {_WEEKDAY_NAMES[value.weekday()]}, "
                    f"not a {_WEEKDAY_NAMES[named]}",
                )
        return value.isoformat()

    def visitNumeric_date(self, ctx: dateParser.Numeric_dateContext) -> datetime.date:
        """The date of a numeric value, its field order decided as documented."""
        year = int(ctx.year().getText())
        if ctx.month_number() is not None:  # year first: always year-month-day
            return self.make_date(
                year,
                int(ctx.month_number().getText()),
                int(ctx.day_number(0).getText()),
                ctx.day_number(0),
            )
        first, second = ctx.day_number(0), ctx.day_number(1)
        a, b = int(first.getText()), int(second.getText())
        order = self.options.get("date_order")
        if order == "DMY":
            return self.make_date(year, b, a, second if b > 12 else first)
        if order == "MDY":
            return self.make_date(year, a, b, first if a > 12 else second)
        readings = {}
        if b <= 12:
            readings["DMY"] = self.make_date(year, b, a, first)
        if a <= 12:
            readings["MDY"] = self.make_date(year, a, b, second)
        if not readings:
            raise self.invalid(first, f"neither {a} nor {b} can be a month")
        if len(set(readings.values())) > 1:
            raise self.ambiguous(
                [d.isoformat() for d in readings.values()],
                'pass date_order="DMY" (day first) or date_order="MDY" (month first)',
            )
        return next(iter(readings.values()))

    def visitDay_first(self, ctx: dateParser.Day_firstContext) -> datetime.date:
        """The date of ``4 March 2024`` forms."""
        return self._textual(ctx)

    def visitMonth_first(self, ctx: dateParser.Month_firstContext) -> datetime.date:
        """The date of ``March 4, 2024`` forms."""
        return self._textual(ctx)

    def _textual(self, ctx: Any) -> datetime.date:
        day_ctx = ctx.day_number()
        day = int(day_ctx.getText())
        suffix = ctx.ORDINAL()
        if suffix is not None and suffix.getText().lower() != ordinal_suffix(day):
            raise self.invalid(
                suffix,
                f"the ordinal of {day} is {day}{ordinal_suffix(day)}, not {day}{suffix.getText()}",
            )
        month = _MONTHS[ctx.month_name().start.type]
        return self.make_date(int(ctx.year().getText()), month, day, day_ctx)


class IsoDateNormalizer(_CalendarMixin, iso_dateVisitor):
    """Checks that an ISO 8601 date exists; the value is already canonical."""

    def visitIso_date_value(self, ctx: iso_dateParser.Iso_date_valueContext) -> str:
        """The date itself, once it is known to exist."""
        year, month, day = (int(part.getText()) for part in (ctx.year(), ctx.month(), ctx.day()))
        where = ctx.year() if year < datetime.MINYEAR else ctx.day()
        return self.make_date(year, month, day, where).isoformat()
