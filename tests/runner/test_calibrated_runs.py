"""Unit runs with a calibrator: calibrated confidences drive acceptance, attempts and selection."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from aau.calibration import MlpCalibrator, PathEvidence
from aau.calibration.features import agreement_signals
from aau.engines.base import notify_start
from aau.pipeline import Pipeline, PipelineResult
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit, assert_result_contract


def evidence_fields(evidence: PathEvidence) -> dict[str, Any]:
    return {f.name: getattr(evidence, f.name) for f in dataclasses.fields(evidence)}


class FixedCalibrator:
    """Answers a fixed confidence per path and records what it was asked."""

    def __init__(self, confidences: Mapping[str, float]) -> None:
        self.confidences = confidences
        self.calls: list[dict[str, Any]] = []

    embed_ms = 0.0
    logprobs_after_mask = False

    def confidence(self, evidence: PathEvidence) -> float:
        self.calls.append(evidence_fields(evidence))
        return self.confidences[evidence.path]


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
    assert isinstance(pipeline.calibrator, MlpCalibrator)
    result = pipeline.run(TOTAL_TEXT)["find_total"]
    assert_result_contract(result, find_total)
    assert all(0.0 <= a.confidence <= 1.0 for a in result.attempts if a.confidence is not None)
    assert 0.0 <= result.timings["embed_ms"] <= result.timings["total_ms"]


# -- witnesses: the other paths run before a path is scored, and agreement is a signal -------


class AgreementCalibrator:
    """Confidence from agreement alone: 0.2 plus 0.7 times the share of agreeing witnesses."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    embed_ms = 0.0
    logprobs_after_mask = False

    def confidence(self, evidence: PathEvidence) -> float:
        self.calls.append(evidence_fields(evidence))
        signals = agreement_signals(
            evidence.answer.output, evidence.witnesses, evidence.normalizers
        )
        return 0.2 + 0.7 * signals.get("agreement", 0.0)


def counting_extracts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each heuristic extraction (by the text it read)."""
    from aau.fallbacks.heuristic import HeuristicPath

    calls: list[str] = []
    original = HeuristicPath.extract

    def extract(self: HeuristicPath, text: str, context: Any) -> Any:
        calls.append(text)
        return original(self, text, context)

    monkeypatch.setattr(HeuristicPath, "extract", extract)
    return calls


def with_second_heuristic(spec: UnitSpec) -> UnitSpec:
    """``find_total`` with a second heuristic reading ``Total: <amount>`` (always EUR)."""
    data = spec.model_dump(mode="json", exclude_none=True)
    data["fallbacks"].append({
        "kind": "heuristic", "patterns": [{"regex": r"Total:\s*(?P<amount>\d+(?:\.\d+)?)"}],
        "fields": {"amount": {"group": "amount", "normalize": "amount"},
                   "currency": {"value": "EUR"}},
    })  # fmt: skip
    return UnitSpec.from_dict(data)


def test_witnesses_run_before_the_primary_is_scored_and_the_trace_says_so(
    run_unit: RunUnit, find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    extracts = counting_extracts(monkeypatch)
    calibrator = FixedCalibrator({"primary": 0.9})
    result = run(run_unit, find_total, calibrator)["find_total"]
    assert result.path == "primary"
    assert [a.path for a in result.attempts] == ["primary"]  # the chain stopped at the model
    assert len(extracts) == 1  # the heuristic ran once, as a witness
    assert calibrator.calls[0]["witnesses"] == [{"amount": 120.5, "currency": "EUR"}]
    assert calibrator.calls[0]["normalizers"] == {"amount": "amount", "currency": "currency"}
    accepted = result.trace[result.states.index("accepted")]
    assert accepted.detail == "confidence=0.900; ran witnesses heuristic; agreement 1/1 (heuristic)"


def test_a_witness_is_not_run_again_when_the_chain_reaches_it(
    run_unit: RunUnit, find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    extracts = counting_extracts(monkeypatch)
    calibrator = FixedCalibrator({"primary": 0.3, "heuristic": 0.8})
    result = run(run_unit, find_total, calibrator)["find_total"]
    assert result.path == "heuristic"
    assert [a.path for a in result.attempts] == ["primary", "heuristic"]
    assert len(extracts) == 1
    # the heuristic's witness is the model's answer
    assert calibrator.calls[1]["witnesses"] == [{"amount": 120.5, "currency": "EUR"}]
    details = [s.detail for s in result.trace if s.state in {"falling_back", "accepted"}]
    assert details[0] == "ran witnesses heuristic; agreement 1/1 (heuristic)"
    assert details[-1] == "confidence=0.800; agreement 1/1 (primary)"


def test_without_a_calibrator_no_witness_runs(
    run_unit: RunUnit, find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    extracts = counting_extracts(monkeypatch)
    engine = FunctionEngine(lambda request: TOTAL_ANSWER)
    result = run_unit(Pipeline([find_total], engine=engine, calibrator=False), TOTAL_TEXT)
    assert result["find_total"].path == "primary"
    assert extracts == []


def test_a_failing_witness_is_reported_once_the_chain_reaches_it(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    text = "Invoice 7. Total: 120.50 GBP, that is 140.00 EUR."  # the unit admits no GBP
    engine = FunctionEngine(lambda request: '{"amount":140.0,"currency":"EUR"}')
    calibrator = FixedCalibrator({"primary": 0.3})
    pipeline = Pipeline([find_total], engine=engine, calibrator=calibrator)  # type: ignore[arg-type]  # duck-typed double
    result = run_unit(pipeline, text)["find_total"]
    assert result.path == "primary"  # the only valid answer
    # an invalid answer still witnesses: the heuristic read the text otherwise
    assert calibrator.calls[0]["witnesses"] == [{"amount": 120.5, "currency": "GBP"}]
    assert [(a.path, a.error.code if a.error else None) for a in result.attempts] == [
        ("primary", None), ("heuristic", "invalid_output")
    ]  # fmt: skip
    # each attempt shows what its path answered, delivered or not
    assert [a.output for a in result.attempts] == [
        {"amount": 140.0, "currency": "EUR"}, {"amount": 120.5, "currency": "GBP"}
    ]  # fmt: skip
    assert result.to_dict()["attempts"][1]["output"] == {"amount": 120.5, "currency": "GBP"}


def test_selection_follows_agreement_between_paths(run_unit: RunUnit, find_total: UnitSpec) -> None:
    spec = with_second_heuristic(find_total)
    text = "Invoice 7. Subtotal 99 EUR. Total: 120.50 EUR."
    wrong = '{"amount":99,"currency":"EUR"}'  # the model reads the subtotal
    calibrator = AgreementCalibrator()
    pipeline = Pipeline([spec], engine=FunctionEngine(lambda r: wrong), calibrator=calibrator)  # type: ignore[arg-type]  # duck-typed double
    result = run_unit(pipeline, text)["find_total"]
    assert_result_contract(result, spec)
    # the model agrees with neither heuristic (0.2); each heuristic with the other (0.55)
    assert [(a.path, a.confidence) for a in result.attempts] == [
        ("primary", 0.2), ("heuristic", 0.55), ("heuristic", 0.55)
    ]  # fmt: skip
    assert result.output == {"amount": 120.5, "currency": "EUR"}
    assert calibrator.calls[0]["witnesses"] == [{"amount": 120.5, "currency": "EUR"}] * 2


def test_a_run_without_a_model_compares_the_fallbacks_alone(find_total: UnitSpec) -> None:
    spec = with_second_heuristic(find_total)
    calibrator = AgreementCalibrator()
    result = Pipeline([spec], engine=False, calibrator=calibrator).run(TOTAL_TEXT)  # type: ignore[arg-type]  # duck-typed double
    assert result["find_total"].confidence == 0.9  # the two heuristics agree
    assert calibrator.calls[0]["witnesses"] == [{"amount": 120.5, "currency": "EUR"}]


def test_a_run_measures_agreement_as_the_labelled_runs_do() -> None:
    from aau.calibration.features import observe
    from aau.calibration.training import labelled_answers
    from tests.conftest import UNITS_DIR

    class Observing:
        """Scores every path low (so all are scored) and keeps each observation."""

        def __init__(self) -> None:
            self.seen: list[tuple[str, dict[str, Any], Any]] = []

        embed_ms = 0.0
        logprobs_after_mask = False

        def confidence(self, evidence: PathEvidence) -> float:
            observation = observe(evidence)
            agreement = observation.signals.get("agreement")
            self.seen.append((evidence.path, evidence.answer.output, agreement))
            return 0.1

    spec = UnitSpec.from_file(UNITS_DIR / "extract_quantity.yaml")
    calibrator = Observing()
    engine = FunctionEngine(lambda request: '{"value":15,"unit":"boxes"}')
    pipeline = Pipeline([spec], engine=engine, calibrator=calibrator)  # type: ignore[arg-type]  # duck-typed double
    pipeline.run("Please deliver 15 boxes and 2 pallets by Friday.")
    assert [path for path, _, _ in calibrator.seen] == ["primary", "crf", "heuristic"]
    rows = [{"path": path, "outcome": "valid", "output": output, "confidence": 0.1,
             "signals": {}, "correct": True} for path, output, _ in calibrator.seen]  # fmt: skip
    record = {"unit": spec.name, "key": "k", "variant": "clean", "cases": [], "rows": rows}
    from_runs = {a.observation.path: a.observation.signals.get("agreement")
                 for a in labelled_answers([record], units=UNITS_DIR)}  # fmt: skip
    assert from_runs == {path: agreement for path, _, agreement in calibrator.seen}


class WaitingForTheFallbacks(FunctionEngine):
    """A model that takes up to ``patience_s`` to answer, done as soon as ``extracts`` is not
    empty: it records whether the fallbacks ran while it was still decoding."""

    def __init__(self, extracts: list[str], patience_s: float) -> None:
        super().__init__(lambda request: TOTAL_ANSWER)
        self.extracts, self.patience_s = extracts, patience_s
        self.saw_fallbacks: list[bool] = []

    async def generate(self, requests: Any) -> Any:
        for request in requests:
            notify_start(request)  # as an engine does once it has prepared the request
        waited = 0.0
        while not self.extracts and waited < self.patience_s:
            await asyncio.sleep(0.01)
            waited += 0.01
        self.saw_fallbacks.append(bool(self.extracts))
        return await super().generate(requests)


def test_the_fallbacks_run_while_the_model_decodes(
    find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    extracts = counting_extracts(monkeypatch)
    engine = WaitingForTheFallbacks(extracts, patience_s=5.0)
    calibrator = FixedCalibrator({"primary": 0.9})
    result = Pipeline([find_total], engine=engine, calibrator=calibrator).run(TOTAL_TEXT)  # type: ignore[arg-type]  # duck-typed double
    assert engine.saw_fallbacks == [True]
    assert result["find_total"].path == "primary"
    assert len(extracts) == 1  # once, beside the model, and read again when scoring
    assert calibrator.calls[0]["witnesses"] == [{"amount": 120.5, "currency": "EUR"}]


def test_with_many_runs_in_flight_the_fallbacks_wait_for_scoring(
    find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aau.runner import runner

    monkeypatch.setattr(runner._ACTIVE, "FEW", 0)  # this run counts as one too many
    extracts = counting_extracts(monkeypatch)
    engine = WaitingForTheFallbacks(extracts, patience_s=0.3)
    calibrator = FixedCalibrator({"primary": 0.9})
    result = Pipeline([find_total], engine=engine, calibrator=calibrator).run(TOTAL_TEXT)  # type: ignore[arg-type]  # duck-typed double
    assert engine.saw_fallbacks == [False]
    assert len(extracts) == 1  # run as a witness when the model's answer was scored
    assert result["find_total"].path == "primary"
