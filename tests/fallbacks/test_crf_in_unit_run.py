"""The CRF path inside a unit run: it answers when the model fails, and a broken CRF is skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema

import aau
from aau.errors import EngineUnavailable
from aau.testing import FunctionEngine

UNITS = Path(__file__).resolve().parents[2] / "units"


def failing_engine() -> FunctionEngine:
    """Fault injection: every generation fails as if the model server were down."""
    return FunctionEngine(lambda request: EngineUnavailable("model server unreachable"))


def test_crf_answers_when_the_engine_fails() -> None:
    unit = aau.load_unit(UNITS / "extract_price.yaml")
    text = "Reminder: the outstanding balance of EUR 2.340,50 is due on 3 May."
    result = aau.Pipeline([unit], engine=failing_engine()).run(text)["extract_price"]
    assert [a.path for a in result.attempts][:2] == ["primary", "crf"]
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.code == "engine_unavailable"
    assert result.path == "crf"
    assert result.output == {"amount": 2340.5, "currency": "EUR"}
    jsonschema.validate(result.output, unit.output)
    assert "falling_back" in result.states


def test_unit_with_a_corrupt_crf_model_skips_it_with_a_code_and_the_heuristic_answers(
    tmp_path: Path,
) -> None:
    for name in ("extract_price.yaml", "extract_price.annotated.jsonl", "extract_price.crf.json"):
        shutil.copy(UNITS / name, tmp_path / name)
    (tmp_path / "extract_price.crf").write_bytes(b"not a crfsuite model")
    unit = aau.load_unit(tmp_path / "extract_price.yaml")  # a broken model still loads
    text = "Total due: USD 1,200.00 by Friday."
    result = aau.Pipeline([unit], engine=failing_engine()).run(text)["extract_price"]
    crf = next(a for a in result.attempts if a.path == "crf")
    assert crf.error is not None
    assert crf.error.code == "crf_model_corrupt"
    assert "aau train" in crf.error.message
    assert result.path == "heuristic"
    assert result.output == {"amount": 1200.0, "currency": "USD"}
