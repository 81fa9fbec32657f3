"""The date normalizer: day/month order, ambiguity, calendar checks, ordinals and weekdays."""

from __future__ import annotations

import pytest

from aau.errors import ValidationFailed
from aau.grammars import AmbiguousValue, InvalidValue, load_grammar


@pytest.fixture(scope="module")
def date():
    return load_grammar("date")


@pytest.mark.parametrize("value", ["03/04/2024", "3.4.2024", "03-04-2024", "12/11/2023"])
def test_day_month_date_is_ambiguous_without_date_order(date, value: str) -> None:
    with pytest.raises(AmbiguousValue) as caught:
        date.normalize(value)
    assert isinstance(caught.value, ValidationFailed)
    assert caught.value.code == "ambiguous_value"
    assert len(caught.value.readings) == 2
    assert 'pass date_order="DMY" (day first) or date_order="MDY" (month first)' in str(
        caught.value
    )


def test_ambiguous_date_message_lists_both_readings(date) -> None:
    with pytest.raises(AmbiguousValue) as caught:
        date.normalize("03/04/2024")
    assert caught.value.readings == ("2024-04-03", "2024-03-04")
    assert str(caught.value).startswith(
        "date: '03/04/2024' is ambiguous: it reads as '2024-04-03' or '2024-03-04'; pass"
    )


@pytest.mark.parametrize(("order", "expected"), [("DMY", "2024-04-03"), ("MDY", "2024-03-04")])
def test_date_order_resolves_ambiguous_date(date, order: str, expected: str) -> None:
    assert date.normalize("03/04/2024", date_order=order) == expected


def test_ymd_order_does_not_resolve_a_year_last_date(date) -> None:
    with pytest.raises(AmbiguousValue):
        date.normalize("03/04/2024", date_order="YMD")


@pytest.mark.parametrize("order", [None, "DMY", "MDY", "YMD"])
def test_year_first_date_is_always_year_month_day(date, order: str | None) -> None:
    options = {} if order is None else {"date_order": order}
    assert date.normalize("2024/03/04", **options) == "2024-03-04"


def test_value_that_can_only_be_day_first_needs_no_option(date) -> None:
    assert date.normalize("25/03/2024") == "2024-03-25"
    assert date.normalize("03/25/2024") == "2024-03-25"


def test_same_day_and_month_is_not_ambiguous(date) -> None:
    assert date.normalize("04/04/2024") == "2024-04-04"


def test_given_date_order_is_applied_strictly(date) -> None:
    with pytest.raises(InvalidValue) as caught:
        date.normalize("25/03/2024", date_order="MDY")
    assert caught.value.position == 0
    assert "there is no month 25" in str(caught.value)


def test_two_numbers_above_twelve_name_no_month(date) -> None:
    with pytest.raises(InvalidValue, match=r"at position 0: neither 13 nor 14 can be a month"):
        date.normalize("13/14/2024")


@pytest.mark.parametrize(
    ("value", "position", "reason"),
    [
        ("2023-02-29", 8, "there is no day 29 in February 2023"),
        ("31 April 2024", 0, "there is no day 31 in April 2024"),
        ("June 31, 2024", 5, "there is no day 31 in June 2024"),
        ("31/04/2024", 0, "there is no day 31 in April 2024"),
    ],
)
def test_day_that_does_not_exist_is_invalid_at_its_position(date, value, position, reason) -> None:
    with pytest.raises(InvalidValue) as caught:
        date.normalize(value, date_order="DMY")
    assert caught.value.position == position
    assert str(caught.value) == f"date: invalid value {value!r} at position {position}: {reason}"


def test_leap_day_exists_in_leap_years(date) -> None:
    assert date.normalize("29 Feb 2000") == "2000-02-29"
    with pytest.raises(InvalidValue):
        date.normalize("29 Feb 1900")


@pytest.mark.parametrize(
    "value",
    [
        "1st March 2024",
        "2nd March 2024",
        "3rd March 2024",
        "11th March 2024",
        "12th March 2024",
        "13th March 2024",
        "21st March 2024",
        "March 22nd, 2024",
    ],
)
def test_fitting_ordinal_suffix_is_accepted(date, value: str) -> None:
    assert date.normalize(value).startswith("2024-03-")


@pytest.mark.parametrize(
    ("value", "position"), [("4rd March 2024", 1), ("11st March 2024", 2), ("March 1th, 2024", 7)]
)
def test_wrong_ordinal_suffix_is_invalid(date, value: str, position: int) -> None:
    with pytest.raises(InvalidValue) as caught:
        date.normalize(value)
    assert caught.value.position == position
    assert "the ordinal of" in str(caught.value)


def test_weekday_must_match_the_date(date) -> None:
    assert date.normalize("Mon, 4 March 2024") == "2024-03-04"
    with pytest.raises(InvalidValue, match="2024-03-04 is a Monday, not a Tuesday"):
        date.normalize("Tuesday, 4 March 2024")


def test_unknown_date_order_is_a_value_error(date) -> None:
    with pytest.raises(ValueError, match="date_order must be one of DMY, MDY, YMD; got 'dmy'"):
        date.normalize("03/04/2024", date_order="dmy")


def test_invalid_value_note_points_at_the_position(date) -> None:
    with pytest.raises(InvalidValue) as caught:
        date.normalize("2024-03/04")
    assert caught.value.__notes__ == ["  2024-03/04\n         ^"]


def test_iso_date_checks_the_calendar() -> None:
    iso = load_grammar("iso_date")
    assert iso.normalize("2024-02-29") == "2024-02-29"
    with pytest.raises(InvalidValue, match="at position 8: there is no day 29 in February 2023"):
        iso.normalize("2023-02-29")
    with pytest.raises(InvalidValue, match="at position 0: there is no year 0"):
        iso.normalize("0000-01-01")


def test_iso_date_takes_no_options() -> None:
    with pytest.raises(
        TypeError,
        match="iso_date.normalize\\(\\) got unknown option\\(s\\) date_order; accepted: none",
    ):
        load_grammar("iso_date").normalize("2024-01-01", date_order="DMY")
