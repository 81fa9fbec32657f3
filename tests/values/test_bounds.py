"""Hostile input: bounded work, no exceptions, None for what is not a value."""

from __future__ import annotations

import time

import pytest

from aau import values


@pytest.fixture(autouse=True, scope="module")
def _warm_tables() -> None:
    """Build the CLDR tables and pint's registry once, outside the timed calls."""
    values.read_money("EUR 1")
    values.read_date("1 May 2020")
    values.read_quantity("1 kilowatt hour")
    values.same_value((1, "km"), (1000, "m"), "quantity")


READERS = [values.read_number, values.read_money, values.read_date, values.read_quantity,
           values.read_unit, values.read_range, values.read_quantity_range]  # fmt: skip
HOSTILE = [
    "1" * 255, ("1,2.3 4'5_6 " * 30)[:250], "9" * 10_000, "\x00\x01\x02", "\u202e12\u202c",
    "١٢٣abc४५६", "١٢,٣٤ ₹ € $ ¥", "𝟏𝟐𝟑", "1e999999", "10^999", "½" * 200, "万" * 200,
    "一" * 200, "-" * 200 + "5", "ΑΒΓ 12 мм 5", "🙂 12 🙂", "12\u200b500", "((((((((((1))))))))))",
]  # fmt: skip


@pytest.mark.parametrize("reader", READERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_readers_never_raise(reader: object, text: str) -> None:
    started = time.perf_counter()
    reader(text)  # type: ignore[operator]
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize("reader", READERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("text", ["", " ", "\t\n", None, 12, b"12"], ids=repr)
def test_empty_or_not_text(reader: object, text: object) -> None:
    assert reader(text) is None  # type: ignore[operator]


def test_finders_are_linear() -> None:
    text = "Invoice 2019 total 1.250,00 EUR on 15 May 2019 for 12 boxes; " * 2000
    for finder in (values.find_numbers, values.find_dates, values.find_quantities):
        started = time.perf_counter()
        assert finder(text)
        assert time.perf_counter() - started < 10.0, finder.__name__


@pytest.mark.parametrize(
    "text",
    ["half " * 100_000, "½ " * 100_000, "삼만 원 " * 50_000, "3月15日 " * 20_000,
     "dolara " * 50_000, "一升" * 30_000, "un kilo et demi " * 2_000,
     "three quarters of a " * 2_000, "4分の1" * 30_000, "5 kg " * 20_000, "零下5度 " * 17_000],
    # CJK without spaces: the word after each number once ran to the end of the text; "kg"
    # beside each number once sent find_money through every window (46 s), and each sign
    # below zero once read the whole text before it (quadratic: 18 s)
    ids=["halves", "fractions", "hangul-numerals", "cjk-dates", "turkish-endings",
         "cjk-units-unspaced", "articles-and-halves", "fraction-words", "cjk-fractions",
         "unit-symbols", "below-zero"],
)  # fmt: skip
def test_finders_stay_bounded_on_runs_of_one_form(text: str) -> None:
    for finder in (values.find_money, values.find_quantities):
        started = time.perf_counter()
        finder(text)
        assert time.perf_counter() - started < 20.0, finder.__name__


def test_find_numbers_on_a_long_run_of_digits() -> None:
    started = time.perf_counter()
    values.find_numbers("1" * 200_000)
    values.find_numbers("12 " * 100_000)
    assert time.perf_counter() - started < 10.0


def test_mixed_scripts_are_not_confident_guesses() -> None:
    assert values.read_number("12абв") is None
    assert values.read_quantity("12 абвгд") is None
    assert values.read_money("12 абвгд") is None
    assert values.read_date("12 абвгд 2020") is None
