"""Character-level folding shared by the readers: one place that knows the world's digits.

``fold`` maps every character to at most one character, so an offset in the folded text is an
offset in the original: readers search the folded text and report spans of the original. Digits
of every numbering system (``unicodedata.decimal``: Arabic-Indic, Devanagari, Bengali, Thai,
full-width…) become ASCII digits, the many spaces become ``" "``, minus and dash signs ``"-"``,
apostrophe-like marks ``"'"``, full-width ASCII its ASCII letter.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["MAX_SPAN", "MAX_TEXT", "fold", "key", "squash"]

MAX_SPAN = 256
"""Characters a single-value reader (``read_number``, ``read_date``…) looks at; longer is None.

A value written in more than this is not one value; the bound keeps every reader's work small
whatever it is handed."""

MAX_TEXT = 1_000_000
"""Characters a ``find_*`` scanner looks at (``aau.limits`` bounds whole texts alike)."""

_SPACES = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000\t\r\n\f\v"
)
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_QUOTES = "\u2018\u2019\u02bc\u2032\u00b4\u02b9\u0060"
_TABLE: dict[int, str] = {ord(c): " " for c in _SPACES}
_TABLE.update({ord(c): "-" for c in _DASHES})
_TABLE.update({ord(c): "'" for c in _QUOTES})
_TABLE.update({ord("\u02da"): "°", ord("\u2044"): "/", ord("\u2215"): "/", ord("\u00d7"): "x"})


class _FoldTable(dict[int, str]):
    """``str.translate`` table filled on demand: each code point is worked out once."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char.isascii():
            folded = char
        elif char.isdecimal():
            folded = str(unicodedata.decimal(char))
        elif 0xFF01 <= code <= 0xFF5E:  # full-width ASCII
            folded = chr(code - 0xFEE0)
        else:
            folded = char
        if len(self) < 1 << 16:
            self[code] = folded
        return folded


_FOLD = _FoldTable(_TABLE)


def fold(text: str) -> str:
    """``text`` with digits, spaces, dashes and quotes folded; the same length as ``text``."""
    return text.translate(_FOLD)


def squash(text: str) -> str:
    """Fold, then collapse whitespace runs and strip: the form single-value readers parse."""
    return " ".join(fold(text).split())


_DROP = str.maketrans("", "", " .·・‧'\u200e\u200f\u061c")  # bidi marks of RTL symbols too


@lru_cache(maxsize=1 << 17)
def key(text: str) -> str:
    """Look-up key of a marker or name: NFKC, case-folded, without spaces, dots and middots.

    "US $", "us$" and "US$" share a key, so do "スイス・フラン" and "スイス フラン", "руб." and
    "руб", "sq. ft." and "sq ft".
    """
    if text.isascii():
        return "".join(text.lower().split()).translate(_DROP)
    text = unicodedata.normalize("NFKC", fold(text)).casefold()
    return "".join(text.split()).translate(_DROP)
