"""Unit runs with a calibrator: calibrated confidences drive acceptance, attempts and selection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from aau.calibration import Calibrator
from aau.pipeline import Pipeline, PipelineResult
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit, assert_result_contract


class FixedCalibrator:
    """Answers a fixed confidence per path and records what it was asked."""

    def __init__(self, confidences: Mapping[str, float]) -> None:
        self.confidences = confidences
        self.calls: list[dict[str, Any]] = []

    def confidence(self, path: str, answer: Any, **context: Any) -> float:
        self.calls.append({"path": path, "answer": answer, **context})
        return self.confidences[path]


def run(run_unit: RunUnit, spec: UnitSpec, calibrator: FixedCalibrator) -> PipelineResult:
    engine = FunctionEngine(lambda request: TOTAL_ANSWER)
    pipeline = Pipeline([spec], engine=engine, calibrator=calibrator)  # type: ignore[arg-type]  # duck-typed double
    return run_unit(pipeline, TOTAL_TEXT)


def test_calibrated_confidence_reaching_the_threshold_accepts_the_first_path(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    calibrator = FixedCalibrator({"primary": 0.7, "heuristic": 0.99})
    result = run(run_unit, find_total, calibrator)["find_total"]
    assert_result_contract(result, find_total)
    assert result.path == "primary"
    assert result.confidence == 0.7
    assert [a.path for a in result.attempts] == ["primary"]
    assert calibrator.calls[0]["generation"] is not None  # the model's token signals
    assert calibrator.calls[0]["document"] is not None  # native text: OCR quality 1.0


def test_below_threshold_the_most_confident_calibrated_answer_wins(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    calibrator = FixedCalibrator({"primary": 0.5, "heuristic": 0.4})
    result = run(run_unit, find_total, calibrator)["find_total"]
    assert result.path == "primary"
    assert [(a.path, a.confidence) for a in result.attempts] == [
        ("primary", 0.5), ("heuristic", 0.4)
    ]  # fmt: skip
    assert calibrator.calls[1]["generation"] is None


def test_a_later_path_reaching_the_threshold_wins(run_unit: RunUnit, find_total: UnitSpec) -> None:
    calibrator = FixedCalibrator({"primary": 0.2, "heuristic": 0.8})
    result = run(run_unit, find_total, calibrator)["find_total"]
    assert result.path == "heuristic"
    assert result.confidence == 0.8


def test_shipped_calibrator_scores_a_real_unit_run(find_total: UnitSpec) -> None:
    from aau.calibration.calibrator import default_artifact_path

    if not default_artifact_path().is_file():
        pytest.skip("no fitted calibrator")
    pipeline = Pipeline([find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER))
    assert isinstance(pipeline.calibrator, Calibrator)
    result = pipeline.run(TOTAL_TEXT)["find_total"]
    assert_result_contract(result, find_total)
    assert all(0.0 <= a.confidence <= 1.0 for a in result.attempts if a.confidence is not None)
