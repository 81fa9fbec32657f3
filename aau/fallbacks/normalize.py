"""Named normalizers: turn a matched piece of text into the value a unit's schema wants.

Every built-in reads through the values layer (``aau.values``): amounts and numbers in every
CLDR locale's separators, digits, scale and number words; currency markers to ISO-4217 codes
from every locale's symbols and names; dates from every locale's month names and patterns to
ISO ``YYYY-MM-DD``; units to the canonical symbols of a pint registry. Each normalizer returns
``None`` when the text cannot be normalized, so the calling path can skip the candidate instead
of emitting a wrong value.

A unit adds its own normalizers two ways: a table in its YAML (``normalizers:``, words and the
values they stand for; compiled here into a ``TableNormalizer``) and a Python function declared
in the ``aau.normalizers`` entry-point group by any installed package. A field names either
(``normalize: period_unit``); ``normalizer_for`` resolves the name, the unit's tables first.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from aau import values
from aau.grammars import AmbiguousValue, GrammarNotFound, InvalidValue, load_grammar
from aau.registry import Registry

if TYPE_CHECKING:
    from aau.spec.model import UnitSpec
    from aau.spec.sections import NormalizerTable

__all__ = [
    "NORMALIZERS",
    "TableNormalizer",
    "normalize",
    "normalizer_for",
    "table_normalizer",
]


def _marker_text(text: str) -> str | None:
    """A tagged marker or unit with its whitespace collapsed and its punctuation stripped."""
    marker = " ".join(text.split()).strip(" .,;:()")
    return marker if marker and len(marker) <= values.MAX_SPAN else None


def normalize_currency(text: str) -> str | None:
    """ISO-4217 code for a currency marker (``Kč`` -> CZK, ``R$`` -> BRL, ``$`` -> USD).

    A marker that stands for several currencies and that nothing settles (``kr``, "franc")
    is kept as written; text that is no currency marker at all is None.
    """
    marker = _marker_text(text)
    if marker is None:
        return None
    code = values.read_currency(marker)
    if code is not None:
        return code
    if values.currency_codes(marker):
        return marker
    money = values.read_money(marker)  # a tagger's span may hold the amount too: "EUR 5"
    return money.currency if money is not None else None


def normalize_amount(text: str) -> float | None:
    """An amount in any locale's writing: ``1.250,00``, ``1 250,50``, ``75 million`` -> float.

    A span that also holds its currency marker ("EUR 1.250,00") reads as its amount.
    """
    number = values.read_number(text)
    if number is None:
        money = values.read_money(text)
        number = money.amount if money is not None else None
    return None if number is None else float(number)


def normalize_number(text: str) -> float | int | None:
    """Like ``amount``, but keeps integers as ``int`` (number words too: "twelve" -> 12)."""
    return values.read_number(text)


def normalize_date(text: str, *, order: str = "DMY") -> str | None:
    """ISO ``YYYY-MM-DD`` for a date written in any CLDR locale; ``order`` settles 03/04/2024."""
    return values.read_date(text, order=order)


_NUMERIC_DATE = re.compile(r"\d{1,4} ?[./-] ?\d{1,2} ?[./-] ?\d{1,4}")
_LETTERS = re.compile(r"[^\W\d_]+")


def normalize_date_valid(text: str, *, order: str = "DMY") -> bool | None:
    """Whether a written date exists.

    True when it reads as a calendar date, False when it is written as one but does not exist
    (``31/02/2024``, ``2023-02-29``, ``31 April 2024``, month 13), None when the text is no date
    at all (``2024-117``, ``Q3 2024``).
    """
    cleaned = " ".join(text.split()).strip(" ,;:()")
    if not cleaned:
        return None
    if values.read_date(cleaned, order=order) is not None:
        return True
    if _NUMERIC_DATE.fullmatch(cleaned):
        return False
    numbers = re.findall(r"\d+", cleaned)
    named = any(values.read_month(word) is not None for word in _LETTERS.findall(cleaned))
    if named and len(numbers) == 2 and any(len(n) == 4 for n in numbers):
        return False
    return None


def normalize_unit(text: str) -> str | None:
    """The canonical unit symbol (``kgs`` -> ``kg``, ``boxes`` -> ``box``, ``Stunden`` -> ``h``).

    Units no registry knows ("chairs") are kept as written, in lower case.
    """
    unit = _marker_text(text)
    if unit is None:
        return None
    return values.read_unit(unit) or unit.lower()


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
    "date_valid": normalize_date_valid,
    "number": normalize_number,
    "text": normalize_text,
    "unit": normalize_unit,
}.items():
    NORMALIZERS.add(_name, _function)


def normalize(name: str, text: str) -> Any:
    """Apply the normalizer ``name``; ``UnknownName`` lists the known names."""
    return NORMALIZERS.get(name)(text)


# -- a unit's own normalizers ------------------------------------------------------------


def _with_locale(name: str, function: Callable[..., Any], locale: Mapping[str, Any]) -> Any:
    if name.startswith("grammar:") and locale:  # grammars read ambiguous values by the locale
        options = dict(locale)
        return lambda text: function(text, **options)
    return function


def _lookup_text(value: Any) -> str:
    """How a base's value is looked up in a table: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


_MISSING = object()


class TableNormalizer(str):
    """A unit's normalizer table, compiled: call it on a matched text.

    It is a ``str`` too, ``table:<name>:<digest of the table>``, so it goes wherever a
    normalizer's name goes (``output_normalizers``, the calibrator's evidence) and keys caches:
    two units' tables are the same key only when they are the same table. Immutable; build it
    with ``table_normalizer``.

    Attributes:
        name: the table's name in its unit.
        table: the declaration.
        locale: the unit's locale, for a ``grammar:`` base.
        keeps_unknown: ``unknown: keep``: a word the table lacks keeps the base's value.
        values: every value the table maps a word to.
    """

    name: str
    table: NormalizerTable
    locale: tuple[tuple[str, Any], ...]
    keeps_unknown: bool
    values: tuple[Any, ...]
    _base: Callable[[str], Any]
    _entries: Mapping[str, Any]
    _fold: Callable[[str], str]

    def __new__(
        cls, name: str, table: NormalizerTable, locale: Mapping[str, Any] | None = None
    ) -> TableNormalizer:
        """Compile ``table`` (``UnknownName`` when its base is not a registered normalizer)."""
        options = tuple(sorted((k, v) for k, v in (locale or {}).items() if v is not None))
        content = json.dumps(
            [table.model_dump(mode="json"), options], sort_keys=True, ensure_ascii=False
        )
        digest = hashlib.sha256(content.encode()).hexdigest()[:16]
        self = super().__new__(cls, f"table:{name}:{digest}")
        fold = (lambda key: key) if table.case_sensitive else str.casefold
        entries: dict[str, Any] = {}
        for key, value in table.map.items():
            entries.setdefault(fold(key), value)
        attributes = {
            "name": name,
            "table": table,
            "locale": options,
            "keeps_unknown": table.unknown == "keep",
            "values": tuple(table.map.values()),
            "_base": _with_locale(table.base, NORMALIZERS.get(table.base), dict(options)),
            "_entries": MappingProxyType(entries),
            "_fold": fold,
        }
        for attribute, value in attributes.items():
            object.__setattr__(self, attribute, value)
        return self

    def __call__(self, text: str) -> Any:
        """The value the table holds for what the base reads in ``text``, or None."""
        value = self._base(text)
        if value is None:
            return None
        found = self._entries.get(self._fold(_lookup_text(value)), _MISSING)
        if found is not _MISSING:
            return found
        return value if self.keeps_unknown else None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a TableNormalizer is immutable (setting {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a TableNormalizer is immutable (deleting {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (TableNormalizer, (self.name, self.table, dict(self.locale)))

    def __copy__(self) -> TableNormalizer:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> TableNormalizer:
        return self


_COMPILED: OrderedDict[tuple[int, str, tuple[tuple[str, Any], ...]],
                       tuple[NormalizerTable, TableNormalizer]] = OrderedDict()  # fmt: skip
_COMPILED_LOCK = threading.Lock()
_COMPILED_MAX = 256


def table_normalizer(
    name: str, table: NormalizerTable, locale: Mapping[str, Any] | None = None
) -> TableNormalizer:
    """``table`` compiled, once per declaration (a unit's paths and checks share it).

    Raises:
        UnknownName: the table's base is not a registered normalizer.
    """
    options = tuple(sorted((k, v) for k, v in (locale or {}).items() if v is not None))
    key = (id(table), name, options)
    with _COMPILED_LOCK:
        cached = _COMPILED.get(key)
        if cached is not None and cached[0] is table:  # the same declaration, not a new one
            _COMPILED.move_to_end(key)
            return cached[1]
    compiled = TableNormalizer(name, table, dict(options))
    with _COMPILED_LOCK:
        _COMPILED[key] = (table, compiled)  # holding the table keeps its id from being reused
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
    return compiled


def normalizer_for(name: str, unit: UnitSpec | None = None) -> Callable[[str], Any]:
    """The function a field's ``normalize: <name>`` means in ``unit``.

    The unit's table of that name (compiled once), else the registered normalizer, the unit's
    locale bound to a ``grammar:`` one; a ``TableNormalizer`` is its own function. Every caller
    (the heuristic and CRF paths, CRF training, the calibrator's comparisons, the load checks)
    resolves names here, so a field means the same everywhere.

    Raises:
        UnknownName: no table and no registered normalizer has that name.
    """
    if isinstance(name, TableNormalizer):
        return name
    locale = unit.locale.model_dump() if unit is not None else {}
    if unit is not None and name in unit.normalizers:
        return table_normalizer(name, unit.normalizers[name], locale)
    function: Callable[[str], Any] = _with_locale(name, NORMALIZERS.get(name), locale)
    return function
