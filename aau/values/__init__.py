"""The values layer: reading, rendering and comparing numbers, money, dates and quantities.

Low in the package (it imports no other ``aau`` layer), so normalizers, grounding, the
training-data generator and the calibrator can all share one reading of the world's formats:

- numbers: ``read_number``, ``read_range``, ``find_numbers``, ``renderings``;
- money: ``read_money``, ``find_money``, ``read_currency``, ``is_currency_marker``,
  ``currency_codes``, ``currency_renderings``;
- dates: ``read_date``, ``find_dates``, ``read_month``;
- quantities: ``read_quantity``, ``read_quantity_range``, ``read_unit``, ``find_quantities``;
- ``same_value`` compares two values of one kind.

Readers return None for what they cannot read and never raise on input; single-value readers
look at most at ``MAX_SPAN`` characters, finders at ``MAX_TEXT``. Babel's CLDR tables are read
once, on first use (about a second); pint's registry likewise, only when units are converted
or an English unit expression is unknown to the tables.
"""

from aau.values._text import MAX_SPAN, MAX_TEXT
from aau.values.compare import Kind, same_value
from aau.values.dates import DateSpan, find_dates, read_date, read_month
from aau.values.money import (
    Money,
    MoneySpan,
    currency_codes,
    currency_renderings,
    find_money,
    is_currency_marker,
    read_currency,
    read_money,
)
from aau.values.numbers import (
    Number,
    NumberSpan,
    find_numbers,
    read_number,
    read_range,
    renderings,
)
from aau.values.quantities import (
    CANONICAL_UNITS,
    Quantity,
    QuantityRange,
    QuantitySpan,
    find_quantities,
    read_quantity,
    read_quantity_range,
    read_unit,
)

__all__ = [
    "CANONICAL_UNITS",
    "MAX_SPAN",
    "MAX_TEXT",
    "DateSpan",
    "Kind",
    "Money",
    "MoneySpan",
    "Number",
    "NumberSpan",
    "Quantity",
    "QuantityRange",
    "QuantitySpan",
    "currency_codes",
    "currency_renderings",
    "find_dates",
    "find_money",
    "find_numbers",
    "is_currency_marker",
    "find_quantities",
    "read_currency",
    "read_date",
    "read_money",
    "read_month",
    "read_number",
    "read_quantity",
    "read_quantity_range",
    "read_range",
    "read_unit",
    "renderings",
    "same_value",
]
