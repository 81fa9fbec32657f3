"""Grounding: finding where a value a unit extracted occurs in the document text.

A model's answer is only as good as its evidence. ``align_value`` looks for the value in the
text, from the strictest reading to the loosest, and returns the first kind of match it finds:

1. the value exactly, at word boundaries;
2. the value ignoring case and whitespace (any run of whitespace matches any other, and
   Chinese or Japanese characters may have whitespace between them, as OCR often puts there);
3. for numbers, the same number written another way: ``1250``, ``1,250.00``, ``1.250,00``,
   ``1 250``, ``1'250.00``;
4. for dates, the same day written another way: ``2024-03-14``, ``14 March 2024``,
   ``14/03/2024``, ``March 14, 2024``, ``14.03.24``, ``2024年3月14日``;
5. for values without digits, the value inside a longer word, exactly and then loosely.

A value that is not found returns None, which callers treat as ungrounded (for instance a value
copied from a prompt's few-shot examples rather than read from the document). Boundaries are
checked in a way that also holds for text without spaces between words: a Chinese character
next to the match does not make it part of a longer word, but a digit next to a number does.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from datetime import date
from decimal import Decimal, InvalidOperation

__all__ = ["align_value"]

Span = tuple[int, int]

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
# A chain of digit groups joined by single separators; sub-chains are tried as numbers too, so
# "12 345" yields 12, 345 and 12345.
_DIGIT_CHAIN = re.compile(r"\d+(?:[.,'\u00a0\u2009\u202f ]\d+)*")
_GROUP = re.compile(r"\d+")
_THOUSANDS_EXTRA = "'\u00a0\u2009\u202f "
_MAX_GROUPS = 8

_MONTHS = {
    # English
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
    # German
    "januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "mai": 5, "juni": 6,
    "juli": 7, "oktober": 10, "okt": 10, "dezember": 12, "dez": 12,
    # French
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "juin": 6,
    "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
    "décembre": 12, "decembre": 12,
}  # fmt: skip
_MONTH = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th|er|e)?"
_DATE_PATTERNS = (
    # 2024-03-14, 2024/03/14, 2024.03.14
    re.compile(r"(?<!\d)(?P<y>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})(?!\d)"),
    # 14/03/2024, 03/14/2024, 14.03.24, 14-03-2024: day and month order is ambiguous
    re.compile(r"(?<!\d)(?P<a>\d{1,2})([-/.])(?P<b>\d{1,2})\2(?P<y>\d{4}|\d{2})(?!\d)"),
    # 14 March 2024, 14th of March, 2024, 14. März 2024
    re.compile(
        rf"(?<!\d)(?P<d>\d{{1,2}}){_ORDINAL}\.?\s*(?:of\s+)?(?P<mon>{_MONTH})\.?,?\s*"
        r"(?P<y>\d{4})(?!\d)",
        re.IGNORECASE,
    ),
    # March 14, 2024
    re.compile(
        rf"(?<![^\W\d_])(?P<mon>{_MONTH})\.?\s*(?P<d>\d{{1,2}}){_ORDINAL},?\s*(?P<y>\d{{4}})(?!\d)",
        re.IGNORECASE,
    ),
    # 2024年3月14日
    re.compile(r"(?<!\d)(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"),
)


def align_value(
    text: str, value: str | int | float, *, start_hint: int | None = None
) -> Span | None:
    """Find where ``value`` occurs in ``text``.

    Args:
        text: the document text.
        value: the extracted value; numbers and dates also match other ways of writing them.
        start_hint: where the value is expected (e.g. the offset of its clause); among matches
            of the same kind, the one starting nearest to it wins. Without it, the first wins.

    Returns:
        ``(start, end)`` with ``text[start:end]`` the matched text, or None when the value is
        not in the text.
    """
    needle = _as_text(value).strip()
    if not needle or not text:
        return None
    numbers = _number_targets(value)
    dates = _date_targets(needle) if isinstance(value, str) else set()
    has_digit = any(char.isdigit() for char in needle)
    stages: list[Iterator[Span]] = []
    if not numbers or isinstance(value, str):
        stages += [_exact(text, needle, bounded=True), _loose(text, needle, bounded=True)]
    if numbers:
        stages.append(_numbers(text, numbers))
    if dates:
        stages.append(_dates(text, dates))
    if not has_digit:
        stages += [_exact(text, needle, bounded=False), _loose(text, needle, bounded=False)]
    for stage in stages:
        best = _choose(stage, start_hint)
        if best is not None:
            return best
    return None


def _as_text(value: str | int | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _choose(spans: Iterator[Span], hint: int | None) -> Span | None:
    best: Span | None = None
    for span in spans:
        if best is None:
            best = span
        elif hint is None:
            if span[0] < best[0] or (span[0] == best[0] and span[1] > best[1]):
                best = span
        else:
            distance, best_distance = abs(span[0] - hint), abs(best[0] - hint)
            if distance < best_distance or (
                distance == best_distance and (span[0], -span[1]) < (best[0], -best[1])
            ):
                best = span
    return best


# -- boundaries -------------------------------------------------------------------------------


def _joins(left: str, right: str) -> bool:
    """Whether two adjacent characters belong to one word (letters or digits, not CJK)."""
    if not (left.isalnum() and right.isalnum()):
        return False
    return not (_CJK.match(left) or _CJK.match(right))


def _is_bounded(text: str, start: int, end: int) -> bool:
    if start > 0:
        if _joins(text[start - 1], text[start]):
            return False
        # "250" inside "1,250": a separator with digits on both sides continues the number.
        if (
            text[start].isdigit()
            and start >= 2
            and text[start - 1] in ".,"
            and text[start - 2].isdigit()
        ):
            return False
    if end < len(text):
        if _joins(text[end - 1], text[end]):
            return False
        if (
            text[end - 1].isdigit()
            and text[end] in ".,"
            and end + 1 < len(text)
            and text[end + 1].isdigit()
        ):
            return False
    return True


# -- text stages ------------------------------------------------------------------------------


def _exact(text: str, needle: str, *, bounded: bool) -> Iterator[Span]:
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if _is_bounded(text, start, end) == bounded:
            yield start, end
        start = text.find(needle, start + 1)


def _loose(text: str, needle: str, *, bounded: bool) -> Iterator[Span]:
    pattern = re.compile(_loose_pattern(needle), re.IGNORECASE)
    for match in pattern.finditer(text):
        if _is_bounded(text, match.start(), match.end()) == bounded:
            yield match.span()


def _loose_pattern(needle: str) -> str:
    tokens = needle.split()
    pieces: list[str] = []
    for token in tokens:
        chars: list[str] = []
        for index, char in enumerate(token):
            # OCR of Chinese often puts spaces between characters that the value lacks.
            if index and (_CJK.match(char) or _CJK.match(token[index - 1])):
                chars.append(r"\s*")
            chars.append(re.escape(char))
        pieces.append("".join(chars))
    return r"\s+".join(pieces)


# -- numbers ----------------------------------------------------------------------------------


def _number_targets(value: str | int | float) -> set[Decimal]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int | float):
        try:
            return {Decimal(repr(value)) if isinstance(value, float) else Decimal(value)}
        except InvalidOperation:  # nan, inf
            return set()
    stripped = value.strip()
    sign = -1 if stripped[:1] in ("-", "\u2212") else 1
    if stripped[:1] in ("-", "+", "\u2212"):
        stripped = stripped[1:].lstrip()
    if not _DIGIT_CHAIN.fullmatch(stripped):
        return set()
    return {sign * number for number in _readings(stripped)}


def _readings(chain: str) -> set[Decimal]:
    """All numbers a digit chain can stand for, under point-decimal and comma-decimal habits."""
    readings: set[Decimal] = set()
    for decimal_mark, thousands in ((".", "," + _THOUSANDS_EXTRA), (",", "." + _THOUSANDS_EXTRA)):
        number = _reading(chain, decimal_mark, thousands)
        if number is not None:
            readings.add(number)
    return readings


def _reading(chain: str, decimal_mark: str, thousands: str) -> Decimal | None:
    integer, mark, fraction = chain.partition(decimal_mark)
    if mark and (decimal_mark in fraction or any(sep in fraction for sep in thousands)):
        return None
    groups = _GROUP.findall(integer)
    if len(groups[0]) > 1 and groups[0][0] == "0":
        # "0317" is a code or a zero-padded field (a month, an invoice number), not 317.
        return None
    separators = [char for char in integer if not char.isdigit()]
    if any(sep not in thousands for sep in separators):
        return None
    # Thousands groups have three digits each, after a first group of one to three.
    if separators and (len(groups[0]) > 3 or any(len(group) != 3 for group in groups[1:])):
        return None
    digits = "".join(groups) + (f".{fraction}" if mark else "")
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def _digit_key(number_text: str) -> str:
    """The significant digits of a written number: "1,250.00" and "1.25" both give "125"."""
    return "".join(
        str(unicodedata.decimal(char)) for char in number_text if char.isdecimal()
    ).strip("0")


def _numbers(text: str, targets: set[Decimal]) -> Iterator[Span]:
    negative = any(target < 0 for target in targets)
    # Comparing significant digits first skips parsing nearly every candidate.
    keys = {_digit_key(format(abs(target), "f")) for target in targets}
    for chain in _DIGIT_CHAIN.finditer(text):
        groups = list(_GROUP.finditer(chain.group()))
        base = chain.start()
        for first in range(len(groups)):
            # A number has at most _MAX_GROUPS groups; the cap keeps a long run of numbers
            # separated by single spaces (an OCR'd table row) linear instead of quadratic.
            for last in range(first, min(len(groups), first + _MAX_GROUPS)):
                start, end = base + groups[first].start(), base + groups[last].end()
                if _digit_key(text[start:end]) not in keys or not _is_bounded(text, start, end):
                    continue
                readings = _readings(text[start:end])
                has_minus = start > 0 and text[start - 1] in ("-", "\u2212")
                if negative and has_minus:
                    readings |= {-number for number in readings}
                    if readings & targets:
                        yield start - 1, end
                        continue
                if readings & targets:
                    yield start, end


# -- dates ------------------------------------------------------------------------------------


def _date_targets(needle: str) -> set[date]:
    iso = re.fullmatch(r"(\d{4}-\d{2}-\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?", needle)
    if iso:
        try:
            return {date.fromisoformat(iso.group(1))}
        except ValueError:
            return set()
    for start, end, days in _date_mentions(needle):
        if start == 0 and end == len(needle):
            return days
    return set()


def _dates(text: str, targets: set[date]) -> Iterator[Span]:
    for start, end, days in _date_mentions(text):
        if days & targets:
            yield start, end


def _date_mentions(text: str) -> Iterator[tuple[int, int, set[date]]]:
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            days = _days(match.groupdict())
            if days:
                yield match.start(), match.end(), days


def _days(fields: dict[str, str | None]) -> set[date]:
    year_text = fields.get("y") or ""
    year = int(year_text)
    if len(year_text) == 2:
        # Two-digit years: 00-69 are 2000-2069, 70-99 are 1970-1999 (POSIX strptime's pivot).
        year += 2000 if year < 70 else 1900
    orders: list[tuple[int, int]] = []
    if fields.get("mon"):
        orders.append((_MONTHS[str(fields["mon"]).lower()], int(str(fields["d"]))))
    elif fields.get("a"):
        a, b = int(str(fields["a"])), int(str(fields["b"]))
        orders += [(b, a), (a, b)]  # day first, then month first
    else:
        orders.append((int(str(fields["m"])), int(str(fields["d"]))))
    days: set[date] = set()
    for month, day in orders:
        try:
            days.add(date(year, month, day))
        except ValueError:
            continue
    return days
