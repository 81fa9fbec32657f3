"""Numbers: every locale's separators and digits, scales, fractions, words, ranges, spans."""

from __future__ import annotations

import pytest

from aau.values import find_numbers, find_quantities, read_number, read_range, renderings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.250,00", 1250),
        ("1,250.00", 1250),
        ("1 250,50", 1250.5),
        ("1\u00a0250,50", 1250.5),
        ("1\u202f250,50", 1250.5),
        ("12 500", 12500),
        ("1'234.50", 1234.5),
        ("1’234’567", 1234567),
        ("1_000_000", 1000000),
        ("1,20,000", 120000),
        ("450.000", 450000),
        ("309.381", 309381),
        ("1.0753", 1.0753),
        ("16,4", 16.4),
        ("0,500", 0.5),
        ("12 ,50", 12.5),
        ("12, 50", 12.5),
        ("-5", -5),
        ("+7", 7),
        ("− 20", -20),
        ("minus 5", -5),
        ("1.5e6", 1500000),
        ("3 x 10^8", 300000000),
        ("6.02×10²³", 6.02e23),
        ("½", 0.5),
        ("1/2", 0.5),
        ("3 1/2", 3.5),
        ("3½", 3.5),
        ("10 1/2", 10.5),
    ],
)
def test_written_numbers(text: str, expected: float) -> None:
    assert read_number(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("٣٤٥", 345),
        ("١٢٫٥", 12.5),
        ("१२३.५", 123.5),
        ("১২৩", 123),
        ("๑๒๓", 123),
        ("１２３", 123),
        ("１，２３４", 1234),
    ],
)
def test_digits_of_other_numbering_systems(text: str, expected: float) -> None:
    assert read_number(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("75 million", 75_000_000),
        ("1.5 bn", 1_500_000_000),
        ("2 Mio.", 2_000_000),
        ("3 Mrd.", 3_000_000_000),
        ("4 milliards", 4_000_000_000),
        ("5 millones", 5_000_000),
        ("2.400 millones", 2_400_000_000),
        ("10,05 miliardi", 10_050_000_000),
        ("0,9 biljoen", 900_000_000_000),
        ("12,5 тыс.", 12_500),
        ("7 млн", 7_000_000),
        ("1.5 lakh", 150_000),
        ("2 crore", 20_000_000),
        ("5k", 5000),
        ("75M", 75_000_000),
        ("36.57億", 3_657_000_000),
        ("1万億", 10**12),
        ("7  万", 70_000),
        ("5만", 50_000),
        ("3억 5천만", 350_000_000),
        ("2 dozen", 24),
        ("16.4 million", 16_400_000),
    ],
)
def test_scale_words(text: str, expected: int) -> None:
    value = read_number(text)
    assert value == expected
    assert isinstance(value, int)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("七万", 70_000),
        ("四十九兆九千五百九十二億", 49_959_200_000_000),
        ("零", 0),
        ("二〇一九", 2019),
        ("一千零五十", 1050),  # 零 holds an empty place
        ("四亿五千六百四十二万零一十五", 456_420_015),
        ("负0.2", -0.2),
        ("三点五", 3.5),
        ("にせんにひゃくごじゅうろく", 2256),
        ("twenty two", 22),
        ("three hundred and forty two", 342),
        ("fünfunddreißig", 35),
        ("vingt-et-un", 21),
        ("veintidós", 22),
        ("quarenta e cinco", 45),
        ("tredici", 13),
        ("driehonderd", 300),
        ("cinque milioni", 5_000_000),
        ("twee miljoen", 2_000_000),
        ("tretton", 13),
        ("fyrtiofem", 45),
        ("yirmi iki", 22),
        ("पचास", 50),
        ("पाँच सौ", 500),
        ("तीन लाख पचास हज़ार", 350_000),
        ("दो करोड़", 20_000_000),
    ],
)
def test_numerals_and_number_words(text: str, expected: float) -> None:
    assert read_number(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "locale", "expected"),
    [
        ("1.250", "en", 1.25),
        ("1.250", "de", 1250),
        ("1,5", "de", 1.5),
        ("1 234,5", "fr", 1234.5),
        ("1'234.5", "de_CH", 1234.5),
        ("2 billion", "en", 2_000_000_000),
        ("2 billion", "fr", 2_000_000_000_000),
    ],
)
def test_locale_settles_separators_and_scales(text: str, locale: str, expected: float) -> None:
    assert read_number(text, locale) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\n\t", "abc", "A4", "24703L202", "scp-173m", "12:30", "1.2.3", "13.5.2015",
     "EUR 100", "12%", "1/2/3", "--5", "1" * 300],
)  # fmt: skip
def test_not_one_number(text: str) -> None:
    assert read_number(text) is None


def test_non_strings_are_not_numbers() -> None:
    assert read_number(None) is None  # type: ignore[arg-type]
    assert read_number(12) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10-20", (10, 20)),
        ("10 - 20", (10, 20)),
        ("10–20 million", (10_000_000, 20_000_000)),
        ("between 5 and 7", (5, 7)),
        ("3 à 5 millions", (3_000_000, 5_000_000)),
        ("von 3 bis 4", (3, 4)),
        ("5 to 10", (5, 10)),
        ("-5 - -3", (-5, -3)),
        ("10〜20", (10, 20)),
    ],
)
def test_ranges(text: str, expected: tuple[int, int]) -> None:
    assert read_range(text) == expected


@pytest.mark.parametrize("text", ["10", "10 20", "10 and then 20 more", "", "1-2-3"])
def test_not_ranges(text: str) -> None:
    assert read_range(text) is None


def test_find_numbers_reports_spans_in_the_original_text() -> None:
    text = "Delivered 12 500 units on 3 May, A4 paper, code 24703L202; twenty-two boxes, ٣٤٥ kg"
    found = find_numbers(text)
    assert [(text[s.start : s.end], s.value) for s in found] == [
        ("12 500", 12500),
        ("3", 3),
        ("twenty-two", 22),
        ("٣٤٥", 345),
    ]


def test_find_numbers_with_scales_and_cjk() -> None:
    found = find_numbers("Umsatz 1,5 Mio. Euro, 七万円, 7 млн руб.")
    assert [s.value for s in found] == [1_500_000, 70_000, 7_000_000]


def test_find_numbers_reads_cjk_fractions() -> None:
    # N分之M is M/N: "四分之一" is a quarter (its 四分 was four minutes before a unit)
    found = [(n.text, n.value) for n in find_numbers("四分之一公升，三分之二，百分之五")]
    assert found == [("四分之一", 0.25), ("三分之二", pytest.approx(2 / 3)), ("百分之五", 0.05)]
    # ... and with digits, in Japanese and Korean too (were 4 and 1: "4分" four minutes)
    found = [(n.text, n.value) for n in find_numbers("4分の1、３分の27, 4분의 1, 3분의 일만 줘")]
    assert found == [("4分の1", 0.25), ("３分の27", 9), ("4분의 1", 0.25),
                     ("3분의 일", pytest.approx(1 / 3))]  # 만 is "only" there  # fmt: skip
    assert find_quantities("4分の1") == []  # a quarter, no unit: not four minutes
    # ... and in Sino-Korean numerals (were nothing); the numerator ends before a particle
    found = find_numbers("사분의 삼은, 이십일분의 삼이다, 10분의 일정", languages=("ko",))
    assert [(n.text, n.value) for n in found] == [
        ("사분의 삼", 0.75), ("이십일분의 삼", pytest.approx(3 / 21)), ("10", 10),
    ]  # "10분의 일정" is a ten-minute schedule  # fmt: skip
    found = find_numbers("일과 이분의 일, 백과 사분의 삼으로", languages=("ko",))
    assert [(n.text, n.value) for n in found] == [
        ("일과 이분의 일", 1.5),
        ("백과 사분의 삼", 100.75),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("쉰둘이 넘는 사람들", [("쉰둘", 52)]),
        ("그녀는 열여섯 살입니다, 스물한 살", [("열여섯", 16), ("스물한", 21)]),
        ("사과 한 개, 두 시간", [("한", 1), ("두", 2)]),  # the forms before a counter
        # ... alone they are other words: "yes", "the world", "Korea", "hard", "a fever", "at three"
        ("네, 세계, 한국, 열심히, 열이 나요, 셋에", []),
        # glued to a counter that is also a word's end: a generation, "even more", "temporary"
        ("세대, 한층 더, 한시적", []),
    ],
)  # fmt: skip
def test_native_korean_numbers(text: str, expected: list[tuple[str, int]]) -> None:
    found = find_numbers(text, languages=("ko",))
    assert [(n.text, n.value) for n in found] == expected
    # a whole number and a fraction joined by 又 or と (were read apart)
    found = [(n.text, n.value) for n in find_numbers("一又二分之一，三百五十又3分之1，5と6")]
    assert found == [("一又二分之一", 1.5), ("三百五十又3分之1", pytest.approx(350 + 1 / 3)),
                     ("5", 5), ("6", 6)]  # fmt: skip
    assert [(q.text, q.value, q.unit) for q in find_quantities("1と2分の1カップ")] == [
        ("1と2分の1カップ", 1.5, "cup")
    ]


def test_find_numbers_applies_a_scale_word_after_number_words() -> None:
    # The word reader stops at "trillion"; the scale after it still counts ("two" was 2).
    found = find_numbers("debts of two trillion; twenty-one trillion three hundred; three dozen")
    assert [(s.text, s.value) for s in found] == [
        ("two trillion", 2 * 10**12),
        ("twenty-one trillion", 21 * 10**12),
        ("three hundred", 300),
        ("three dozen", 36),
    ]
    # a quarter of a scale (was the scale: a million), and a mixed number with "and" (2 and 0.75)
    found = find_numbers("a quarter million people; 2 and 3/4 cups")
    assert [(s.text, s.value) for s in found] == [("a quarter million", 250_000),
                                                 ("2 and 3/4", 2.75)]  # fmt: skip


def test_find_numbers_reads_digits_with_falling_scales_as_one_number() -> None:
    found = find_numbers(
        "2 लाख 50 हज़ार; 3 crore 20 lakh; 4 thousand 3 hundred and 21; 5 million 20 people; "
        "2 million 3 million"
    )
    assert [(s.text, s.value) for s in found] == [
        ("2 लाख 50 हज़ार", 250_000),
        ("3 crore 20 lakh", 32_000_000),
        ("4 thousand 3 hundred and 21", 4_321),
        ("5 million", 5_000_000),
        ("20", 20),
        ("2 million", 2_000_000),
        ("3 million", 3_000_000),
    ]


def test_a_power_of_ten_written_plainly_is_not_zero() -> None:
    # "x10" then digits is a power only from 1 up ("6.02x1023" lost its superscript); "4x100"
    # is four times a hundred, not 4 x 10^0
    assert [(s.text, s.value) for s in find_numbers("6.02x1023; 3x105")] == [
        ("6.02x1023", pytest.approx(6.02e23)),
        ("3x105", 300_000),
    ]
    assert find_numbers("the 4x100m relay") == []


def test_find_numbers_reads_digits_after_a_thousand_or_a_man() -> None:
    # Turkish and Korean write the rest of a number in digits after its thousands or 만
    found = find_numbers("3 bin 500 lira; 3만 5000원; 1,000만 원; 4천3백; 3 bin 500 milyon")
    assert [(s.text, s.value) for s in found] == [
        ("3 bin 500", 3_500),
        ("3만 5000", 35_000),
        ("1,000만", 10_000_000),
        ("4천", 4_000),
        ("3백", 300),
        ("3 bin", 3_000),
        ("500 milyon", 500_000_000),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anderthalb Millionen", 1_500_000),
        ("dreieinhalb Milliarden", 3_500_000_000),
        ("anderhalf miljoen", 1_500_000),
        ("un million et demi", 1_500_000),
        ("tres millones y medio", 3_500_000),
        ("dois milhões e meio", 2_500_000),
        ("due milioni e mezzo", 2_500_000),
        ("one and a half", 1.5),
        ("five and a quarter", 5.25),
        ("anderthalb", 1.5),
    ],
)
def test_a_whole_and_a_half(text: str, expected: float) -> None:
    assert [s.value for s in find_numbers(text)] == [expected]


def test_millimetres_are_no_scale() -> None:
    # Portuguese "mM" (1e9) folds to "mm": "a 5 mm screw" was five billion.
    assert [(s.text, s.value) for s in find_numbers("a 5 mm screw, 10 MM")] == [
        ("5", 5),
        ("10", 10),
    ]


def test_a_scale_letter_against_a_currency_symbol_is_the_markers() -> None:
    # price-parser's "1 NT$" and "1 T$" were a trillion (Vietnamese "NT", the letter "T")
    assert [(s.text, s.value) for s in find_numbers("1 NT$, 1 T$, 5 T")] == [
        ("1", 1),
        ("1", 1),
        ("5 T", 5_000_000_000_000),
    ]


def test_a_decimal_point_with_no_whole_part() -> None:
    found = find_numbers("$.75, .75 €, (.25) and -.5; not v.2, 3..5 or end.75")
    assert [(s.text, s.value) for s in found] == [
        (".75", 0.75), (".75", 0.75), (".25", 0.25), ("-.5", -0.5),
        ("2", 2), ("3", 3), ("5", 5), ("75", 75),
    ]  # fmt: skip


def test_sino_korean_numerals_written_in_spaced_parts() -> None:
    found = find_numbers("오십 이, 이천  이백, 이십만 이천; 삼 사; 이백 삼천", languages=["ko"])
    assert [(s.text, s.value) for s in found] == [
        ("오십 이", 52), ("이천  이백", 2200), ("이십만 이천", 202_000),
        ("삼", 3), ("사", 4), ("이백", 200), ("삼천", 3000),
    ]  # fmt: skip


def test_sino_korean_decimals() -> None:
    # 점 between numerals is the decimal point; alone or at a word's start it is a word (점심)
    found = find_numbers("이십구점구구유로, 삼점오 킬로미터, 점심, 이점", languages=["ko"])
    assert [(s.text, s.value) for s in found] == [("이십구점구구", 29.99), ("삼점오", 3.5)]


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        # a half after the whole, before its scale: each was the scale alone (1,000,000)
        ("bir buçuk milyon", "tr", 1_500_000),
        ("iki buçuk milyar", "tr", 2_500_000_000),
        ("3 buçuk milyon", "tr", 3_500_000),
        ("bir buçuk", "tr", 1.5),
        ("2 and a half million", "en", 2_500_000),
    ],
)
def test_a_half_between_a_number_and_its_scale(text: str, language: str, expected: float) -> None:
    assert [(s.text, s.value) for s in find_numbers(text, languages=[language])] == [
        (text, expected)
    ]


def test_find_numbers_empty() -> None:
    assert find_numbers("") == []
    assert find_numbers("no numbers here") == []


@pytest.mark.parametrize(
    ("value", "forms"),
    [
        (12500, {"12500", "12,500", "12.500", "12 500", "12\u00a0500", "12'500"}),
        (75_000_000, {"75 million", "75M", "75 Mio.", "7500万"}),
        (3, {"three", "drei", "trois", "tres"}),
        (1250.5, {"1250.5", "1250,5", "1,250.5", "1.250,5"}),
    ],
)
def test_renderings(value: float, forms: set[str]) -> None:
    assert forms <= set(renderings(value))


def test_renderings_read_back() -> None:
    for form in renderings(12500, locales=["en", "de", "fr", "de_CH", "en_IN"]):
        if not any(c.isalpha() for c in form):
            assert read_number(form) == 12500, form


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("오십이명의 사람들이 참석했다", [("오십이", 52)]),  # a counter after it
        ("내 학생번호는 십육입니다", [("십육", 16)]),  # the copula after it
        ("이십일조원은 큰 돈이다", [("이십일조", 21_000_000_000_000)]),  # a currency name
        # words that begin with a numeral syllable: "a little", "employee", "you are welcome"
        ("조금 더 주세요", []),
        ("사원 세 명", [("세", 3)]),  # "three employees": 사 of 사원 is none, 세 before 명 is 3
        ("천만에요", []),
    ],
)
def test_sino_korean_numerals_glued_to_a_counter_or_particle(
    text: str, expected: list[tuple[str, int]]
) -> None:
    found = find_numbers(text, languages=["ko"])
    assert [(span.text, span.value) for span in found] == expected


def test_quart_is_no_number_word() -> None:
    """text2num reads "quart" as 4 in Italian and Portuguese; it is a unit in English and a
    quarter in French ("a quart of milk" held a 4)."""
    assert find_numbers("a quart of milk, un quart de litre") == []
    assert [(n.text, n.value) for n in find_numbers("il quarto giorno, quattro")] == [
        ("quarto", 4), ("quattro", 4),
    ]  # fmt: skip
