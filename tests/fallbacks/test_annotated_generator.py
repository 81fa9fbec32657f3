"""The annotated-example generator (units/make_annotated.py): gold read back, world coverage."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest

from aau import values
from aau.fallbacks.crf_features import tokenize
from aau.fallbacks.normalize import NORMALIZERS
from tests.conftest import UNITS_DIR, annotated_generator

UNITS = UNITS_DIR
SAMPLE = 240  # per unit: enough to see the world frames, a fraction of the shipped count


GENERATOR = annotated_generator()


@cache
def examples(unit: str) -> tuple[dict[str, Any], ...]:
    return tuple(GENERATOR.generate(unit, SAMPLE))


def _answer(unit: str, example: dict[str, Any]) -> dict[str, Any]:
    fields = GENERATOR.CRF_BLOCKS[unit]["fields"]
    answer: dict[str, Any] = {}
    for field, mapping in fields.items():
        spans = [s for s in example["spans"] if s["label"] == mapping["label"]]
        answer[field] = NORMALIZERS.get(mapping["normalize"])(spans[0]["value"]) if spans else None
    return answer


@pytest.mark.parametrize("unit", GENERATOR.UNITS)
def test_same_seed_same_examples(unit: str) -> None:
    assert GENERATOR.generate(unit, 40) == list(examples(unit)[:40])


@pytest.mark.parametrize("unit", GENERATOR.UNITS)
def test_every_span_is_on_token_boundaries_and_reads_back(unit: str) -> None:
    for example in examples(unit):
        text = example["text"]
        tokens = tokenize(text)
        starts, ends = {t.start for t in tokens}, {t.end for t in tokens}
        for span in example["spans"]:
            assert text[span["start"] : span["end"]] == span["value"]
            assert span["start"] in starts
            assert span["end"] in ends
        answer = _answer(unit, example)
        if example["spans"]:
            labels = {s["label"] for s in example["spans"]}
            main = {"extract_price": "amount", "extract_date": "date"}.get(unit, "value")
            assert answer[main] is not None, (text, answer, labels)


def test_no_value_share_and_distinct_texts() -> None:
    for unit in GENERATOR.UNITS:
        found = examples(unit)
        empty = sum(1 for e in found if not e["spans"])
        assert 0.08 * SAMPLE <= empty <= 0.25 * SAMPLE
        assert len({e["text"] for e in found}) == len(found)


def test_prices_cover_the_worlds_currencies_and_scripts() -> None:
    found = examples("extract_price")
    codes = {_answer("extract_price", e)["currency"] for e in found} - {None}
    assert len(codes) >= 25
    assert {"USD", "EUR", "JPY", "INR", "BRL", "PLN", "RUB"} & codes
    texts = "".join(e["text"] for e in found)
    for script in (r"[\u0400-\u04ff]", r"[\u4e00-\u9fff]", r"[\uac00-\ud7a3]", r"[\u0600-\u06ff]"):
        assert re.search(script, texts), script
    amounts = [s["value"] for e in found for s in e["spans"] if s["label"] == "AMOUNT"]
    assert any("," in a and a.rindex(",") > a.rfind(".") for a in amounts)  # decimal commas
    assert any(re.search(r"[^\W\d_]", a) for a in amounts)  # scale or number words


def test_dates_are_never_ambiguous_numbers_nor_two_digit_years() -> None:
    forms = set()
    for example in examples("extract_date"):
        for span in example["spans"]:
            text, iso = span["value"], values.read_date(span["value"])
            assert iso is not None
            assert iso[:4] in text
            if not re.search(r"[^\W\d_]", text):
                first = re.search(r"\d+", text)
                assert first is not None
                assert len(first.group()) == 4 or int(iso[8:]) > 12, text
            forms.add("east asian" if re.search("[年년]", text) else "other")
    assert forms == {"east asian", "other"}


def test_quantities_cover_physical_units_in_canonical_symbols() -> None:
    units = {_answer("extract_quantity", e)["unit"] for e in examples("extract_quantity")}
    units.discard(None)
    assert len(units) >= 30
    assert {"kg", "°C", "km/h"} & units
    counts = {w.split(":")[1] for words in GENERATOR.COUNT_WORDS.values() for w in words.split("|")}
    known = set(values.CANONICAL_UNITS) | counts | set(GENERATOR.UNIT_MEANING.values())
    assert all(u in known or "/" in u for u in units), units - known


def test_a_value_read_otherwise_rejects_the_candidate() -> None:
    with pytest.raises(GENERATOR.Rejected) as raised:
        GENERATOR.expect("amount", "1.250", 1.25)  # read as 1250: a day-first reader's grouping
    assert raised.value.reason == "amount (values)"
    GENERATOR.expect("currency", "R$", "BRL")
    GENERATOR.expect("unit", "Kilometer pro Stunde", "km/h")
