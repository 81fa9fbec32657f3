"""Calendar dates as the world writes them, to ISO ``YYYY-MM-DD``.

One reader, in this order:

1. East Asian forms: ``2017年1月6日``, ``2017년 1월 6일``, ``1월 12일, 2016년``, CJK numerals
   (``二〇一九年十月初一``), Japanese eras (``令和元年5月1日``, ``平成30年``) and Minguo years
   (``民國105年``).
2. Numbers only: year first is year-month-day (``2016/02/22``, ``2015.5.13``, ``2010 01 29``);
   otherwise day and month are told apart when one is above 12 or both are equal, else by
   ``order`` (``"DMY"``, ``"MDY"``), else by the locale's CLDR date pattern, else the text is
   ambiguous and the answer is None. Two-digit years follow the POSIX pivot (69 -> 2069,
   70 -> 1970).
3. Month names of every CLDR language (wide and abbreviated, format and stand-alone) with a day
   next to them and a four-digit year anywhere in the text, in any order ("15. Januar 2011",
   "January 12th, 2016", "2019-sep-1", "23-2020-september", "31 दिसंबर, 1994"); the day may
   be an ordinal or in words ("twenty second of june 2017", "ersten Januar 2018"); weekday
   names and times of day are passed over. Thai Buddhist-era years (2400 and up, with Thai
   text) become Gregorian ones (2560 -> 2017). A name shared by several languages for different
   months ("listopad") takes ``languages``, else the month most languages give it. A month
   word with its day beside it wins over one whose day is only the text's one other number,
   and digits that make a whole numeric date are never a month word's day or year.
   Holidays the year fixes, named with that year ("Pfingsten 2022"), are dates too.
4. dateparser, for what the above does not read, strictly (day, month and year all written) and
   without relative dates ("tomorrow" is no date here).

A text that states no full date ("12:30", "May 2016", "tomorrow") reads as None.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import cache
from typing import NamedTuple

from aau.values import _cldr, _words
from aau.values._text import MAX_SPAN, MAX_TEXT, fold, key, squash

__all__ = ["DateSpan", "find_dates", "read_date", "read_month"]


class DateSpan(NamedTuple):
    """A date found in a text: ``text[start:end]`` reads as ``value`` (``YYYY-MM-DD``)."""

    start: int
    end: int
    text: str
    value: str


_ERAS = {"令和": 2019, "平成": 1989, "昭和": 1926, "大正": 1912, "明治": 1868}
_ERA = re.compile(r"(令和|平成|昭和|大正|明治)\s*(元|\d{1,2})\s*年")
_MINGUO = re.compile(r"(?:民國|民国)\s*(\d{1,3})\s*年")
_CJK_NUMERAL_RUN = re.compile(
    r"[〇零一二三四五六七八九十两廿卅]+(?=\s*[年月日号號])|(?<=初)[一二三四五六七八九十]"
)
_CJK_DATE = re.compile(
    r"(?<!\d)(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(?:初\s*)?(\d{1,2})\s*[日일号號]?"
)
_KOREAN_MDY = re.compile(r"(?<!\d)(\d{1,2})\s*월\s*(\d{1,2})\s*일\s*,?\s*(\d{4})\s*년?")
_YEAR_FIRST = re.compile(r"(?<![\d.,/-])(\d{4})([-/. ])(\d{1,2})\2(\d{1,2})(?![\d]|[.,/-]\d)")
_NUMERIC = re.compile(
    r"(?<![\d.,/-])(\d{1,2})\s?([-/.])\s?(\d{1,2})\s?\2\s?(\d{4}|\d{2})(?![\d]|[.,/-]\d)"
)
_TIME = re.compile(
    r"(?<!\d)(?:[01]?\d|2[0-3])[:h][0-5]\d(?::[0-5]\d)?(?:\s?[ap]\.?\s?m\.?)?(?![\d])"
    r"|(?<=\d)T(?=\d{2}:)|(?<!\d)(?:[01]?\d|2[0-3])\s?[ap]\.?m\.?(?!\w)",
    re.IGNORECASE,
)
_ORDINAL = re.compile(
    r"^(\d{1,2})(?:st|nd|rd|th|er|ère|re|e|ème|eme|º|ª|o|a|\.|-?е|-?го|일|日)?$", re.IGNORECASE
)
_FILLERS = frozenset({"de", "of", "the", "den", "der", "le", "el", "del", "di", "am", "du", "van",
                      "la", "il", "do", "da", "em", "ye", "im", "jahr", "jahres", "year",
                      "on", "à", "a", "dem"})  # fmt: skip
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
_PUNCTUATION = re.compile(r"[\s/\-.,:;()\[\]\"'«»،]+")


def _today_year() -> int:
    return dt.date.today().year


def _valid(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _east_asian(text: str) -> str:
    """Eras, Minguo years and CJK numerals before 年月日 as ASCII digits."""
    text = _ERA.sub(
        lambda m: f"{_ERAS[m.group(1)] + (1 if m.group(2) == '元' else int(m.group(2))) - 1}年",
        text,
    )
    text = _MINGUO.sub(lambda m: f"{int(m.group(1)) + 1911}年", text)

    def numeral(match: re.Match[str]) -> str:
        run = match.group().replace("廿", "二十").replace("卅", "三十")
        value = _words.cjk_value(run)
        return match.group() if value is None else str(int(value))

    return _CJK_NUMERAL_RUN.sub(numeral, text)


def _two_digit_year(year: int) -> int:
    return year + (2000 if year < 70 else 1900)


def _numeric(first: int, second: int, year: int, order: str | None) -> str | None:
    if first > 12 or second > 12 or first == second:
        day, month = (first, second) if first > 12 or first == second else (second, first)
        return _valid(year, month, day)
    if order == "DMY":
        return _valid(year, second, first)
    if order == "MDY":
        return _valid(year, first, second)
    return None


def _order_of(order: str | None, languages: Sequence[str] | None) -> str | None:
    if order:
        order = order.upper()
        return order if order in ("DMY", "MDY", "YMD") else None
    for language in languages or ():
        found = _cldr.date_order(language)
        if found in ("DMY", "MDY"):
            return found
    return None


def _month_of(word: str, languages: Sequence[str] | None) -> int | None:
    candidates = _cldr.tables().months.get(key(word))
    if not candidates:
        return None
    if len(candidates) == 1:
        return next(iter(candidates))
    wanted = {_cldr.language_of(language) for language in languages or ()}
    if wanted:
        chosen = [month for month, langs in candidates.items() if langs & wanted]
        if len(chosen) == 1:
            return chosen[0]
    counts = Counter({month: len(langs) for month, langs in candidates.items()})
    (best, best_count), *rest = counts.most_common()
    return best if not rest or rest[0][1] < best_count else None


def read_month(word: str, languages: Sequence[str] | None = None) -> int | None:
    """The month (1-12) a month name or abbreviation stands for in any CLDR locale, or None.

    ``languages`` settle a name that several languages use for different months.
    """
    if not isinstance(word, str) or not word.strip() or len(word) > 64:
        return None
    return _month_of(word.strip(), languages)


class _Token(NamedTuple):
    start: int
    end: int
    text: str


def _tokens(text: str) -> list[_Token]:
    """Words and digit runs, split at punctuation and at script changes ("5มกราคม2560")."""
    out: list[_Token] = []
    for piece in re.finditer(
        r"\d+(?:st|nd|rd|th|er|ère|ème|eme|e|º|ª|\.|일|日)?"
        r"|[^\s\d/\-.,:;()\[\]\"'«»،]+(?:\.[^\s\d/\-.,:;()\[\]\"'«»،]+)*\.?",  # "มี.ค."
        text,
        re.IGNORECASE,
    ):
        out.append(_Token(piece.start(), piece.end(), piece.group()))
    return out


def _by_names(text: str, languages: Sequence[str] | None) -> tuple[str, int, int] | None:
    """A date with a month name: (ISO date, start, end) of the first one in ``text``."""
    tokens = _tokens(text)
    if len(tokens) > 4000:
        tokens = tokens[:4000]
    words = [t.text for t in tokens]
    values: dict[int, tuple[int, bool]] = {}  # token index -> (number, written in words)
    for index, token in enumerate(tokens):
        match = _ORDINAL.match(token.text)
        if match:
            values[index] = (int(match.group(1)), False)
        elif len(token.text.rstrip(".")) == 4 and token.text.rstrip(".").isdigit():
            values[index] = (int(token.text.rstrip(".")), False)  # "3 May 2024." ends a sentence
    spoken = [w if not w[0].isdigit() else "" for w in words]
    for hit in _words.find_word_numbers(
        spoken, [*(languages or ()), *_words.TEXT2NUM_LANGUAGES, "tr"]
    ):
        short = hit.end - hit.start == 1 and len(words[hit.start]) < 3 and not languages
        if hit.value == int(hit.value) and 1 <= hit.value <= 31 and not short:
            for index in range(hit.start, hit.end):
                values.setdefault(index, (int(hit.value), True))
    months = {index: month for index, token in enumerate(tokens)
              if not token.text[0].isdigit()
              and (month := _month_of(token.text, languages)) is not None}  # fmt: skip
    weekdays = _cldr.tables().weekdays
    loose: tuple[str, int, int] | None = None
    for index, month in months.items():
        word = tokens[index].text
        if key(word) in weekdays and len(word.rstrip(".")) <= 3:
            # "okt" is also a weekday somewhere: passed over for a month word as well attested
            support = _support(word, month, languages)
            if any(_support(tokens[other].text, other_month, languages) >= support
                   for other, other_month in months.items() if other != index):  # fmt: skip
                continue
        found = _around_month(tokens, values, index, month, text)
        if found is None:
            continue
        (iso, start, end), beside = found
        if beside:
            return iso, start, end
        loose = loose or (iso, start, end)
    return loose


def _support(word: str, month: int, languages: Sequence[str] | None) -> int:
    """How many languages name ``month`` ``word`` (every language counts among ``languages``)."""
    langs = _cldr.tables().months.get(key(word), {}).get(month, frozenset())
    if {_cldr.language_of(language) for language in languages or ()} & langs:
        return len(_cldr.tables().months)  # more than any word's count
    return len(langs - _cldr.CONSTRUCTED_LANGUAGES)


def _around_month(
    tokens: list[_Token], values: dict[int, tuple[int, bool]], index: int, month: int, text: str
) -> tuple[tuple[str, int, int], bool] | None:
    """The date around the month word at ``index``, and whether its day stands beside it.

    A day that is only the one other number of the text is weaker evidence: a month word
    whose day is beside it is preferred ("Ik zal op woens 26 okt 2016": "zal" names May in
    Old Prussian, but 26 stands beside "okt").
    """
    years = [i for i, (value, spoken) in values.items()
             if not spoken and len(tokens[i].text.rstrip(".")) == 4
             and tokens[i].text.rstrip(".").isdigit() and abs(i - index) <= 6]  # fmt: skip
    years.sort(key=lambda i: abs(i - index))
    if not years or (len(years) > 1 and abs(years[1] - index) == abs(years[0] - index)):
        return None
    year_index = years[0]
    year = values[year_index][0]
    if year >= 2400 and re.search(r"[\u0e00-\u0e7f]", text):
        year -= 543  # Thai Buddhist era
    day_index = _adjacent_day(tokens, values, index, year_index)
    if day_index is None:
        return None
    (day_first, day_last), beside = day_index
    day = values[day_first][0]
    iso = _valid(year, month, day)
    if iso is None:
        return None
    span = [index, year_index, day_first, day_last]
    last = tokens[max(span)]
    end = last.end - 1 if last is tokens[year_index] and last.text.endswith(".") else last.end
    return (iso, tokens[min(span)].start, end), beside


def _adjacent_day(tokens: list[_Token], values: dict[int, tuple[int, bool]], month_index: int,
                  year_index: int) -> tuple[tuple[int, int], bool] | None:  # fmt: skip
    """The day's token range: next to the month, else the one other number in the text.

    The flag says which: True for a day next to the month.

    Fillers such as "of", "de" and weekday names may stand between the month and its day.
    """

    def day_at(i: int) -> tuple[int, int] | None:
        if i == year_index or i not in values or not 1 <= values[i][0] <= 31:
            return None
        if len(tokens[i].text) == 4 and tokens[i].text.isdigit():
            return None
        first = last = i
        while first - 1 in values and values[first - 1][1] and values[first - 1] == values[i]:
            first -= 1
        while last + 1 in values and values[last + 1][1] and values[last + 1] == values[i]:
            last += 1
        return first, last

    reach: dict[int, int] = {}  # step -> how far the walk from the month got
    for step in (-1, 1):
        cursor, skipped = month_index + step, 0
        while 0 <= cursor < len(tokens) and skipped <= 2:
            word = tokens[cursor].text.rstrip(".").casefold()
            if day_at(cursor) is None and (word in _FILLERS or cursor == year_index or
                                           key(word) in _cldr.tables().weekdays):  # fmt: skip
                cursor += step
                skipped += 1
                continue
            break
        reach[step] = cursor
    nearest = sorted(reach.items(), key=lambda item: (abs(item[1] - month_index), item[0]))
    for _step, cursor in nearest:
        found = day_at(cursor) if 0 <= cursor < len(tokens) else None
        if found:
            return found, True
    others = {day_at(i) for i in values} - {None}
    if len(others) == 1:
        day = others.pop()
        assert day is not None
        return day, False
    return None


def _dateparser(text: str, languages: Sequence[str] | None, order: str | None) -> str | None:
    import dateparser

    settings: dict[str, object] = {
        "STRICT_PARSING": True,
        "REQUIRE_PARTS": ["day", "month", "year"],
        "PREFER_DATES_FROM": "past",
        "PARSERS": ["custom-formats", "absolute-time"],
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    if order:
        settings["DATE_ORDER"] = order
    wanted = [_cldr.language_of(language) for language in languages or ()] or list(
        _DATEPARSER_LANGUAGES
    )
    try:
        parsed = dateparser.parse(text, languages=wanted, settings=settings)
    except (ValueError, TypeError, OverflowError, KeyError, AttributeError):
        return None
    return parsed.date().isoformat() if parsed else None


def _easter(year: int) -> dt.date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    m = (32 + 2 * e + 2 * i - h - k) % 7
    n = (a + 11 * h + 22 * m) // 451
    month, day = divmod(h + m - 7 * n + 114, 31)
    return dt.date(year, month, day + 1)


# Holidays whose date the year alone fixes: (month, day) or days from Easter. Names in the units'
# languages and a few more; holidays that differ by country (Thanksgiving, Mother's Day,
# children's day) are left out.
_EASTER_DAYS = {
    0: ("easter", "easter sunday", "ostern", "ostersonntag", "pâques", "pascua", "pasqua",
        "páscoa", "pasen", "påsk", "påskdagen", "paskalya"),
    -2: ("good friday", "karfreitag", "vendredi saint", "viernes santo", "venerdì santo",
         "sexta-feira santa", "goede vrijdag", "långfredag"),
    1: ("easter monday", "ostermontag", "lundi de pâques", "lunes de pascua", "pasquetta",
        "tweede paasdag", "annandag påsk"),
    -7: ("palm sunday", "palmsonntag", "dimanche des rameaux", "domingo de ramos",
         "domenica delle palme", "palmzondag", "palmsöndag"),
    -46: ("ash wednesday", "aschermittwoch", "mercredi des cendres", "miércoles de ceniza",
          "mercoledì delle ceneri", "quarta-feira de cinzas", "aswoensdag"),
    39: ("ascension day", "christi himmelfahrt", "ascension", "ascensión", "ascensione",
         "hemelvaartsdag", "kristi himmelsfärdsdag"),
    49: ("pentecost", "whit sunday", "whitsunday", "pfingsten", "pfingstsonntag", "pentecôte",
         "pentecostés", "pentecoste", "pentecostes", "pinksteren", "pingst", "pingstdagen"),
    50: ("whit monday", "pfingstmontag", "lundi de pentecôte", "tweede pinksterdag"),
    60: ("corpus christi", "fronleichnam", "fête-dieu", "sacramentsdag"),
}  # fmt: skip
_FIXED_DAYS = {
    (1, 1): ("new year's day", "new years day", "neujahr", "neujahrstag", "jour de l'an",
             "año nuevo", "capodanno", "ano novo", "nieuwjaarsdag", "nyårsdagen", "元日", "元旦"),
    (1, 6): ("epiphany", "heilige drei könige", "dreikönigstag", "épiphanie", "día de reyes",
             "epifania", "driekoningen", "trettondedag jul"),
    (2, 14): ("valentine's day", "valentines day", "valentinstag", "saint-valentin",
              "san valentín", "san valentino", "valentijnsdag", "alla hjärtans dag"),
    (3, 17): ("st patrick's day", "st. patrick's day", "saint patrick's day"),
    (4, 22): ("earth day", "tag der erde", "jour de la terre", "día de la tierra",
              "giornata della terra", "dia da terra", "पृथ्वी दिवस"),
    (7, 4): ("independence day", "fourth of july", "4th of july"),
    (7, 14): ("bastille day", "fête nationale", "quatorze juillet"),
    (10, 31): ("halloween",),
    (11, 1): ("all saints' day", "all saints day", "allerheiligen", "toussaint", "todos los santos",
              "ognissanti", "dia de todos os santos", "alla helgons dag"),
    (12, 24): ("christmas eve", "heiligabend", "heiliger abend", "réveillon de noël",
               "nochebuena", "vigilia di natale", "véspera de natal", "kerstavond", "julafton"),
    (12, 25): ("christmas", "christmas day", "weihnachten", "noël", "navidad", "natale", "natal",
               "kerstmis", "eerste kerstdag", "juldagen", "圣诞节", "聖誕節", "クリスマス",
               "크리스마스"),
    (12, 26): ("boxing day", "stephanstag", "zweiter weihnachtstag", "santo stefano",
               "tweede kerstdag", "annandag jul"),
    (12, 31): ("new year's eve", "new years eve", "silvester", "saint-sylvestre", "nochevieja",
               "san silvestro", "oudejaarsavond", "nyårsafton"),
}  # fmt: skip


def _holiday(text: str) -> str | None:
    """A holiday the year fixes, with that year written: "pfingsten 2022", "christmas 2018"."""
    years = _YEAR.findall(text)
    if len(set(years)) != 1:
        return None
    found = {_holiday_date(_holiday_day(m.group()), int(years[0]))
             for m in _holiday_names().finditer(text)} - {None}  # fmt: skip
    return found.pop() if len(found) == 1 else None


def _holiday_date(day: tuple[int, int] | int, year: int) -> str | None:
    """The date of a holiday (a (month, day), or days from Easter) in ``year``."""
    try:
        date = (dt.date(year, *day) if isinstance(day, tuple)
                else _easter(year) + dt.timedelta(days=day))  # fmt: skip
    except ValueError:  # year 0
        return None
    return date.isoformat()


_HOLIDAY_DAYS: dict[str, tuple[int, int] | int] = {
    **{name: offset for offset, names in _EASTER_DAYS.items() for name in names},
    **{name: month_day for month_day, names in _FIXED_DAYS.items() for name in names},
}
"""Every holiday name and the day it names: a (month, day), or a count of days from Easter."""
_HOLIDAY_REACH = 24  # characters between a holiday's name and its year ("Pfingsten 2022")
_YEAR_REACH = _HOLIDAY_REACH + max(map(len, _HOLIDAY_DAYS))  # from a year to a name's far end


@cache
def _holiday_names() -> re.Pattern[str]:
    """Every holiday name of the tables as one pattern (whole words, the longest tried first)."""
    ordered = sorted(_HOLIDAY_DAYS, key=len, reverse=True)
    words = "|".join(re.escape(n) for n in ordered if n[0].isalpha() and n.isascii())
    others = "|".join(re.escape(n) for n in ordered if not (n[0].isalpha() and n.isascii()))
    # One look-behind before the words: inside a word it fails before any name is tried.
    return re.compile(rf"(?<!\w)(?:{words})(?!\w)|{others}", re.IGNORECASE)


def _holiday_day(name: str) -> tuple[int, int] | int:
    """The day a holiday name that ``_holiday_names()`` matched stands for.

    Case-insensitive matching takes texts that case-folding does not bring back to the table's
    name ("VALENTİNE'S DAY"); those are compared as the pattern compared them.
    """
    day = _HOLIDAY_DAYS.get(name.casefold())
    if day is None:
        day = next(day for known, day in _HOLIDAY_DAYS.items()
                   if re.fullmatch(re.escape(known), name, re.IGNORECASE))  # fmt: skip
    return day


def _holiday_spans(text: str) -> list[DateSpan]:
    """Holidays named with their year nearby: "Pfingsten 2022", "2010 के पृथ्वी दिवस"."""
    spans: list[DateSpan] = []
    for match in _near_years(_holiday_names(), text):
        lead = max(0, match.start() - _HOLIDAY_REACH)
        years = [(lead + y.start(), lead + y.end()) for y in _YEAR.finditer(
            text[lead : match.end() + _HOLIDAY_REACH])]  # fmt: skip
        if not years:
            continue
        near = min(years, key=lambda y: min(abs(y[0] - match.end()), abs(match.start() - y[1])))
        iso = _holiday_date(_holiday_day(match.group()), int(text[near[0] : near[1]]))
        if iso is not None:
            start, end = min(match.start(), near[0]), max(match.end(), near[1])
            spans.append(DateSpan(start, end, text[start:end], iso))
    return spans


def _near_years(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern``'s matches within reach of a four-digit year.

    Only where a year is near: the pattern of every holiday name over a whole text cost as much
    as the rest of ``find_dates``.
    """
    windows: list[list[int]] = []
    for year in _YEAR.finditer(text):
        start, end = max(0, year.start() - _YEAR_REACH), min(len(text), year.end() + _YEAR_REACH)
        if windows and start <= windows[-1][1]:
            windows[-1][1] = end
        else:
            windows.append([start, end])
    for start, end in windows:
        yield from pattern.finditer(text, start, end)


_DATEPARSER_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl",
                         "cs", "ru", "uk", "tr", "ar", "hi", "bn", "zh", "ja", "ko", "th", "vi",
                         "id", "he", "el", "ro", "hu")  # fmt: skip
"""Languages dateparser tries when none are given (all of its 200 would cost a second a text)."""


def read_date(
    text: str,
    *,
    languages: Sequence[str] | None = None,
    order: str | None = None,
) -> str | None:
    """The one calendar date ``text`` writes, as ``YYYY-MM-DD``; None if none or ambiguous.

    ``languages`` (CLDR ids: ``de``, ``pt_BR``) are tried first for month names and words and
    lend their date order; ``order`` (``"DMY"``, ``"MDY"``) settles ``03/04/2024``.
    """
    if not isinstance(text, str) or len(text) > MAX_SPAN:
        return None
    prepared = squash(text)
    if not prepared or not any(c.isdigit() or c in _words.CJK_NUMERALS for c in prepared):
        return None
    resolved_order = _order_of(order, languages)
    found = _structured(prepared, languages, resolved_order)
    if found is not None:
        return found[0] or None
    if not any(c.isalpha() for c in prepared):
        return None  # numbers only: the readers above are the rule, dateparser would guess
    return _holiday(prepared) or _dateparser(prepared, languages, resolved_order)


def _structured(text: str, languages: Sequence[str] | None,
                order: str | None) -> tuple[str, int, int] | None:  # fmt: skip
    """The first date of the three structured readers, with its span.

    ``("", start, end)`` marks a numeric date that is there but ambiguous: the caller must not
    guess it elsewhere.
    """
    asian = _east_asian(text)
    if len(asian) == len(text):
        match = _CJK_DATE.search(asian) or None
        korean = _KOREAN_MDY.search(asian)
        if match:
            iso = _valid(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            if iso:
                return iso, match.start(), match.end()
        if korean:
            iso = _valid(int(korean.group(3)), int(korean.group(1)), int(korean.group(2)))
            if iso:
                return iso, korean.start(), korean.end()
    else:
        match = _CJK_DATE.search(asian)
        if match:
            iso = _valid(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            if iso:
                return iso, 0, len(text)
    untimed = _TIME.sub(lambda m: " " * len(m.group()), text)
    found: list[tuple[str, int, int]] = []
    match = _YEAR_FIRST.search(untimed)
    if match:
        year, first, second = int(match.group(1)), int(match.group(3)), int(match.group(4))
        iso = _valid(year, first, second) or (_valid(year, second, first) if first > 12 else None)
        if iso:
            found.append((iso, match.start(), match.end()))
    match = _NUMERIC.search(untimed)
    if match:
        year = int(match.group(4))
        if len(match.group(4)) == 2:
            year = _two_digit_year(year)
        iso = _numeric(int(match.group(1)), int(match.group(3)), year, order)
        found.append(((iso or ""), match.start(), match.end()))
    named = _by_names(untimed, languages)
    # Digits that make a whole numeric date are that date, not a day or year of a month word
    # nearby ("du am 2015.5.13": "du" names November in Breton).
    if named is not None and not any(start < named[2] and named[1] < end
                                     for _, start, end in found):  # fmt: skip
        found.append(named)
    return min(found, key=lambda item: item[1]) if found else None


def find_dates(
    text: str, *, languages: Sequence[str] | None = None, order: str | None = None
) -> list[DateSpan]:
    """Every date ``text`` writes fully (day, month, year), with its span, left to right.

    Ambiguous numeric dates are left out unless ``order`` or ``languages`` settle them.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    folded = fold(text[:MAX_TEXT])
    resolved_order = _order_of(order, languages)
    spans: list[DateSpan] = []
    position = 0
    # Candidate windows: around each four-digit number (a year) or 年/년 mark, 60 chars each side.
    for anchor in re.finditer(r"(?<!\d)\d{4}(?!\d)|[年년]", folded):
        if anchor.start() < position:
            continue
        start = max(position, anchor.start() - 60)
        end = min(len(folded), anchor.end() + 60)
        window = folded[start:end]
        found = _structured(window, languages, resolved_order)
        if found is None:
            continue
        iso, local_start, local_end = found
        span_start, span_end = start + local_start, start + local_end
        if iso and span_end > position:
            spans.append(DateSpan(span_start, span_end, text[span_start:span_end], iso))
        position = max(position, span_end, anchor.end())
    for holiday in _holiday_spans(folded):
        if not any(holiday.start < span.end and span.start < holiday.end for span in spans):
            spans.append(holiday._replace(text=text[holiday.start : holiday.end]))
    return sorted(spans)
