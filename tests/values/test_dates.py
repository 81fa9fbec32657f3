"""Dates: every CLDR language's month names, East Asian forms, numeric orders, holidays."""

from __future__ import annotations

import pytest

from aau.values import find_dates, read_date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2016-12-16T12:23:59", "2016-12-16"),
        ("2016/02/22", "2016-02-22"),
        ("2015.5.13", "2015-05-13"),
        ("2010 01 29", "2010-01-29"),
        ("21/04/2016", "2016-04-21"),
        ("02/22/2016", "2016-02-22"),
        ("13.5.2015", "2015-05-13"),
        ("05/05/1989", "1989-05-05"),
        ("21.04.2016 um 16 Uhr", "2016-04-21"),
        ("19:00, 22-12-2016", "2016-12-22"),
        ("21/04/2016, 8:00pm", "2016-04-21"),
    ],
)
def test_numeric_dates(text: str, expected: str) -> None:
    assert read_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("January 12, 2016", "2016-01-12"),
        ("monday january 12th, 2016", "2016-01-12"),
        ("15 June 2016", "2016-06-15"),
        ("2019-sep-1", "2019-09-01"),
        ("sep-23-2020", "2020-09-23"),
        ("23-2020-september", "2020-09-23"),
        ("15. Januar 2011", "2011-01-15"),
        ("Montag den 15. Januar 2017", "2017-01-15"),
        ("1er janvier 2020", "2020-01-01"),
        ("1º de enero de 2020", "2020-01-01"),
        ("3 de março de 2021", "2021-03-03"),
        ("woens 26 okt 15:50:06 2016", "2016-10-26"),
        ("5 mei, 2016, 10 voor half negen 's avonds", "2016-05-05"),
        ("12 Ocak 2016 Pazartesi", "2016-01-12"),
        ("31 aralık 1994", "1994-12-31"),
        ("12 يناير 2016", "2016-01-12"),
        ("16. نوفمبر. 2016", "2016-11-16"),
        ("31 दिसंबर, 1994", "1994-12-31"),
        ("23/सित/2020", "2020-09-23"),
        ("15 марта 2021", "2021-03-15"),
        ("3 listopada 2020", "2020-11-03"),
        ("5 มกราคม 2560", "2017-01-05"),
        ("twenty second of june 2017", "2017-06-22"),
        ("monday, jan twenty two, 2018", "2018-01-22"),
        ("ersten Januar 2018", "2018-01-01"),
        ("yirmi iki Ocak 2018, Pazartesi", "2018-01-22"),
    ],
)
def test_month_names(text: str, expected: str) -> None:
    assert read_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2017年1月6日", "2017-01-06"),
        ("2018年5月3日の17時49分19秒", "2018-05-03"),
        ("1987年1月11日八点", "1987-01-11"),
        ("二〇一九年十月初一", "2019-10-01"),
        ("2017년 1월 6일", "2017-01-06"),
        ("1월 12일, 2016년", "2016-01-12"),
        ("9월 21일 1978", "1978-09-21"),
        ("令和元年5月1日", "2019-05-01"),
        ("平成30年12月31日", "2018-12-31"),
        ("民國105年3月4日", "2016-03-04"),
    ],
)
def test_east_asian_dates(text: str, expected: str) -> None:
    assert read_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pfingsten 2022", "2022-06-05"),
        ("palmsonntag 2019", "2019-04-14"),
        ("easter 2018", "2018-04-01"),
        ("christmas 2018", "2018-12-25"),
        ("heilige drei könige im jahr 2020", "2020-01-06"),
    ],
)
def test_holidays_the_year_fixes(text: str, expected: str) -> None:
    assert read_date(text) == expected


def test_ambiguous_day_month_needs_an_order() -> None:
    assert read_date("03/04/2024") is None
    assert read_date("03/04/2024", order="DMY") == "2024-04-03"
    assert read_date("03/04/2024", order="MDY") == "2024-03-04"
    assert read_date("03/04/2024", languages=["en_US"]) == "2024-03-04"
    assert read_date("03/04/2024", languages=["de"]) == "2024-04-03"


def test_month_name_shared_by_languages() -> None:
    # "listopad" is November in Polish and Czech, October in Croatian.
    assert read_date("5 listopad 2020") == "2020-11-05"
    assert read_date("5 listopad 2020", languages=["hr"]) == "2020-10-05"


@pytest.mark.parametrize(
    "text",
    ["", "  ", "12:30", "May 2016", "tomorrow", "next Friday", "2016", "31/02/2016", "13/13/2013",
     "24703L202", "hello world", "1" * 300, "32 January 2016"],
)  # fmt: skip
def test_not_a_date(text: str) -> None:
    assert read_date(text) is None


def test_find_dates() -> None:
    text = "Invoice dated 15. Januar 2011, due 2011-02-15; call at 12:30 on 3/4/2011."
    found = find_dates(text)
    assert [(text[d.start : d.end], d.value) for d in found] == [
        ("15. Januar 2011", "2011-01-15"),
        ("2011-02-15", "2011-02-15"),
    ]
    assert [d.value for d in find_dates("on 3/4/2011", order="DMY")] == ["2011-04-03"]
    assert find_dates("") == []


def test_a_date_that_ends_a_sentence_is_found_without_its_full_stop() -> None:
    from aau.values import find_dates

    assert [(d.text, d.value) for d in find_dates("The meeting is on 3 May 2024.")] == [
        ("3 May 2024", "2024-05-03")
    ]


def test_a_dotted_abbreviation_is_one_month_name() -> None:
    from aau.values import read_date

    assert read_date("6 มี.ค. 2025") == "2025-03-06"  # Thai: March, never January


@pytest.mark.parametrize(
    ("text", "span", "expected"),
    [
        # "du" names November in Breton: the digits beside it make a whole numeric date
        ("Bist du am 2015.5.13 frei?", "2015.5.13", "2015-05-13"),
        ("Bist du am 13.5.2015 frei?", "13.5.2015", "2015-05-13"),
        # "zal" names May in Old Prussian, with no day beside it; 26 stands beside "okt"
        ("Ik zal op woens 26 okt 15:50:06 2016 terug gaan", "26 okt 15:50:06 2016", "2016-10-26"),
        # "okt" is also a weekday somewhere, "dag" August in two languages: "okt" is the month
        ("Woens 26 okt 15:50:06 2016 is geen dag in 2019", "26 okt 15:50:06 2016", "2016-10-26"),
    ],
)
def test_a_rare_month_word_nearby_does_not_take_the_date(
    text: str, span: str, expected: str
) -> None:
    assert [(d.text, d.value) for d in find_dates(text)] == [(span, expected)]
    assert read_date(text) == expected


def test_a_month_word_without_a_day_beside_it_still_reads_when_it_is_the_only_one() -> None:
    assert read_date("In October we meet, day 26, year 2016") == "2016-10-26"


@pytest.mark.parametrize(
    ("text", "span", "expected"),
    [
        ("Wann ist Pfingsten 2022?", "Pfingsten 2022", "2022-06-05"),
        ("Ich besuche dich an Heilige Drei Könige im Jahr 2020",
         "Heilige Drei Könige im Jahr 2020", "2020-01-06"),
        ("मैं 2010 के पृथ्वी दिवस पर वापस जाऊंगा", "2010 के पृथ्वी दिवस", "2010-04-22"),
    ],
)  # fmt: skip
def test_find_dates_finds_a_holiday_with_its_year(text: str, span: str, expected: str) -> None:
    assert [(d.text, d.value) for d in find_dates(text)] == [(span, expected)]


def test_a_holiday_without_a_year_nearby_is_no_date() -> None:
    assert find_dates("We met at Easter.") == []
    found = find_dates("Christmas is near; the invoice of 3 May 2019 is paid.")
    assert [(d.text, d.value) for d in found] == [("3 May 2019", "2019-05-03")]


def test_a_holiday_name_that_case_folding_changes_still_reads() -> None:
    # "İ" matches "i" case-insensitively, but case-folds to two characters: no key of a table
    assert read_date("VALENTİNE'S DAY 2020") == "2020-02-14"
    assert [d.value for d in find_dates("VALENTİNE'S DAY 2020")] == ["2020-02-14"]
