"""The library units (payment terms, deductible, date check, revenue of two periods): each loads
and validates with its data, its committed CRF model is current and its training is
reproducible, its generator reproduces its annotated examples, and both fallbacks (the real
CRF model and the real heuristic) answer realistic texts, nulls where no value is stated."""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from aau.answers import PathContext
from aau.fallbacks.crf import CrfFallback, open_model
from aau.fallbacks.crf_training import train_unit
from aau.fallbacks.normalize import NORMALIZERS
from aau.spec.model import UnitSpec
from aau.terms.matcher import TermMatcher
from aau.terms.store import shipped_dictionaries
from tests.conftest import UNITS_DIR

LIBRARY = (
    "extract_payment_terms",
    "extract_deductible",
    "validate_date_format",
    "extract_revenue_current",
    "extract_revenue_previous",
)

# Realistic texts (none is in a unit's annotated or held-out file) and the answer each path owes.
CASES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "extract_payment_terms": [
        ("Each lot is invoiced on delivery. Payment terms: net 30 days from the invoice date.",
         {"days": 30, "basis": "invoice_date"}),
        ("Zahlbar innerhalb von 30 Tagen nach Rechnungsdatum ohne Abzug.",
         {"days": 30, "basis": "invoice_date"}),
        ("Paiement à 45 jours fin de mois.", {"days": 45, "basis": "end_of_month"}),
        ("Please remit within 14 days of receipt of invoice.",
         {"days": 14, "basis": "invoice_receipt"}),
    ],
    "extract_deductible": [
        ("After the deductible of EUR 500 we will transfer EUR 4,360.00 to your account.",
         {"amount": 500, "currency": "EUR"}),
        ("Die Selbstbeteiligung beträgt 250 € je Schadenfall.", {"amount": 250, "currency": "EUR"}),
        ("Franchise : 300 CHF par sinistre, prime annuelle 980 CHF.",
         {"amount": 300, "currency": "CHF"}),
    ],
    "validate_date_format": [
        ("Hamburg, 2 September 2024",
         {"date": "2024-09-02", "valid": True, "written": "2 September 2024"}),
        ("Rechnungsdatum: 30.02.2024", {"date": None, "valid": False, "written": "30.02.2024"}),
        ("Effective date: 2023-02-29", {"date": None, "valid": False, "written": "2023-02-29"}),
        ("Signed on 15/07/2023 in Leeds.",
         {"date": "2023-07-15", "valid": True, "written": "15/07/2023"}),
    ],
    "extract_revenue_current": [
        ("Key figures\nin EUR million  Q3 2024  Q2 2024\nRevenue  412.5  388.9\nEBITDA  58.6  52.1",
         {"amount": 412.5, "currency": "EUR"}),
        ("Revenue rose to USD 84.6 million in Q3 (Q2: USD 79.1 million).",
         {"amount": 84.6e6, "currency": "USD"}),
        ("Der Umsatz stieg auf 12,4 Mio. EUR (Vorjahr: 11,1 Mio. EUR).",
         {"amount": 12.4e6, "currency": "EUR"}),
    ],
    "extract_revenue_previous": [
        ("Key figures\nin EUR million  Q3 2024  Q2 2024\nRevenue  412.5  388.9\nEBITDA  58.6  52.1",
         {"amount": 388.9, "currency": "EUR"}),
        ("Revenue rose to USD 84.6 million in Q3 (prior year: USD 79.1 million).",
         {"amount": 79.1e6, "currency": "USD"}),
        ("Der Umsatz stieg auf 12,4 Mio. EUR (Vorjahr: 11,1 Mio. EUR).",
         {"amount": 11.1e6, "currency": "EUR"}),
    ],
}  # fmt: skip

NO_VALUE = {
    "extract_payment_terms": "Thank you for your order, we will ship it next week.",
    "extract_deductible": "Your annual premium for 2025 is GBP 412.",
    "validate_date_format": "Please return the signed copy.",
    "extract_revenue_current": "Headcount rose to 3,214 employees.",
    "extract_revenue_previous": "Headcount rose to 3,214 employees.",
}

pytestmark = pytest.mark.parametrize("name", LIBRARY)


def _needs_date_valid(name: str) -> None:
    if name != "validate_date_format":
        return
    if "date_valid" not in NORMALIZERS.names():
        pytest.skip(
            "validate_date_format needs the date_valid normalizer (aau.fallbacks.normalize)"
        )
    if not (UNITS_DIR / f"{name}.yaml").is_file():
        pytest.skip("validate_date_format is parked as units/validate_date_format.yaml.pending")


@cache
def _unit(name: str) -> UnitSpec:
    return UnitSpec.from_file(UNITS_DIR / f"{name}.yaml")


def load(name: str) -> UnitSpec:
    _needs_date_valid(name)
    return _unit(name)


@cache
def _terms() -> TermMatcher:
    return TermMatcher(shipped_dictionaries())


def _context(unit: UnitSpec, text: str) -> PathContext:
    # The pipeline passes the shipped dictionaries' hits; CRF paths trained with them read them.
    return PathContext(unit_name=unit.name, output_schema=unit.output,
                       extras={"term_hits": _terms().find(text)})  # fmt: skip


@cache
def _generator() -> ModuleType:
    path = UNITS_DIR / "make_library_annotated.py"
    spec = importlib.util.spec_from_file_location("make_library_annotated", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _crf(unit: UnitSpec) -> CrfFallback:
    return next(f for f in unit.fallbacks if isinstance(f, CrfFallback))


def test_unit_validates_with_its_data_and_routing(name: str) -> None:
    unit = load(name)

    assert unit.kind == "extract"
    assert [f.kind for f in unit.fallbacks] == ["crf", "heuristic"]
    assert all(f.data_problems(unit) == [] for f in unit.fallbacks)
    assert 6 <= len(unit.routing.requests) <= 40
    assert unit.routing.keywords
    assert len(_crf(unit).examples_path(unit).read_text(encoding="utf-8").splitlines()) >= 120


def test_committed_model_is_current(name: str) -> None:
    unit = load(name)

    open_model(_crf(unit), unit)  # raises CrfModelStale / CrfModelMissing / CrfModelCorrupt


def test_generator_reproduces_the_annotated_examples(name: str) -> None:
    unit = load(name)

    produced = _generator().to_jsonl(_generator().generate(name))

    assert produced == _crf(unit).examples_path(unit).read_text(encoding="utf-8")


def test_held_out_file_is_apart_from_the_training_texts(name: str) -> None:
    unit = load(name)

    held_file = UNITS_DIR / f"{name}.heldout.jsonl"
    held = [json.loads(line) for line in held_file.read_text(encoding="utf-8").splitlines()]
    examples = _crf(unit).examples_path(unit).read_text(encoding="utf-8").splitlines()
    trained = {json.loads(line)["text"] for line in examples}

    assert len(held) >= 40
    assert not {row["text"] for row in held} & trained
    for row in held:
        jsonschema.validate(row["output"], unit.output)


@pytest.mark.parametrize("kind", ["crf", "heuristic"])
def test_fallback_answers_realistic_texts(name: str, kind: str) -> None:
    unit = load(name)
    path = next(f for f in unit.fallbacks if f.kind == kind).build(unit)

    misses = []
    for text, wanted in CASES[name]:
        answer = path.extract(text, _context(unit, text))
        jsonschema.validate(answer.output, unit.output)
        if answer.output != wanted:
            misses.append(f"{text!r}: expected {wanted}, got {answer.output}")
        assert answer.spans, text

    assert not misses, "\n".join(misses)


@pytest.mark.parametrize("kind", ["crf", "heuristic"])
def test_fallback_answers_nulls_where_no_value_is_stated(name: str, kind: str) -> None:
    unit = load(name)
    path = next(f for f in unit.fallbacks if f.kind == kind).build(unit)

    answer = path.extract(NO_VALUE[name], _context(unit, NO_VALUE[name]))

    assert answer.output == dict.fromkeys(unit.output["properties"])
    assert answer.spans == {}


@pytest.mark.slow
def test_training_is_reproducible_and_learns_the_examples(name: str) -> None:
    unit = load(name)

    first, second = train_unit(unit, write=False), train_unit(unit, write=False)

    assert first.span_scores == second.span_scores
    assert first.field_accuracy == second.field_accuracy
    assert min(first.field_accuracy.values()) >= 0.75, first.field_accuracy
