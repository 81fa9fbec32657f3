"""Quantities: canonical units from every CLDR language, compounds, ranges, conversions."""

from __future__ import annotations

from pathlib import Path

import pytest

from aau.values import (
    CANONICAL_UNITS,
    find_quantities,
    read_quantity,
    read_quantity_range,
    read_unit,
)
from aau.values.quantities import same_quantity, unit_registry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kilogramos", "kg"),
        ("Kilometer", "km"),
        ("ミリリットル", "ml"),
        ("公里", "km"),
        ("°C", "°C"),
        ("℃", "°C"),
        ("celsius", "°C"),
        ("grados centígrados", "°C"),
        ("fahrenhayt derece", "°F"),
        ("डिग्री सेल्सियस", "°C"),
        ("km²", "km2"),
        ("sq ft", "ft2"),
        ("square feet", "ft2"),
        ("vierkante meter", "m2"),
        ("cubic metres", "m3"),
        ("kgs", "kg"),
        ("lbs", "lb"),
        ("tonnes", "t"),
        ("litres", "l"),
        ("mph", "mph"),
        ("km/h", "km/h"),
        ("Kilometer pro Stunde", "km/h"),
        ("millas por hora", "mph"),
        ("metros por segundo", "m/s"),
        ("mg/kg", "mg/kg"),
        ("per hour", "/h"),
        ("kWh", "kWh"),
        ("kilowatt hours", "kWh"),
        ("microsieverts", "µSv"),
        ("mSv", "mSv"),
        ("picometres", "pm"),
        ("MB", "MB"),
        ("Mb", "Mbit"),
        ("gigabytes", "GB"),
        ("%", "%"),
        ("boxes", "box"),
        ("pcs", "piece"),
        ("Stück", "piece"),
        ("pallets", "pallet"),
        ("hours", "h"),
        ("days", "d"),
        ("dozen", "piece"),
        ("km/s", "km/s"),  # SI: kilometres per second, whatever one CLDR locale writes so
        ("kilometres per second", "km/s"),
        ("dB", "dB"),
        ("decibels", "dB"),
    ],
)
def test_read_unit(text: str, expected: str) -> None:
    assert read_unit(text) == expected


@pytest.mark.parametrize(
    "text", ["", " ", "xyz", "the", "to", "and", "hello world", "x" * 80, "inches in"]
)
def test_not_units(text: str) -> None:
    assert read_unit(text) is None


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("2,5 kg", 2.5, "kg"),
        ("2,500 kg", 2500, "kg"),
        ("12 boxes", 12, "box"),
        ("7.5 hours", 7.5, "h"),
        ("10 1/2 kilometer", 10.5, "km"),
        ("1/4 de milla", 0.25, "mi"),
        ("1/4 mijl", 0.25, "mi"),
        ("3 kilogramos", 3, "kg"),
        ("500 ミリリットル", 500, "ml"),
        ("20万公斤", 200_000, "kg"),
        ("12千米", 12, "km"),
        ("三千比特", 3, "kbit"),
        ("五十兆字节", 50, "MB"),
        ("两米半", 2.5, "m"),
        ("三百米", 300, "m"),
        ("负13.5千米", -13.5, "km"),
        ("华氏温度98.6度", 98.6, "°F"),
        ("20摄氏度", 20, "°C"),
        ("-5 °F", -5, "°F"),
        ("- 20 grados fahrenheit", -20, "°F"),
        ("37ºc", 37, "°C"),
        ("30º c", 30, "°C"),
        ("40 °celsius", 40, "°C"),
        ("98,6 gradi f", 98.6, "°F"),
        ("200 k", 200, "K"),
        ("51 fahrenhaytı", 51, "°F"),
        ("34,9 santigratı", 34.9, "°C"),
        ("६ डिग्री से.", 6, "°C"),
        ("९८.६ डिग्री फ़ॉ.", 98.6, "°F"),
        ("90 graden", 90, "°"),
        ("0,8rad", 0.8, "rad"),
        ("media vuelta", 0.5, "turn"),
        ("een halve draai", 0.5, "turn"),
        ("tien kilometer", 10, "km"),
        ("dos pies", 2, "ft"),
        ("fünfunddreißig °c", 35, "°C"),
        ("2,4 miljard liter", 2_400_000_000, "l"),
        ("2.400 millones de galones", 2_400_000_000, "gal"),
        ("0,9 billones de pies cúbicos", 900_000_000_000, "ft3"),
        ("10-liter", 10, "l"),
        ("16-bit", 16, "bit"),
        ("188 millas por hora", 188, "mph"),
        ("120 km/h", 120, "km/h"),
        ("5 mg/kg", 5, "mg/kg"),
        ("3 per hour", 3, "/h"),
        ("2 dozen", 24, "piece"),
        ("3 dozen eggs", 36, "piece"),
        ("1 km²", 1, "km2"),
        ("5 sq ft", 5, "ft2"),
        ("2.5 mSv", 2.5, "mSv"),
        ("12%", 12, "%"),
    ],
)
def test_read_quantity(text: str, value: float, unit: str) -> None:
    quantity = read_quantity(text)
    assert quantity is not None, text
    assert quantity.value == pytest.approx(value)
    assert quantity.unit == unit


@pytest.mark.parametrize(
    "text",
    ["", "   ", "24703L202", "scp-173m", "A4", "12:30", "ISO 9001", "12", "kg", "10-20 mg",
     "12 xyzzy", "x" * 300, "1" * 300],
)  # fmt: skip
def test_not_one_quantity(text: str) -> None:
    assert read_quantity(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10-20 mg", (10, 20, "mg")),
        ("5 to 7 km", (5, 7, "km")),
        ("10 mg - 20 mg", (10, 20, "mg")),
        ("3–5 °C", (3, 5, "°C")),
    ],
)
def test_ranges(text: str, expected: tuple[float, float, str]) -> None:
    assert read_quantity_range(text) == expected


@pytest.mark.parametrize("text", ["10 mg", "10 mg - 20 kg", "10-20", ""])
def test_not_ranges(text: str) -> None:
    assert read_quantity_range(text) is None


def test_find_quantities() -> None:
    text = "Deliver 12 boxes and 2,5 kg of steel at 120 km/h; code 24703L202, A4 paper."
    found = find_quantities(text)
    assert [(text[q.start : q.end], q.value, q.unit) for q in found] == [
        ("12 boxes", 12, "box"),
        ("2,5 kg", 2.5, "kg"),
        ("120 km/h", 120, "km/h"),
    ]


def test_find_quantities_passes_over_money_and_decades() -> None:
    # quantulum3's test sentences: "€10M" was ten minutes, "1960s" 1960 seconds, "$10000 in 3
    # years" 10000 cubic inches
    text = "€10M in 2012 and €10B in the 1960s; the '90s; $2.174T; I earn $10000 in 3 years, 20 s"
    found = find_quantities(text)
    assert [(q.text, q.value, q.unit) for q in found] == [("3 years", 3, "year"), ("20 s", 20, "s")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Ladin's "mile" (a thousand) made "2.5 mile" 2,500 and no quantity
        ("a 2.5 mile stretch of the harbour", [("2.5 mile", 2.5, "mi")]),
        # ordinals rank, they count nothing: "tweede dek" was two decades
        ("een tweede dek op een 2,5 mijl lang stuk", [("2,5 mijl", 2.5, "mi")]),
        ("the third box holds 4 kg", [("4 kg", 4, "kg")]),
        # Interlingua's "mense" (month) made Dutch "mensen" (people) months, and its "milles"
        # (thousands) French miles a number
        ("68 ons blikken nadat meer dan 100 mensen", [("68 ons", 68, "oz")]),
        ("à 5 milles de la côte", [("5 milles", 5, "mi")]),
        # a scale's letter after a degree word is the scale, not a word
        ("98,6 graus f é uma temperatura normal", [("98,6 graus f", 98.6, "°F")]),
        ("it was 20 degrees c outside", [("20 degrees c", 20, "°C")]),
        ("106 K a grados", [("106 K", 106, "K")]),
        # a scale word or "of" after a number is no unit: these were miles and days
        ("iki milyar dolar, 3 miliardi di euro", []),
        ("iki buçuk saat", [("iki buçuk saat", 2.5, "h")]),
        # inch and foot marks against the number, not a quoted number (quantulum3's sentences)
        ('finest 9" plates, a 6\' pole; he said "5" times', [('9"', 9, "in"), ("6'", 6, "ft")]),
        # two foot marks stand for the inch mark, as keyboards write it (Duckling's corpora)
        ("a 5'' screen, 6' 2''", [("5''", 5, "in"), ("6'", 6, "ft"), ("2''", 2, "in")]),
        # the plural abbreviations of metric units, as English writes them
        ("250mls of water, 3 cms", [("250mls", 250, "ml"), ("3 cms", 3, "cm")]),
        # Korean says centimetres as Japanese does, short ("센티", "센치"; "センチ")
        (
            "키가 170센티, 허리 30 센치, 5センチ",
            [("170센티", 170, "cm"), ("30 센치", 30, "cm"), ("5センチ", 5, "cm")],
        ),
        # Sino-Korean numerals before a unit, spaced or glued to a unit name of two syllables
        (
            "삼 리터, 이리터, 이백오십미리리터, 구메터, 삼 헥토리터",
            [
                ("삼 리터", 3, "l"),
                ("이리터", 2, "l"),
                ("이백오십미리리터", 250, "ml"),
                ("구메터", 9, "m"),
                ("삼 헥토리터", 3, "hl"),
            ],
        ),
        # ... a one-syllable unit only glued, and 분의 is a fraction, not minutes
        (
            "오십이명, 삼백 삼십 일, 일만 주세요, 이십일분의 일, 3분의 1, 사원",
            [("오십이명", 52, "person")],
        ),
        # a CJK half before its unit, a CJK fraction (was four minutes), 一 before a unit
        (
            "半公升 半加侖 반 리터 四分之一公升 一毫升 半分",
            [
                ("半公升", 0.5, "l"),
                ("半加侖", 0.5, "gal"),
                ("반 리터", 0.5, "l"),
                ("四分之一公升", 0.25, "l"),
                ("一毫升", 1, "ml"),
            ],
        ),
        # the half after the unit (French, Spanish, Italian, Portuguese): was the whole alone
        (
            "quatre mètres et demi, cuatro metros y medio, quattro metri e mezzo",
            [
                ("quatre mètres et demi", 4.5, "m"),
                ("cuatro metros y medio", 4.5, "m"),
                ("quattro metri e mezzo", 4.5, "m"),
            ],
        ),
        # a whole, a joiner, then the half and its unit (Swedish, Dutch): was the half alone
        (
            "fyra och en halv meter; vier en een halve kilometer; 2 kg och en halv liter",
            [
                ("fyra och en halv meter", 4.5, "m"),
                ("vier en een halve kilometer", 4.5, "km"),
                ("2 kg", 2, "kg"),
                ("en halv liter", 0.5, "l"),
            ],
        ),
        # an article is one where a half follows its unit; a half hyphenated to a measure
        (
            "un kilo et demi, un litro y medio, un demi-litre, half-litre",
            [
                ("un kilo et demi", 1.5, "kg"),
                ("un litro y medio", 1.5, "l"),
                ("un demi-litre", 0.5, "l"),
                ("half-litre", 0.5, "l"),
            ],
        ),
        # ... not an article alone, nor a hyphenated half that is a word ("time" is a
        # Norwegian hour)
        ("un kilo, half-time, a half-day, half-bottle", []),
        # Swedish "ett par" is a couple, and a per-word alone no unit (was 1 per metre)
        ("ett par meter", []),
        # fraction words before a unit (were nothing, or "three quarters" as quarter-years)
        (
            "three quarters of a mile, a quarter of an hour, quarter-litre, a third of a cup, "
            "fourth of liter",
            [
                ("three quarters of a mile", 0.75, "mi"),
                ("a quarter of an hour", 0.25, "h"),
                ("quarter-litre", 0.25, "l"),
                ("a third of a cup", 1 / 3, "cup"),
                ("fourth of liter", 0.25, "l"),
            ],
        ),
        (
            "ein Viertelliter, drei viertel Liter, trois quarts de litre, un quart d'heure, "
            "tres cuartos de litro, een kwart liter, çeyrek litre, bir ve çeyrek yıl",
            [
                ("ein Viertelliter", 0.25, "l"),
                ("drei viertel Liter", 0.75, "l"),
                ("trois quarts de litre", 0.75, "l"),
                ("un quart d'heure", 0.25, "h"),
                ("tres cuartos de litro", 0.75, "l"),
                ("een kwart liter", 0.25, "l"),
                ("çeyrek litre", 0.25, "l"),
                ("bir ve çeyrek yıl", 1.25, "year"),
            ],
        ),
        # ... and denominator first in Japanese, Korean and Cantonese (were 4 minutes, then 1 l)
        (
            "4分の1リットル、4분의 1 리터、四分一升、二分一加侖",
            [
                ("4分の1リットル", 0.25, "l"),
                ("4분의 1 리터", 0.25, "l"),
                ("四分一升", 0.25, "l"),
                ("二分一加侖", 0.5, "gal"),
            ],
        ),
        # ... not a rank, an ordinal without "of", a quarter-year, a preposition or a word
        (
            "in the first quarter of the year, the third cup, quarterly, a quarter in the lead, "
            "3 quarts of milk, one and a quarter miles",
            [("3 quarts", 3, "qt"), ("one and a quarter miles", 1.25, "mi")],
        ),
        # a number after a unit is the next quantity, not a power (was cubic feet); French
        # elides the article of what a unit is per (was km per litre); speeds named apart
        (
            "5 ft 3 in; 100 kilomètres à l'heure; 每小时100公里; 100 Stundenkilometer; 10 평방미터",
            [
                ("5 ft", 5, "ft"),
                ("3 in", 3, "in"),
                ("100 kilomètres à l'heure", 100, "km/h"),
                ("每小时100公里", 100, "km/h"),
                ("100 Stundenkilometer", 100, "km/h"),
                ("10 평방미터", 10, "m2"),
            ],
        ),
        # the decimals of a metre after 米 (was 1 m), not a count after it
        (
            "他身高一米七五，1米75；5米10个",
            [("一米七五", 1.75, "m"), ("1米75", 1.75, "m"), ("5米", 5, "m"), ("10个", 10, "piece")],
        ),
        # ... and the centimetres of a height after m (was nothing, or 1 m)
        (
            "il mesure 1m80, le mur 3 m 50; 5 m 20 people",
            [
                ("1m80", 1.8, "m"),
                ("3 m 50", 3.5, "m"),
                ("5 m", 5, "m"),
                ("20 people", 20, "person"),
            ],
        ),
        # a product's sign is no unit (was two centuries); the quart's Spanish name is a unit
        ("2 x 3 m; 2 cuartos de galón", [("3 m", 3, "m"), ("2 cuartos de galón", 2, "qt")]),
        # a sign after the scale word (was 0 °C, and -5 without its scale), Hindi's minus,
        # below zero after the temperature (was +5)
        (
            "摄氏零下5度; 섭씨 영하 5도; माइनस 5 डिग्री; 5 Grad unter Null; 5 grados bajo cero",
            [
                ("摄氏零下5度", -5, "°C"),
                ("섭씨 영하 5도", -5, "°C"),
                ("माइनस 5 डिग्री", -5, "°"),
                ("5 Grad unter Null", -5, "°"),
                ("5 grados bajo cero", -5, "°"),
            ],
        ),
        # Hindi "से" is "from", Celsius only after a degree word (was 5 °C)
        ("5 से 10 किलो; 6 डिग्री से.", [("10 किलो", 10, "kg"), ("6 डिग्री से", 6, "°C")]),
        # the sign words of Japanese and Korean before a temperature (was 5 degrees)
        ("マイナス5度、氷点下3度", [("マイナス5度", -5, "°"), ("氷点下3度", -3, "°")]),
        # temperature scales as Hindi, Turkish and unaccented French write them
        (
            "37 डिग्री सेल्सीयस, 71 ° फारेनहाइट, 70 ° Fahrenayt, 37 degres Celsius",
            [
                ("37 डिग्री सेल्सीयस", 37, "°C"),
                ("71 ° फारेनहाइट", 71, "°F"),
                ("70 ° Fahrenayt", 70, "°F"),
                ("37 degres Celsius", 37, "°C"),
            ],
        ),
        # a value and its uncertainty: the unit is the value's (was 0.01 pounds)
        ("no more than 2,000.45±0.01 pounds", [("2,000.45±0.01 pounds", 2000.45, "lb")]),
        # a thousand before a unit, kelvin alone (was 0.5 kelvin)
        ("I would walk 0.5k miles at 200 k", [("0.5k miles", 500, "mi"), ("200 k", 200, "K")]),
        # an English number word hyphenated to its unit (quantulum3's sentences)
        (
            "a two-year contract and a twenty-pound bag",
            [("two-year", 2, "year"), ("twenty-pound", 20, "lb")],
        ),
        # ... but not a rank, a fraction, or a word that is a number in another language
        ("a second-hand car, one twenty-fifth, the fire-box", []),
        # a unit of two words hyphenated into an adjective (was nothing)
        ("a 2,000 square-foot house", [("2,000 square-foot", 2000, "ft2")]),
        # a fraction of one unit (was nothing, or 0.5 per mile)
        ("3/4 of an inch, 0.5 of a mile", [("3/4 of an inch", 0.75, "in"),
                                           ("0.5 of a mile", 0.5, "mi")]),
        ("3 of a kind", []),
        # Italian: chilo's plural, the etto, "orari", fractions of a unit (were nothing, or
        # "tre quarti di litro" 3 quarts per litre)
        ("5 chili di mele, 2 etti, 5 km orari", [("5 chili", 5, "kg"), ("2 etti", 2, "hg"),
                                                 ("5 km orari", 5, "km/h")]),
        ("un quarto di chilo, tre quarti di litro", [("un quarto di chilo", 0.25, "kg"),
                                                     ("tre quarti di litro", 0.75, "l")]),
        ("two chili peppers", []),
        # a short number word before a unit spelled out (were nothing: "on" read as English)
        ("on metreye, eksi on derece, to kilometer", [("on metreye", 10, "m"),
                                                      ("eksi on derece", -10, "°"),
                                                      ("to kilometer", 2, "km")]),
        ("put it on hold, turn on meters, on days, we need to meter the water", []),
        # native Korean numbers, a space before the counter (were nothing)
        ("다섯 명, 사과 한 개, 두 시간", [("다섯 명", 5, "person"), ("한 개", 1, "piece"),
                                        ("두 시간", 2, "h")]),
    ],
)  # fmt: skip
def test_find_quantities_words_of_other_languages_and_ranks(
    text: str, expected: list[tuple[str, float, str]]
) -> None:
    assert [(q.text, q.value, q.unit) for q in find_quantities(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I want half a kilo of apples", ("half a kilo", 0.5, "kg")),
        ("ein halbes Kilo Mehl", ("ein halbes Kilo", 0.5, "kg")),
        # a whole and a fraction (each was the fraction alone, 0.5 kg and 0.5 h)
        ("one and a half kilos of flour", ("one and a half kilos", 1.5, "kg")),
        ("it took two and three quarters hours", ("two and three quarters hours", 2.75, "h")),
        ("anderthalb Kilo Mehl", ("anderthalb Kilo", 1.5, "kg")),
        ("Mezzo chilo di farina", ("Mezzo chilo", 0.5, "kg")),
        ("आधा किलो चीनी", ("आधा किलो", 0.5, "kg")),
        ("three dozen eggs", ("three dozen", 36, "piece")),
        ("une douzaine d'œufs", ("une douzaine", 12, "piece")),
        ("Bir düzine yumurta", ("Bir düzine", 12, "piece")),
        ("İki litre su", ("İki litre", 2, "l")),
        ("två liter mjölk", ("två liter", 2, "l")),
        ("दो लीटर दूध", ("दो लीटर", 2, "l")),
        ("add ½ cup of sugar", ("½ cup", 0.5, "cup")),
        ("She bought a dozen eggs.", ("a dozen", 12, "piece")),
        (
            "Temperatures dropped to minus 15 degrees Celsius.",
            ("minus 15 degrees Celsius", -15, "°C"),
        ),
        ("零下15度", ("零下15度", -15, "°")),
        ("영하 5도", ("영하 5도", -5, "°")),
        ("10 minus 5 degrees", ("5 degrees", 5, "°")),  # arithmetic, not a sign
        ("3 in of rain", ("3 in", 3, "in")),
        ("12 inches in the box", ("12 inches", 12, "in")),
        ("The sound reached 120 decibels.", ("120 decibels", 120, "dB")),
        # Turkish: a case suffix after a symbol, "and a half", a scale word, the hour before
        ("Sıcaklık 40 °C'ye ulaştı.", ("40 °C", 40, "°C")),
        ("İki buçuk saat bekledik.", ("İki buçuk saat", 2.5, "h")),
        ("Uçak 10 bin metre yükseklikte", ("10 bin metre", 10000, "m")),
        ("saatte 120 kilometre hızla", ("saatte 120 kilometre", 120, "km/h")),
        ("시속 100km로 달렸다", ("시속 100km", 100, "km/h")),
        ("Günde 3 litre su", ("3 litre", 3, "l")),  # a rate per day, but no speed
    ],
)
def test_halves_dozens_and_number_words_before_a_unit(
    text: str, expected: tuple[str, float, str]
) -> None:
    assert [(q.text, q.value, q.unit) for q in find_quantities(text)] == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The meeting is at 5 pm on Monday.", []),  # an hour, not picometres
        ("今天2:00 pm, 你将会收到一个惊喜！", []),  # a time, and 一个 "a" (a surprise)
        ("The bond length is 74 pm.", [("74 pm", 74, "pm")]),
        ("bijna 31 euro per vierkante meter", []),  # a price per area
        ("5 dollars per hour", []),
        ("120 Kilometer pro Stunde", [("120 Kilometer pro Stunde", 120, "km/h")]),
        ("60 kr och 1.250,00 EUR.", []),  # kronor and euros, not carats and hours
        ("3月15日に会議、3월 15일에 회의", []),  # dates, not months and days
        ("put it on hold", []),  # Turkish "on" (10) is a word here
        ("She turned 30 in March.", []),  # the preposition, not inches
        ("The team won 3 in a row.", []),
        ("The company employs hundreds of people.", []),  # "many", not 100
        ("Millions of people watched the final.", []),
    ],
)
def test_what_is_not_a_quantity_of_anything(
    text: str, expected: list[tuple[str, float, str]]
) -> None:
    assert [(q.text, q.value, q.unit) for q in find_quantities(text)] == expected


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ((1, "km"), (1000, "m"), True),
        ((0, "°C"), (32, "°F"), True),
        ((100, "°C"), (373.15, "K"), True),
        ((1, "lb"), (453.59237, "g"), True),
        ((1, "ha"), (10000, "m2"), True),
        ((1, "km"), (1, "kg"), False),
        ((1, "km"), (999, "m"), False),
        ((3, "box"), (3, "box"), True),
        ((3, "box"), (3, "piece"), False),
    ],
)
def test_same_quantity(a: tuple[float, str], b: tuple[float, str], same: bool) -> None:
    assert same_quantity(a, b) is same


def test_every_canonical_unit_is_known_to_pint() -> None:
    registry = unit_registry()
    for symbol, (expression, _ids) in CANONICAL_UNITS.items():
        registry.parse_units(expression)  # raises for an unknown expression
        assert read_unit(symbol) == symbol, symbol


def test_a_year_before_a_full_stop_is_no_quantity() -> None:
    from aau.values import find_quantities, read_unit

    assert find_quantities("It was signed in 2024.") == []
    assert read_unit(".") is None


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("een gebied van tien kilometer lang", 10, "km"),
        ("两地相距12千米", 12, "km"),
        ("他跑了两米半。", 2.5, "m"),  # a CJK numeral alone, then the unit, then 半
        ("三公斤半的米", 3.5, "kg"),
        ("ik ben 1,65m en 70 kilo", 1.65, "m"),  # "m en" is no "men" (minutes)
        ("the wall is 3 m is what he said", 3, "m"),  # nor "m is" months
        ("他等了三个钟头", 3, "h"),  # the count word 个 before a duration: hours, not pieces
        ("会议开了一个半小时", 1.5, "h"),
        ("二ヶ月後に", 2, "month"),
        ("正常的温度是华氏温度98.6度", 98.6, "°F"),
        ("Convertir 10 celsius a fahrenheit", 10, "°C"),
        ("E 100 °C?", 100, "°C"),
        ("Consulting: 7.5 hours at $120 per hour.", 7.5, "h"),
    ],
)
def test_find_quantities_reads_what_the_span_reader_reads(
    text: str, value: float, unit: str
) -> None:
    from aau.values import find_quantities

    first = find_quantities(text)[0]
    assert (first.value, first.unit) == (value, unit)


def test_a_bare_word_pint_reads_is_never_turned_away_before_pint_is_built() -> None:
    # ``_from_pint`` skips building the registry for a word no prefix + unit (+ "s") spells;
    # every word a new registry reads must pass that check, in any case. (A registry in use
    # reads more: "Mdeciliter" once it has read "deciliter".)
    from aau.values.quantities import _may_be_pint_unit

    registry = unit_registry.__wrapped__()
    words = {"total", "due", "invoice", "delivered", "boxes", "hours", "Stunden", "kilowatt",
             "metres", "feet", "Inches", "percent", "dozen", "pcs", "knots", "HOUR"}  # fmt: skip
    for unit in list(registry._units)[::7]:
        for prefix in ("", "kilo", "milli", "k", "m", "mega", "micro"):
            words |= {prefix + unit, (prefix + unit).upper(), (prefix + unit).title()}
            words.add(prefix + unit + "s")
    words = {w for w in words if w.isalpha() and w.isascii() and len(w) >= 3}
    read = 0
    for word in sorted(words):
        try:
            registry.parse_units(word)
        except Exception:  # noqa: BLE001  # pint raises several kinds for what it cannot read
            continue
        read += 1
        assert _may_be_pint_unit(word), word
    assert read > 500
    assert not _may_be_pint_unit("total")
    assert not _may_be_pint_unit("invoice")


def test_the_unit_words_come_from_a_new_registry_whatever_the_shared_one_has_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aau.values.quantities import _may_be_pint_unit, _pint_words

    monkeypatch.setenv("AAU_CACHE_DIR", str(tmp_path))  # the words built, not read from disk
    _pint_words.cache_clear()
    try:
        unit_registry().parse_units("deciliter")  # the shared registry now names "deciliter"
        assert _may_be_pint_unit("deciliter")
        assert not _may_be_pint_unit("Mdeciliter")  # as a new registry reads it
    finally:
        _pint_words.cache_clear()
