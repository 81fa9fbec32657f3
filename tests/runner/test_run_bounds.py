"""A unit run is bounded: its deadline covers every path, its CPU work leaves the event loop free,
and nothing raised inside it escapes as anything but that unit's coded error."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from aau.answers import PathAnswer, PathContext
from aau.calibration import PathEvidence
from aau.errors import EngineTimeout
from aau.limits import LIMITS
from aau.pipeline import Pipeline
from aau.runner.runner import valid_text
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit, assert_result_contract


class StallingPath:
    """Fault injector: a fallback path that blocks its thread until released (or 10 s pass)."""

    name = "stalling"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.was_released: bool | None = None

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        self.was_released = self.release.wait(10)
        return PathAnswer(output={"amount": None, "currency": None}, confidence=0.1)


def with_policy(spec: UnitSpec, **policy: Any) -> UnitSpec:
    data = spec.model_dump()
    data["policy"].update(policy)
    return UnitSpec.from_dict(data)


def test_the_deadline_bounds_the_fallbacks_too(run_unit: RunUnit, find_total: UnitSpec) -> None:
    spec = with_policy(find_total, timeout_s=0.3)
    pipeline = Pipeline([spec], engine=FunctionEngine(lambda r: EngineTimeout("late")),
                        calibrator=False)  # fmt: skip
    stalling = StallingPath()
    pipeline.runners[0].fallbacks.insert(0, stalling)
    try:
        result = run_unit(pipeline, TOTAL_TEXT)["find_total"]
    finally:
        stalling.release.set()
    assert_result_contract(result, spec)
    codes = [(a.path, a.error.code if a.error else None) for a in result.attempts]
    # The stalled path and the heuristic after it are out of time: nothing answered in time.
    assert codes == [("primary", "engine_timeout"), ("stalling", "run_timeout"),
                     ("heuristic", "run_timeout")]  # fmt: skip
    assert result.error is not None
    assert result.error.code == "fallbacks_exhausted"
    assert "did not finish within policy.timeout_s (0.3 s)" in result.attempts[1].error.message


def test_a_stalled_path_does_not_stall_the_other_units(find_total: UnitSpec) -> None:
    stalling = StallingPath()
    slow = Pipeline([find_total], engine=FunctionEngine(lambda r: EngineTimeout("late")),
                    calibrator=False)  # fmt: skip
    slow.runners[0].fallbacks.insert(0, stalling)
    fast = Pipeline([find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER), calibrator=False)

    async def both() -> Any:
        stalled = asyncio.create_task(slow.arun(TOTAL_TEXT))
        answered = await fast.arun(TOTAL_TEXT)  # runs while the other path blocks its thread
        stalling.release.set()
        return answered, await stalled

    answered, stalled = asyncio.run(both())
    assert answered["find_total"].output == {"amount": 120.5, "currency": "EUR"}
    assert stalling.was_released is True  # released by the other run, not by its own timeout
    assert stalled["find_total"].path == "heuristic"


class CrashingCalibrator:
    """Fault injector: a calibrator that raises what a tokenizer raises on odd text."""

    embed_ms = 0.0
    logprobs_after_mask = False

    def confidence(self, evidence: PathEvidence) -> float:
        raise TypeError("TextEncodeInput must be Union[TextInputSequence, ...]")


def test_a_crashing_calibrator_fails_the_path_it_scored_not_the_unit(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    pipeline = Pipeline(
        [find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER), calibrator=CrashingCalibrator()
    )  # type: ignore[arg-type]  # fault double
    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]
    assert result.output is None
    assert result.error is not None
    assert result.error.code == "fallbacks_exhausted"
    assert all(a.error and "calibrator crashed: TypeError" in a.error.message
               for a in result.attempts)  # fmt: skip


def test_an_unexpected_error_in_the_run_is_that_units_coded_error(
    run_unit: RunUnit, find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken_spec = find_total.model_copy(update={"name": "broken_total"})
    pipeline = Pipeline([find_total, broken_spec], engine=FunctionEngine(lambda r: TOTAL_ANSWER),
                        calibrator=False)  # fmt: skip
    broken = pipeline.runners[1]

    def explode(run: Any) -> str:
        raise KeyError("a bug in a state's work")

    monkeypatch.setitem(broken._work, "validating", explode)
    results = run_unit(pipeline, TOTAL_TEXT)
    assert results["find_total"].output == {"amount": 120.5, "currency": "EUR"}  # the sibling
    failed = results["broken_total"]
    assert failed.output is None
    assert failed.error is not None
    assert failed.error.code == "internal_error"
    assert "failed unexpectedly in state validating: KeyError(" in failed.error.message
    assert failed.timings["total_ms"] >= 0


def test_lone_surrogates_are_read_as_replacement_characters_at_the_same_offsets() -> None:
    text = "Total \ud800 EUR 12.50 \udfff"
    cleaned = valid_text(text)
    assert cleaned == "Total \ufffd EUR 12.50 \ufffd"
    assert len(cleaned) == len(text)
    cleaned.encode("utf-8")  # valid text now
    assert valid_text("plain") == "plain"


def test_text_with_a_lone_surrogate_runs_through_the_shipped_calibrator(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    pipeline = Pipeline([find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER))
    result = run_unit(pipeline, "Invoice \ud800 7. Total: 120.50 EUR, due in 30 days.")
    assert result["find_total"].error is None
    assert result["find_total"].output == {"amount": 120.5, "currency": "EUR"}


def test_an_oversized_text_is_refused_with_a_code_before_any_path_reads_it(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    calls: list[Any] = []
    engine = FunctionEngine(lambda request: calls.append(request) or TOTAL_ANSWER)
    pipeline = Pipeline([find_total], engine=engine, calibrator=False)
    started = time.perf_counter()
    result = run_unit(pipeline, "x " * (LIMITS.text_chars // 2 + 1))["find_total"]
    assert result.error is not None
    assert result.error.code == "input_too_large"
    assert "AAU_MAX_TEXT_CHARS" in result.error.message
    assert calls == []
    assert time.perf_counter() - started < 30  # refused, not processed (a hang guard)


def test_an_unexpected_error_around_the_units_is_every_units_coded_error(
    run_unit: RunUnit, find_total: UnitSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = Pipeline([find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER),
                        calibrator=False)  # fmt: skip

    def broken_store(tenant: str | None = None) -> Any:
        raise OSError("the term store's disk went away")

    monkeypatch.setattr(pipeline, "term_set", broken_store)
    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]
    assert result.output is None
    assert result.error is not None
    assert result.error.code == "internal_error"
    assert "OSError: the term store's disk went away" in result.error.message
