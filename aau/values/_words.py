"""Numbers written in words: text2num for the units' European languages, compact tables else.

``text2num`` (Allo-Media, MIT, a Rust core with Python wheels) reads cardinal and ordinal
number words in English, French, Spanish, Portuguese, German, Dutch, Danish and Italian, as
whole strings and as occurrences in a token stream. It is small (one extension module, no
dependencies), maintained, and stricter than ``number-parser`` (which guesses across languages
and accepts stray words). What it lacks is covered here by compact tables: Swedish, Norwegian,
Turkish and Hindi cardinals, CJK numerals (Chinese and Japanese, financial forms, with ASCII digits
mixed in: ``36.57億``, ``7千``), Japanese numerals written in kana and Sino-Korean numerals in
Hangul.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from typing import NamedTuple

__all__ = [
    "CJK_NUMERALS",
    "HANGUL_NUMERALS",
    "TEXT2NUM_LANGUAGES",
    "WordHit",
    "cjk_value",
    "find_word_numbers",
    "words_value",
]

TEXT2NUM_LANGUAGES = ("en", "fr", "es", "pt", "de", "nl", "it", "da")
"""Languages text2num reads, in the order tried when no language is given."""

TABLE_LANGUAGES = ("sv", "no", "tr", "hi")

_CJK_DIGITS = {
    "〇": 0, "零": 0, "一": 1, "壱": 1, "壹": 1, "二": 2, "弐": 2, "贰": 2, "貳": 2, "两": 2,
    "兩": 2, "三": 3, "参": 3, "叁": 3, "參": 3, "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6,
    "陆": 6, "陸": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}  # fmt: skip
_CJK_SMALL = {"十": 10, "拾": 10, "什": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CJK_BIG = {"万": 10**4, "萬": 10**4, "億": 10**8, "亿": 10**8, "兆": 10**12, "京": 10**16}
CJK_NUMERALS = frozenset(_CJK_DIGITS) | frozenset(_CJK_SMALL) | frozenset(_CJK_BIG)
"""Characters that write a CJK number (digits, 十百千, 万億兆京)."""
_CJK_POINT = "点點"
_CJK_NEGATIVE = "负負"

_KANA = {
    "れい": "零", "ゼロ": "零", "いち": "一", "に": "二", "さん": "三", "よん": "四", "し": "四",
    "ご": "五", "ろく": "六", "なな": "七", "しち": "七", "はち": "八", "きゅう": "九", "く": "九",
    "じゅう": "十", "ひゃく": "百", "びゃく": "百", "ぴゃく": "百", "せん": "千", "ぜん": "千",
    "まん": "万", "おく": "億", "ちょう": "兆", "いっ": "一", "はっ": "八", "ろっ": "六",
}  # fmt: skip
_HANGUL = {
    "영": "零", "공": "零", "일": "一", "이": "二", "삼": "三", "사": "四", "오": "五", "육": "六",
    "륙": "六", "칠": "七", "팔": "八", "구": "九", "십": "十", "백": "百", "천": "千", "만": "万",
    "억": "億", "조": "兆",
}  # fmt: skip
HANGUL_NUMERALS = frozenset(_HANGUL)
"""Hangul syllables that write a Sino-Korean numeral (일, 이, 삼… 십, 백, 천, 만, 억, 조)."""
_HANGUL["점"] = "点"  # the decimal point between numerals ("이십구점구구": 29.99), not one itself

# Compact cardinal tables for languages text2num does not read: morpheme -> value. Values of
# 100 multiply what precedes, 1000 and up close a group (the usual additive-multiplicative rule).
_TABLES: dict[str, dict[str, int | Decimal]] = {
    "sv": {
        "noll": 0, "en": 1, "ett": 1, "två": 2, "tre": 3, "fyra": 4, "fem": 5, "sex": 6,
        "sju": 7, "åtta": 8, "nio": 9, "tio": 10, "elva": 11, "tolv": 12, "tretton": 13,
        "fjorton": 14, "femton": 15, "sexton": 16, "sjutton": 17, "arton": 18, "nitton": 19,
        "tjugo": 20, "tjugu": 20, "trettio": 30, "fyrtio": 40, "femtio": 50, "sextio": 60,
        "sjuttio": 70, "åttio": 80, "nittio": 90, "hundra": 100, "tusen": 1000,
        "miljon": 10**6, "miljoner": 10**6, "miljard": 10**9, "miljarder": 10**9,
    },
    "no": {
        "null": 0, "en": 1, "ett": 1, "ei": 1, "to": 2, "tre": 3, "fire": 4, "fem": 5,
        "seks": 6, "sju": 7, "syv": 7, "åtte": 8, "ni": 9, "ti": 10, "elleve": 11, "tolv": 12,
        "tretten": 13, "fjorten": 14, "femten": 15, "seksten": 16, "sytten": 17, "atten": 18,
        "nitten": 19, "tjue": 20, "tjueen": 21, "tretti": 30, "førti": 40, "femti": 50,
        "seksti": 60, "sytti": 70, "åtti": 80, "nitti": 90, "hundre": 100, "tusen": 1000,
        "million": 10**6, "millioner": 10**6, "milliard": 10**9, "milliarder": 10**9,
        "og": 0,
    },
    "tr": {
        "sıfır": 0, "bir": 1, "iki": 2, "üç": 3, "dört": 4, "beş": 5, "altı": 6, "yedi": 7,
        "sekiz": 8, "dokuz": 9, "on": 10, "yirmi": 20, "otuz": 30, "kırk": 40, "elli": 50,
        "altmış": 60, "yetmiş": 70, "seksen": 80, "doksan": 90, "yüz": 100, "bin": 1000,
        "milyon": 10**6, "milyar": 10**9, "trilyon": 10**12,
    },
    # Hindi writes each of 1-99 as its own word; spelling variants (anusvara or chandrabindu,
    # nukta or not) as the press writes them.
    "hi": {
        "शून्य": 0, "एक": 1, "दो": 2, "तीन": 3, "चार": 4, "पाँच": 5, "पांच": 5, "छह": 6,
        "छः": 6, "छे": 6, "सात": 7, "आठ": 8, "नौ": 9, "दस": 10, "ग्यारह": 11, "बारह": 12,
        "तेरह": 13, "चौदह": 14, "पंद्रह": 15, "पन्द्रह": 15, "सोलह": 16, "सत्रह": 17,
        "अठारह": 18, "उन्नीस": 19, "बीस": 20, "इक्कीस": 21, "बाईस": 22, "तेईस": 23,
        "चौबीस": 24, "पच्चीस": 25, "छब्बीस": 26, "सत्ताईस": 27, "अट्ठाईस": 28, "उनतीस": 29,
        "तीस": 30, "इकतीस": 31, "इकत्तीस": 31, "बत्तीस": 32, "तैंतीस": 33, "चौंतीस": 34,
        "पैंतीस": 35, "छत्तीस": 36, "सैंतीस": 37, "अड़तीस": 38, "उनतालीस": 39, "चालीस": 40,
        "इकतालीस": 41, "बयालीस": 42, "तैंतालीस": 43, "चवालीस": 44, "चौवालीस": 44,
        "पैंतालीस": 45, "छियालीस": 46, "सैंतालीस": 47, "अड़तालीस": 48, "उनचास": 49,
        "पचास": 50, "इक्यावन": 51, "बावन": 52, "तिरपन": 53, "तिरेपन": 53, "चौवन": 54,
        "पचपन": 55, "छप्पन": 56, "सत्तावन": 57, "अट्ठावन": 58, "उनसठ": 59, "साठ": 60,
        "इकसठ": 61, "बासठ": 62, "तिरसठ": 63, "चौंसठ": 64, "पैंसठ": 65, "छियासठ": 66,
        "सड़सठ": 67, "अड़सठ": 68, "उनहत्तर": 69, "सत्तर": 70, "इकहत्तर": 71, "बहत्तर": 72,
        "तिहत्तर": 73, "चौहत्तर": 74, "पचहत्तर": 75, "छिहत्तर": 76, "सतहत्तर": 77,
        "अठहत्तर": 78, "उन्यासी": 79, "उनासी": 79, "अस्सी": 80, "इक्यासी": 81, "बयासी": 82,
        "तिरासी": 83, "चौरासी": 84, "पचासी": 85, "छियासी": 86, "सत्तासी": 87, "अट्ठासी": 88,
        "नवासी": 89, "नब्बे": 90, "इक्यानबे": 91, "बानबे": 92, "तिरानबे": 93, "चौरानबे": 94,
        "पचानबे": 95, "छियानबे": 96, "सत्तानबे": 97, "अट्ठानबे": 98, "निन्यानबे": 99,
        "सौ": 100, "हज़ार": 1000, "हजार": 1000, "लाख": 10**5, "करोड़": 10**7, "करोड": 10**7,
        "अरब": 10**9, "खरब": 10**11, "मिलियन": 10**6, "बिलियन": 10**9,
        # one and a half, two and a half: "ढाई सौ" is 250, "डेढ़ लाख" 150,000
        "डेढ़": Decimal("1.5"), "डेढ": Decimal("1.5"), "ढाई": Decimal("2.5"),
    },
}  # fmt: skip
_PLUS = {
    # Hindi's words before a number that add to it: "साढ़े तीन लाख" is 350,000, "सवा सौ" 125,
    # "पौने दो" 1.75 (the number they add to is 1 when none follows: "सवा लाख").
    "hi": {"साढ़े": Decimal("0.5"), "साढे": Decimal("0.5"), "सवा": Decimal("0.25"),
           "पौने": Decimal("-0.25")},
}  # fmt: skip
_CONNECTORS = {"sv": {"och"}, "no": {"og"}, "tr": set(), "hi": set()}
_WHOLE_WORDS = frozenset({"hi"})
"""Tables read word by word: a Hindi word is never a compound of number words."""


class WordHit(NamedTuple):
    """Number words found in a token stream: tokens ``[start, end)`` and their value."""

    start: int
    end: int
    value: Decimal
    ordinal: bool


def _decimal(value: float | int) -> Decimal:
    return Decimal(str(value))


_NOT_NUMBERS = frozenset({"quart"})
"""Words text2num reads that are no number in its language: "quart" is 4 to its Italian and
Portuguese readers (the words are "quattro", "quatro"), but a quarter in French and a unit in
English ("a quart of milk")."""


def _text2num(text: str, language: str) -> Decimal | None:
    from text_to_num import text2num

    if text.casefold() in _NOT_NUMBERS:
        return None
    try:
        return _decimal(text2num(text, language))
    except (ValueError, TypeError):
        return None


@lru_cache(maxsize=1 << 16)
def _segmented(word: str, language: str) -> tuple[int | Decimal | _Plus, ...] | None:
    """``_segment`` in ``language``'s table, remembered.

    A long text repeats its words, and every word of it is tried in every table language.
    """
    table = _TABLES[language]
    if word in _PLUS.get(language, {}):
        return (_Plus(_PLUS[language][word]),)
    if language in _WHOLE_WORDS:  # one table entry or none (no compounds)
        return (table[word],) if word in table else None
    pieces = _segment(word, table, _longest(language))
    return None if pieces is None else tuple(pieces)


def _segment(
    word: str, table: dict[str, int | Decimal], longest: int
) -> list[int | Decimal] | None:
    """Split a compound number word into table morphemes, longest first ("fyrtiofem").

    ``longest``: the length of the table's longest entry.
    """
    values: list[int | Decimal] = []
    position = 0
    while position < len(word):
        for size in range(min(longest, len(word) - position), 0, -1):
            piece = word[position : position + size]
            if piece in table:
                values.append(table[piece])
                position += size
                break
        else:
            return None
    return values


class _Plus(NamedTuple):
    """A word that adds ``amount`` to the number after it (Hindi "साढ़े": a half more)."""

    amount: Decimal


def _combine(values: Iterable[int | Decimal | _Plus]) -> Decimal | None:
    total, current, seen = Decimal(0), Decimal(0), False
    plus: Decimal | None = None
    for value in values:
        if isinstance(value, _Plus):
            plus = value.amount
            continue
        seen = True
        if value == 100 or value >= 1000:
            base = current or Decimal(1)
            if plus is not None:
                base, plus = base + plus, None
            if value == 100:
                current = base * 100
            else:
                total += base * value
                current = Decimal(0)
        else:
            current += value
    if plus is not None and current:
        current += plus
    return total + current if seen else None


@cache
def _longest(language: str) -> int:
    """The length of the longest entry of ``language``'s table."""
    return max(map(len, _TABLES[language]))


def _folded(word: str) -> str:
    """``word`` casefolded, the dot of Turkish "İ" dropped ("İki" is "iki")."""
    return word.casefold().replace("\u0307", "")


def _table_value(text: str, language: str) -> Decimal | None:
    values: list[int | Decimal | _Plus] = []
    for word in re.split(r"[\s\-]+", _folded(text)):
        if not word or word in _CONNECTORS[language]:
            continue
        pieces = _segmented(word, language)
        if pieces is None:
            return None
        values.extend(pieces)
    return _combine(values)


def words_value(text: str, languages: Sequence[str] | None = None) -> Decimal | None:
    """The value of a whole string of number words ("twenty two", "fyrtiofem"), else None."""
    text = text.strip()
    if not text or len(text) > 200 or any(c.isdigit() for c in text):
        return None
    if any(c in CJK_NUMERALS or "\u3040" <= c <= "\u30ff" or "\uac00" <= c <= "\ud7a3"
           for c in text):  # fmt: skip
        return cjk_value(kana_or_hangul(text))
    order = _language_order(languages)
    for language in order:
        if language in _TABLES:
            value = _table_value(text, language)
        else:
            value = _text2num(text, language)
        if value is not None:
            return value
    words = text.split()
    folded = {_folded(word) for word in words}
    if _COMPOSED.intersection(folded) or _WHOLE_AND_HALF.keys() & folded:
        hits = find_word_numbers(words, languages)
        if len(hits) == 1 and (hits[0].start, hits[0].end) == (0, len(words)):
            return None if hits[0].ordinal else hits[0].value
    return None


_COMPOSED = frozenset({"point", "half", "quarter", "quarters", "virgule", "komma", "coma",
                       "virgola", "vírgula", "medio", "mezzo", "meio", "halbe", "halve",
                       "demi", "demie", "buçuk"})  # fmt: skip
"""Words of a composition the word readers read in pieces only (``_scaled_hits``,
``_turkish_halves``)."""


def _language_order(languages: Sequence[str] | None) -> list[str]:
    known = [*TEXT2NUM_LANGUAGES, *TABLE_LANGUAGES]
    if not languages:
        return known
    wanted = [{"nb": "no", "nn": "no"}.get(lang, lang) for lang in
              (language.split("_")[0].split("-")[0].lower() for language in languages)]  # fmt: skip
    return [lang for lang in wanted if lang in known] or known


def kana_or_hangul(text: str) -> str:
    """Japanese kana numerals and Sino-Korean Hangul numerals as CJK numerals; else unchanged."""
    compact = "".join(text.split())
    if all(c in _HANGUL or c.isdigit() or c == "." for c in compact) and any(
        c in _HANGUL for c in compact
    ):
        return "".join(_HANGUL.get(c, c) for c in compact)
    if not any("\u3040" <= c <= "\u30ff" for c in compact):
        return text
    out, position = [], 0
    while position < len(compact):
        for size in (3, 2, 1):
            piece = compact[position : position + size]
            if piece in _KANA:
                out.append(_KANA[piece])
                position += size
                break
        else:
            out.append(compact[position])
            position += 1
    return "".join(out)


def cjk_value(text: str) -> Decimal | None:
    """A CJK number, ASCII digits allowed inside: 二〇一九, 四十九兆九千五百九十二億, 36.57億."""
    text = "".join(text.split())
    if not text or len(text) > 64:
        return None
    sign = 1
    if text[0] in _CJK_NEGATIVE:
        sign, text = -1, text[1:]
    half = text.endswith("半") and len(text) > 1
    if half:
        text = text[:-1]
    fraction = Decimal(0)
    for point in _CJK_POINT:
        if point in text:
            text, _, decimals = text.partition(point)
            digits = "".join(str(_CJK_DIGITS[c]) if c in _CJK_DIGITS else c for c in decimals)
            if not digits.isdigit():
                return None
            fraction = Decimal("0." + digits)
            break
    tokens = _cjk_tokens(text)
    if tokens is None or (not tokens and not fraction):
        return None
    if all(kind == "digit" for kind, _ in tokens) and len(tokens) > 1:
        if any(not isinstance(v, int) or v > 9 for _, v in tokens):
            return None
        value = Decimal("".join(str(v) for _, v in tokens))
    else:
        big = _cjk_big(tokens)
        if big is None:
            return None
        value = big
    return sign * (value + fraction + (Decimal("0.5") if half else 0))


_CjkToken = tuple[str, Decimal | int]


def _cjk_tokens(text: str) -> list[_CjkToken] | None:
    tokens: list[_CjkToken] = []
    for match in re.finditer(r"\d+(?:\.\d+)?|.", text):
        piece = match.group()
        if piece[0].isdigit():
            try:
                tokens.append(("number", Decimal(piece)))
            except InvalidOperation:
                return None
        elif piece in _CJK_DIGITS:
            tokens.append(("digit", _CJK_DIGITS[piece]))
        elif piece in _CJK_SMALL:
            tokens.append(("small", _CJK_SMALL[piece]))
        elif piece in _CJK_BIG:
            tokens.append(("big", _CJK_BIG[piece]))
        else:
            return None
    return tokens


def _cjk_big(tokens: list[_CjkToken]) -> Decimal | None:
    bigs = [value for kind, value in tokens if kind == "big"]
    if not bigs:
        return _cjk_section(tokens)
    largest = max(bigs)
    index = next(i for i, (kind, value) in enumerate(tokens) if kind == "big" and value == largest)
    left, right = tokens[:index], tokens[index + 1 :]
    left_value = _cjk_big(left) if left else Decimal(1)
    right_value = _cjk_big(right) if right else Decimal(0)
    if left_value is None or right_value is None:
        return None
    return left_value * largest + right_value


def _cjk_section(tokens: list[_CjkToken]) -> Decimal | None:
    total, pending = Decimal(0), None
    for index, (kind, value) in enumerate(tokens):
        if kind == "digit" and value == 0 and pending is None and index + 1 < len(tokens):
            continue  # 零 holds an empty place: 一千零五十 is 1,050
        if kind in ("digit", "number"):
            if pending is not None:
                return None
            pending = Decimal(value)
        else:  # small unit
            total += (pending if pending is not None else 1) * value
            pending = None
    return total + (pending or 0)


class _Token:
    """A token for text2num's ``find_numbers`` (it calls ``text()`` and two predicates)."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


def find_word_numbers(words: Sequence[str], languages: Sequence[str] | None) -> list[WordHit]:
    """Number-word occurrences in a token list, longest first where languages disagree."""
    from text_to_num import find_numbers

    tokens = [_Token(word) for word in words]
    folded = [_folded(word) for word in words]
    hits: list[WordHit] = []
    order = _language_order(languages)
    for language in order:
        if language in _TABLES:
            table_hits = _table_hits(folded, language)
            hits.extend(table_hits)
            if language == "tr":
                hits.extend(_turkish_halves(table_hits, folded))
            continue
        try:
            found = find_numbers(tokens, language, 0)
        except (ValueError, TypeError):
            continue
        for occurrence in found:
            hits.append(WordHit(occurrence.start, occurrence.end, _decimal(occurrence.value),
                                bool(occurrence.is_ordinal)))  # fmt: skip
        hits.extend(_scaled_hits(hits, folded, language))
    if any(language not in _TABLES for language in order):
        # "anderthalb Kilo": the word alone, looked for once (before a scale word,
        # ``_scaled_hits`` reads both, and the longer hit is chosen below)
        hits.extend(WordHit(index, index + 1, Decimal(_WHOLE_AND_HALF[word]), False)
                    for index, word in enumerate(folded) if word in _WHOLE_AND_HALF)  # fmt: skip
    # "hundreds of people", "Millionen Euro": a plural scale word alone counts no number.
    hits = [h for h in hits if not _vague(h, words)
            and not (h.end - h.start == 1 and folded[h.start] in _NOT_NUMBERS)]  # fmt: skip
    hits.sort(key=lambda hit: (hit.start, -(hit.end - hit.start)))
    chosen: list[WordHit] = []
    for hit in hits:
        if chosen and hit.start < chosen[-1].end:
            continue
        chosen.append(hit)
    return chosen


_VAGUE_PLURALS = frozenset({
    "hundreds", "thousands", "millions", "billions", "trillions", "dozens", "hunderte",
    "tausende", "millionen", "milliarden", "centaines", "milliers", "milliards", "cientos",
    "millones", "centinaia", "migliaia", "milioni", "miliardi", "honderden", "duizenden",
    "miljoenen", "miljarden", "centenas", "milhares", "milhões", "hundratals", "tusentals",
    "miljoner", "miljarder",
})  # fmt: skip
"""Plural scale words that, alone, say "many" rather than a number."""


def _vague(hit: WordHit, words: Sequence[str]) -> bool:
    return hit.end - hit.start == 1 and words[hit.start].casefold() in _VAGUE_PLURALS


_SCALES = (10**3, 10**6, 10**9, 10**12)
_HALF_BEFORE_SCALE = frozenset({"medio", "mezzo", "meio", "halbe", "halve", "half", "demi"})
_WHOLE_AND_HALF = {
    # German and Dutch write "one and a half" as one word: "anderthalb Millionen", "anderhalf
    # miljoen", "dreieinhalb Milliarden".
    "anderthalb": "1.5", "eineinhalb": "1.5", "zweieinhalb": "2.5", "dreieinhalb": "3.5",
    "viereinhalb": "4.5", "fünfeinhalb": "5.5", "sechseinhalb": "6.5", "siebeneinhalb": "7.5",
    "achteinhalb": "8.5", "neuneinhalb": "9.5", "zehneinhalb": "10.5", "anderhalf": "1.5",
    "tweeënhalf": "2.5", "drieënhalf": "3.5", "viereneenhalf": "4.5", "vijfenhalf": "5.5",
}  # fmt: skip
_AND_A_HALF = {"fr": ("et", "demi"), "es": ("y", "medio"), "it": ("e", "mezzo"),
               "pt": ("e", "meio")}  # fmt: skip
"""After a scale word, half of it more: "un million et demi", "tres millones y medio"."""
_AND_FRACTION = {("and", "a", "half"): Decimal("0.5"), ("and", "one", "half"): Decimal("0.5"),
                 ("and", "a", "quarter"): Decimal("0.25"),
                 ("and", "three", "quarters"): Decimal("0.75")}  # fmt: skip
"""English fractions after a whole number: "one and a half" is 1.5."""
_FRACTIONS_OF = {
    # English fractions of a scale word: "half a million", "a quarter of a billion".
    ("half", "a"): Decimal("0.5"), ("a", "half"): Decimal("0.5"),
    ("quarter", "of", "a"): Decimal("0.25"), ("a", "quarter", "of", "a"): Decimal("0.25"),
    ("a", "quarter"): Decimal("0.25"),
    ("three", "quarters", "of", "a"): Decimal("0.75"),
}  # fmt: skip


def _turkish_halves(hits: Sequence[WordHit], folded: Sequence[str]) -> list[WordHit]:
    """Turkish "buçuk" (and a half) after a whole number: "bir buçuk" is 1.5.

    A scale word after it scales the whole: "iki buçuk milyar" is 2.5 billion.
    """
    starts = {hit.start: hit for hit in hits}
    out = []
    for hit in hits:
        if hit.end >= len(folded) or folded[hit.end] != "buçuk" or hit.value % 1:
            continue
        value = hit.value + Decimal("0.5")
        scale = starts.get(hit.end + 1)
        if scale is not None and scale.end - scale.start == 1 and scale.value in _SCALES:
            out.append(WordHit(hit.start, scale.end, value * scale.value, False))
        else:
            out.append(WordHit(hit.start, hit.end + 1, value, False))
    return out


def _scaled_hits(hits: Sequence[WordHit], folded: Sequence[str], language: str) -> list[WordHit]:
    """Compositions text2num leaves in pieces.

    A decimal before a scale word ("one point two billion"), a half word right before one
    ("medio millón", "eine halbe Million") and, in English, fractions of one ("half a million",
    "two and a half million"). ``folded``: the words, each ``_folded``.
    """
    scales = {hit.start: hit for hit in hits
              if hit.end - hit.start == 1 and not hit.ordinal and hit.value in _SCALES}  # fmt: skip
    out: list[WordHit] = []
    for hit in hits:
        scale = scales.get(hit.end)
        # (not "five and a quarter": its fraction is no decimal, and "miles" is Spanish 1000)
        if (scale is not None and hit.value != hit.value.to_integral_value()
                and tuple(folded[hit.end - 3 : hit.end]) not in _AND_FRACTION):  # fmt: skip
            out.append(WordHit(hit.start, scale.end, hit.value * scale.value, False))
    for start, scale in scales.items():
        if start > 0 and folded[start - 1] in _HALF_BEFORE_SCALE:  # "medio millón", "halbe Million"
            out.append(WordHit(start - 1, scale.end, scale.value / 2, False))
        if start > 0 and folded[start - 1] in _WHOLE_AND_HALF:  # "anderthalb Millionen"
            value = Decimal(_WHOLE_AND_HALF[folded[start - 1]]) * scale.value
            out.append(WordHit(start - 1, scale.end, value, False))
    tail = _AND_A_HALF.get(language)
    if tail is not None:
        for hit in hits:
            last = _last_scale(hit)
            if last and tuple(folded[hit.end : hit.end + 2]) == tail:
                out.append(WordHit(hit.start, hit.end + 2, hit.value + last / 2, False))
    if language != "en":
        return out
    for hit in hits:  # "one and a half kilos", "two and three quarters hours"
        tail_words = tuple(folded[hit.end : hit.end + 3])
        if not hit.ordinal and tail_words in _AND_FRACTION:
            out.append(WordHit(hit.start, hit.end + 3, hit.value + _AND_FRACTION[tail_words],
                               False))  # fmt: skip
    for start, scale in scales.items():
        for phrase, fraction in _FRACTIONS_OF.items():
            first = start - len(phrase)
            if first >= 0 and tuple(folded[first:start]) == phrase:
                value = fraction * scale.value
                whole = next((h for h in hits if h.end == first - 1 and not h.ordinal
                              and h.value < 1000 and folded[first - 1] == "and"), None)  # fmt: skip
                if whole is not None and phrase == ("a", "half"):
                    out.append(WordHit(whole.start, scale.end,
                                       (whole.value + fraction) * scale.value, False))  # fmt: skip
                out.append(WordHit(first, scale.end, value, False))
    return out


def _last_scale(hit: WordHit) -> Decimal | None:
    """The scale word ``hit`` ends with ("un million": 1e6, "deux millions trois cent mille": 1e3).

    Number words whose value a scale divides end with that scale's word; text2num does not
    read some plurals alone ("milioni"), so the value tells.
    """
    if hit.ordinal:
        return None
    return next((Decimal(scale) for scale in reversed(_SCALES)
                 if hit.value >= scale and hit.value % scale == 0), None)  # fmt: skip


def _table_hits(folded: Sequence[str], language: str) -> list[WordHit]:
    """Runs of ``language``'s table words in ``folded`` (the words, each ``_folded``).

    Each distinct word is segmented once, and only the positions of words that segment are
    visited: a long text holds few number words and repeats the rest.
    """
    readable = {word for word in set(folded) if word and _segmented(word, language) is not None}
    if not readable:
        return []
    hits: list[WordHit] = []
    run_start, previous = -1, -2
    for index in [i for i, word in enumerate(folded) if word in readable] + [-1]:
        if index != previous + 1:  # the run before ends here
            if run_start >= 0:
                values = [v for w in folded[run_start : previous + 1]
                          for v in _segmented(w, language) or ()]  # fmt: skip
                value = _combine(values)
                if value is not None:
                    hits.append(WordHit(run_start, previous + 1, value, False))
            run_start = index
        previous = index
    return hits


@cache
def small_words() -> dict[int, tuple[str, ...]]:
    """Words for 0-20 and the tens in the units' languages (``renderings``: "three" for 3)."""
    table: dict[str, tuple[str, ...]] = {
        "en": ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
               "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
               "seventeen", "eighteen", "nineteen", "twenty"),
        "de": ("null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
               "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn",
               "siebzehn", "achtzehn", "neunzehn", "zwanzig"),
        "fr": ("zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf",
               "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept",
               "dix-huit", "dix-neuf", "vingt"),
        "es": ("cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve",
               "diez", "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete",
               "dieciocho", "diecinueve", "veinte"),
        "it": ("zero", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove",
               "dieci", "undici", "dodici", "tredici", "quattordici", "quindici", "sedici",
               "diciassette", "diciotto", "diciannove", "venti"),
        "pt": ("zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove",
               "dez", "onze", "doze", "treze", "catorze", "quinze", "dezesseis", "dezessete",
               "dezoito", "dezenove", "vinte"),
        "nl": ("nul", "een", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht", "negen",
               "tien", "elf", "twaalf", "dertien", "veertien", "vijftien", "zestien", "zeventien",
               "achttien", "negentien", "twintig"),
    }  # fmt: skip
    extra = {1: ("a", "an", "eine", "ein", "une", "una", "uma", "één"), 2: ("both",)}
    out: dict[int, list[str]] = {}
    for words in table.values():
        for number, word in enumerate(words):
            out.setdefault(number, []).append(word)
    for number, words_ in extra.items():
        out[number].extend(words_)
    tens = ("thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
    for index, ten in enumerate(tens, start=3):
        out.setdefault(index * 10, []).append(ten)
        for unit in range(1, 10):
            out.setdefault(index * 10 + unit, []).append(f"{ten}-{table['en'][unit]}")
    for unit in range(1, 10):
        out.setdefault(20 + unit, []).append(f"twenty-{table['en'][unit]}")
    return {number: tuple(dict.fromkeys(words_)) for number, words_ in out.items()}
