"""Reading, finding and rendering numbers as the world writes them.

One written number may use any CLDR locale's group and decimal separators, the digits of any
numbering system, spaces (plain, no-break, thin), apostrophes or underscores between groups,
Indian grouping (``1,20,000``), a sign, scientific notation, a fraction (``1/2``, ``3 1/2``,
``½``), scale words (``75 million``, ``1.5 bn``, ``Mio.``, ``Mrd.``, ``milliards``,
``тыс.``, ``lakh``, ``万``, ``億``…: every language's compact-number words from CLDR) and number
words (see ``aau.values._words``).

Separators are resolved by these rules, in order:

1. With a ``locale``, its CLDR decimal and group symbols are tried first.
2. Two kinds of separator: the last one, written once, is the decimal mark (``1.250,00``,
   ``1 250,50``, ``1'234.5``); the others group.
3. One kind written several times groups (``1.000.000``, ``1,20,000``); the groups must be
   well formed (three digits each, or Indian two-then-three), else the text is no number.
4. One ``.`` or ``,`` written once: a group separator when exactly three digits follow and the
   integer part is 1-3 digits, not ``0`` (``1.250`` is 1250, ``450.000`` is 450000), else the
   decimal mark (``16,4``, ``1.0753``, ``0,500``). A locale changes this (``1.250`` in ``en`` is
   1.25).

Integral values come back as ``int``, others as ``float`` (arithmetic is done in ``Decimal``,
so ``16.4 million`` is exactly 16400000). Readers return None for what they cannot read;
nothing here raises on input.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import NamedTuple

from aau.values import _cldr, _words
from aau.values._text import MAX_SPAN, MAX_TEXT, fold, key, squash

__all__ = [
    "Number",
    "close",
    "NumberSpan",
    "find_numbers",
    "is_height_metre",
    "is_short_word",
    "read_number",
    "read_range",
    "renderings",
    "scale_value",
]

Number = int | float
"""A number as the readers return it."""


class NumberSpan(NamedTuple):
    """A number found in a text: ``text[start:end]`` reads as ``value``.

    ``ordinal``: the number is an ordinal word ("second", "tweede", "deuxième"): a rank, which
    counts nothing.
    """

    start: int
    end: int
    text: str
    value: Number
    ordinal: bool = False


class _Hit(NamedTuple):
    start: int
    end: int
    value: Decimal
    scale: Decimal  # the scale word's multiplier (1 without one)


# -- separators ----------------------------------------------------------------------------------

_LITERAL = re.compile(r"\d+(?:(?:[.,'_\u066b\u066c]|[ ](?=\d{3}(?!\d)))\d+)*")
"""Digits with separators between them; a space separates only before exactly three digits."""
_GROUPING = re.compile(r"\d{1,3}(?:X\d{3})+|\d{1,2}(?:X\d{2})*X\d{3}")


def _well_grouped(runs: list[str]) -> bool:
    return bool(_GROUPING.fullmatch("X".join(runs)))


@cache
def _locale_symbols(locale: str) -> tuple[str, str] | None:
    from babel import UnknownLocaleError
    from babel.numbers import get_decimal_symbol, get_group_symbol

    try:
        return fold(get_decimal_symbol(locale)), fold(get_group_symbol(locale))
    except (UnknownLocaleError, ValueError, TypeError):
        return None


def _with_locale(runs: list[str], seps: list[str], locale: str) -> Decimal | None:
    symbols = _locale_symbols(locale)
    if symbols is None:
        return None
    decimal, group = symbols
    groups = {group, " ", "'", "_"} if group in " '" else {group}
    integer_runs, fraction = runs, ""
    if seps and seps[-1] == decimal and decimal not in seps[:-1]:
        integer_runs, fraction = runs[:-1], runs[-1]
        seps = seps[:-1]
    if any(sep not in groups for sep in seps):
        return None
    if seps and not _well_grouped(integer_runs):
        return None
    return Decimal("".join(integer_runs) + ("." + fraction if fraction else ""))


def _resolve(token: str, locale: str | None = None) -> Decimal | None:
    """The value of a digit run with separators (rules in the module docstring)."""
    token = token.replace("\u066b", ".").replace("\u066c", ",")
    runs = re.split(r"[^\d]", token)
    seps = re.findall(r"[^\d]", token)
    if not seps:
        return Decimal(token)
    if locale:
        value = _with_locale(runs, seps, locale)
        if value is not None:
            return value
    last = seps[-1]
    if last in ".," and last not in seps[:-1] and len(set(seps)) > 1:
        # Rule 2: another separator before the last; the last is the decimal mark.
        if len(set(seps[:-1])) != 1 or not _well_grouped(runs[:-1]):
            return None
        return Decimal("".join(runs[:-1]) + "." + runs[-1])
    if len(set(seps)) != 1:
        return None
    if len(seps) > 1 or last in " '_":
        return Decimal("".join(runs)) if _well_grouped(runs) else None
    integer, fraction = runs
    if (
        len(fraction) == 3
        and 1 <= len(integer) <= 3
        and integer != "0"
        and not integer.startswith("0")
    ):
        return Decimal(integer + fraction)
    return Decimal(integer + "." + fraction)


# -- scale words ---------------------------------------------------------------------------------

_LETTER_SCALES = {"k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
"""One-letter scales, case-sensitive and written right after the digits or one space away."""
_EXTRA_SCALES = {
    # English plurals and abbreviations CLDR leaves out, and forms usual in the press.
    "thousand": 10**3, "thousands": 10**3, "hundred": 100, "hundreds": 100, "millions": 10**6,
    "billions": 10**9, "trillions": 10**12, "mn": 10**6, "mln": 10**6,
    "bn": 10**9, "bln": 10**9, "mld": 10**9, "mlrd": 10**9, "tsd": 10**3,
    "tausend": 10**3, "lakhs": 10**5, "lac": 10**5, "lacs": 10**5, "crores": 10**7,
    "cr": 10**7, "milhão": 10**6, "milhao": 10**6, "milhoes": 10**6, "bilhao": 10**9,
    "bilhoes": 10**9, "millón": 10**6, "millon": 10**6, "millones": 10**6, "milione": 10**6,
    "milioni": 10**6, "miliardo": 10**9, "miliardi": 10**9, "miljoen": 10**6,
    "miljoenen": 10**6, "miljard": 10**9, "miljarden": 10**9, "million": 10**6,
    "milliard": 10**9, "milliards": 10**9, "milliarde": 10**9, "milliarden": 10**9,
    "dozen": 12, "dozens": 12, "dutzend": 12, "douzaine": 12, "douzaines": 12, "docena": 12,
    "docenas": 12, "dozzina": 12, "dozzine": 12, "dúzia": 12, "dúzias": 12, "dussin": 12,
    "düzine": 12, "दर्जन": 12, "ダース": 12, "다스": 12,
    "тысяч": 10**3, "тысячи": 10**3, "тысяча": 10**3,
    "миллионов": 10**6, "миллиона": 10**6, "миллион": 10**6, "миллиардов": 10**9,
    "тис": 10**3, "тисяч": 10**3, "ribu": 10**3, "juta": 10**6, "triệu": 10**6,
    "nghìn": 10**3, "ngàn": 10**3, "tỷ": 10**9, "bin": 10**3, "milyon": 10**6,
    "milyar": 10**9, "सौ": 100, "हजार": 10**3, "हज़ार": 10**3, "लाख": 10**5, "करोड़": 10**7,
    "करोड": 10**7, "अरब": 10**9, "खरब": 10**11, "मिलियन": 10**6, "बिलियन": 10**9, "ट्रिलियन": 10**12,
    "만": 10**4, "억": 10**8, "조": 10**12, "천": 10**3,
}  # fmt: skip
"""Scale words outside CLDR's compact formats, or whose CLDR reading is not the usual one."""
_CJK_TAIL = "十百千万萬億亿兆京拾佰仟"
_HANGUL_TAIL = {"십": "十", "백": "百", "천": "千", "만": "万", "억": "億", "조": "兆"}


_WIDELY_WRITTEN = frozenset({
    "root", "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "nb", "fi", "is", "pl",
    "cs", "sk", "sl", "hr", "sr", "bs", "ro", "hu", "tr", "ru", "uk", "be", "bg", "el", "ja",
    "zh", "ko", "hi", "bn", "ar", "id", "ms", "vi", "th", "he",
})  # fmt: skip
"""Languages whose short CLDR scale words are read: elsewhere a short word is too often a unit
or a currency ("km" is Catalan for 1e9, "kr" Balochi's, "min" Azerbaijani 1000)."""


_WORDS_NOT_SCALES = frozenset({"bill", "mm", "mile"})
"""CLDR abbreviations that are common words or units elsewhere: Norwegian "bill." (1e12) is
English's "the $20 bill", Portuguese "mM" (1e9) folds to the millimetre's "mm" ("a 5 mm
screw" was five billion), and Ladin's "mile" (1e3) is the English mile ("a 2.5 mile stretch"
was 2,500). Finance's "MM" (a million) is read next to money only."""


@cache
def _scales() -> dict[str, dict[str, Decimal]]:
    table = {}
    for word, by_language in _cldr.tables().scales.items():
        values = {lang: v for lang, v in by_language.items()
                  if lang not in _cldr.CONSTRUCTED_LANGUAGES}  # fmt: skip
        if values and (len(word) >= 4 or _WIDELY_WRITTEN.intersection(values)):
            table[word] = values
    for word, value in _EXTRA_SCALES.items():
        table[key(word)] = {"*": Decimal(value)}
    for word in (*_LETTER_SCALES, *_WORDS_NOT_SCALES):
        table.pop(key(word), None)
    return table


def scale_value(word: str, locale: str | None = None) -> Decimal | None:
    """The multiplier of a scale word (``Mio.`` 1e6, ``milliards`` 1e9, ``lakh`` 1e5).

    A word whose value differs between languages ("billion": 1e9 in English, 1e12 in French
    and German) takes the locale's value when a locale is given, else the value listed here
    for the usual (press) reading, else English's, else the one most languages give.
    """
    if word in _LETTER_SCALES:
        return Decimal(_LETTER_SCALES[word])
    values = _scales().get(key(word))
    if not values:
        return None
    if locale:
        language = _cldr.language_of(locale)
        if language in values:
            return values[language]
    for preferred in ("*", "en"):
        if preferred in values:
            return values[preferred]
    return Counter(values.values()).most_common(1)[0][0]


_LETTER_OR_SIGN = r"(?:[^\W\d_]|[\u0300-\u036f\u0900-\u0dff\u0e31-\u0e4e])"
"""A letter, or a combining vowel sign of Indic and Thai scripts, which ``\\w`` leaves out."""
_WORD = re.compile(rf"[^\W\d_]{_LETTER_OR_SIGN}*\.?")
"""A word: letters, and the combining vowel signs of Indic and Thai scripts ("लाख")."""
_NUMBER_WORD = re.compile(rf"[^\W\d_]{_LETTER_OR_SIGN}*(?:['\-][^\W\d_]{_LETTER_OR_SIGN}*)*")
"""A token that may be a number word ("twenty-two", "पचास")."""
_SHORT_SCALES_OK = frozenset({"mio", "mrd", "mln", "mld", "bn", "mn", "tsd", "тыс", "млн", "млрд",
                              "mil", "lac", "cr"})  # fmt: skip
"""Scale words under four letters that a quantity reader still takes ("2 Mio. Liter")."""


def _scale_after(
    text: str, position: int, locale: str | None, letters: bool
) -> tuple[Decimal, int]:
    """The product of the scale words from ``position`` on (``mil millones``), and their end.

    ``letters`` admits one-letter scales (``75M``, ``5k``) and short words; a quantity reader
    turns it off, since there ``5 m`` is five metres and ``200 k`` two hundred kelvin.
    """
    total, end = Decimal(1), position
    for _ in range(3):
        cursor = end + 1 if end < len(text) and text[end] == " " else end
        match = _WORD.match(text, cursor)
        if not match:
            break
        bare = match.group().rstrip(".")
        after = cursor + len(bare)
        if after < len(text) and (
            text[after].isalnum()
            or text[after] in "/²³"
            or unicodedata.category(text[after]) == "Sc"
        ):
            break  # "1 T$", "1 NT$": the letters are the currency marker's, not a trillion
        value: Decimal | None
        if bare in _LETTER_SCALES:
            value = Decimal(_LETTER_SCALES[bare]) if letters else None
        elif len(bare) < 2 or (not letters and len(bare) < 4 and key(bare) not in _SHORT_SCALES_OK):
            value = None
        else:
            value = scale_value(bare, locale)
        if value is None:
            break
        if after < len(text) and text[after] == "." and len(bare) <= 4:
            after += 1  # the abbreviation's dot: "Mio.", "тыс."
        total *= value
        end = after
    return total, end


# -- the scanner ---------------------------------------------------------------------------------

_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5",
           "⅗": "3/5", "⅘": "4/5", "⅙": "1/6", "⅚": "5/6", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8",
           "⅞": "7/8"}  # fmt: skip
_DENOMINATORS = {2, 3, 4, 5, 6, 8, 10, 12, 16, 32, 64, 100}
"""Denominators read as a fraction in ``a/b`` (so 24/7 and 12/05 are not fractions)."""
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_EXPONENT = re.compile(
    r"[eE]([-+]?\d{1,3})(?!\d)|\s?[x*·]\s?10(?:(?:\^|\*\*)([-+]?\d{1,3})|([-+]?[1-9]\d{0,2})"
    r"|([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))"
)
_FRACTION = re.compile(r"/(\d{1,3})(?![\d/])")
_MIXED = re.compile(r" (?:and )?(\d{1,2})/(\d{1,3})(?![\d/])")  # "2 3/4", "2 and 3/4"
_CJK_RUN = re.compile(
    r"[\d.〇零一二三四五六七八九两兩壱弐参壹贰貳叁參肆伍陆陸柒捌玖十百千万萬億亿兆京拾佰仟点點]+"
)
_CJK_START = re.compile(
    r"[负負]?[〇零一二三四五六七八九两兩壱弐参壹贰貳叁參肆伍陆陸柒捌玖十百千万萬億亿兆京拾佰仟]"
)


def _signed(text: str, start: int) -> int:
    """``start`` moved back over a sign that belongs to the number (not a range's dash).

    "-20" is signed where nothing, a space or an opening comes before it, except right after a
    number ("10 -20" is a range); "- 20" only at the start or after an opening ("(", ":", "=").
    A dash right after a letter or digit ("10-20", "COVID-19") is no sign; 负 always is.
    """
    cursor = start - 1
    spaced = cursor >= 1 and text[cursor] == " " and text[cursor - 1] in "-+"
    if spaced:
        cursor -= 1
    if cursor < 0:
        return start
    if text[cursor] in "负負" and not spaced:
        return cursor
    if text[cursor] not in "-+":
        return start
    before = text[:cursor]
    if before and before[-1].isalnum():
        return start
    previous = before.rstrip()
    if spaced and previous and previous[-1] not in "([:=":
        return start
    if previous[-1:].isdigit():
        return start
    return cursor


def _cjk_tail(text: str, start: int) -> tuple[Decimal, int] | None:
    """A CJK number starting at ``start`` when digits there are followed by 万, 千 or 億."""
    match = _CJK_RUN.match(text, start)
    if not match or not any(c in _CJK_TAIL or c in _words.CJK_NUMERALS for c in match.group()):
        return None
    run = match.group().rstrip(".")
    value = _words.cjk_value(run)
    return None if value is None else (value, start + len(run))


_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")


def _grouped_cjk_tail(text: str, token: str, end: int) -> tuple[Decimal, int] | None:
    """Digits grouped by commas before a CJK scale ("1,000万", Korean "1,000만"): 10 million."""
    if not _GROUPED.fullmatch(token) or text[end : end + 1] not in _CJK_TAIL:
        return None
    run = _CJK_RUN.match(text, end)
    if run is None:
        return None
    tail = run.group().rstrip(".")
    value = _words.cjk_value(token.replace(",", "") + tail)
    return None if value is None else (value, end + len(tail))


def _hangul_tail(text: str, start: int, end: int) -> tuple[Decimal, int] | None:
    """Digits followed by a Hangul scale (5만, 3천): the CJK reading of both."""
    cursor, tail = end, ""
    while cursor < len(text) and text[cursor] in _HANGUL_TAIL and len(tail) < 4:
        tail += _HANGUL_TAIL[text[cursor]]
        cursor += 1
    if not tail:
        return None
    value = _words.cjk_value(text[start:end].replace(",", "") + tail)
    return None if value is None else (value, cursor)


def _scan(text: str, *, locale: str | None = None, letters: bool = True) -> Iterator[_Hit]:
    """Numbers written with digits or CJK numerals in folded ``text``, left to right.

    Each pattern's next match is remembered until the scan passes it, so the work stays linear
    in the text however many numbers it holds.
    """
    position = 0
    literal = _LITERAL.search(text)
    cjk = _CJK_START.search(text)
    while literal or cjk:
        if literal and literal.start() < position:
            literal = _LITERAL.search(text, position)
        if cjk and cjk.start() < position:
            cjk = _CJK_START.search(text, position)
        if cjk and (not literal or cjk.start() < literal.start()):
            begin = cjk.start() + (text[cjk.start()] in "负負")
            run = _CJK_RUN.match(text, begin)
            end = run.end() if run else cjk.end()
            value = _words.cjk_value(text[cjk.start() : end].rstrip("."))
            fraction = _cjk_fraction_or_mixed(text, end, value)
            if fraction is not None:  # "四分之一": a quarter, not four minutes
                value, end = fraction
            if value is not None and not _lone_cjk_word(text, cjk.start(), end):
                yield _Hit(cjk.start(), end, value, Decimal(1))
            position = max(end, cjk.start() + 1)
            continue
        if not literal:
            return
        hit = _read_literal(text, literal, locale, letters)
        if hit is None:
            position = literal.end()
            continue
        yield hit
        position = max(hit.end, literal.end())


_COUNTERS = frozenset(
    "个個つ元円块塊米克斤公千百万億亿年月日号號次件台本张張枚人度分秒天周週杯瓶箱"
    "升毫厘英吨噸磅盎桶寸尺码碼吋"
)


_FRACTION_OF = re.compile(r" ?(?:分の|분의|分之) ?")
_HANGUL_BELOW_MAN = "".join(sorted(_words.HANGUL_NUMERALS - set("만억조")))
_NUMERATOR = re.compile(rf"\d{{1,4}}(?![\d.,]\d)|{_CJK_RUN.pattern}|[{_HANGUL_BELOW_MAN}]+")
"""A fraction's numerator: digits, CJK numerals, or Hangul numerals below 만 ("3분의 일만 줘" is
"only a third": 만 is "only" there, not ten thousand)."""


def _cjk_fraction(text: str, end: int, denominator: Decimal | None) -> tuple[Decimal, int] | None:
    """A fraction written denominator first, after the denominator's numerals or digits.

    Chinese "四分之一" (1/4) and "百分之五" (5/100), Japanese "4分の1", Korean "4분의 1": a
    quarter, not four minutes. Returns (value, end).
    """
    if denominator is None or denominator <= 0:
        return None
    link = _FRACTION_OF.match(text, end)
    numerator = _NUMERATOR.match(text, link.end()) if link is not None else None
    if numerator is None:
        return None
    written, end = numerator.group().rstrip("."), numerator.end()
    if "가" <= written[0] <= "힣":
        # the longest run of Hangul numerals that the word's end, a particle or a counter
        # follows: "삼이다" is "is three" (이다), not 32
        cut = next((c for c in range(len(written), 0, -1)
                    if _numerator_ends(text, numerator.start() + c)), 0)  # fmt: skip
        if not cut:
            return None
        written, end = written[:cut], numerator.start() + cut
    value = _words.cjk_value(_words.kana_or_hangul(written))
    return None if value is None else (value / denominator, end)


_MIXED_JOINER = re.compile(r"[又と]|[와과] ")
_DENOMINATOR = re.compile(rf"\d{{1,4}}|{_CJK_RUN.pattern}|[{_HANGUL_BELOW_MAN}]+")


def _cjk_fraction_or_mixed(
    text: str, end: int, value: Decimal | None
) -> tuple[Decimal, int] | None:
    """``_cjk_fraction`` after ``value``'s numerals, or a mixed number.

    A whole number and a fraction joined by 又, と, 와 or 과: "一又二分之一", "1と2分の1カップ",
    "일과 이분의 일" (one and a half). Returns (value, end).
    """
    fraction = _cjk_fraction(text, end, value)
    if fraction is not None or value is None or value < 0:
        return fraction
    joiner = _MIXED_JOINER.match(text, end)
    if joiner is None or value != value.to_integral_value():
        return None
    denominator = _DENOMINATOR.match(text, joiner.end())
    if denominator is None:
        return None
    part = _cjk_fraction(
        text, denominator.end(), _words.cjk_value(_words.kana_or_hangul(denominator.group()))
    )
    if part is None or not 0 < part[0] < 1:
        return None
    return value + part[0], part[1]


def _lone_cjk_word(text: str, start: int, end: int) -> bool:
    """一 before another ideograph is part of a word (一般, 一样), unless that is a counter."""
    if end - start != 1 or text[start] != "一" or end >= len(text):
        return False
    following = text[end]
    return "\u4e00" <= following <= "\u9fff" and following not in _COUNTERS


_CODE_BEFORE = re.compile(r"(?:^|[^A-Za-z0-9])(?:[A-Za-z]{2,3}|R)\$?$")


def _glued_code(text: str, start: int, end: int) -> bool:
    """Digits glued to Latin letters are a code ("A4", "24703L202", "scp-173"), not a number.

    A currency code or symbol written against the digits ("EUR1250", "Rs500", "R100", "US$5")
    is a word of its own before them and passes.
    """
    before = text[max(0, start - 5) : start]
    if before and before[-1].isascii() and before[-1].isalpha():
        return not _CODE_BEFORE.search(before)
    if before.endswith("-") and len(before) >= 2 and before[-2].isascii() and before[-2].isalpha():
        return True
    if _EXPONENT.match(text, end):
        return False
    if end - start == 1 and _HEIGHT.match(text, end):
        return False  # "1m80": a height in metres and centimetres
    return bool(re.match(r"[A-Za-z]+\d", text[end : end + 8]))


_HEIGHT = re.compile(r"m\d{2}(?!\w|[.,]\d)")


def is_height_metre(text: str) -> bool:
    """Whether ``text`` starts with the "m80" of a height written "1m80" (metres, centimetres)."""
    return _HEIGHT.match(text) is not None


def _read_literal(
    text: str, literal: re.Match[str], locale: str | None, letters: bool
) -> _Hit | None:
    start, end = literal.start(), literal.end()
    token = literal.group()
    if _glued_code(text, start, end):
        return None
    sign_start = _signed(text, start)
    negative = sign_start < start and text[sign_start] in "-负負"
    scale = Decimal(1)
    cjk = _cjk_tail(text, start) or _grouped_cjk_tail(text, token, end)
    hangul = (
        _hangul_tail(text, start, end) if cjk is None and token.replace(",", "").isdigit() else None
    )
    if cjk is not None and cjk[1] > end:
        value, end = cjk
    elif hangul is not None:
        value, end = hangul
        last = _words.cjk_value(_HANGUL_TAIL.get(text[end - 1], text[end - 1])) or Decimal(1)
        value, end = _unscaled_tail(text, value, last, end, locale, letters)  # "3만 5000원"
    else:
        resolved = _resolve(token, locale)
        if resolved is None:
            return None
        if _leading_point(text, start, token):  # "$.75", ".75 €": no whole part written
            resolved, start = Decimal(f"0.{token}"), start - 1
            sign_start = _signed(text, start)
            negative = sign_start < start and text[sign_start] in "-负負"
        value, end = _fraction_and_exponent(text, token, resolved, end)
        fraction = _cjk_fraction_or_mixed(text, end, value) if token.isdigit() else None
        if fraction is not None:  # "4分の1", "4분의 1": a quarter, not four minutes
            value, end = fraction
            return _Hit(sign_start, end, -value if negative else value, Decimal(1))
        half = _HALF_AFTER_DIGITS.match(text, end)
        if half is not None and value == value.to_integral_value():
            value, end = value + Decimal("0.5"), half.end()  # "3 buçuk milyon", "2 and a half"
        scale, end = _scale_after(text, end, locale, letters)
        value *= scale
        if scale > 1:
            value, end = _scale_chain(text, value, scale, end, locale, letters)
    return _Hit(sign_start, end, -value if negative else value, scale)


_HALF_AFTER_DIGITS = re.compile(r"\s+(?:buçuk|and a half)(?!\w)", re.IGNORECASE)
"""A half after a whole number in digits, before its scale or unit ("2 and a half million")."""


def _leading_point(text: str, start: int, token: str) -> bool:
    """Whether the digits at ``start`` follow a decimal point with no whole part before it.

    Only where a number may start: after nothing, a space, an opening or a currency symbol
    ("$.75"); "v.2", "3..5" and "end.75" are no such decimals.
    """
    if not token.isdigit() or start < 1 or text[start - 1] != ".":
        return False
    if start == 1:
        return True
    before = text[start - 2]
    return before.isspace() or before in "([-+" or unicodedata.category(before) == "Sc"


_CHAIN_PART = re.compile(r"[ \u00a0]+(?:(?:and|und|et|y|e|और|или)[ \u00a0]+)?(\d{1,3})(?![\d.,]\d)")


def _scale_chain(
    text: str, value: Decimal, scale: Decimal, end: int, locale: str | None, letters: bool
) -> tuple[Decimal, int]:
    """Digits with smaller scales after a scaled number ("2 लाख 50 हज़ार" is 250,000).

    "4 thousand 3 hundred and 21" is 4,321: each part's scale is below the last one's, and
    its value too; "5 million 20 people" stays two numbers.
    """
    smallest = scale
    for _ in range(3):
        part = _CHAIN_PART.match(text, end)
        if part is None:
            break
        next_scale, next_end = _scale_after(text, part.end(), locale, letters)
        amount = Decimal(part.group(1)) * next_scale
        if next_scale <= 1 or next_scale >= smallest or amount >= smallest:
            break
        value, end, smallest = value + amount, next_end, next_scale
    if smallest == 100:  # "3 hundred and 21"
        tail = _HUNDRED_AND.match(text, end)
        if tail is not None:
            value, end = value + Decimal(tail.group(1)), tail.end()
    return _unscaled_tail(text, value, smallest, end, locale, letters)


_TAIL_DIGITS = re.compile(r"[ \u00a0]?(\d{1,4})(?![\d.,]?\d)")


def _unscaled_tail(
    text: str, value: Decimal, smallest: Decimal, end: int, locale: str | None, letters: bool
) -> tuple[Decimal, int]:
    """Digits without a scale after a thousand or a 만: "3 bin 500" is 3,500, "3만 5000" 35,000.

    Only below that scale, and not where a scale follows them (the next number's: "3 bin 500
    milyon").
    """
    if smallest not in (1000, 10_000):
        return value, end
    tail = _TAIL_DIGITS.match(text, end)
    if tail is None or not 0 < int(tail.group(1)) < smallest:
        return value, end
    following = text[tail.end() : tail.end() + 1]
    if following and (following in _CJK_TAIL or following in _HANGUL_TAIL):
        return value, end  # "4천3백": 3 is the hundreds' count
    if _scale_after(text, tail.end(), locale, letters)[0] > 1:
        return value, end
    return value + Decimal(tail.group(1)), tail.end()


_HUNDRED_AND = re.compile(r"[ \u00a0]+and[ \u00a0]+(\d{1,2})(?![\d.,]?\d)")


def _fraction_and_exponent(text: str, token: str, value: Decimal, end: int) -> tuple[Decimal, int]:
    if token.isdigit():
        if end < len(text) and text[end] in _VULGAR:
            top, bottom = _VULGAR[text[end]].split("/")
            return value + Decimal(top) / Decimal(bottom), end + 1
        fraction = _FRACTION.match(text, end)
        if fraction and int(fraction.group(1)) in _DENOMINATORS and value < int(fraction.group(1)):
            return value / Decimal(fraction.group(1)), fraction.end()
        mixed = _MIXED.match(text, end)
        if mixed:
            numerator, denominator = int(mixed.group(1)), int(mixed.group(2))
            if denominator in _DENOMINATORS and 0 < numerator < denominator:
                return value + Decimal(numerator) / Decimal(denominator), mixed.end()
    exponent = _EXPONENT.match(text, end)
    if exponent:
        power = next(g for g in exponent.groups() if g is not None).translate(_SUPERSCRIPTS)
        try:
            return value * Decimal(10) ** int(power), exponent.end()
        except (InvalidOperation, ValueError, OverflowError):
            return value, end
    return value, end


_HANGUL_PLACES = frozenset("십백천만억조")


# What may follow a Sino-Korean numeral glued to it: a counter, a particle, a currency name.
_HANGUL_COUNTERS = ("명", "개", "번", "배", "층", "회", "권", "대", "장", "년", "개월",
                    "주", "시간", "분", "초", "퍼센트", "프로", "킬로", "미터", "그램",
                    "리터", "톤")  # fmt: skip
_HANGUL_PARTICLES = ("은", "는", "을", "를", "의", "도", "과", "와", "입니다", "이다", "이에요",
                     "예요", "짜리", "까지", "부터")  # fmt: skip
# Not 에: "천만에요" is "you are welcome".
_HANGUL_SMALL_PLACES = frozenset("십백천만")
HANGUL_UNITS = ("킬로미터", "센티미터", "밀리미터", "밀리리터", "미리리터", "헥토리터", "킬로그램",
                 "리터", "미터", "메터", "그램", "갤런", "갤론", "마일", "야드", "피트", "인치",
                 "센티", "센치")  # fmt: skip
"""Korean unit names of two syllables or more: a single numeral glued to one counts ("이리터":
2 l)."""


@cache
def _hangul_followers() -> tuple[str, ...]:
    """Currency names, counters and particles a Sino-Korean numeral may be glued to."""
    return (*_hangul_currencies(), *_HANGUL_COUNTERS, *HANGUL_UNITS, *_HANGUL_PARTICLES)


@cache
def _hangul_currencies() -> tuple[str, ...]:
    """Korean currency names: the last word of CLDR's ``ko`` names ("원", "달러", "유로").

    A name of one syllable other than 원 and 엔 is left out: "조금" ("a little") is no 조 of
    금 (gold).
    """
    from babel import Locale

    names = {name.split()[-1] for name in Locale.parse("ko").currencies.values()}
    hangul = {name for name in names if re.fullmatch("[가-힣]+", name)}
    return tuple(sorted({n for n in hangul if len(n) > 1} | {"원", "엔"}, key=len, reverse=True))


def _glued_hangul_number(text: str, numeral: re.Match[str]) -> bool:
    """Whether a Sino-Korean ``numeral`` glued to the Hangul after it is a number there.

    "오천원" (5,000 won), "오십이명" (52 people), "십육입니다" (it is 16): a run with a place
    word (십, 백, 천, 만…) before a currency name, a counter, a unit or a particle. A
    one-syllable run before a unit name of two syllables or more ("삼리터": 3 litres), and
    before a currency name only as a small place ("만원": 10,000 won; "조원" is a team member,
    "사원" an employee).
    """
    run, after = numeral.group(), text[numeral.end() : numeral.end() + 4]
    if len(run) == 1:
        if after.startswith(HANGUL_UNITS):
            return True
        return run in _HANGUL_SMALL_PLACES and after.startswith(_hangul_currencies())
    return any(c in _HANGUL_PLACES for c in run) and after.startswith(_hangul_followers())


_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60,
                "일흔": 70, "여든": 80, "아흔": 90}  # fmt: skip
_NATIVE_UNITS = {"하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "석": 3, "넷": 4, "네": 4,
                 "넉": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}  # fmt: skip
_NATIVE_ATTRIBUTIVE = frozenset({"한", "두", "세", "석", "네", "넉", "스무"})
"""The forms before a counter ("세 개": three things): alone they are other words ("네" is
"yes", "세" a tax, "한" "did")."""
_NATIVE_COUNTERS = (*_HANGUL_COUNTERS, "살", "마리", "잔", "병", "시", "그릇", "사람", "가지",
                    "군데", "켤레", "벌", "송이", "다스", "조각")  # fmt: skip
_GLUED_NATIVE_COUNTERS = ("개", "명", "번", "살", "잔", "병", "마리", "벌", "가지", "사람", "시간",
                          "그릇", "송이", "켤레", "군데", "조각", "다스", "개월")  # fmt: skip
"""Counters written against a native number as often as apart ("세개"); not 대, 층 or 시:
"세대" is a generation, "한층" "even more", "한시적" "temporary"."""
_NATIVE = re.compile(
    rf"(?<![가-힣])({'|'.join(sorted(_NATIVE_TENS, key=len, reverse=True))})?"
    rf"({'|'.join(sorted(_NATIVE_UNITS, key=len, reverse=True))})?(?=([가-힣]*))"
)


def is_native_korean(numeral: str) -> bool:
    """Whether ``numeral`` is a native Korean number ("다섯", "스물한").

    Counters follow one after a space ("다섯 명"), where a Sino-Korean one is glued to them
    ("오명").
    """
    match = _NATIVE.fullmatch(numeral.strip())
    return match is not None and bool(match.group(1) or match.group(2))


def _native_korean(text: str, folded: str) -> list[NumberSpan]:
    """Native Korean numbers, 1 to 99: "열여섯", "쉰둘", "세 개", "두 시간", "스물한 살".

    A counter or unit after one (glued or after a space) makes it a number; without one, only a
    full form of two syllables or more, alone or before a particle ("쉰일곱", "열여섯입니다").
    The forms used before counters ("한", "두", "세", "네") count only there.
    """
    found: list[NumberSpan] = []
    for match in _NATIVE.finditer(folded):
        tens, units, rest = match.group(1), match.group(2), match.group(3)
        if not (tens or units):
            continue
        value = _NATIVE_TENS.get(tens or "", 0) + _NATIVE_UNITS.get(units or "", 0)
        end = match.end()
        last = units or tens or ""
        spaced = folded[end : end + 1] == " " and folded.startswith(_NATIVE_COUNTERS, end + 1)
        counted = folded.startswith(_GLUED_NATIVE_COUNTERS, end) or (not rest and spaced)
        if not counted:
            if last in _NATIVE_ATTRIBUTIVE or end - match.start() < 2:
                continue
            if rest and not rest.startswith(_HANGUL_PARTICLES + ("이", "에", "가", "만")):
                continue  # "여섯째" or a longer word
        found.append(NumberSpan(match.start(), end, text[match.start() : end], value))
    return found


def _numerator_ends(text: str, end: int) -> bool:
    """Whether a Korean fraction's numerator ends at ``end``.

    It does where no Hangul follows, or a particle, counter or unit ("사분의 일조각": a third of
    a piece); "10분의 일정" is a 10-minute schedule, not a tenth.
    """
    return not ("가" <= text[end : end + 1] <= "힣") or text.startswith(
        (*_hangul_followers(), "조각", "만", "으로", "로", "이", "가", "에"), end
    )


def _glued(text: str, numeral: re.Match[str]) -> bool:
    """Whether Hangul follows ``numeral`` with no space ("오천원", not "오천 원")."""
    return numeral.end() < len(text) and "가" <= text[numeral.end()] <= "힣"


def _hangul_numbers(text: str, folded: str) -> list[NumberSpan]:
    """Sino-Korean numerals, a number written in spaced parts read as one ("오십 이" is 52).

    A part joins the number before it when that number has a place word (십, 백, 천…) and the
    two read together add up ("이천 이백": 2,200); "삼 사" stays three and four. A numeral
    glued to the word after it counts where that word is a counter, particle or currency
    (``_glued_hangul_number``).
    """
    found: list[tuple[int, int, Decimal]] = []
    for word in _HANGUL_NUMERAL.finditer(folded):
        value = _words.cjk_value(_words.kana_or_hangul(word.group()))
        fraction = _cjk_fraction_or_mixed(folded, word.end(), value)
        if fraction is not None:  # "사분의 삼": 3/4; "일과 이분의 일": 1.5
            found.append((word.start(), fraction[1], fraction[0]))
            continue
        if _glued(folded, word) and not _glued_hangul_number(folded, word):
            continue
        if value is None:
            continue
        if found and folded[found[-1][1] : word.start()].isspace() and value > 0:
            start, end, before = found[-1]
            together = _words.cjk_value(_words.kana_or_hangul(folded[start:end] + word.group()))
            if (
                together == before + value
                and value < before
                and any(c in _HANGUL_PLACES for c in folded[start:end])
            ):
                found[-1] = (start, word.end(), together)
                continue
        found.append((word.start(), word.end(), value))
    return [NumberSpan(start, end, text[start:end], _number(value)) for start, end, value in found]


def close(a: float, b: float, rel_tol: float = 1e-6) -> bool:
    """Whether two numbers are equal within ``rel_tol`` (and 1e-9 absolute, for zero)."""
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)


def _number(value: Decimal) -> Number:
    if value == value.to_integral_value() and abs(value) < 10**18:
        return int(value)
    return float(value)


# -- public readers ------------------------------------------------------------------------------

_NEGATIVE_WORDS = ("minus", "moins", "menos", "meno", "negative", "negativo", "eksi", "минус",
                   "マイナス", "마이너스")  # fmt: skip
_STANDALONE = {"½": Decimal("0.5"), "¼": Decimal("0.25"), "¾": Decimal("0.75"),
               "⅓": Decimal(1) / 3, "⅔": Decimal(2) / 3, "⅛": Decimal("0.125")}  # fmt: skip


_HANGUL_DIGITS = "".join(sorted(_words.HANGUL_NUMERALS))
_HANGUL_NUMERAL = re.compile(f"(?<![가-힣])[{_HANGUL_DIGITS}]+(?:점[{_HANGUL_DIGITS}]+)?")
"""Sino-Korean numerals that begin a Hangul word ("삼만", "이십오", "오천원"); whether one glued to
more Hangul is a number is ``_glued_hangul_number``'s to say."""
LONE_FRACTIONS = frozenset(_STANDALONE)
"""Fraction characters that write a number on their own ("½ cup")."""
_LONE_FRACTION = re.compile(f"(?<![\\d/])[{''.join(_STANDALONE)}](?![\\d/])")


def _prepare(text: str) -> str | None:
    if not isinstance(text, str) or len(text) > MAX_SPAN:
        return None
    text = squash(text)
    # Stray spaces around a decimal mark, a space between digits and a CJK scale ("7  万").
    text = re.sub(
        r"(?<=\d) ?([.,]) (?=\d)|(?<=\d) ([.,])(?=\d)", lambda m: m.group(1) or m.group(2), text
    )
    text = re.sub(r"(?<=[\d〇零一二三四五六七八九十百千]) +(?=[十百千万萬億亿兆])", "", text)
    # Sino-Korean scales after digits read as CJK ones, groups joined: "3억 5천만" -> "3億5千万".
    text = re.sub(
        r"(?<=\d)[십백천만억조]+", lambda m: "".join(_HANGUL_TAIL[c] for c in m.group()), text
    )
    text = re.sub(r"(?<=[万萬億亿兆]) +(?=\d)", "", text)
    # A Sino-Korean numeral glued to its counter or currency stands apart: "오천원" -> "오천 원".
    text = _HANGUL_NUMERAL.sub(
        lambda m: (
            m.group() + " " if _glued(text, m) and _glued_hangul_number(text, m) else m.group()
        ),
        text,
    )
    return text or None


def _read_decimal(text: str, locale: str | None, languages: Sequence[str] | None) -> Decimal | None:
    for word in _NEGATIVE_WORDS:
        if text.casefold().startswith(word + " ") or (not word.isascii() and text.startswith(word)):
            inner = _read_decimal(text[len(word) :].strip(), locale, languages)
            return None if inner is None else -inner
    if text in _STANDALONE:
        return _STANDALONE[text]
    hits = list(_scan(text, locale=locale))
    if len(hits) == 1 and hits[0].start == 0 and hits[0].end == len(text):
        return hits[0].value
    if hits and hits[0].start == 0:
        # "cinco milhões" is words; "5 milhões" is a hit; "2 tausend" a hit with a word scale.
        pass
    language_list = list(languages or ([] if not locale else [locale]))
    value = _words.words_value(text, language_list or None)
    if value is not None:
        return value
    # Number words then a scale word in another script or spelling: "zwei Mio.", "tien duizend".
    words = text.rsplit(" ", 1)
    if len(words) == 2:
        scale = scale_value(words[1], locale)
        head = _words.words_value(words[0], language_list or None)
        if scale is not None and head is not None:
            return head * scale
    return None


def read_number(
    text: str, locale: str | None = None, *, languages: Sequence[str] | None = None
) -> Number | None:
    """The one number ``text`` writes, or None ("1.250,00" -> 1250, "75 million" -> 75000000).

    ``locale`` (a CLDR id: ``de``, ``en_IN``) settles separators and scale words that
    languages read differently; ``languages`` limits number words to those languages.
    """
    prepared = _prepare(text)
    if prepared is None:
        return None
    value = _read_decimal(prepared, locale, languages)
    return None if value is None else _number(value)


_RANGE_JOINERS = frozenset({
    "-", "to", "till", "until", "bis", "à", "a", "au", "al", "hasta", "até", "tot", "och", "and",
    "und", "et", "y", "e", "en", "~", "〜", "～", "到", "至", "から", "..", "–", "—", "ile", "ila",
    "tới", "до", "-до", "ve", "i",
})  # fmt: skip
_RANGE_OPENERS = frozenset({
    "between", "from", "entre", "zwischen", "von", "de", "du", "da", "van", "från", "mellan",
    "tra", "fra", "от", "між", "from about", "approximately", "about", "ca", "ca.",
})  # fmt: skip


def read_range(
    text: str, locale: str | None = None, *, languages: Sequence[str] | None = None
) -> tuple[Number, Number] | None:
    """A range of two numbers ("10-20", "between 5 and 7", "3 à 5 millions") as (low, high).

    A scale word written only after the second number applies to both ("10-20 million").
    """
    prepared = _prepare(text)
    if prepared is None:
        return None
    parts = _range_parts(prepared, locale)
    if parts is None:
        return None
    low, high = parts
    return _number(low), _number(high)


def _range_parts(text: str, locale: str | None) -> tuple[Decimal, Decimal] | None:
    hits = list(_scan(text, locale=locale))
    if len(hits) != 2:
        return None
    first, second = hits
    joiner = text[first.end : second.start].strip().casefold()
    opener = text[: first.start].strip().casefold()
    tail = text[second.end :].strip().rstrip("まで").strip()
    if joiner not in _RANGE_JOINERS or (opener and opener not in _RANGE_OPENERS) or tail:
        return None
    low, high = first.value, second.value
    if first.scale == 1 and second.scale != 1:
        low *= second.scale
    return low, high


def is_scale_word(word: str) -> bool:
    """A scale word of four letters or more ("miljard", "milyar", "miliardi"): never a unit.

    Shorter ones ("mil", "tsd") are units or abbreviations as often, and stay what reads them.
    """
    bare = word.strip().rstrip(".")
    return len(bare) >= 4 and bare.isalpha() and scale_value(bare) is not None


def is_short_word(number: str) -> bool:
    """A number word of one or two ASCII letters ("os", "um", "on"): far more often a word."""
    return len(number) < 3 and number.isalpha() and number.isascii()


_BREAK = "\x00"
"""A token no language reads: stands between words that something other than spaces parts."""


def _word_runs(folded: str) -> list[re.Match[str] | None]:
    """The text's words, with ``None`` wherever digits or punctuation stand between two.

    Number words combine only across spaces: in "rose to 8 billion" the Norwegian "to" (2)
    must not multiply "billion" as if the 8 were not there.
    """
    runs: list[re.Match[str] | None] = []
    previous_end = 0
    for match in _NUMBER_WORD.finditer(folded):
        if runs and folded[previous_end : match.start()].strip():
            runs.append(None)
        runs.append(match)
        previous_end = match.end()
        if len(runs) >= 200_000:
            break
    return runs


def find_numbers(
    text: str, *, locale: str | None = None, languages: Sequence[str] | None = None
) -> list[NumberSpan]:
    """Every number ``text`` writes, with its span: digits, CJK numerals and number words.

    Number words are looked for in ``languages`` (default: the text2num languages and Hindi;
    Swedish, Norwegian and Turkish tables only when asked, since their short words are common words
    elsewhere: Turkish "on" is 10). Digits glued to Latin letters ("A4", "24703L202") are codes
    and not reported. At most ``MAX_TEXT`` characters are scanned.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    folded = fold(text[:MAX_TEXT])
    spans = [
        NumberSpan(hit.start, hit.end, text[hit.start : hit.end], _number(hit.value))
        for hit in _scan(folded, locale=locale, letters=True)
    ]
    if languages and "ko" in languages:  # "삼만 원": Sino-Korean numerals, asked for only
        spans += _hangul_numbers(text, folded)
        spans += _native_korean(text, folded)
    for lone in _LONE_FRACTION.finditer(folded):  # "½ cup": a fraction with no digits
        spans.append(NumberSpan(lone.start(), lone.end(), lone.group(),
                                _number(_STANDALONE[lone.group()])))  # fmt: skip
    tokens = _word_runs(folded)
    if tokens:
        # Hindi's words are Devanagari: no word of another language reads as one of them.
        wanted = list(languages) if languages else [*_words.TEXT2NUM_LANGUAGES, "hi"]
        words = [t.group() if t is not None else _BREAK for t in tokens]
        for hit in _words.find_word_numbers(words, wanted):
            first, last = tokens[hit.start], tokens[hit.end - 1]
            if first is None or last is None:
                continue
            start, end = first.start(), last.end()
            if hit.end - hit.start == 1 and end - start < 3 and not languages:
                continue
            value = hit.value
            if not hit.ordinal:  # a scale word the word reader leaves out: "two trillion"
                scale, scaled_end = _scale_after(folded, end, locale, letters=False)
                if scale != 1:
                    value, end = value * scale, scaled_end
            spans.append(NumberSpan(start, end, text[start:end], _number(value), hit.ordinal))
    spans.sort(key=lambda span: (span.start, -(span.end - span.start)))
    out: list[NumberSpan] = []
    for span in spans:
        if out and span.start < out[-1].end:
            continue
        out.append(span)
    return out


# -- rendering -----------------------------------------------------------------------------------

RENDERING_LOCALES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "de_CH", "en_IN", "ru",
                     "pl", "cs", "tr", "ja", "zh", "ko", "hi", "ar")  # fmt: skip
"""Locales whose formats ``renderings`` writes when none are given."""
_RENDER_SCALES = {
    10**3: ("k", "K", "thousand", "Tsd.", "mil", "mille", "duizend", "tusen", "bin", "тыс."),
    10**6: ("million", "millions", "m", "M", "mn", "Mio.", "Mio", "millones", "milioni",
            "milhões", "miljoen", "miljoner", "млн"),
    10**9: ("billion", "billions", "bn", "B", "Mrd.", "Mrd", "milliards", "miliardi", "bilhões",
            "miljard", "miljarder", "mil millones", "млрд"),
    10**5: ("lakh",),
    10**7: ("crore",),
}  # fmt: skip


def renderings(value: Number, locales: Sequence[str] | None = None) -> list[str]:
    """Ways a number may be written, for finding it in a text ("12 500" for 12500).

    Locale formats (grouped and not, native digits where the locale has them), plain forms with
    space, no-break space and apostrophe grouping, scale-word forms ("75 million", "7500万"),
    and number words for 0-99 ("three" for 3). Not exhaustive: ``find_numbers`` and a value
    comparison find what no list can.
    """
    from babel.numbers import UnsupportedNumberingSystemError, format_decimal

    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return []
    decimal = Decimal(str(value))
    out: list[str] = []
    integral = decimal == decimal.to_integral_value()
    plain = str(int(decimal)) if integral else format(decimal.normalize(), "f")
    out.append(plain)
    if integral and abs(decimal) >= 1000:
        grouped = f"{int(decimal):,}"
        out += [grouped, grouped.replace(",", "."), grouped.replace(",", " "),
                grouped.replace(",", "\u00a0"), grouped.replace(",", "\u202f"),
                grouped.replace(",", "'")]  # fmt: skip
    if not integral:
        out.append(plain.replace(".", ","))
        two = f"{decimal:.2f}"
        out += [two, two.replace(".", ",")]
    for locale in locales or RENDERING_LOCALES:
        for grouping in (True, False):
            try:
                out.append(format_decimal(decimal, locale=locale, group_separator=grouping))
                out.append(format_decimal(decimal, locale=locale, group_separator=grouping,
                                          numbering_system="native"))  # fmt: skip
            except (ValueError, TypeError, LookupError, UnsupportedNumberingSystemError):
                continue
    for scale, words in _RENDER_SCALES.items():
        mantissa = decimal / scale
        if abs(mantissa) >= 1 and mantissa == mantissa.quantize(Decimal("0.001")):
            text = format(mantissa.normalize(), "f")
            for word in words:
                for number in {text, text.replace(".", ",")}:
                    out += [f"{number} {word}", f"{number}{word}"]
    if integral and abs(decimal) >= 10**4:
        for unit, sign in (
            (10**8, "億"),
            (10**8, "亿"),
            (10**4, "万"),
            (10**4, "萬"),
            (10**4, "만"),
        ):
            mantissa = decimal / unit
            if mantissa >= 1 and mantissa == mantissa.quantize(Decimal("0.01")):
                out.append(format(mantissa.normalize(), "f") + sign)
    if integral and 0 <= decimal < 100:
        out += list(_words.small_words().get(int(decimal), ()))
    return list(dict.fromkeys(item for item in out if item))
