"""Units with their own ``flow``: the runner sends the same events; the chart routes them."""

from __future__ import annotations

import copy
from typing import Any

from aau.fsm.machine import default_flow
from aau.pipeline import Pipeline, UnitResult
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit, assert_result_contract


def unit_with_routes(
    unit_data: dict[str, Any], routes: dict[str, list[tuple[str, str]]], **policy: Any
) -> UnitSpec:
    """The test unit with the default flow, some states' transitions replaced."""
    flow = copy.deepcopy(default_flow())
    for state, transitions in routes.items():
        flow["states"][state]["transitions"] = [
            {"event": event, "target": target} for event, target in transitions
        ]
    unit_data["flow"] = flow
    unit_data["policy"].update(policy)
    return UnitSpec.from_dict(unit_data)


def run_with(
    run_unit: RunUnit, spec: UnitSpec, answer: str, *, logprob: float = -0.05
) -> tuple[UnitResult, FunctionEngine]:
    engine = FunctionEngine(lambda request: answer, logprob=logprob)
    # The flow routes on the paths' own confidences, not a fitted calibrator's: what a
    # calibrator makes of a low log-probability is its own tests' business.
    pipeline = Pipeline([spec], engine=engine, calibrator=False)
    result = run_unit(pipeline, TOTAL_TEXT)[spec.name]
    assert_result_contract(result, spec)
    return result, engine


def test_unit_flow_is_kept_as_declared(unit_data: dict[str, Any]) -> None:
    spec = unit_with_routes(
        unit_data, {"received": [("prompt", "falling_back"), ("fail", "failed")]}
    )

    assert spec.flow is not None
    assert spec.flow["states"]["received"]["transitions"][0] == {
        "event": "prompt",
        "target": "falling_back",
    }


def test_flow_routing_prompt_to_falling_back_skips_the_model(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    spec = unit_with_routes(
        unit_data, {"received": [("prompt", "falling_back"), ("fail", "failed")]}
    )
    result, engine = run_with(run_unit, spec, TOTAL_ANSWER)

    assert engine.requests == []
    assert result.states == [
        "received",
        "falling_back",
        "validating",
        "scoring",
        "accepted",
        "done",
    ]
    assert result.path == "heuristic"
    assert [a.path for a in result.attempts] == ["heuristic"]


def test_flow_without_a_fall_back_route_from_decoding_fails_on_invalid_output(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    spec = unit_with_routes(
        unit_data, {"decoding": [("validate", "validating"), ("fail", "failed")]}
    )
    result, _ = run_with(run_unit, spec, "not json")

    assert result.states == ["received", "prompting", "decoding", "failed"]
    assert result.error.code == "invalid_output"
    assert [a.path for a in result.attempts] == ["primary"]


def test_flow_without_a_fall_back_route_from_scoring_fails_a_weak_answer(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    spec = unit_with_routes(unit_data, {"scoring": [("accept", "accepted"), ("fail", "failed")]})
    strong, _ = run_with(run_unit, spec, TOTAL_ANSWER)
    weak, _ = run_with(run_unit, spec, TOTAL_ANSWER, logprob=-5.0)

    assert strong.states[-3:] == ["scoring", "accepted", "done"]
    assert strong.path == "primary"
    assert weak.states[-2:] == ["scoring", "failed"]
    assert weak.output is None


def test_flow_that_fails_instead_of_retrying_fallbacks_stops_after_the_first(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    # falling_back may validate or fail, but never fall back again: one fallback, no retry.
    spec = unit_with_routes(
        unit_data,
        {"falling_back": [("validate", "validating"), ("accept", "accepted"), ("fail", "failed")]},
    )
    engine = FunctionEngine(lambda request: "not json")
    result = run_unit(Pipeline([spec], engine=engine), "Total: 99 GBP")["find_total"]

    assert result.states[-3:] == ["validating", "falling_back", "failed"]
    assert [a.path for a in result.attempts] == ["primary", "heuristic"]
    assert result.output is None


def test_flow_routing_weak_answers_to_accepted_accepts_them(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    spec = unit_with_routes(
        unit_data, {"scoring": [("accept", "accepted"), ("fall_back", "accepted")]}
    )
    result, _ = run_with(run_unit, spec, TOTAL_ANSWER, logprob=-5.0)

    assert result.states == [
        "received", "prompting", "decoding", "validating", "scoring", "accepted", "done",
    ]  # fmt: skip
    assert result.error is None
    assert result.path == "primary"
    assert result.output == {"amount": 120.5, "currency": "EUR"}


def test_flow_with_no_route_for_an_outcome_reports_flow_error(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    spec = unit_with_routes(
        unit_data,
        {"decoding": [("validate", "validating"), ("fall_back", "falling_back")]},
        fallback_on=["engine_timeout"],  # invalid output ends the run, but decoding cannot fail
    )
    result, _ = run_with(run_unit, spec, "not json")

    assert result.error.code == "flow_error"
    assert "no transition for event 'fail' from 'decoding'" in result.error.message
