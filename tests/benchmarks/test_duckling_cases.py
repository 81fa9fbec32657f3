"""Duckling's money corpora as dev cases: the converter, and the file it wrote."""

from __future__ import annotations

import collections
import importlib.util
import json
import sys
from typing import Any

from babel.numbers import list_currencies

from tests.conftest import REPO

FILES = {
    "extract_price": REPO / "benchmarks" / "external" / "duckling_prices.dev.jsonl",
    "extract_quantity": REPO / "benchmarks" / "external" / "duckling_quantities.dev.jsonl",
}
_SPEC = importlib.util.spec_from_file_location(
    "duckling_cases", REPO / "benchmarks" / "external" / "duckling_cases.py"
)
assert _SPEC is not None
assert _SPEC.loader is not None
duckling_cases = importlib.util.module_from_spec(_SPEC)
sys.modules["duckling_cases"] = duckling_cases
_SPEC.loader.exec_module(duckling_cases)
MODULE = r"""
corpus :: Corpus
corpus = (testContext {locale = makeLocale XX Nothing}, testOptions, allExamples)

latentCorpus :: Corpus
latentCorpus = (testContext, testOptions {withLatent = True}, xs)
  where
    xs = concat
      [ examples (simple Unnamed 5)
                 [ "five"
                 ]
      ]

allExamples :: [Example]
allExamples = concat
  [ examples (simple EUR 20)
             [ "20\x20ac"
             , "EUR 20"
             ]
  , examples (simple GBP 10)
             [ "\x00a3\&10"
             , "ten \"quid\""
             ]
  , examples (simple Dollar 10)
             [ "$10"
             ]
  , examples (between EUR (1, 2))
             [ "1-2 EUR"
             ]
  , examples (simple USD 1e4)
             [ "USD 10K"
             , "EUR 20"
             ]
  ]
"""


def test_haskell_string_escapes_are_decoded() -> None:
    assert duckling_cases.haskell_strings(r'[ "20\x20ac", "\x00a3\&10", "a\"b\\c" ]') == [
        "20€", "£10", 'a"b\\c',
    ]  # fmt: skip


def test_only_single_amounts_of_one_iso_currency_are_kept() -> None:
    kept, skipped = duckling_cases.cases("Duckling/AmountOfMoney/EN/Corpus.hs", MODULE)

    assert [(c["text"], c["expected"]) for c in kept] == [
        ("20€", {"amount": 20.0, "currency": "EUR"}),
        ("£10", {"amount": 10.0, "currency": "GBP"}),
        ('ten "quid"', {"amount": 10.0, "currency": "GBP"}),
        ("USD 10K", {"amount": 10000.0, "currency": "USD"}),
    ]
    assert skipped == collections.Counter({
        "an ambiguous currency (Dollar)": 1, "an interval (between)": 1,
        "a text under two labels": 1,  # "EUR 20" is listed as 20 EUR and as 10,000 USD
    })  # fmt: skip
    assert {c["language"] for c in kept} == {"English"}
    assert all(c["part"] == "dev" and c["kind"] == "single" for c in kept)


def test_a_language_is_capped() -> None:
    many = (
        "allExamples = concat\n  [ examples (simple EUR 1)\n    [ "
        + ", ".join(f'"{n} EUR"' for n in range(duckling_cases.CAP + 5))
        + " ]\n  ]\n"
    )
    kept, skipped = duckling_cases.cases("Duckling/AmountOfMoney/NB/Corpus.hs", many)

    capped = duckling_cases.capped(kept, skipped)

    assert len(capped) == duckling_cases.CAP
    assert skipped["over the cap of its language"] == 5


def test_measures_keep_one_value_with_its_symbol() -> None:
    module = r"""
allExamples = concat
  [ examples (simple Kilometre 3)
             [ "3 kilometers"
             , "3km"
             ]
  , examples (simple M 9)
             [ "9m"
             ]
  -- Composite values:
  , examples (simple Inch 94)
             [ "7 feet and 10 inches"
--           , "seven feet, ten inches"
             ]
  , examples (simple Celsius (-2))
             [ "-2 °C"
             ]
  ]
"""
    kept, skipped = duckling_cases.cases("Duckling/Distance/EN/Corpus.hs", module)

    assert [(c["unit"], c["text"], c["expected"]) for c in kept] == [
        ("extract_quantity", "3 kilometers", {"value": 3.0, "unit": "km"}),
        ("extract_quantity", "3km", {"value": 3.0, "unit": "km"}),
        ("extract_quantity", "-2 °C", {"value": -2.0, "unit": "°C"}),
    ]
    assert skipped == collections.Counter({
        "an ambiguous unit (M)": 1, "two numbers (a composite value)": 1,
    })  # fmt: skip


def _shipped() -> list[dict[str, Any]]:
    return [json.loads(line) for path in FILES.values()
            for line in path.read_text(encoding="utf-8").splitlines()]  # fmt: skip


def test_the_shipped_cases_are_dev_cases_with_iso_currencies_and_symbols() -> None:
    cases = _shipped()
    codes = set(list_currencies())

    assert len(cases) > 1000
    assert len({c["id"] for c in cases}) == len(cases)
    assert all(c["part"] == "dev" and c["kind"] == "single" for c in cases)
    for unit, path in FILES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines, path
        assert all(json.loads(line)["unit"] == unit for line in lines), path
    assert all(c["expected"]["currency"] in codes for c in cases if c["unit"] == "extract_price")
    assert all(c["expected"]["unit"] in duckling_cases.UNIT_SYMBOLS.values()
               for c in cases if c["unit"] == "extract_quantity")  # fmt: skip
    per = collections.Counter((c["unit"], c["language"]) for c in cases)
    assert max(per.values()) <= duckling_cases.CAP


def test_no_shipped_text_is_in_the_test_part() -> None:
    path = REPO / "benchmarks" / "external" / "cases.test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    held = {duckling_cases.normalized(json.loads(line)["text"]) for line in lines}

    assert not {duckling_cases.normalized(c["text"]) for c in _shipped()} & held
