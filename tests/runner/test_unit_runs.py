"""Unit runs through the default flow: which states each outcome visits and what the result says.

The engine is a ``FunctionEngine`` double, so every outcome (a good answer, invalid JSON, a
timeout, a weak answer) is chosen by the test. Each test runs twice, through ``Pipeline.run``
and by awaiting ``Pipeline.arun`` (the ``run_unit`` fixture).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import pytest

from aau.answers import PathAnswer, PathContext
from aau.decoding.json_schema import bound_schema
from aau.engines.base import Generation, GenerationRequest, Timings
from aau.errors import (
    ConstraintNotHonored,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    FallbacksExhausted,
)
from aau.pipeline import Pipeline, UnitResult
from aau.runner.runner import primary_confidence
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit, assert_result_contract

PRIMARY_ACCEPTED = [
    "received",
    "prompting",
    "decoding",
    "validating",
    "scoring",
    "accepted",
    "done",
]
HEURISTIC_AFTER_DECODING = [
    "received", "prompting", "decoding", "falling_back", "validating", "scoring", "accepted",
    "done",
]  # fmt: skip
HEURISTIC_ANSWER = {"amount": 120.5, "currency": "EUR"}


def run_find_total(
    run_unit: RunUnit, spec: UnitSpec, answer: str | EngineError, text: str = TOTAL_TEXT,
    *, logprob: float = -0.05,
) -> tuple[UnitResult, FunctionEngine]:  # fmt: skip
    engine = FunctionEngine(lambda request: answer, logprob=logprob)
    # These tests pin the driver with the paths' own confidences, not a fitted calibrator.
    result = run_unit(Pipeline([spec], engine=engine, calibrator=False), text)["find_total"]
    assert_result_contract(result, spec)
    return result, engine


def with_policy(spec: UnitSpec, **policy: Any) -> UnitSpec:
    data = spec.model_dump()
    data["policy"].update(policy)
    return UnitSpec.from_dict(data)


def error_codes(result: UnitResult) -> list[tuple[str, str | None]]:
    return [(a.path, a.error.code if a.error else None) for a in result.attempts]


# -- the primary path -----------------------------------------------------------------------------


def test_primary_answer_above_threshold_is_accepted(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    result, _ = run_find_total(run_unit, find_total, TOTAL_ANSWER)

    assert result.states == PRIMARY_ACCEPTED
    assert result.path == "primary"
    assert result.output == {"amount": 120.5, "currency": "EUR"}
    assert result.confidence == round(math.exp(-0.05), 4)
    assert error_codes(result) == [("primary", None)]
    assert result.attempts[0].confidence == result.confidence
    assert result.error is None
    assert (result.unit, result.version) == ("find_total", "3")


def test_primary_run_trace_records_path_time_and_confidence(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    result, _ = run_find_total(run_unit, find_total, TOTAL_ANSWER)

    assert [step.path for step in result.trace] == [None] + ["primary"] * 6
    times = [step.at_ms for step in result.trace]
    assert times == sorted(times)
    assert times[-1] <= result.timings["total_ms"]
    scoring = result.trace[result.states.index("scoring")]
    assert scoring.detail == f"path confidence={math.exp(-0.05):.3f}"


def test_primary_request_carries_bounded_schema_budget_deadline_and_unit_key(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    before = time.monotonic()
    _, engine = run_find_total(run_unit, find_total, TOTAL_ANSWER)

    (request,) = engine.requests
    assert request.schema == bound_schema(find_total.output, max_string_length=128)
    assert request.max_new_tokens == 32
    assert request.key == "find_total@3"
    assert request.deadline is not None
    # the run's 30 s, less the second policy.fallback_reserve_s keeps for the fallback paths
    reserve = find_total.policy.fallback_reserve_s
    assert before + 30 - reserve <= request.deadline <= time.monotonic() + 30 - reserve
    assert request.messages[0] == {
        "role": "system",
        "content": "Reply with the invoice total as JSON.",
    }
    assert request.messages[-1] == {"role": "user", "content": f"Text: {TOTAL_TEXT}"}


def test_primary_timings_and_token_counts_come_from_the_generation(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    class TimedEngine(FunctionEngine):
        async def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
            return [
                Generation(
                    text=TOTAL_ANSWER,
                    finish_reason="stop",
                    token_logprobs=(-0.01,) * 5,
                    forced=(False,) * 5,
                    token_entropies=(0.0,) * 5,
                    prompt_tokens=40,
                    cached_tokens=16,
                    timings=Timings(queue_ms=1.5, prefill_ms=2.25, decode_ms=3.0),
                )  # fmt: skip
                for _ in requests
            ]

    # Raw confidences: what is measured here is the generation's figures, not a calibrator's
    # view of this hand-made one-line generation.
    pipeline = Pipeline([find_total], engine=TimedEngine(lambda r: ""), calibrator=False)
    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert result.path == "primary"
    assert {k: result.timings[k] for k in ("queue_ms", "prefill_ms", "decode_ms")} == {
        "queue_ms": 1.5, "prefill_ms": 2.25, "decode_ms": 3.0,
    }  # fmt: skip
    assert result.timings["total_ms"] >= 0
    assert result.tokens == {"prompt": 40, "cached": 16, "generated": 5}


def test_primary_confidence_is_the_geometric_mean_of_free_tokens() -> None:
    generation = Generation(
        text="{}", finish_reason="stop", token_logprobs=(-0.2, -9.0, -0.4),
        forced=(False, True, False),
    )  # fmt: skip

    assert primary_confidence(generation) == pytest.approx(math.exp(-0.3))
    only_forced = Generation(
        text="{}", finish_reason="stop", token_logprobs=(-3.0,), forced=(True,)
    )
    assert primary_confidence(only_forced) == 1.0


# -- primary failures that fall back --------------------------------------------------------------


def test_invalid_json_from_the_engine_falls_back_to_the_heuristic(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    result, _ = run_find_total(run_unit, find_total, '{"amount": 120.5, "currency"')

    assert result.states == HEURISTIC_AFTER_DECODING
    assert result.path == "heuristic"
    assert result.output == HEURISTIC_ANSWER
    assert error_codes(result) == [("primary", "invalid_output"), ("heuristic", None)]
    assert "find_total: model output is not JSON" in result.attempts[0].error.message
    assert result.trace[result.states.index("falling_back")].detail == "invalid_output"


def test_schema_invalid_json_from_the_engine_is_caught_in_validating(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    result, _ = run_find_total(run_unit, find_total, '{"amount":"120.50","currency":"EUR"}')

    assert result.states == [
        "received", "prompting", "decoding", "validating", "falling_back", "validating",
        "scoring", "accepted", "done",
    ]  # fmt: skip
    assert result.path == "heuristic"
    assert error_codes(result)[0] == ("primary", "invalid_output")
    assert "find_total: output violates $.amount: '120.50' is not of type" in (
        result.attempts[0].error.message
    )


def test_answer_cut_by_the_token_budget_falls_back_and_names_the_policy(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    class BudgetEngine(FunctionEngine):
        async def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
            return [Generation(text='{"amount":120.5,', finish_reason="length") for _ in requests]

    result = run_unit(Pipeline([find_total], engine=BudgetEngine(lambda r: "")), TOTAL_TEXT)
    unit = result["find_total"]

    assert unit.path == "heuristic"
    assert error_codes(unit)[0] == ("primary", "invalid_output")
    assert "the token budget of 32 ran out" in unit.attempts[0].error.message
    assert "raise policy.max_new_tokens" in unit.attempts[0].error.message


@pytest.mark.parametrize(
    "error",
    [
        EngineTimeout("find_total@3: generation passed its deadline"),
        EngineUnavailable("server down"),
        ConstraintNotHonored("grammar ignored"),
    ],
    ids=lambda e: e.code,
)
def test_engine_error_falls_back_with_its_code_in_attempts(
    run_unit: RunUnit, find_total: UnitSpec, error: EngineError
) -> None:
    result, _ = run_find_total(run_unit, find_total, error)

    assert result.states == HEURISTIC_AFTER_DECODING
    assert result.path == "heuristic"
    assert result.output == HEURISTIC_ANSWER
    assert result.error is None
    assert error_codes(result) == [("primary", error.code), ("heuristic", None)]
    assert result.attempts[0].error.message == str(error)
    assert result.trace[result.states.index("falling_back")].detail == error.code


def test_low_confidence_primary_answer_falls_back(run_unit: RunUnit, find_total: UnitSpec) -> None:
    result, _ = run_find_total(run_unit, find_total, TOTAL_ANSWER, logprob=-5.0)

    assert result.states == [
        "received", "prompting", "decoding", "validating", "scoring", "falling_back",
        "validating", "scoring", "accepted", "done",
    ]  # fmt: skip
    assert result.path == "heuristic"
    assert result.attempts[0].path == "primary"
    assert result.attempts[0].confidence == round(math.exp(-5.0), 4)
    assert result.attempts[1].confidence == result.confidence
    assert result.confidence >= find_total.policy.threshold


def test_when_no_path_reaches_the_threshold_the_most_confident_answer_wins(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    text = "Nothing to pay today."  # the heuristic finds nothing: all-null at 0.35
    null_answer = '{"amount":null,"currency":null}'
    weak, _ = run_find_total(run_unit, find_total, null_answer, text, logprob=-0.7)
    weaker, _ = run_find_total(run_unit, find_total, null_answer, text, logprob=-3.0)

    assert weak.path == "primary"
    assert weak.confidence == round(math.exp(-0.7), 4)
    assert weaker.path == "heuristic"
    assert weaker.confidence == 0.35
    for result in (weak, weaker):
        assert result.output == {"amount": None, "currency": None}
        assert result.states[-3:] == ["falling_back", "accepted", "done"]
        assert result.confidence < find_total.policy.threshold


def test_trace_of_a_low_confidence_fall_back_does_not_repeat_an_earlier_error(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    # The model's answer is not JSON; the heuristic then finds nothing (0.35 < 0.6).
    result, _ = run_find_total(run_unit, find_total, "not json", "Nothing to pay today.")

    details = [s.detail for s in result.trace if s.state == "falling_back"]
    assert details[0] == "invalid_output"
    assert details[1] != "invalid_output"


# -- fallback_on: outcomes that are not triggers end the run --------------------------------------


def test_invalid_output_without_its_trigger_fails_the_run_with_that_code(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    spec = with_policy(find_total, fallback_on=["engine_timeout"])
    result, _ = run_find_total(run_unit, spec, "not json")

    assert result.states == ["received", "prompting", "decoding", "failed"]
    assert result.output is None
    assert result.error.code == "invalid_output"
    assert "model output is not JSON" in result.error.message
    assert [a.path for a in result.attempts] == ["primary"]


def test_engine_error_without_its_trigger_fails_the_run_with_that_code(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    spec = with_policy(find_total, fallback_on=["invalid_output"])
    result, _ = run_find_total(run_unit, spec, EngineUnavailable("server down"))

    assert result.states == ["received", "prompting", "decoding", "failed"]
    assert result.error.code == "engine_unavailable"
    assert result.error.message == "server down"


def test_low_confidence_without_its_trigger_accepts_the_primary_answer(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    spec = with_policy(find_total, fallback_on=["invalid_output", "engine_timeout"])
    result, _ = run_find_total(run_unit, spec, TOTAL_ANSWER, logprob=-5.0)

    assert result.states == PRIMARY_ACCEPTED
    assert result.path == "primary"
    assert result.confidence == round(math.exp(-5.0), 4)


# -- every path failing ---------------------------------------------------------------------------


def test_every_path_failing_ends_with_fallbacks_exhausted_listing_each_code(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    # The heuristic reads "GBP", which the unit's schema does not admit.
    result, _ = run_find_total(run_unit, find_total, EngineUnavailable("down"), "Total: 99 GBP")

    assert result.output is None
    assert result.path is None
    assert result.confidence == 0.0
    assert result.error.code == FallbacksExhausted.code == "fallbacks_exhausted"
    assert result.error.message == (
        "find_total: every path failed (primary: engine_unavailable; heuristic: invalid_output)"
    )
    assert result.states == [
        "received", "prompting", "decoding", "falling_back", "validating", "falling_back",
        "failed",
    ]  # fmt: skip
    assert error_codes(result) == [
        ("primary", "engine_unavailable"),
        ("heuristic", "invalid_output"),
    ]


def test_single_failing_path_reports_its_own_code(run_unit: RunUnit, find_total: UnitSpec) -> None:
    pipeline = Pipeline([find_total], engine=False)  # the heuristic is the only path
    result = run_unit(pipeline, "Total: 99 GBP")["find_total"]

    assert result.error.code == "invalid_output"
    assert "find_total: output violates $.currency: 'GBP' is not one of" in result.error.message
    assert result.states == ["received", "falling_back", "validating", "falling_back", "failed"]


# -- fallback paths that misbehave ----------------------------------------------------------------


class CrashingPath:
    name = "flaky"

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        raise RuntimeError("boom")


class RefusingPath:
    name = "picky"

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        raise EngineUnavailable("picky: model file missing")


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        (CrashingPath(), "invalid_output", "find_total: flaky path crashed: RuntimeError('boom')"),
        (RefusingPath(), "engine_unavailable", "picky: model file missing"),
    ],
    ids=["crash", "coded-error"],
)
def test_a_failing_fallback_path_is_recorded_and_the_next_path_answers(
    run_unit: RunUnit, find_total: UnitSpec, path: Any, code: str, message: str
) -> None:
    pipeline = Pipeline([find_total], engine=FunctionEngine(lambda r: EngineTimeout("late")))
    pipeline.runners[0].fallbacks.insert(0, path)
    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert result.path == "heuristic"
    assert result.output == HEURISTIC_ANSWER
    assert error_codes(result) == [
        ("primary", "engine_timeout"), (path.name, code), ("heuristic", None),
    ]  # fmt: skip
    assert result.attempts[1].error.message == message


# -- inputs no path can analyse -------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\t  "], ids=["empty", "whitespace"])
def test_empty_text_fails_with_empty_input_before_any_model_call(
    run_unit: RunUnit, find_total: UnitSpec, text: str
) -> None:
    result, engine = run_find_total(run_unit, find_total, TOTAL_ANSWER, text)

    assert result.states == ["received", "failed"]
    assert result.error.code == "empty_input"
    assert result.error.message == "the input text is empty"
    assert engine.requests == []


def test_binary_garbage_fails_with_binary_input_before_any_model_call(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    garbage = "".join(map(chr, range(32))) * 100
    result, engine = run_find_total(run_unit, find_total, TOTAL_ANSWER, garbage)

    assert result.states == ["received", "failed"]
    assert result.error.code == "binary_input"
    assert "the input looks like binary data" in result.error.message
    assert "pass a document path for PDFs and images" in result.error.message
    assert engine.requests == []


def test_text_with_a_few_control_characters_is_analysed(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    text = TOTAL_TEXT + "\x0c\x00 page 2\r\n\tend"
    result, _ = run_find_total(run_unit, find_total, TOTAL_ANSWER, text)

    assert result.path == "primary"


def test_without_an_engine_the_run_goes_straight_to_the_fallbacks(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    result = run_unit(Pipeline([find_total], engine=False), TOTAL_TEXT)["find_total"]

    assert result.states == [
        "received", "falling_back", "validating", "scoring", "accepted", "done",
    ]  # fmt: skip
    assert result.output == HEURISTIC_ANSWER
    assert result.spans == {"amount": (18, 24), "currency": (25, 28)}
    assert TOTAL_TEXT[18:24] == "120.50"
    assert result.tokens == {}
    assert result.timings["prefill_ms"] == 0.0


# -- output validity over many outcomes -----------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        TOTAL_ANSWER,
        '{"amount":120.5,"currency":"EUR","note":"extra"}',
        '{"amount":120.5,"currency":"GBP"}',
        '{"amount":120.5}',
        '{"amount":[120.5],"currency":"EUR"}',
        "[]",
        "null",
        '"EUR"',
        "",
        "{" * 50,
        EngineTimeout("late"),
    ],
)
@pytest.mark.parametrize("text", [TOTAL_TEXT, "Total: 99 GBP", "Nothing here."])
def test_a_non_null_output_is_always_valid_against_the_unit_schema(
    run_unit: RunUnit, find_total: UnitSpec, answer: str | EngineError, text: str
) -> None:
    result, _ = run_find_total(run_unit, find_total, answer, text)  # checks the contract

    assert result.states[-1] in {"done", "failed"}
    assert (result.output is None) == (result.states[-1] == "failed")


def test_every_state_of_the_chart_has_its_work_in_the_runners_table() -> None:
    from aau.fsm import STATES
    from aau.fsm.machine import FINAL_STATES
    from aau.runner import UnitRunner
    from tests.conftest import UNITS_DIR

    runner = UnitRunner(UnitSpec.from_file(UNITS_DIR / "extract_price.yaml"), engine=None)
    assert set(runner._work) == STATES - FINAL_STATES
