"""Grounding: extracted values found in the text however they are written, or not at all."""

from __future__ import annotations

import pytest

from aau.ingest import align_value

INVOICE = (
    "ACME Office Supplies Ltd., 12 Harbour Road\n"
    "Invoice date: 14 March 2024\n"
    "Quantity: 12 boxes\n"
    "Total due: EUR 1,250.00\n"
    "Late fee 250 EUR per week."
)


def found(text: str, value: str | int | float, **kwargs: int) -> str | None:
    span = align_value(text, value, **kwargs)
    return None if span is None else text[span[0] : span[1]]


def test_exact_match_comes_first() -> None:
    span = align_value(INVOICE, "Total due")
    assert span == (INVOICE.index("Total due"), INVOICE.index("Total due") + len("Total due"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("total   DUE", "Total due"),
        ("acme office\nsupplies", "ACME Office Supplies"),
        ("eur 1,250.00", "EUR 1,250.00"),
    ],
)
def test_case_and_whitespace_do_not_matter(value: str, expected: str) -> None:
    assert found(INVOICE, value) == expected


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("Total due: EUR 1,250.00", 1250, "1,250.00"),
        ("Total due: EUR 1,250.00", 1250.0, "1,250.00"),
        ("Total due: EUR 1,250.00", "1250", "1,250.00"),
        ("Gesamtbetrag: 1.250,00 EUR", 1250, "1.250,00"),
        ("Montant : 1 250,00 €", 1250, "1 250,00"),
        ("Betrag: CHF 1'250.50", 1250.5, "1'250.50"),
        ("Total due: EUR 1,250.00", "1.250,00", "1,250.00"),
        ("Refund of -42.50 EUR", -42.5, "-42.50"),
        ("共计人民币1,250.00元", 1250, "1,250.00"),
        ("12 345 units", 12345, "12 345"),
    ],
)
def test_numbers_match_however_they_are_written(
    text: str, value: int | float | str, expected: str
) -> None:
    assert found(text, value) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Total due: EUR 1,250.00", 250),  # part of a bigger number
        ("Total due: EUR 1,250.00", 125),
        ("Reference 2024-0317", 317),
        ("Total due: EUR 1,250.00", 12500),
        ("Qty 120 boxes", 12),
    ],
)
def test_a_number_inside_another_number_is_not_a_match(text: str, value: int) -> None:
    assert align_value(text, value) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Invoice date: 14 March 2024.", "14 March 2024"),
        ("Invoice date: 14th of March, 2024.", "14th of March, 2024"),
        ("Invoice date: March 14, 2024.", "March 14, 2024"),
        ("Invoice date: 14/03/2024.", "14/03/2024"),
        ("Invoice date: 03/14/2024.", "03/14/2024"),
        ("Rechnungsdatum: 14.03.2024", "14.03.2024"),
        ("Rechnungsdatum: 14. März 2024", "14. März 2024"),
        ("Date: 14 Mar 24 (see 14.03.24)", "14.03.24"),
        ("Date: 2024-03-14", "2024-03-14"),
        ("开票日期：2024年3月14日", "2024年3月14日"),
    ],
)
def test_iso_dates_match_any_written_form(text: str, expected: str) -> None:
    assert found(text, "2024-03-14") == expected


def test_written_dates_match_other_written_forms() -> None:
    assert found("Signed on 2024-03-14 in Paris", "14 March 2024") == "2024-03-14"
    assert found("Signed on March 14, 2024", "14/03/2024") == "March 14, 2024"


def test_a_different_day_is_not_a_match() -> None:
    assert align_value("Invoice date: 14 March 2024", "2024-03-15") is None
    assert align_value("Invoice date: 14/04/2024", "2024-03-14") is None


def test_chinese_text_without_word_boundaries() -> None:
    text = "甲方应于2024年3月14日前支付违约金人民币伍万元整，合同总金额为1,250.00元。"
    assert found(text, "违约金") == "违约金"
    assert found(text, 1250) == "1,250.00"
    assert found(text, "2024-03-14") == "2024年3月14日"
    # OCR often spaces CJK characters apart.
    assert found("合 同 总 金 额 为", "合同总金额") == "合 同 总 金 额"


def test_start_hint_picks_the_nearest_occurrence() -> None:
    assert found(INVOICE, 12) == "12"
    first = align_value(INVOICE, 12)
    near_quantity = align_value(INVOICE, 12, start_hint=INVOICE.index("Quantity"))
    assert first is not None
    assert near_quantity is not None
    assert first[0] == INVOICE.index("12 Harbour")
    assert near_quantity[0] == INVOICE.index("12 boxes")


def test_a_word_inside_a_longer_word_is_the_last_resort() -> None:
    assert found("Payment overdue since May", "due") == "due"
    # A free-standing occurrence wins over one inside a word, wherever the hint points.
    text = "overdue, and the amount is due now"
    span = align_value(text, "due", start_hint=0)
    assert span == (text.index(" due") + 1, text.index(" due") + 4)


@pytest.mark.parametrize(
    "value",
    ["Globex Corporation", "EUR 9,999.00", 99.95, "2023-01-01", "", "   "],
)
def test_values_not_in_the_text_are_ungrounded(value: str | float) -> None:
    # E.g. values copied from a prompt's few-shot examples instead of read from the document.
    assert align_value(INVOICE, value) is None


def test_empty_text_grounds_nothing() -> None:
    assert align_value("", "anything") is None
