"""CLDR tables from Babel's data, built lazily in one pass per process and cached.

One pass reads every locale file Babel ships (1,100+) and keeps only what the readers need:
currency symbols, names and plural names; compact-number scale words (``Mio.``, ``milliards``,
``万``…); month and weekday names; unit names and plurals with their "per" forms; the "per"
connectors of compound units. Each locale file holds only what differs from its parent, so the
union over all of them is the whole of CLDR for these tables, and the pass takes well under a
second. Every look-up after that is a dictionary access.
"""

from __future__ import annotations

import pickle
import re
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from babel import Locale, UnknownLocaleError, localedata

from aau.values import _text
from aau.values._disk_cache import cached
from aau.values._text import key

__all__ = [
    "CONSTRUCTED_LANGUAGES",
    "Tables",
    "date_order",
    "language_of",
    "tables",
    "territory_names",
]

Languages = AbstractSet[str]

CONSTRUCTED_LANGUAGES = frozenset({"eo", "ia", "ie", "io", "jbo", "tok", "vo"})
"""Constructed languages CLDR covers: next to no text is written in them, and their words are
words of natural languages (Interlingua's "mense", a month, is Dutch "mensen", people; its
"milles", thousands, French miles). The readers leave their scale and unit words out."""


@dataclass(frozen=True, slots=True)
class Tables:
    """The CLDR tables, keyed by ``aau.values._text.key`` of the written form."""

    currencies: Mapping[str, Mapping[str, Languages]]
    """Marker key -> {ISO code: languages that write it}: symbols, names, plural names."""
    currency_surfaces: Mapping[str, frozenset[str]]
    """ISO code -> its markers as written."""
    scales: Mapping[str, Mapping[str, Decimal]]
    """Scale word key -> {language: multiplier}: "0 Millionen" at 1e6 gives ``millionen``."""
    months: Mapping[str, Mapping[int, Languages]]
    """Month name key -> {month number: languages}; wide and abbreviated, both contexts."""
    weekdays: frozenset[str]
    """Weekday name keys, wide and abbreviated."""
    units: Mapping[str, Mapping[str, Languages]]
    """Unit name key -> {CLDR unit id (``mass-kilogram``): languages}; "per" forms as ``/name``."""
    per_connectors: frozenset[str]
    """Words joining a compound unit ("pro", "por", "per", "par", "на"…), case-folded."""


def language_of(locale_id: str) -> str:
    """``pt_BR`` -> ``pt``."""
    return locale_id.replace("-", "_").split("_")[0]


def _read(locale_id: str) -> Mapping[str, Any]:
    """The data one locale file defines itself, without what it inherits.

    Read straight from Babel's file: ``babel.localedata.load(merge_inherited=False)`` would
    cache the partial data under the locale's name and hand it to every later Babel call.
    """
    with open(localedata.resolve_locale_filename(locale_id), "rb") as file:
        data: Mapping[str, Any] = pickle.load(file)  # noqa: S301  # Babel's packaged CLDR data
    return data


def _items(mapping: Any) -> Iterator[tuple[Any, Any]]:
    """Items of a raw CLDR mapping; an alias yields nothing (its target is read where it lives).

    An alias with overrides is stored as ``(Alias, {...})``: the overrides are the items.
    """
    if isinstance(mapping, tuple) and len(mapping) == 2:
        mapping = mapping[1]
    if isinstance(mapping, dict):
        yield from mapping.items()


def _get(mapping: Any, *path: str) -> Any:
    for part in path:
        if isinstance(mapping, tuple) and len(mapping) == 2:
            mapping = mapping[1]
        if not isinstance(mapping, dict):
            return None
        mapping = mapping.get(part)
    return mapping


_PATTERN_WORD = re.compile(r"[0#,.\s\u00a0\u202f']+")


class _Builder:
    def __init__(self) -> None:
        def nested() -> defaultdict[Any, set[str]]:
            return defaultdict(set)

        self.currencies: defaultdict[str, defaultdict[str, set[str]]] = defaultdict(nested)
        self.surfaces: defaultdict[str, set[str]] = defaultdict(set)
        self.scales: defaultdict[str, dict[str, Decimal]] = defaultdict(dict)
        self.months: defaultdict[str, defaultdict[int, set[str]]] = defaultdict(nested)
        self.weekdays: set[str] = set()
        self.units: defaultdict[str, defaultdict[str, set[str]]] = defaultdict(nested)
        self.per: set[str] = set()

    def currency(self, marker: Any, code: Any, language: str) -> None:
        if not isinstance(marker, str) or not isinstance(code, str):
            return
        marker_key = key(marker)
        if marker_key and len(code) == 3 and code.isalpha():
            self.currencies[marker_key][code].add(language)
            self.surfaces[code].add(marker.strip())

    def read(self, data: Mapping[str, Any], language: str) -> None:
        for code, symbol in _items(data.get("currency_symbols")):
            self.currency(symbol, code, language)
        for code, name in _items(data.get("currency_names")):
            self.currency(name, code, language)
        for code, forms in _items(data.get("currency_names_plural")):
            for _count, name in _items(forms):
                self.currency(name, code, language)
        for _width, counts in _items(data.get("compact_decimal_formats")):
            for _count, patterns in _items(counts):
                for threshold, pattern in _items(patterns):
                    self._scale(threshold, pattern, language)
        for context in ("format", "stand-alone"):
            for width in ("wide", "abbreviated"):
                for number, name in _items(_get(data.get("months"), context, width)):
                    if isinstance(name, str) and name and not name.isdigit() and key(name):
                        self.months[key(name)][int(number)].add(language)
                for _number, name in _items(_get(data.get("days"), context, width)):
                    if isinstance(name, str) and key(name):
                        self.weekdays.add(key(name))
        for unit_id, widths in _items(data.get("unit_patterns")):
            for _width, forms in _items(widths):
                for count, pattern in _items(forms):
                    if isinstance(pattern, str) and "{0}" in pattern:
                        name = key(pattern.replace("{0}", " "))
                        if name:
                            self.units[("/" if count == "per" else "") + name][unit_id].add(
                                language
                            )
        for unit_id, widths in _items(data.get("unit_display_names")):
            for _width, name in _items(widths):
                if isinstance(name, str) and key(name):
                    self.units[key(name)][unit_id].add(language)
        for _width, forms in _items(_get(data.get("compound_unit_patterns"), "per")):
            for _kind, pattern in _items(forms):
                if isinstance(pattern, str) and "{0}" in pattern and "{1}" in pattern:
                    between = pattern.split("{0}", 1)[1].split("{1}", 1)[0].strip().casefold()
                    if between and between != "/" and len(between) <= 12:
                        self.per.add(between)

    def _scale(self, threshold: Any, pattern: Any, language: str) -> None:
        text = getattr(pattern, "pattern", pattern)
        if not isinstance(text, str):
            return
        zeros = text.count("0")
        word = _PATTERN_WORD.sub(" ", text).strip()
        if word and zeros and not any(c.isdigit() for c in word):
            multiplier = Decimal(int(threshold)) / Decimal(10) ** (zeros - 1)
            self.scales[key(word)].setdefault(language, multiplier)

    def freeze(self) -> Tables:
        # Equal language sets become one frozenset: 100,000 sets are 3,600 distinct ones, and
        # the disk cache then stores and reads each once (0.56 s to read the tables, before).
        interned: dict[frozenset[str], frozenset[str]] = {}

        def nested(table: Mapping[Any, Mapping[Any, set[str]]]) -> dict[Any, dict[Any, Languages]]:
            out: dict[Any, dict[Any, Languages]] = {}
            for outer, inner in table.items():
                out[outer] = {}
                for name, languages in inner.items():
                    frozen = frozenset(languages)
                    out[outer][name] = interned.setdefault(frozen, frozen)
            return out

        return Tables(
            currencies=nested(self.currencies),
            currency_surfaces={c: frozenset(s) for c, s in self.surfaces.items()},
            scales=dict(self.scales),
            months=nested(self.months),
            weekdays=frozenset(self.weekdays),
            units=nested(self.units),
            per_connectors=frozenset(self.per),
        )


@cache
def tables() -> Tables:
    """All the tables, read from every locale file on first use (or from the disk cache)."""
    return cached("cldr-tables", (sys.modules[__name__], _text), _build)


def _build() -> Tables:
    builder = _Builder()
    for locale_id in ("root", *sorted(localedata.locale_identifiers())):
        try:
            data = _read(locale_id)
        except (OSError, pickle.UnpicklingError, EOFError):  # pragma: no cover - broken install
            continue
        builder.read(data, language_of(locale_id))
    return builder.freeze()


@cache
def iso_currency_codes() -> frozenset[str]:
    """Every ISO-4217 code CLDR knows."""
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


@cache
def territory_names(languages: tuple[str, ...]) -> Mapping[str, frozenset[str]]:
    """ISO-3166 territory code -> its names in ``languages`` (case-folded)."""
    names: dict[str, set[str]] = defaultdict(set)
    for language in languages:
        try:
            territories = Locale.parse(language).territories
        except (UnknownLocaleError, ValueError):
            continue
        for territory, name in territories.items():
            if isinstance(territory, str) and territory.isalpha() and len(territory) == 2:
                names[territory].add(name.casefold())
    return {territory: frozenset(found) for territory, found in names.items()}


@cache
def date_order(locale_id: str) -> str | None:
    """``"DMY"``, ``"MDY"`` or ``"YMD"``: the order of the locale's short date pattern."""
    try:
        pattern = Locale.parse(locale_id.replace("-", "_")).date_formats["short"].pattern
    except (UnknownLocaleError, ValueError, KeyError, TypeError):
        return None
    order = ""
    for letter in re.sub(r"'[^']*'", "", pattern):
        mark = {"d": "D", "M": "M", "L": "M", "y": "Y"}.get(letter)
        if mark and mark not in order:
            order += mark
    return order if len(order) == 3 else None
