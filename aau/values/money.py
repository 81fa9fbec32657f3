r"""Money: every ISO-4217 currency with its symbols, names and plurals in every CLDR locale.

The marker table (marker -> candidate codes) is built from Babel once per process, on first
use (about a second): each locale's currency symbols (``Kč``, ``zł``, ``R$``, ``CA$``, ``$`` in
``en_CA`` for CAD), each language's display names and their plural forms ("dollari
australiani", "スイス フラン", "amerikanska dollar"), the ISO codes themselves, and a short
table of what CLDR does not list (generic words such as "dollar", "ドル", "yuan", abbreviations
such as "руб.", "грн.", "TL", "Rs", country-prefixed dollars such as "C$", "NZ$", and the
Shift-JIS yen sign ``\``). Markers are compared by ``aau.values._text.key`` (case, spaces,
dots and middle dots ignored), then without diacritics.

**How an ambiguous marker is resolved** (``$``, ``kr``, ``¥``, ``Rs``, "dollar", "franc"…), in
order:

1. A marker that names one currency is that currency ("R$" is BRL, never USD).
2. The context: an ISO code of one of the candidates in it ("CAD"), or a territory, demonym
   or city of exactly one candidate ("Canada", "australiani", "Toronto", "台湾").
3. The locale: the candidate whose symbol the locale writes so (``$`` in ``en_CA`` is CAD), or
   the currency of the locale's territory or language (``kr`` in ``sv`` is SEK).
4. The reading that dominates in practice, for a few markers only: ``$`` and dollar words ->
   USD, ``¥``/``￥`` and yen words -> JPY, ``£`` and pound words -> GBP, ``元`` -> CNY,
   ``Rs``/rupee words -> INR, ``R`` -> ZAR, "kronor" (Swedish's plural) -> SEK, "riyal" ->
   SAR, "dirham" -> AED.
5. Otherwise None: the caller keeps the marker as written (``kr``, "franc", "peso", "dinar").
"""

from __future__ import annotations

import bisect
import itertools
import re
import sys
import unicodedata
from collections import defaultdict
from decimal import Decimal
from functools import cache, lru_cache
from typing import NamedTuple

from aau.values import _cldr, _text, _words, numbers
from aau.values._disk_cache import cached
from aau.values._text import MAX_SPAN, key

__all__ = [
    "Money",
    "MoneySpan",
    "currency_codes",
    "currency_renderings",
    "find_money",
    "is_currency_marker",
    "read_currency",
    "read_money",
]


class Money(NamedTuple):
    """An amount and its ISO-4217 code (None when the marker could not be resolved)."""

    amount: numbers.Number
    currency: str | None


_DOLLARS = ("USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "BSD", "BBD", "BZD", "BMD",
            "BND", "FJD", "GYD", "JMD", "KYD", "LRD", "NAD", "SBD", "SRD", "TTD", "XCD",
            "ZWL")  # fmt: skip
_KRONOR = ("SEK", "NOK", "DKK", "ISK")
_PESOS = ("MXN", "ARS", "CLP", "COP", "CUP", "DOP", "PHP", "UYU")
_FRANCS = ("CHF", "XOF", "XAF", "XPF", "CDF", "GNF", "RWF", "BIF", "DJF", "KMF", "MGA")
_RUPEES = ("INR", "PKR", "LKR", "NPR", "MUR", "SCR")

_WORDS: dict[str, tuple[str, ...]] = {
    # Generic words and abbreviations -> candidate codes (the first is not a default by itself).
    **{w: _DOLLARS for w in ("dollar", "dollars", "dólar", "dólares", "dolar", "dolares",
                             "dollaro", "dollari", "dollaroamericano", "doller", "ドル", "弗",
                             "달러", "buck", "bucks", "доллар", "доллара", "долларов", "dolar",
                             "dolarlar", "डॉलर")},
    **{w: ("GBP", "EGP", "LBP", "SYP", "SDG", "SSP", "GIP", "FKP", "SHP")
       for w in ("pound", "pounds", "libra", "libras", "sterlina", "sterline", "pfund", "pond",
                 "ポンド", "파운드", "quid", "पाउंड", "पौंड")},
    **{w: ("JPY",) for w in ("yen", "yens", "yenes", "iene", "ienes", "円", "エン", "엔", "日元",
                             "日圓", "येन", "\\")},
    **{w: ("CNY",) for w in ("yuan", "yuans", "renminbi", "rmb", "元", "人民元", "人民币",
                             "人民幣", "块", "塊", "위안")},
    **{w: ("EUR",) for w in ("euro", "euros", "eur", "euri", "€", "ユーロ", "유로", "欧元", "歐元",
                             "евро", "यूरो")},
    **{w: _KRONOR for w in ("kr", "kr.", "krona", "kronor", "krone", "kroner", "kronen",
                            "kronur", "króna", "krónur", ":-")},
    **{w: _FRANCS for w in ("franc", "francs", "franco", "francos", "franchi", "franken",
                            "frank", "fr", "fr.", "フラン")},
    **{w: _PESOS for w in ("peso", "pesos", "ペソ")},
    **{w: _RUPEES for w in ("rupee", "rupees", "rupia", "rupias", "rupie", "rs", "rs.", "₨",
                            "रुपये", "रुपया", "रुपए", "रु", "ルピー")},
    **{w: ("BRL",) for w in ("real", "reais", "reales", "r$")},
    **{w: ("ZAR",) for w in ("rand", "r")},
    **{w: ("RUB",) for w in ("руб", "руб.", "рубль", "рубля", "рублей", "рублях", "ruble",
                             "rubles", "rouble", "roubles", "rubel", "rublo", "rublos", "р", "₽")},
    **{w: ("UAH",) for w in ("грн", "грн.", "гривня", "гривні", "гривень", "hryvnia", "hryvnias")},
    **{w: ("PLN",) for w in ("zł", "zl", "złoty", "zloty", "zlotys", "złotych", "złote")},
    **{w: ("CZK",) for w in ("kč", "kc", "korun", "koruna", "koruny")},
    **{w: ("HUF",) for w in ("forint", "forints")},  # "Ft" from CLDR; "ft" is feet
    **{w: ("TRY",) for w in ("tl", "₺", "lira", "liras", "türk lirası", "turkish lira")},
    **{w: ("EUR",) for w in ("avro",)},
    **{w: ("KRW",) for w in ("won", "원", "₩", "圆")},
    **{w: ("AED", "MAD") for w in ("dirham", "dirhams", "dirhem", "dirhems", "درهم")},
    **{w: ("SAR", "QAR", "YER") for w in ("riyal", "riyals", "ريال")},
    **{w: ("OMR", "IRR", "YER") for w in ("rial", "rials")},
    **{w: (*_KRONOR, "CZK") for w in ("crowns",)},
    **{w: ("KWD", "JOD", "BHD", "IQD", "DZD", "TND", "LYD", "RSD", "MKD")
       for w in ("dinar", "dinars")},
    **{w: ("KES", "UGX", "TZS", "SOS") for w in ("shilling", "shillings")},
    # Latin American currencies' bare names and Spanish plurals (CLDR writes them with the
    # country: "soles peruanos")
    **{w: ("PEN",) for w in ("sol", "soles", "nuevo sol", "nuevos soles", "s/", "s/.")},
    **{w: ("GTQ",) for w in ("quetzal", "quetzales")},
    **{w: ("CRC", "SVC") for w in ("colón", "colon", "colones")},
    **{w: ("VES", "VEF") for w in ("bolívar", "bolivar", "bolívares", "bolivares")},
    **{w: ("BOB",) for w in ("boliviano", "bolivianos")},
    **{w: ("HNL",) for w in ("lempira", "lempiras")},
    **{w: ("NIO",) for w in ("córdoba", "córdobas")},
    **{w: ("PYG",) for w in ("guaraní", "guaraníes", "guarani", "guaranis")},
    **{w: ("IDR",) for w in ("rp", "rupiah")},
    **{w: ("INR",) for w in ("₹", "inr")},
    **{w: ("SEK",) for w in ("spänn",)},
    **{w: ("USD",) for w in ("us$", "u.s.$", "usd$", "us dollar", "us dollars", "美元", "美金",
                             "米ドル", "amerikan doları", "amerikan dolar")},
    **{w: ("GBP",) for w in ("英镑", "英鎊", "sterlin", "sterling", "pound sterling",
                             "britische pfund", "britischen pfund", "britisches pfund")},
    **{w: ("CAD",) for w in ("c$", "ca$", "can$", "cad$", "cdn$")},
    **{w: ("AUD",) for w in ("a$", "au$", "aud$")},
    **{w: ("NZD",) for w in ("nz$",)},
    **{w: ("HKD",) for w in ("hk$", "hkd$", "港元", "港币", "港幣")},
    **{w: ("SGD",) for w in ("s$", "sg$", "sgd$")},
    **{w: ("TWD",) for w in ("nt$", "ntd", "新台币", "新台幣", "台币", "台幣")},
    **{w: ("MXN",) for w in ("mx$", "mex$")},
    # Chinese colloquial names, written before an amount and 元 ("日币1000元", "韩币5万元")
    **{w: ("JPY",) for w in ("日币", "日幣")},
    **{w: ("KRW",) for w in ("韩币", "韓幣")},
    **{w: ("SGD",) for w in ("新币", "新幣")},
    **{w: ("MYR",) for w in ("马币", "馬幣")},
    **{w: ("RUB",) for w in ("卢布", "盧布")},
    # ... and the short names Chinese uses beside CLDR's long ones ("加拿大元", "印度卢比")
    **{w: ("CAD",) for w in ("加元",)},
    **{w: ("ZAR",) for w in ("兰特", "蘭特")},
    **{w: ("TRY",) for w in ("里拉",)},
    **{w: _RUPEES for w in ("卢比", "盧比")},
    **{w: _FRANCS for w in ("法郎",)},
    **{w: _PESOS for w in ("比索",)},
    **{w: (*_KRONOR, "CZK") for w in ("克朗",)},
    **{w: ("HRK",) for w in ("kn", "kuna", "kune")},
    **{w: ("DEM", "FIM", "BAM") for w in ("mark", "marks", "marco", "marchi", "marcos", "markka",
                                          "markkaa", "marka", "mark.")},
    **{w: ("NLG", "AWG", "ANG") for w in ("fiorino", "fiorini", "florin", "florins", "florín",
                                          "florines", "florim", "florins", "gulden", "guilder",
                                          "guilders")},
    **{w: ("RON",) for w in ("lei", "leu")},
    **{w: ("BGN",) for w in ("лв", "лв.", "лева", "lev", "leva")},
    **{w: ("THB",) for w in ("baht", "บาท", "฿")},
    **{w: ("MYR",) for w in ("rm", "ringgit")},
    **{w: ("VND",) for w in ("đ", "₫", "đồng", "dong", "vnđ", "vnd")},
    **{w: ("ILS",) for w in ("₪", "shekel", "shekels", "sheqel", "ש״ח", 'ש"ח')},
    **{w: ("NGN",) for w in ("naira", "₦", "ナイラ")},
    **{w: ("CHF",) for w in ("sfr", "sfr.", "chf", "swiss franc", "swiss francs")},
    **{w: _DOLLARS + _PESOS + ("NIO", "BRL") for w in ("$",)},
    **{w: ("JPY", "CNY") for w in ("¥", "￥")},
    **{w: ("GBP", "EGP", "FKP", "GIP", "SHP", "SSP", "SYP", "LBP") for w in ("£",)},
}  # fmt: skip
"""Markers CLDR does not list, or lists for fewer currencies than they name in practice."""

_DEFAULTS = {
    **{key(w): "USD" for w in ("$", "dollar", "dollars", "dólar", "dólares", "dolar", "dolares",
                               "dollaro", "dollari", "ドル", "달러", "buck", "bucks", "доллар",
                               "доллара", "долларов", "dolarlar", "डॉलर", "弗", "doller")},
    **{key(w): "JPY" for w in ("¥", "￥")},
    **{key(w): "GBP" for w in ("£", "pound", "pounds", "libra", "libras", "sterlina",
                               "sterline", "pfund", "ポンド", "파운드", "quid", "पाउंड", "पौंड")},
    **{key(w): "INR" for w in ("rs", "rs.", "rupee", "rupees", "रुपये", "रुपया", "रुपए", "रु", "₨")},
    **{key(w): "CNY" for w in ("元",)},
    **{key(w): "CHF" for w in ("franken",)},  # German names the franc of Switzerland
    **{key(w): "ZAR" for w in ("r",)},
    **{key(w): "SEK" for w in ("kronor",)},  # Swedish's plural; Danish and Norwegian: kroner
    **{key(w): "SAR" for w in ("riyal", "riyals")},
    **{key(w): "AED" for w in ("dirham", "dirhams")},
    **{key(w): "CRC" for w in ("colón", "colon", "colones")},  # El Salvador's is gone since 2001
    **{key(w): "VES" for w in ("bolívar", "bolivar", "bolívares", "bolivares")},
}  # fmt: skip
"""Step 4 of the module docstring: the reading that dominates where the text does not say."""

_LANGUAGE_CURRENCY = {"sv": "SEK", "da": "DKK", "nb": "NOK", "nn": "NOK", "no": "NOK",
                      "is": "ISK", "fo": "DKK", "kl": "DKK", "ja": "JPY", "zh": "CNY",
                      "hi": "INR", "ur": "PKR", "si": "LKR", "ne": "NPR"}  # fmt: skip

_CITIES = {
    "USD": ("new york", "washington", "california", "chicago", "texas", "america", "american",
            "americans", "u.s.", "usa", "united states", "美国", "美國", "アメリカ", "미국",
            "amerikanska", "amerikanische", "americano", "americanos", "americani", "américain",
            "américains", "estadounidense", "estadounidenses", "norte-americano", "अमेरिकी",
            "अमरीकी", "अमेरिका", "अमरीका"),
    "CAD": ("canada", "canadian", "toronto", "vancouver", "montreal", "montréal", "ottawa",
            "calgary", "quebec", "québec", "canadien", "canadiens", "canadiense", "canadese",
            "canadense", "kanada", "カナダ", "加拿大", "캐나다"),
    "AUD": ("australia", "australian", "sydney", "melbourne", "brisbane", "perth", "canberra",
            "australien", "australiano", "australiani", "australianos", "オーストラリア",
            "澳大利亚", "澳元", "호주"),
    "NZD": ("new zealand", "auckland", "wellington", "nouvelle-zélande", "nueva zelanda",
            "neuseeland", "nuova zelanda", "ニュージーランド", "新西兰"),
    "HKD": ("hong kong", "hongkong", "香港", "홍콩"),
    "SGD": ("singapore", "singapour", "singapur", "cingapura", "シンガポール", "新加坡",
            "싱가포르"),
    "TWD": ("taiwan", "taipei", "台湾", "台灣", "臺灣", "대만"),
    "MXN": ("mexico", "méxico", "mexican", "mexicano", "mexicanos", "mexique", "墨西哥",
            "メキシコ"),
    "SEK": ("sweden", "sverige", "svenska", "swedish", "stockholm", "schweden", "suède", "suecia"),
    "NOK": ("norway", "norge", "norska", "norwegian", "oslo", "norwegen", "norvège", "noruega"),
    "DKK": ("denmark", "danmark", "danska", "danish", "copenhagen", "københavn", "dänemark"),
    "ISK": ("iceland", "ísland", "reykjavik", "reykjavík", "island"),
    "CNY": ("china", "chinese", "中国", "中國", "beijing", "shanghai", "北京", "上海",
            "中国人民银行"),
    "JPY": ("japan", "japanese", "日本", "tokyo", "東京", "japon", "japón", "giappone"),
    "INR": ("india", "indian", "mumbai", "delhi", "bangalore", "भारत", "inde"),
    "PKR": ("pakistan", "karachi", "lahore", "islamabad"),
    "LKR": ("sri lanka", "colombo"),
    "NPR": ("nepal", "kathmandu"),
    "ZAR": ("south africa", "johannesburg", "cape town", "pretoria", "durban"),
    "BRL": ("brazil", "brasil", "são paulo", "rio de janeiro", "brésil"),
    "GBP": ("britain", "british", "uk", "u.k.", "england", "london", "londres", "sterling"),
    "EGP": ("egypt", "cairo", "égypte", "egipto"),
    "CHF": ("switzerland", "swiss", "schweiz", "suisse", "svizzera", "suiza", "zürich", "zurich",
            "geneva", "genève", "svizzeri", "suizos", "suíços", "suicos"),
    "ARS": ("argentina", "buenos aires"),
    "CLP": ("chile", "santiago"),
    "COP": ("colombia", "bogotá", "bogota"),
    "PHP": ("philippines", "manila", "filipinas"),
}  # fmt: skip
"""Context words of one currency beyond CLDR's territory names (cities, demonyms)."""

_HINT_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "ja", "zh", "ko", "ru", "tr",
                   "hi")  # fmt: skip


def _plain(text: str) -> str:
    """Without diacritics: "suíços" -> "suicos" (a second look-up for Latin-script markers)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _table() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(marker key -> codes, accent-free key -> codes), CLDR and the table above merged."""
    return cached("currency-markers", (sys.modules[__name__], _cldr, _text), _build_table)


def _build_table() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    cldr = _cldr.tables().currencies
    codes = _cldr.iso_currency_codes()
    table: dict[str, set[str]] = defaultdict(set)
    for marker, by_code in cldr.items():
        table[marker].update(code for code in by_code if code in codes)
    for code in codes:
        table[key(code)].add(code)
    for word, candidates in _WORDS.items():
        table[key(word)] = set(candidates)
    # Equal code sets become one frozenset (60,000 markers, a few thousand sets): the disk
    # cache then stores and reads each once.
    interned: dict[frozenset[str], frozenset[str]] = {}

    def frozen(found: set[str]) -> frozenset[str]:
        codes = frozenset(found)
        return interned.setdefault(codes, codes)

    exact = {marker: frozen(found) for marker, found in table.items() if found}
    plain: dict[str, set[str]] = defaultdict(set)
    for marker, found in exact.items():
        if not marker.isascii():
            bare = _plain(marker)
            if bare != marker:
                plain[bare].update(found)
    return exact, {marker: frozen(found) for marker, found in plain.items()}


_TURKISH_STEMS = frozenset({"dolar", "lira", "avro", "euro", "sterlin", "frank", "yen", "yuan",
                            "ruble", "rupi", "tl", "usd", "eur", "abd doları",
                            "türk lirası"})  # fmt: skip
_TURKISH_SUFFIXES = ("lık", "lik", "luk", "lük", "dan", "den", "tan", "ten", "dır", "dir", "dur",
                     "dür", "ya", "ye", "da", "de", "ta", "te", "yı", "yi", "nın", "nin", "sı",
                     "si", "a", "e", "ı", "i")  # fmt: skip


def _turkish_stem(marker_key: str) -> str | None:
    """A Turkish currency word with its case ending ("TL'ye", "dolara", "dolarlık"): the stem.

    Turkish writes endings onto a name ("liraya": to the lira); after an abbreviation they
    follow an apostrophe ("TL'dir"). Only the currency stems listed are read so.
    """
    for mark in ("'", "’"):
        if mark in marker_key:
            stem, _, ending = marker_key.partition(mark)
            return stem if stem and ending.isalpha() and len(ending) <= 5 else None
    return _turkish_forms().get(marker_key)


@cache
def _turkish_forms() -> dict[str, str]:
    """Each listed stem with each ending ("dolara" -> "dolar"; "doları" too), to its stem."""
    return {stem + ending: stem for stem in _TURKISH_STEMS for ending in _TURKISH_SUFFIXES}


def currency_codes(marker: str) -> frozenset[str]:
    """Every ISO code ``marker`` may stand for (``kr`` -> SEK, NOK, DKK, ISK); empty if none."""
    if not isinstance(marker, str) or not marker.strip() or len(marker) > 64:
        return frozenset()
    return _codes_of(marker)


_ENGLISH_PLURAL = re.compile(r"[a-z]{4,}s")


@lru_cache(maxsize=1 << 16)
def _codes_of(marker: str) -> frozenset[str]:
    """``currency_codes``, remembered: finding money asks it of every piece of every window."""
    exact, plain = _table()
    marker_key = key(marker)
    found = exact.get(marker_key)
    if found is None:
        stem = _turkish_stem(marker_key)
        found = exact.get(stem) if stem else None
    if found is None and not marker_key.isascii():
        found = plain.get(_plain(marker_key))
    if found is None and marker_key.isascii():
        found = plain.get(marker_key)  # "suicos" written without its accent
    singular = marker_key[:-1]
    if found is None and _ENGLISH_PLURAL.fullmatch(marker_key) and singular not in _COMMON_WORDS:
        found = exact.get(singular)  # "tugriks", "rands": CLDR lists no English plural
    return found or frozenset()


@cache
def _territories_of() -> dict[str, frozenset[str]]:
    """ISO code -> the territories where it is legal tender today."""
    from babel.numbers import get_territory_currencies

    out: dict[str, set[str]] = defaultdict(set)
    for territory in _cldr.territory_names(("en",)):
        try:
            for code in get_territory_currencies(territory, tender=True):
                out[code].add(territory)
        except (ValueError, KeyError, TypeError):
            continue
    return {code: frozenset(found) for code, found in out.items()}


_WORD_KEYS = frozenset(key(w) for w in _WORDS)
"""The look-up keys of the markers listed in ``_WORDS``."""
_GENERIC_NAME_WORDS = _WORD_KEYS | {"de", "di", "do", "da", "des", "du"}


@cache
def _hint_phrases(code: str) -> frozenset[str]:
    """Words that point at ``code`` in a context: territories, demonyms, cities, qualifiers."""
    phrases: set[str] = set(_CITIES.get(code, ()))
    names = _cldr.territory_names(_HINT_LANGUAGES)
    for territory in _territories_of().get(code, ()):
        phrases.update(names.get(territory, ()))
    for surface in _cldr.tables().currency_surfaces.get(code, ()):
        words = [w for w in surface.casefold().split() if key(w) not in _GENERIC_NAME_WORDS]
        if words and len(surface) > 3 and not any(c.isdigit() for c in surface):
            phrases.add(" ".join(words))
    return frozenset(p for p in phrases if len(p) >= 2 and p not in {"us", "de", "la"})


@cache
def _hints(code: str) -> re.Pattern[str] | None:
    """One pattern of ``_hint_phrases``: Latin-script ones as whole words, others anywhere."""
    phrases = _hint_phrases(code)
    if not phrases:
        return None
    ordered = sorted(phrases, key=len, reverse=True)
    latin = "|".join(re.escape(p) for p in ordered if p.isascii() or _latin(p))
    other = "|".join(re.escape(p) for p in ordered if not (p.isascii() or _latin(p)))
    parts = ([rf"(?<!\w)(?:{latin})(?!\w)"] if latin else []) + ([f"(?:{other})"] if other else [])
    return re.compile("|".join(parts))


@lru_cache(maxsize=1 << 14)
def _latin(text: str) -> bool:
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in text)


@cache
def _generic_stems() -> frozenset[str]:
    return frozenset(word[:5] for word in _GENERIC_NAME_WORDS if len(word) >= 5)


@cache
def _phrase_stems(code: str) -> tuple[frozenset[str], ...]:
    """Per hint phrase of ``code``, the five-letter stems of its Latin words ("finla")."""
    return tuple(
        frozenset(
            word[:5]
            for word in phrase.split()
            if len(word) >= 5 and word.isalpha() and _latin(word)
        )
        for phrase in _hint_phrases(code)
    )


@cache
def _stems(code: str) -> frozenset[str]:
    """The stems of all of ``code``'s hint phrases (``_phrase_stems``)."""
    return frozenset().union(*_phrase_stems(code))


def _from_context(candidates: frozenset[str], context: str) -> str | None:
    if not context:
        return None
    context = context[:2000]
    named = {code for code in candidates if re.search(rf"(?<![A-Za-z]){code}(?![A-Za-z])", context)}
    if len(named) == 1:
        return next(iter(named))
    folded = context.casefold()
    for prefixed in re.findall(r"(?<!\w)([a-z]{1,3}\$)", folded):
        found = currency_codes(prefixed)
        if len(found) == 1 and found <= candidates:
            return next(iter(found))
    hinted = set()
    for code in sorted(candidates):
        pattern = _hints(code)
        if pattern is not None and pattern.search(folded):
            hinted.add(code)
    if len(hinted) == 1:
        return next(iter(hinted))
    # Inflected qualifiers ("marchi finlandesi", "fiorini olandesi"): stems no other candidate has.
    words = {w[:5] for w in re.findall(r"[^\W\d_]{5,}", folded) if _latin(w)} - _generic_stems()
    if not words:
        return None
    stemmed = {code for code, found in _own_stems(candidates).items() if found & words}
    if len(stemmed) == 1:
        return next(iter(stemmed))
    # Shared stems: the one currency a whole name of which the words hold ("fiorini olandesi"
    # is the Dutch guilder's; the Antillean one's is "fiorini delle Antille olandesi").
    generic = _generic_stems()
    whole = {code for code in candidates
             if any(not stems <= generic and stems - generic <= words
                    for stems in _phrase_stems(code))}  # fmt: skip
    return next(iter(whole)) if len(whole) == 1 else None


@cache
def _own_stems(candidates: frozenset[str]) -> dict[str, frozenset[str]]:
    """Each candidate's stems that no other candidate shares."""
    stems = {code: _stems(code) for code in candidates}
    return {
        code: frozenset(
            stem
            for stem in found
            if not any(stem in other for other_code, other in stems.items() if other_code != code)
        )
        for code, found in stems.items()
    }


def _from_locale(marker: str, candidates: frozenset[str], locale: str) -> str | None:
    from babel import Locale, UnknownLocaleError
    from babel.numbers import get_territory_currencies

    try:
        parsed = Locale.parse(locale.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return None
    marker_key = key(marker)
    written = {
        code for code in candidates if key(parsed.currency_symbols.get(code, "")) == marker_key
    }
    if len(written) == 1:
        return next(iter(written))
    if parsed.territory:
        try:
            local = set(get_territory_currencies(parsed.territory, tender=True)) & candidates
        except (ValueError, KeyError, TypeError):
            local = set()
        if len(local) == 1:
            return next(iter(local))
    by_language = _LANGUAGE_CURRENCY.get(parsed.language)
    return by_language if by_language in candidates else None


def read_currency(marker: str, *, locale: str | None = None, context: str = "") -> str | None:
    """The ISO-4217 code ``marker`` stands for, resolved as the module docstring says; or None.

    ``context`` is the text around the marker (a sentence, a line); ``locale`` a CLDR id.
    """
    candidates = currency_codes(marker)
    if not candidates:
        return None
    if len(candidates) == 1:
        return next(iter(candidates))
    written = marker.strip()
    if written.isupper() and written in candidates:
        return written  # a code as written wins over the markers it shares ("ILS", not ILR)
    for resolved in (_from_context(candidates, context),
                     _from_locale(marker, candidates, locale) if locale else None):  # fmt: skip
        if resolved is not None:
            return resolved
    marker_key = key(marker)
    return _DEFAULTS.get(marker_key) or _DEFAULTS.get(_turkish_stem(marker_key) or "")


def currency_renderings(code: str) -> tuple[str, ...]:
    """Markers that may stand for ``code`` as written, longest first ("Kč", "CZK", "korun"…).

    Includes markers shared with other currencies (``$`` for CAD): for finding a currency in a
    text, where the amount next to it settles the question.
    """
    if not isinstance(code, str):
        return ()
    code = code.upper()
    found = set(_cldr.tables().currency_surfaces.get(code, ())) | {code}
    found.update(word for word, candidates in _WORDS.items() if code in candidates)
    return tuple(sorted(found, key=lambda m: (-len(m), m)))


# -- amounts with their marker -------------------------------------------------------------------

_CONNECTORS = frozenset({"de", "di", "d'", "of", "van", "の", "del", "des", "du", "do", "da"})
_MINOR = {
    **{key(w): Decimal("0.01") for w in (
        "cent", "cents", "centavo", "centavos", "céntimo", "céntimos", "centimo", "centimos",
        "centime", "centimes", "centesimo", "centesimi", "cent.", "ct", "cts", "pence", "penny",
        "p", "öre", "øre", "kopek", "kopeks", "kopeck", "kopecks", "копеек", "копейки", "копейка",
        "коп", "коп.", "grosz", "groszy", "grosze", "haléř", "haléřů", "pfennig", "rappen",
        "セント", "銭", "分", "전", "paisa", "paise", "पैसे", "kuruş", "kurus", "sen", "fen",
        # the hundredth of the kuna, lev, leu, baht, dong, hryvnia, riyal, dinar, shekel, forint
        "lipa", "lipe", "стотинка", "стотинки", "ст", "ст.", "ban", "bani", "satang", "xu",
        "копійка", "копійки", "копійок", "halala", "halalas", "fils", "agora", "agorot",
        "fillér", "cèntim", "cèntims", "gr", "אגורה", "אגורות", "पैसा", "haléře",
        "美分", "欧分", "歐分", "便士", "分钱", "分錢",
    )},
    **{key(w): Decimal("0.1") for w in ("角", "毛")},
}  # fmt: skip
_AND = frozenset({"and", "e", "y", "och", "og", "und", "et", "com", "con", "en", "ve", "i", "と",
                  ",", "+", "&", "и", "a", "si", "și", "şi"})  # fmt: skip
_GLUED_CENTS = re.compile(r"[c¢](?![^\W\d_])")
"""Cents written against their number after an amount: "$20 and 43c"."""


_ALSO_PREPOSITIONS = frozenset({"en", "i", "a"})
"""Joiners that are prepositions too (Spanish "en", Catalan "i"): only with a minor unit's
word do they join cents to an amount."""


def _find_marker(text: str, *, prefix: bool) -> tuple[str, int] | None:
    """The longest currency marker at the start (``prefix``) or the end of ``text``.

    Returns the marker as written and how many characters of ``text`` it takes. Tried at
    every cut, so glued CJK markers ("円13銭") and spaced ones ("dollari australiani") are found.
    """
    stripped = text.strip() if prefix else text.rstrip()
    if not stripped:
        return None
    offset = len(text) - len(text.lstrip()) if prefix else 0
    limit = min(len(stripped), 40)
    for size in range(limit, 0, -1):
        piece = stripped[:size] if prefix else stripped[-size:]
        if piece != piece.strip() or not piece.strip():
            continue
        if (
            prefix
            and size < len(stripped)
            and piece[-1].isalpha()
            and stripped[size].isalpha()
            and piece[-1].isascii()
            and stripped[size].isascii()
        ):
            continue  # a marker ends at a word's end: "r" is not the start of "real estate"
        if (
            not prefix
            and size < len(stripped)
            and piece[0].isalpha()
            and stripped[-size - 1].isalpha()
            and piece[0].isascii()
        ):
            continue
        if _ARTICLE.match(piece):
            continue  # "a $ 1.5 billion bond": the article, not A$ (AUD, written together)
        if currency_codes(piece) and _written_as_marker(piece):
            return piece, offset + size if prefix else size
    return None


_HYPHEN_WORD = re.compile(r"-[^\W\d_]")
_ARTICLE = re.compile(r"an?\s", re.IGNORECASE)


_LOWERCASE_CODES = frozenset({"usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "nzd", "cny",
                              "rmb", "hkd", "sgd", "inr", "rub", "sek", "nok", "dkk", "pln",
                              "czk", "huf", "try", "brl", "mxn", "krw", "zar"})  # fmt: skip


_COMMON_WORDS = frozenset({"le", "or", "sum", "den", "som", "all", "mark", "rand", "real"})
"""Markers that are far more often words: French "le" (SLE), "or" (gold), Swedish "som"."""


def is_currency_marker(text: str) -> bool:
    """Whether ``text`` is written as a currency marker ("Kč", "USD", "руб.", "원").

    A symbol, code or name of a currency, not a common word that also is one ("che", "le").
    """
    if not isinstance(text, str) or not text.strip() or len(text) > 64:
        return False
    piece = text.strip()
    return bool(currency_codes(piece)) and _written_as_marker(piece)


@lru_cache(maxsize=1 << 15)
def _written_as_marker(piece: str) -> bool:
    """Whether ``piece`` is written as a currency marker, not as a common word that is one.

    ISO codes are written in capitals; in lower case only the most traded ones are ("usd"),
    so "che" (CHE) or "all" (ALL) in running text are words. A lone lower-case Latin letter
    ("e", "r") is a word too.
    """
    if len(piece) == 1 and piece.isascii() and piece.isalpha():
        return piece.isupper()
    if piece.casefold() in _COMMON_WORDS and not piece.isupper():
        return False
    if len(piece) == 3 and piece.isascii() and piece.isalpha() and not piece.isupper():
        codes = currency_codes(piece)
        if codes == {piece.upper()}:
            return piece.casefold() in _LOWERCASE_CODES
    if 2 <= len(piece) <= 3 and piece.isascii() and piece.isalpha():
        # "km", "kg", "um", "ft" are units and words; "KM" (BAM), "Ft" (HUF) are not. A short
        # symbol counts as written by a currency (CLDR's case) or as listed in _WORDS ("kr");
        # in capitals, an ISO code too, but no unit's symbol ("25 KG" is no Caribbean guilder).
        if piece.isupper() and piece in _cldr.iso_currency_codes():
            return True
        surfaces = _cldr.tables().currency_surfaces
        return key(piece) in _WORD_KEYS or any(
            piece in surfaces.get(code, ()) for code in currency_codes(piece)
        )
    return True


_WEIGHTS_TOO = frozenset({"pound", "pounds"})
"""Markers that are units of weight too: read as weight before "of" ("5 pounds of flour")."""
_AFTER_ONLY = frozenset({"won"})
"""Currency names that before a number are far more often another word (English "won")."""
_SIGNS = frozenset({"-", "+", "~", "≈", "ca.", "c."})
_GENERIC_TAILS = ("ドル", "dollar", "dollars", "元", "$", "ポンド", "フラン", "ペソ", "ルピー",
                  "crowns", "kronor", "kroner", "krone", "francs", "franc", "pesos", "peso",
                  "rupees", "rupee", "dinars", "dinar", "riyals", "rials", "dirhams",
                  "shillings", "pounds", "pound", "डॉलर", "달러")  # fmt: skip


def _qualified_marker(text: str) -> tuple[str, str, int] | None:
    """A generic marker with a qualifier in front that names its currency ("ニュー台湾ドル").

    Returns (marker, qualifier, characters used). Words that do not name the currency are no
    qualifier (``_names_currency``): "5 apples cost $3" holds none.
    """
    stripped = text.strip()
    # Casefolding maps character by character: a tail no longer piece holds, no shorter does.
    held = stripped[:24].casefold()
    tails = [generic for generic in _GENERIC_TAILS if generic in held]
    if not tails:
        return _named_by_qualifier(text)
    for size in range(min(len(stripped), 24), 1, -1):
        piece = stripped[:size]
        folded = piece.casefold()
        for generic in tails:
            qualifier = piece[: -len(generic)]
            if (
                folded.endswith(generic)
                and qualifier.strip()
                and not any(c.isdigit() for c in qualifier)
            ):
                offset = len(text) - len(text.lstrip())
                if not _names_currency(generic, qualifier):
                    return None
                return generic, qualifier, offset + size
    return None


_QUALIFIED_NAMES = (
    re.compile(r"\s*([^\W\d_]+[ -])([^\W\d_]{3,})"),
    re.compile(r"\s*([^\W\d_]+[ -][^\W\d_]+[ -])([^\W\d_]{3,})"),
)


def _named_by_qualifier(text: str) -> tuple[str, str, int] | None:
    """A currency's name after one or two words that name its country ("malaysia ringgits").

    CLDR writes each name with its own adjective ("Brazilian real"); a text may write another
    ("Brazilian reais") or the country ("malaysia ringgits"). The words count only where they
    point at one of the name's currencies (``_from_context``): "5 apples reais" holds no amount.
    """
    for pattern in _QUALIFIED_NAMES:
        match = pattern.match(text)
        if match is None:
            return None
        qualifier, marker = match.group(1).strip(" -"), match.group(2)
        codes = currency_codes(marker)
        if (
            codes
            and _written_as_marker(marker)
            and not is_currency_marker(qualifier)
            and _from_context(codes, qualifier) is not None
        ):
            return marker, qualifier, match.end()
    return None


@lru_cache(maxsize=1 << 14)  # asked of every window that ends at a number
def _names_currency(marker: str, qualifier: str) -> bool:
    """Whether the words before a generic marker name its currency (whatever the locale).

    "hong kong dollars", "american dollars", "dollari australiani" do; in "5 apples cost $3" or
    "Room 12 costs $ 80" the words are a count's, the marker the next amount's (which read 5.03
    and 12.80): there only the locale or a default would say which dollar.
    """
    candidates = currency_codes(marker)
    return len(candidates) == 1 or _from_context(candidates, qualifier) is not None


def _minor_part(
    rest: str, *, words: bool = False, yuan: bool = False
) -> tuple[Decimal, int] | None:
    """Minor units after the major ones: "13銭", "と5セント", "e 45 cent", "com 50", " 50".

    Without a minor unit's word the minor units are digits, or words (``words``) after an
    amount in words ("zwölf Euro fünfzig"): after "US$82.15", "on" is a word, not 10 cents.
    After a Chinese yuan character (``yuan``) one numeral alone is 角, tenths ("两块五" is 2.5;
    "两块零五" 2.05), and 半 a half ("三块半").
    """
    if rest.lstrip()[:1] in _CLAUSE_MARKS:
        return None  # "五十加元，五百卢比": what follows a comma is the next amount, not cents
    if yuan and (tenths := _YUAN_TENTHS.match(rest)) and not _CJK_CHAR.match(rest, 1):
        digit = _words.cjk_value(tenths.group())
        return (digit / 10 if digit is not None else Decimal("0.5")), 1  # 半: no digit
    text = rest
    consumed = 0
    total = Decimal(0)
    for _ in range(2):
        stripped = text.lstrip()
        lead = len(text) - len(stripped)
        word = re.match(r"(\S+?)(?=\s|\d|$)", stripped)
        joined = False
        preposition = word is not None and word.group(1).casefold() in _ALSO_PREPOSITIONS
        if word and word.group(1).casefold() in _AND:
            stripped = stripped[word.end() :].lstrip()
            lead = len(text) - len(stripped)
            joined = True
        elif stripped[:1] in _AND and not stripped[:1].isalpha():  # "+", "&"; not "y" of "yirmi"
            stripped = stripped[1:].lstrip()
            lead = len(text) - len(stripped)
            joined = True
        hits = list(itertools.islice(numbers._scan(stripped, letters=False), 1))  # noqa: SLF001
        in_words = not (hits and hits[0].start == 0)
        if not in_words:
            value, end = hits[0].value, hits[0].end
        else:
            words_end, value_words = _leading_words(stripped)
            if value_words is None:
                break
            value, end = value_words, words_end
        after = stripped[end:]
        unit = _leading_minor(after)
        if unit is not None:
            factor, unit_length = unit
            total += value * factor
            consumed += lead + end + unit_length
            text = after[unit_length:]
            tenth = after[:unit_length].strip()
            fen = _fen_after(text, 0, tenth) if yuan and tenth in ("毛", "角") else None
            if fen is not None:  # "两块三毛五": the numeral after the tenths is hundredths
                total += fen[0]
                consumed += fen[1]
                break
            continue
        if (
            (joined or not total)
            # A word after an amount in digits is a number in some language ("on" is Turkish
            # 10, "이" Korean 2), not its cents.
            and (words or not in_words)
            and not preposition  # "1.134 euros en 14 pagas": in 14 payments
            and value == value.to_integral_value()
            and 0 <= value < 100
            and not after.strip()
        ):
            total += value / 100
            consumed += lead + end
        break
    return (total, consumed) if total else None


def _leading_minor(text: str) -> tuple[Decimal, int] | None:
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    if not lead and _GLUED_CENTS.match(stripped):
        return Decimal("0.01"), 1  # against the number: "43c", "43¢"
    for size in range(min(len(stripped), 12), 0, -1):
        piece = stripped[:size]
        if (
            size < len(stripped)
            and stripped[size].isalpha()
            and piece[-1].isalpha()
            and piece.isascii()
        ):
            continue
        factor = _MINOR.get(key(piece))
        if factor is not None:
            return factor, lead + size
    return None


def _counted_minor(rest: str) -> tuple[Decimal, int] | None:
    """A minor unit's word right after a currency's name: what the amount counts ("euro cents").

    Only a whole word of three letters or more counts: "GBP 5 p. person" has no pence.
    """
    unit = _leading_minor(rest)
    if unit is None:
        return None
    word = rest[: unit[1]].strip()
    if len(word) < 3 or rest[unit[1] : unit[1] + 1].isalnum():
        return None
    return unit


def _leading_words(text: str) -> tuple[int, Decimal | None]:
    """The longest run of leading words that reads as a number ("quarenta e cinco")."""
    words = list(re.finditer(r"\S+", text))
    for count in range(min(len(words), 8), 0, -1):
        end = words[count - 1].end()
        value = numbers._read_decimal(text[:end], None, None)  # noqa: SLF001  # one package
        if value is not None:
            return end, value
    return 0, None


def read_money(text: str, *, locale: str | None = None, context: str = "") -> Money | None:
    """An amount written with its currency marker, or None without one.

    The marker may come before or after the amount, with or without a space, in symbols, codes
    or words ("EUR 1.250,00", "1 250,50 Kč", "R$ 10,00", "75 million dollars", "12,5 тыс. руб.",
    "tredici euro e quarantacinque cent", "2ドル3セント"). ``context`` and ``locale`` settle
    ambiguous markers (``read_currency``); the amount keeps its minor units (2.03).
    """
    if not isinstance(text, str) or len(text) > MAX_SPAN:
        return None
    prepared = numbers._prepare(text.strip().strip("()[]"))  # noqa: SLF001  # one package
    if prepared is None:
        return None
    context = context or prepared
    hits = list(itertools.islice(numbers._scan(prepared, locale=locale), 1))  # noqa: SLF001
    if hits:
        found = _around(prepared, hits[0], locale, context)
        if found is not None:
            return found
    return _in_words(prepared, locale, context)


def _resolve(marker: str, qualifier: str, locale: str | None, context: str) -> str | None:
    return read_currency(marker, locale=locale, context=f"{qualifier} {context}".strip())


def _around(
    text: str,
    hit: numbers._Hit,  # noqa: SLF001  # one package
    locale: str | None,
    context: str,
) -> Money | None:
    before, after = text[: hit.start], text[hit.end :]
    amount = hit.value
    after = _NO_MINOR.sub("", after, count=1)  # "50,- Kč", "1.198,- Kr": no minor units
    if before.endswith(":"):
        before = before[:-1]  # "US$:12.99"
    glued = (_GLUED_SCALE.match(after) or _SPACED_SCALE.match(after)) if hit.scale == 1 else None
    if glued is not None:  # "$1.5m", "£3bn", "1.5m dollars": next to a marker, m is a million
        amount *= _GLUED_SCALES[glued.group(1).casefold()]
        after = after[glued.end() :]
    marker: str | None = None
    qualifier = ""
    rest = ""
    if _HYPHEN_WORD.match(after):
        after = after[1:]  # "a 500-dollar fine", "a $5-million deal"
    right = _after_connector(after)
    # "1978, a hk $ 10": a comma ends the amount; a marker after it is another amount's.
    separated = after.lstrip()[:1] in {",", ";"}
    found = None if separated else _find_marker(right, prefix=True)
    if found is not None:
        marker, length = found
        rest = right[length:]
    elif not separated:
        qualified = _qualified_marker(right)
        if qualified is not None:
            marker, qualifier, length = qualified
            rest = right[length:]
    marker_after = marker is not None
    twice: frozenset[str] = frozenset()
    if marker is not None and before.strip() and before.strip() not in _SIGNS:
        # "£94.50 GBP", "SGD4.90 $": a symbol and the code it stands for, on both sides
        # of one amount ("$ 5 $ 6" is two amounts)
        pair = {before.strip(), marker}
        if any(_ISO_CODE.fullmatch(m) for m in pair) and len({key(m) for m in pair}) == 2:
            twice = currency_codes(before.strip()) & currency_codes(marker)
        if not twice and key(marker) in _YUAN:
            named = currency_codes(before.strip())
            if len(named) == 1:  # "港币100元": 元 counts the currency named before the amount
                twice = named
        if not twice:
            return None  # words before the amount: not one written amount
    if marker is None:
        found = _find_marker(before, prefix=False)
        if found is None:
            return None
        marker = found[0]
        if key(marker) in _AFTER_ONLY:
            return None  # "he won 50,000 kroner": a verb, not the currency
        if _leading_minor(after) is not None:
            return None  # "… kune 23 lipe": the cents of an amount before the marker
        rest = after
        if before[: len(before.rstrip()) - found[1]].strip():
            return None  # words before the marker: not one written amount
    if twice and any(c.isdigit() for c in rest):
        return None  # "$ 5 $ 6": the second marker is the next amount's
    scale, scale_end = numbers._scale_after(rest, 0, locale, True)  # noqa: SLF001
    if scale != 1 and hit.scale == 1:
        amount *= scale  # "75 usd milhões"
        rest = rest[scale_end:]
    counted = _counted_minor(rest) if marker_after else None
    if counted is not None:  # "10 euro cents", "50 US cents": the amount counts minor units
        amount *= counted[0]
        rest = rest[counted[1] :]
    # an amount with decimals has its minor units already: "EUR29.66 and 3 100р." is two
    minor = _minor_part(rest, yuan=key(marker) in _YUAN) if amount % 1 == 0 else None
    if minor is not None:
        amount += minor[0]
        rest = rest[minor[1] :]
    if marker_after and key(marker) in _YUAN and not twice:
        following = _find_marker(rest, prefix=True)  # "100元港币": 元 counts the currency after
        if (
            following is not None
            and len(currency_codes(following[0])) == 1
            and _ends(rest[following[1] :])
        ):
            twice, rest = currency_codes(following[0]), rest[following[1] :]
    rest = _PER_OR_NOTE.sub("", rest, count=1)  # "$15.95/mo", "$426.20/EA", "$575.00*"
    if not _ends(rest):
        trailing = rest.split()
        if (
            len(trailing) > 2
            or not rest.strip()[0].isalpha()
            or any(c.isdigit() for c in rest)
            or len(currency_codes(marker)) < 2
        ):
            return None  # more than one amount, or words after it: not one written amount
        widened = f"{qualifier} {rest}".strip()  # "marchi finlandesi", "dollars canadiens"
        if _resolve(marker, widened, locale, "") == _resolve(marker, qualifier, locale, ""):
            return None  # the words after say nothing of the currency: not part of the amount
        qualifier = widened
    code = next(iter(twice)) if len(twice) == 1 else _resolve(marker, qualifier, locale, context)
    return Money(numbers._number(amount), code)  # noqa: SLF001


_YUAN = frozenset({"元", "块", "塊", "圆", "圓"})
"""The yuan's characters, after which one numeral alone counts tenths (``_minor_part``)."""
_YUAN_TENTHS = re.compile("[一二两三四五六七八九半]")
_GLUED_SCALES = {"m": Decimal(10**6), "mm": Decimal(10**6), "b": Decimal(10**9),
                 "bn": Decimal(10**9), "tn": Decimal(10**12)}  # fmt: skip
_GLUED_SCALE = re.compile(r"(m|mm|bn?|tn)(?![^\W\d_])", re.IGNORECASE)
"""Scale letters written against an amount of money: the press's "$1.5m", "£3bn". Without a
currency marker next to them, "5m" stays five metres (the quantity reader's)."""
_SPACED_SCALE = re.compile(r" (MM)(?![^\W\d_])")
"""Finance's million written apart from the amount, in capitals only ("US$ 5 MM")."""


_ISO_CODE = re.compile(r"[A-Z]{3}")
_NO_MINOR = re.compile(r"^[.,][-–—]{1,2}(?![\d-])")
"""A comma and a dash after a whole amount say "no minor units" ("50,- Kč", "1.198,- Kr")."""
_PER_OR_NOTE = re.compile(r"^\s*(?:/\s*[^\W\d_]{1,8}\.?|\*{1,3})(?=[\s.,;:!?)\]}]|$)")
"""What a price may carry after it: a unit it is per ("/mo", "/EA") or a footnote's star."""


def _ends(rest: str) -> bool:
    """Whether nothing but punctuation (or a closing bracket) is left."""
    return not rest.strip(" .,;:!?)]}\"'")


def _after_connector(text: str) -> str:
    stripped = text.lstrip()
    match = re.match(r"(\S+)\s+", stripped)
    if match and match.group(1).casefold() in _CONNECTORS:
        return stripped[match.end() :]
    if stripped.casefold().startswith("d'"):
        return stripped[2:]
    return text


def _in_words(text: str, locale: str | None, context: str) -> Money | None:
    """An amount in words with a marker ("cinco milhões de ienes", "um yen", "十ドル")."""
    words = list(re.finditer(r"\S+", text))
    for index, word in enumerate(words):
        for count in range(min(4, len(words) - index), 0, -1):
            # French elides "de" into the marker: "un million d'euros"
            piece = _ELISION.sub("", text[word.start() : words[index + count - 1].end()])
            if not currency_codes(piece) or not _written_as_marker(piece):
                continue
            head = text[: word.start()].strip()
            head_words = head.rsplit(" ", 1)
            if len(head_words) == 2 and head_words[1].casefold() in _CONNECTORS:
                head = head_words[0]
            value = numbers._read_decimal(head, locale, None) if head else None  # noqa: SLF001
            if value is None:
                break
            rest = text[words[index + count - 1].end() :]
            minor = _minor_part(
                rest, words=not any(c.isdigit() for c in head), yuan=key(piece) in _YUAN
            )
            if minor is not None:
                value += minor[0]
                rest = rest[minor[1] :]
            if not _ends(rest):
                return None
            code = _resolve(piece, "", locale, context)
            return Money(numbers._number(value), code)  # noqa: SLF001
    return None


# -- finding -------------------------------------------------------------------------------------


class MoneySpan(NamedTuple):
    """An amount of money found in a text: ``text[start:end]`` reads as ``amount`` ``currency``."""

    start: int
    end: int
    text: str
    amount: numbers.Number
    currency: str | None


_MAX_FOUND = 200
"""Money mentions ``find_money`` reports at most; a text listing more is a table, not prose."""
_TOKENS_BEFORE = 3  # "c $ 16.4": a marker is at most a few words before its number
_TOKENS_AFTER = 8  # "16,4 milioni di dollari australiani", "545パナマ・バルボア"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7a3"
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
"""Words, and each kana, ideograph or Hangul syllable apart: Chinese and Japanese write no
spaces, and Korean glues its particles to the marker ("100만 원입니다", "10달러")."""
_CJK_CHAR = re.compile(f"[{_CJK}]")
_MARKER_LANGUAGES = (*_words.TEXT2NUM_LANGUAGES, *_words.TABLE_LANGUAGES, "ko")
"""Number words ``find_money`` reads next to a marker: with a marker beside it, Turkish "on"
(10) or Swedish "tretton" is a number, not a common word."""


def find_money(text: str, *, locale: str | None = None) -> list[MoneySpan]:
    """Every amount written with a currency marker in ``text``, with its span, left to right.

    Each number of the text (digits, CJK numerals, number words) is read with the longest run
    of words around it that ``read_money`` reads as one amount ("c $ 16.4 million", "1 250,50
    Kč", "tredici euro e quarantacinque cent"); a number without a marker next to it is not
    money. Ambiguous markers are resolved by the words around the amount, then ``locale``
    (``read_currency``). At most ``MAX_TEXT`` characters are scanned. In Japanese and Korean
    text a backslash before digits is the yen or won sign, as their old encodings print it.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    written = text[: numbers.MAX_TEXT]
    text = _national_backslash(written)
    found = _found_money(text, locale)
    if text is written:
        return found
    return [span._replace(text=written[span.start : span.end]) for span in found]


_BACKSLASH_AMOUNT = re.compile(r"\\(?=\d)")
_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7a3]")


def _national_backslash(text: str) -> str:
    r"""``text`` with "\100" as "¥100" in Japanese, "₩100" in Korean (same length), else as is.

    JIS X 0201 and KS X 1003 put the yen and won signs where ASCII has the backslash, and text
    that went through them shows "1個\100" for 100 yen.
    """
    if "\\" not in text:
        return text
    sign = "¥" if _KANA.search(text) else "₩" if _HANGUL.search(text) else None
    return _BACKSLASH_AMOUNT.sub(sign, text) if sign else text


def _found_money(text: str, locale: str | None) -> list[MoneySpan]:
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    starts = [start for start, _ in tokens]
    found: list[MoneySpan] = []
    covered = 0
    seen: dict[int, bool] = {}  # token -> whether a marker starts there (``_marker_near``)
    for number in numbers.find_numbers(text, locale=locale, languages=_MARKER_LANGUAGES):
        if number.start < covered or numbers.is_short_word(number.text):
            continue
        if len(found) >= _MAX_FOUND:
            break
        alone = _minor_alone(text, number)
        if alone is not None:  # "beş kuruş", "50 पैसे", "五毛": the hundredths of one currency
            found.append(alone)
            covered = alone.end
            continue
        first = _token_at(starts, number.start)
        last = _token_at(starts, max(number.start, number.end - 1))
        if not _marker_near(text, tokens, first, last, seen):
            continue  # most numbers (dates, phone numbers, counts) have no marker: skip early
        best = _widest_reading(text, tokens, first, last, covered, locale)
        if best is not None and _weight(best, text):
            continue
        if best is not None and _digits_claim_marker(number.text, text, best.end):
            continue
        if best is not None and best.text[-1:].isdigit() and _cents_follow(text, best.end):
            continue
        if best is not None:
            kept = best.text.rstrip(_CJK_PUNCTUATION)  # "500元，" in unspaced text: the comma
            if len(kept) < len(best.text):
                best = best._replace(text=kept, end=best.start + len(kept))
            found.append(best)
            covered = best.end
    return found


_CJK_PUNCTUATION = "，。、；：！？"
_CLAUSE_MARKS = frozenset(",;，；、。")


_MINOR_OF_ONE = {
    **{key(w): "TRY" for w in ("kuruş", "kurus")},
    **{key(w): "INR" for w in ("paise", "paisa", "पैसे", "पैसा")},
    **{key(w): "RUB" for w in ("копеек", "копейки", "копейка", "kopek", "kopeks", "kopecks")},
    **{key(w): "PLN" for w in ("grosz", "groszy", "grosze")},
    **{key(w): "CZK" for w in ("haléř", "haléřů", "haléře")},
    **{key(w): "GBP" for w in ("pence", "penny")},
    **{key(w): "BGN" for w in ("стотинка", "стотинки")},
    **{key(w): "RON" for w in ("bani",)},
    **{key(w): "THB" for w in ("satang",)},
    **{key(w): "UAH" for w in ("копійка", "копійки", "копійок")},
    **{key(w): "ILS" for w in ("agora", "agorot", "אגורה", "אגורות")},
    **{key(w): "HUF" for w in ("fillér",)},
    **{key(w): "JPY" for w in ("銭",)},
    **{key(w): "CNY" for w in ("毛", "角", "分钱", "分錢")},
    **{key(w): "USD" for w in ("美分",)},
    **{key(w): "EUR" for w in ("欧分", "歐分")},
    **{key(w): "GBP" for w in ("便士",)},
}  # fmt: skip
"""Minor units that only one currency has, so that an amount of them alone names it; each is
a word of ``_MINOR`` too, which says what part of the currency it is."""
_CJK_MINOR_OF_ONE = tuple(w for w in _MINOR_OF_ONE if len(w) > 1 and "\u4e00" <= w[0] <= "\u9fff")
"""Those of several CJK characters, read as the start of the unspaced word after a number."""
_MINOR_WORD = re.compile(r" ?([^\s.,;:!?()\d]{1,12})")  # minor words are short; CJK runs long


def _minor_alone(text: str, number: numbers.NumberSpan) -> MoneySpan | None:
    """An amount in minor units alone ("beş kuruş": 0.05 TRY), where one currency has them.

    Cents, centavos and øre, which many currencies have, name none and are left out, and so
    are minor units after a joiner or a marker: "to thai baht og 23 satang" is one amount (2.23
    THB) whose whole part went unread, not 0.23 THB.
    """
    word = _MINOR_WORD.match(text, number.end)
    if word is None or (isinstance(number.value, float) and number.value % 1):
        return None
    name = word.group(1)
    fen = _fen_after(text, word.start(1) + 1, name[:1]) if name[:1] in "毛角" else None
    if fen is not None:  # "三毛五", "三角五分": tenths and hundredths
        unit, name = name[:1], text[word.start(1) : fen[1]]
    elif name[:1] in "毛角":  # "五毛钱", "3角": the ideograph, and 钱 (money) after it
        if name[1:2] != "钱" and not number.text.isdigit():
            return None  # "五角星" is a star of five points, "珠三角" the Pearl River Delta
        name = name[:2] if name[1:2] == "钱" else name[:1]
        unit = name[:1]
    elif key(name) in _MINOR_OF_ONE:
        unit = name
    elif name.startswith(_CJK_MINOR_OF_ONE):  # "十五美分的硬币"
        unit = name = next(w for w in _CJK_MINOR_OF_ONE if name.startswith(w))
    else:
        return None
    before = text[max(0, number.start - 40) : number.start].rstrip()
    previous = before.rsplit(None, 1)[-1] if before else ""
    if key(previous) in _AND or (previous and _find_marker(before, prefix=False)):
        return None
    end = word.start(1) + len(name)
    amount = Decimal(str(number.value)) * _MINOR[key(unit)] + (fen[0] if fen else 0)
    currency = _MINOR_OF_ONE[key(unit)]
    return MoneySpan(number.start, end, text[number.start : end], numbers._number(amount), currency)  # noqa: SLF001


_FEN = re.compile(
    r"([一二两兩三四五六七八九]|\d)(分[钱錢]?)?(?![\d一二两兩三四五六七八九十百千万])"
)


def _fen_after(text: str, start: int, tenth: str) -> tuple[Decimal, int] | None:
    """The hundredths of a yuan after its tenths ("三毛五", "三角五分"): (amount, end).

    After 角 only with 分 written: "三角五" may be a triangle's fifth; a numeral alone after 毛
    is its 分, as people say prices ("三毛五", "两块三毛五").
    """
    fen = _FEN.match(text, start)
    if fen is None or not (
        fen.group(2) or (tenth == "毛" and not _CJK_CHAR.match(text, fen.end()))
    ):
        return None
    digit = _words.cjk_value(fen.group(1))
    return (digit / 100, fen.end()) if digit is not None else None


def _cents_follow(text: str, end: int) -> bool:
    """Whether a minor unit's word follows an amount that did not take it as its cents.

    "dvije kune 23 lipe": "kune 23" is no amount of 23 kuna; 23 is the lipa of an amount before
    the marker, in words this reader does not know.
    """
    word = _NEXT_WORD.match(text, end)
    if word is None:
        return False
    name = word.group(1)
    if word.start(1) > end and name.isascii() and len(name) <= 2:
        return False  # "EUR 5 p. person": a short word apart is seldom cents
    unit = _leading_minor(name)
    return unit is not None and unit[1] == len(name)  # the whole word names a minor unit


_NEXT_WORD = re.compile(r"\s*([^\s.,;:!?()]+)")


def _digits_claim_marker(number: str, text: str, end: int) -> bool:
    """Whether an amount in words ends at a marker that digits follow.

    "total due EUR 1,250": Italian "due" is 2, but the marker is the digits' amount.
    """
    return not any(c.isdigit() for c in number) and text[end:].lstrip()[:1].isdigit()


def _weight(span: MoneySpan, text: str) -> bool:
    """Whether ``span`` is a weight ("5 pounds of flour"): a pound word, then "of"."""
    count = len(span.text.split())
    # The span's words and the one after: splitting the rest of a long text for every amount
    # took a second on a megabyte.
    words = [m.group() for m in itertools.islice(_WORD.finditer(text, span.start), count + 1)]
    return any(
        key(word) in _WEIGHTS_TOO and words[index + 1 : index + 2] == ["of"]
        for index, word in enumerate(words[:count])
    )


_WORD = re.compile(r"\S+")
_DIGIT_EDGES = re.compile(r"^[\d.,]+|[\d.,]+$")
_APOSTROPHES = {"'", "’"}
_ELISION = re.compile(r"^[dl]['’]", re.IGNORECASE)


def _marker_near(
    text: str, tokens: list[tuple[int, int]], first: int, last: int, seen: dict[int, bool]
) -> bool:
    """Whether a currency marker may stand in the tokens around ``first..last``.

    ``seen`` remembers, per token, whether a marker starts there (``_marker_at``): the windows
    of neighbouring numbers overlap, and a text dense with numbers read each token a dozen times.
    """
    for index in range(max(0, first - _TOKENS_BEFORE), min(len(tokens), last + _TOKENS_AFTER + 1)):
        found = seen.get(index)
        if found is None:
            found = seen[index] = _marker_at(text, tokens, index)
        if found:
            return True
    return False


def _marker_at(text: str, tokens: list[tuple[int, int]], index: int) -> bool:
    """Whether a currency marker may start at token ``index``, alone or glued to digits."""
    # "500-dollar": the marker after a hyphen counts as a token of its own
    pieces = [text[a:b].rsplit("-", 1)[-1] for a, b in tokens[index : index + 8]]
    piece = pieces[0]
    # "RM50", "469.00zł", "R273": a marker written against digits
    glued = _DIGIT_EDGES.sub("", piece).strip('.,;:!?()[]"')
    # one Latin letter against digits is mostly a code or a unit ("3D", "5G", "12V"), rand
    # before the digits aside ("R273"); "100р." is rubles. Turkish case endings ("2016'da",
    # "17'den") are none.
    if (
        glued[:1] not in _APOSTROPHES
        and glued != piece
        and (len(glued) > 1 or not glued.isascii() or piece.startswith("R"))
        and is_currency_marker(glued)
    ):
        return True
    if any(unicodedata.category(c) == "Sc" for c in piece):
        return True
    joined = ""
    for following in pieces:  # "hk $", "ドル", "パナマ・バルボア"
        joined += following
        if len(joined) > 24:
            break
        bare = _ELISION.sub("", joined.strip(".,;:!?()[]'\""))  # "d'euros"
        if bare and not bare.isnumeric() and is_currency_marker(bare):
            return True
    return False


def _token_at(starts: list[int], position: int) -> int:
    """Index of the whitespace-separated token holding ``position``."""
    return max(0, bisect.bisect_right(starts, position) - 1)


def _widest_reading(
    text: str,
    tokens: list[tuple[int, int]],
    first: int,
    last: int,
    covered: int,
    locale: str | None,
) -> MoneySpan | None:
    """The widest window of tokens around ``first..last`` that reads as one amount of money."""
    context_start = tokens[max(0, first - 8)][0]
    context_end = tokens[min(len(tokens) - 1, last + 8)][1]
    context = text[context_start:context_end]
    for before in range(_TOKENS_BEFORE, -1, -1):
        low = first - before
        if low < 0 or tokens[low][0] < covered:
            continue
        unresolved: MoneySpan | None = None
        for after in range(_TOKENS_AFTER, -1, -1):
            high = last + after
            if high >= len(tokens):
                continue
            start, end = tokens[low][0], tokens[high][1]
            if end - start > MAX_SPAN:
                continue
            window = text[start:end].rstrip(_CLOSING)
            if _splits_a_number(text, tokens, high):
                continue  # "500 quetzales y 2 | mil colones": the 2 is the next amount's
            if (low < first and not _may_open(text, tokens, low, high)) or (
                high > last and not _may_close(text, tokens, low, high)
            ):
                continue  # a plain word at an end no amount starts or ends with: "by", "due"
            money = _read_window(window, locale, context)
            if money is None:
                continue
            span = MoneySpan(start, start + len(window), window, money.amount, money.currency)
            if money.currency is not None:
                return span
            # "250 milioni di fiorini olandesi di": a word too many leaves the marker unresolved
            unresolved = unresolved or span
        if unresolved is not None:
            return unresolved
    return None


@lru_cache(maxsize=1 << 12)
def _read_window(window: str, locale: str | None, context: str) -> Money | None:
    """``read_money`` of one window, remembered.

    A text that repeats a form ("1 GY$ " x 8,000, read by no window) asks the same windows
    of every number, 36 each (16 s).
    """
    return read_money(window, locale=locale, context=context)


def _may_open(text: str, tokens: list[tuple[int, int]], low: int, high: int) -> bool:
    """Whether a window of tokens ``low..high`` may start as an amount does.

    Only a plain word (ASCII letters) is judged: it must be a word of money itself (a marker,
    a scale, a minor unit's or a number's word) or open a marker of several words ("c $").
    Everything else is left to ``read_money``; the check spares it the windows it would refuse
    (most of them, around a number in running text).
    """
    start, end = tokens[low]
    word = text[start:end].lstrip("([\"'«")
    if not _plain_word(word) or _money_word(word):
        return True
    return any(currency_codes(text[start : tokens[k][1]])
               for k in range(low + 1, min(high, low + 4) + 1))  # fmt: skip


def _may_close(text: str, tokens: list[tuple[int, int]], low: int, high: int) -> bool:
    """Whether a window of tokens ``low..high`` may end as an amount does (see ``_may_open``)."""
    start, end = tokens[high]
    word = text[start:end].rstrip(_CLOSING)
    if not _plain_word(word) or _money_word(word):
        return True
    return any(currency_codes(text[tokens[k][0] : end].rstrip(_CLOSING))
               for k in range(max(low, high - 4), high))  # fmt: skip


def _plain_word(word: str) -> bool:
    return word.isascii() and word.isalpha()


@lru_cache(maxsize=1 << 15)
def _money_word(word: str) -> bool:
    """A word that may stand at either end of an amount: a marker, scale, minor unit, number."""
    folded = word.casefold()
    return bool(
        word == "MM"  # finance's million ("US$ 5 MM", ``_SPACED_SCALE``)
        or currency_codes(word)
        or folded in _GENERIC_TAILS
        or key(word) in _MINOR
        or numbers.scale_value(word) is not None
        or _words.words_value(word) is not None
    )


def _splits_a_number(text: str, tokens: list[tuple[int, int]], high: int) -> bool:
    """Whether a window ending at token ``high`` cuts a number from its scale word or marker."""
    if high + 1 >= len(tokens) or not text[tokens[high][0] : tokens[high][1]][-1:].isdigit():
        return False
    following = text[tokens[high + 1][0] : tokens[high + 1][1]]
    if numbers.scale_value(following) is not None or is_currency_marker(following):
        return True
    # A marker of several kana, ideographs or Hangul syllables, each a token: "4人民元 5|ドル"
    # (read 4.05 yuan)
    glued = following
    for index in range(high + 2, min(len(tokens), high + 5)):
        if tokens[index][0] != tokens[index - 1][1] or not _CJK_CHAR.fullmatch(glued[-1]):
            break
        glued += text[tokens[index][0] : tokens[index][1]]
        if is_currency_marker(glued):
            return True
    # A marker of several words: "20 dollars and 5 | hong kong dollars" (read 20.05).
    words = text[tokens[high + 1][0] : tokens[min(len(tokens), high + 5) - 1][1]]
    return _qualified_marker(words) is not None


_CLOSING = ".,;:!?)]}\"'»」 "
