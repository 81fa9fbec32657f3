"""Grounding through the values layer: a value is in the text when any rendering of it is."""

from __future__ import annotations

import pytest

from aau.errors import UngroundedOutput
from aau.runner.grounding import ground_output


@pytest.mark.parametrize(
    ("text", "output", "found"),
    [
        ("Celkem 12 500 Kč.", {"amount": 12500, "currency": "CZK"}, ["12 500", "Kč"]),
        ("It runs for three months.", {"value": 3}, ["three"]),
        ("a deal worth 75 million dollars", {"amount": 75_000_000, "currency": "USD"},
         ["75 million", "dollars"]),
        ("Unterschrieben am 14. März 2024.", {"date": "2024-03-14"}, ["14. März 2024"]),
        ("契約日：2024年3月14日", {"date": "2024-03-14"}, ["2024年3月14日"]),
        ("Gesamt: 1.250,00 zł", {"amount": 1250.0, "currency": "PLN"}, ["1.250,00", "zł"]),
        ("Billed: 3 Stunden.", {"value": 3, "unit": "h"}, ["3", "3 Stunden"]),
    ],
)  # fmt: skip
def test_any_rendering_of_a_value_grounds_it(
    text: str, output: dict[str, object], found: list[str]
) -> None:
    spans = ground_output("unit", text, output)
    assert [text[start:end] for start, end in spans.values()] == found


@pytest.mark.parametrize(
    ("text", "output"),
    [
        ("Invoice total: EUR 1,250.00", {"amount": 3000, "currency": "EUR"}),  # an example's
        ("Invoice total: EUR 1,250.00", {"amount": 1250, "currency": "USD"}),
        ("Signed on 14 March 2024.", {"date": "2023-09-02"}),
        ("Please deliver 12 boxes.", {"value": 12, "unit": "kg"}),
    ],
)
def test_a_value_no_rendering_of_which_is_in_the_text_is_ungrounded(
    text: str, output: dict[str, object]
) -> None:
    with pytest.raises(UngroundedOutput):
        ground_output("unit", text, output)
