"""Signals that tell "I did not recognise it" from "there is nothing", and unfamiliar text.

A path that answers "no value" on a text holding "1 250,50 Kč" has left a money mention
unexplained: the value is there, in a form no path knows. These signals are read from the text,
the answer and the unit's normalizers; they must be cheap and never fail a run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from aau.answers import PathAnswer
from aau.calibration import features
from aau.calibration.base import PathEvidence
from aau.calibration.calibrator import MlpCalibrator, network
from aau.calibration.features import (
    FEATURE_SPEC,
    agreement_signals,
    field_kinds,
    observe,
    text_signals,
    witness_signals,
)
from aau.calibration.training import labelled_answers
from aau.fallbacks.normalize import table_normalizer
from aau.spec.sections import NormalizerTable

PRICE = {"amount": "amount", "currency": "currency"}
QUANTITY = {"value": "number", "unit": "unit"}
DATE = {"date": "date"}
CZECH = "Celkem k úhradě: 1 250,50 Kč do konce měsíce."
NOTHING = {"amount": None, "currency": None}
UNITS = Path(__file__).resolve().parents[2] / "units"
TEXT_SIGNALS = ("mentions", "unexplained", "unexplained_numbers", "non_latin_share",
                "digit_share", "unknown_marker")  # fmt: skip


def _clear() -> None:
    for cached in (features._money, features._numbers, features._dates, features._quantities):
        cached.cache_clear()


@pytest.fixture(params=["finder", "approximation"])
def money_reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Both ways of finding money: ``aau.values.find_money``, and the approximation without it."""
    if request.param == "finder" and features._FIND_MONEY is None:
        pytest.skip("aau.values has no find_money")
    if request.param == "approximation":
        monkeypatch.setattr(features, "_FIND_MONEY", None)
    _clear()
    yield request.param
    _clear()


def test_a_null_answer_leaves_the_money_mention_unexplained(money_reading: str) -> None:
    signals = text_signals(CZECH, NOTHING, {}, PRICE)
    assert signals["mentions"] >= 1
    assert signals["unexplained"] >= 1
    assert signals["unexplained_numbers"] >= 1


def test_an_answer_covering_the_only_money_mention_explains_it(money_reading: str) -> None:
    start = CZECH.index("1 250,50")
    spans = {"amount": (start, start + 8), "currency": (start + 9, start + 11)}
    signals = text_signals(CZECH, {"amount": 1250.5, "currency": "CZK"}, spans, PRICE)
    assert signals["mentions"] == 1
    assert signals["unexplained"] == 0
    assert signals["unexplained_numbers"] == 0
    assert signals["unknown_marker"] == 0.0


def test_money_mentions_in_other_scripts_and_forms(money_reading: str) -> None:
    for text in ("Итого к оплате 3 400 руб. до пятницы.", "合計 15,988円 です", "Total: $1,250.00",
                 "Zu zahlen: 1.250,00 € bis Freitag"):  # fmt: skip
        assert text_signals(text, NOTHING, {}, PRICE)["unexplained"] >= 1, text


def test_a_text_without_money_has_nothing_unexplained(money_reading: str) -> None:
    signals = text_signals("Thank you for your order, we will be in touch.", NOTHING, {}, PRICE)
    assert signals["mentions"] == 0
    assert signals["unexplained"] == 0
    assert signals["unexplained_numbers"] == 0


def test_a_span_of_an_empty_field_explains_nothing() -> None:
    start = CZECH.index("1 250,50")
    signals = text_signals(CZECH, NOTHING, {"amount": (start, start + 8)}, PRICE)
    assert signals["unexplained"] >= 1


def test_mentions_follow_the_kind_of_the_units_fields() -> None:
    text = "Shipped 12 boxes on 3 May 2024. Weight 2.5 kg."
    box = text.index("12 boxes")
    spans = {"value": (box, box + 2), "unit": (box + 3, box + 8)}
    quantity = text_signals(text, {"value": 12, "unit": "box"}, spans, QUANTITY)
    assert (quantity["mentions"], quantity["unexplained"]) == (2, 1)  # "2024." is no quantity
    text = "Due on 14 March 2024, not 2024-03-15, the 30 days net."
    date = text.index("14 March 2024")
    dated = text_signals(text, {"date": "2024-03-14"}, {"date": (date, date + 13)}, DATE)
    assert (dated["mentions"], dated["unexplained"]) == (2, 1)
    assert "unknown_marker" not in dated  # a date has no marker field


def test_field_kinds_read_a_units_table_by_its_base() -> None:
    table = NormalizerTable(base="unit", map={"kisten": "box"}, unknown="keep")
    compiled = table_normalizer("crate", table)
    assert str(compiled).startswith("table:crate:")
    assert field_kinds({"value": "number", "unit": compiled}) == {
        "value": ("number", None),
        "unit": ("quantity", "unit"),
    }
    assert field_kinds({"x": "text", "y": "table:lost:0123"}) == {
        "x": (None, None),
        "y": (None, None),
    }
    assert field_kinds({"d": "grammar:date", "m": "grammar:money_amount.amount"}) == {
        "d": ("date", None),
        "m": ("money", None),
    }


def test_without_the_units_normalizers_only_the_kind_free_signals_are_given() -> None:
    signals = text_signals(CZECH, NOTHING, {}, None)
    assert {"unexplained_numbers", "non_latin_share", "digit_share"} <= set(signals)
    assert not {"mentions", "unexplained", "unknown_marker"} & set(signals)


def test_non_latin_share_tells_the_script() -> None:
    russian = text_signals("Итого к оплате три тысячи рублей.", NOTHING, {}, PRICE)
    english = text_signals("Total due: three thousand dollars.", NOTHING, {}, PRICE)
    spanish = text_signals("Nº de pedido: señor Muñoz, 5ª planta.", NOTHING, {}, PRICE)
    assert russian["non_latin_share"] == pytest.approx(1.0)
    assert english["non_latin_share"] == 0.0
    assert spanish["non_latin_share"] == 0.0
    assert text_signals("合計です", NOTHING, {}, PRICE)["non_latin_share"] == pytest.approx(1.0)
    assert english["digit_share"] == 0.0
    assert text_signals("12 34", NOTHING, {}, PRICE)["digit_share"] == 1.0


def test_unknown_marker_flags_a_code_returned_as_written() -> None:
    def marker(output: dict[str, object], normalizers: dict[str, str]) -> float:
        return text_signals("x", output, {}, normalizers)["unknown_marker"]

    assert marker({"amount": 300, "currency": "kr"}, PRICE) == 1.0  # ambiguous, kept as written
    assert marker({"amount": 300, "currency": "Kč"}, PRICE) == 1.0
    assert marker({"amount": 300, "currency": "SEK"}, PRICE) == 0.0
    assert marker({"amount": None, "currency": None}, PRICE) == 0.0
    assert marker({"value": 12, "unit": "chairs"}, QUANTITY) == 1.0
    assert marker({"value": 12, "unit": "box"}, QUANTITY) == 0.0
    assert marker({"value": 12, "unit": "kg"}, QUANTITY) == 0.0


@pytest.mark.parametrize(
    "text",
    ["", " ", "\x00" * 10, "9" * 50_000, "\ud800 broken surrogate", "€" * 1000, "$1" * 5000,
     "١٢٣ ريال", "๑๒๓ บาท", "𝟏𝟐𝟑 €", "12" + "\u0301" * 100, "1 a " * 5000],
)  # fmt: skip
def test_text_signals_never_raise(text: str) -> None:
    for normalizers, output in itertools.product(
        (PRICE, QUANTITY, DATE, None, {}), (NOTHING, {"amount": 5, "currency": "EUR"}, {})
    ):
        signals = text_signals(text, output, {"amount": (0, 3)}, normalizers)
        assert all(isinstance(v, float) for v in signals.values())


def test_odd_answers_do_not_raise() -> None:
    assert "unexplained_numbers" in text_signals(CZECH, [1, 2], {}, PRICE)  # type: ignore[arg-type]
    odd_span = {"amount": ("a", None)}
    priced = {"amount": 1250.5, "currency": None}
    assert text_signals(CZECH, priced, odd_span, PRICE)["unexplained"] == 1  # type: ignore[arg-type]
    assert text_signals(None, NOTHING, {}, PRICE) == {}  # type: ignore[arg-type]
    assert text_signals(CZECH, {"currency": 5}, {}, PRICE)["unknown_marker"] == 1.0


def test_witnesses_with_value_shows_that_the_others_found_something() -> None:
    others = [{"amount": 1250.5, "currency": "CZK"}, {"amount": None, "currency": None}]
    assert agreement_signals(NOTHING, others, PRICE) == {"agreement": 0.5}
    assert witness_signals(others) == {"witnesses_with_value": 0.5}
    assert witness_signals([]) == {}  # no witnesses: missing, like agreement


def test_observe_gathers_the_signals_into_a_vector_of_the_specs_width() -> None:
    assert FEATURE_SPEC.version == 6
    assert len(set(FEATURE_SPEC.names)) == FEATURE_SPEC.width
    answer = PathAnswer(output=NOTHING, confidence=0.9)
    evidence = PathEvidence("heuristic", answer, outcome="valid", text=CZECH, description="d",
                            witnesses=[{"amount": 1250.5, "currency": "CZK"}],
                            normalizers=PRICE)  # fmt: skip
    observation = observe(evidence)
    for name in (*TEXT_SIGNALS, "witnesses_with_value"):
        assert name in observation.signals, name
    assert observation.signals["witnesses_with_value"] == 1.0
    width = len(FEATURE_SPEC.features)
    calibrator = MlpCalibrator(network(FEATURE_SPEC.width, (4,)), FEATURE_SPEC, [0.0] * width,
                               [1.0] * width)  # fmt: skip
    vector = calibrator.vector(observation)
    assert len(vector) == FEATURE_SPEC.width
    columns = dict(zip(FEATURE_SPEC.names, vector, strict=True))
    assert columns["unexplained_missing"] == 0.0
    assert 0.0 <= calibrator.score(observation) <= 1.0


def test_labelled_answers_recompute_the_text_signals_from_the_stored_text() -> None:
    rows = [{"path": "crf", "outcome": "valid", "output": NOTHING, "confidence": 0.9,
             "signals": {"confidence": 0.9}, "correct": False, "spans": {}},
            {"path": "heuristic", "outcome": "valid", "output": {"amount": 1250.5,
             "currency": "CZK"}, "confidence": 0.6, "signals": {"confidence": 0.6},
             "correct": True, "spans": {"amount": [17, 25], "currency": [26, 28]}}]  # fmt: skip
    record = {"unit": "extract_price", "key": "k", "variant": "clean", "cases": [],
              "text": CZECH, "rows": rows}  # fmt: skip
    crf, heuristic = (a.observation.signals for a in labelled_answers([record], units=UNITS))
    assert crf["unexplained"] >= 1
    assert heuristic["unexplained"] == 0
    assert crf["witnesses_with_value"] == 1.0
    assert heuristic["witnesses_with_value"] == 0.0
    (old,) = labelled_answers([{**record, "text": None, "rows": rows[:1]}], units=UNITS)
    assert not set(TEXT_SIGNALS) & set(old.observation.signals)  # no text: missing


@pytest.mark.parametrize(
    ("text", "normalizers", "expected"),
    [
        ("오천 원입니다", {"amount": "amount", "currency": "currency"}, 1.0),  # words, no digits
        ("पचास रुपये", {"amount": "amount", "currency": "currency"}, 1.0),
        ("Please call me back.", {"amount": "amount", "currency": "currency"}, 0.0),
        ("Delivered twelve boxes", {"value": "number", "unit": "unit"}, 1.0),
        ("Total: 500 EUR", {"value": "number", "unit": "unit"}, 0.0),  # a currency, no unit
        ("signed in the first days of März", {"date": "date"}, 1.0),
        ("お支払いは五千ドルです", {"amount": "amount", "currency": "currency"}, 1.0),  # two kana
        ("合计一万人民元", {"amount": "amount", "currency": "currency"}, 1.0),
        ("오천달러입니다", {"amount": "amount", "currency": "currency"}, 1.0),
    ],
)
def test_a_marker_no_path_tied_to_a_value_is_unexplained(
    text: str, normalizers: dict[str, str], expected: float
) -> None:
    empty = dict.fromkeys(normalizers)
    assert text_signals(text, empty, {}, normalizers)["unexplained_markers"] == expected


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("가격은 5,000원입니다.", 1.0),  # the marker and a particle written against the number
        ("100달러를 냈다.", 1.0),
        ("他花了100美元。", 1.0),
        ("5,000개 주문", 0.0),  # 개 counts things: no currency
        ("전화번호는 010-1234-5678입니다.", 0.0),
    ],
)
def test_a_number_with_an_unspaced_currency_marker_is_a_money_mention(
    text: str, mentions: float
) -> None:
    signals = text_signals(text, dict.fromkeys(PRICE), {}, PRICE)
    assert signals["mentions"] == mentions
    assert signals["unexplained"] == mentions
