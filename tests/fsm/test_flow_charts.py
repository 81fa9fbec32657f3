"""The run state chart: the default flow, ``flow_problems`` on bad flows, and ``RunMachine``."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from aau.fsm.machine import EVENTS, FINAL_STATES, STATES, RunMachine, default_flow, flow_problems


def transitions(flow: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (source, t["event"], t["target"])
        for source, body in flow["states"].items()
        for t in (body or {}).get("transitions", [])
    }


@pytest.fixture
def flow() -> dict[str, Any]:
    """A mutable copy of the default flow."""
    return copy.deepcopy(default_flow())


def test_default_flow_declares_every_state_and_starts_at_received() -> None:
    states = default_flow()["states"]

    assert set(states) == STATES
    assert [sid for sid, body in states.items() if body.get("initial")] == ["received"]
    assert {sid for sid, body in states.items() if body.get("final")} == FINAL_STATES
    assert FINAL_STATES == {"done", "failed"}


def test_default_flow_uses_only_known_events_and_has_no_problems() -> None:
    assert {event for _, event, _ in transitions(default_flow())} <= EVENTS
    assert flow_problems(default_flow()) == []


def test_default_flow_lets_every_working_state_fall_back() -> None:
    edges = transitions(default_flow())
    working = STATES - FINAL_STATES - {"accepted"}

    for state in working:
        assert (state, "fall_back", "falling_back") in edges, state
    assert ("accepted", "finish", "done") in edges
    assert ("scoring", "accept", "accepted") in edges


def test_default_flow_is_a_fresh_copy_per_machine() -> None:
    first, second = RunMachine(), RunMachine()
    first.send("prompt")

    assert first.state == "prompting"
    assert second.state == "received"


def test_run_machine_walks_the_primary_path_to_done() -> None:
    machine = RunMachine()
    visited = [machine.state]
    for event in ["prompt", "decode", "validate", "score", "accept", "finish"]:
        visited.append(machine.send(event))

    assert visited == [
        "received", "prompting", "decoding", "validating", "scoring", "accepted", "done",
    ]  # fmt: skip
    assert machine.is_final


def test_run_machine_refuses_an_event_without_a_route_and_names_it() -> None:
    machine = RunMachine()

    assert machine.can("prompt")
    assert not machine.can("accept")
    with pytest.raises(ValueError, match="no transition for event 'accept' from 'received'"):
        machine.send("accept")
    assert machine.state == "received"


def test_run_machine_ends_in_failed_from_any_working_state() -> None:
    machine = RunMachine()
    machine.send("prompt")
    machine.send("decode")

    assert machine.send("fail") == "failed"
    assert machine.is_final
    assert not machine.can("finish")


# -- flow_problems --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [None, [], {"states": []}, {"name": "x"}])
def test_flow_without_states_mapping_is_a_problem(bad: Any) -> None:
    assert flow_problems(bad) == [
        "a flow needs a 'states' mapping (python-statemachine's YAML statechart format)"
    ]


def test_flow_with_unknown_state_lists_the_known_states(flow: dict[str, Any]) -> None:
    flow["states"]["archived"] = {"transitions": [{"event": "finish", "target": "done"}]}

    problems = flow_problems(flow)

    assert problems == [
        "unknown state 'archived'. Available: accepted, decoding, done, failed, falling_back, "
        "prompting, received, scoring, validating"
    ]


def test_flow_with_unknown_event_lists_the_known_events(flow: dict[str, Any]) -> None:
    flow["states"]["received"]["transitions"].append({"event": "skip", "target": "done"})

    assert flow_problems(flow) == [
        "state 'received': unknown event 'skip'. Available: accept, decode, fail, fall_back, "
        "finish, prompt, score, validate"
    ]


def test_flow_with_transition_to_undeclared_state_names_source_and_target(
    flow: dict[str, Any],
) -> None:
    del flow["states"]["scoring"]  # known to the runner, but not declared in this flow

    assert flow_problems(flow) == ["state 'validating': transition to undeclared state 'scoring'"]


def test_flow_with_a_state_that_cannot_finish_names_each_such_state(flow: dict[str, Any]) -> None:
    flow["states"]["scoring"]["transitions"] = [{"event": "fall_back", "target": "falling_back"}]
    flow["states"]["falling_back"]["transitions"] = [{"event": "validate", "target": "validating"}]
    flow["states"]["validating"]["transitions"] = [{"event": "score", "target": "scoring"}]

    problems = flow_problems(flow)

    assert sorted(problems) == [
        "state 'falling_back' can reach neither 'done' nor 'failed'",
        "state 'scoring' can reach neither 'done' nor 'failed'",
        "state 'validating' can reach neither 'done' nor 'failed'",
    ]


def test_flow_without_a_final_state_says_which_is_missing(flow: dict[str, Any]) -> None:
    del flow["states"]["failed"]
    for body in flow["states"].values():
        body["transitions"] = [t for t in body.get("transitions", []) if t["target"] != "failed"]

    assert flow_problems(flow) == ["the flow must declare the final state 'failed'"]


def test_flow_with_two_initial_states_is_not_a_valid_chart(flow: dict[str, Any]) -> None:
    flow["states"]["prompting"]["initial"] = True

    problems = flow_problems(flow)

    assert problems
    assert any("initial" in problem for problem in problems), problems


def test_flow_reports_every_problem_not_just_the_first(flow: dict[str, Any]) -> None:
    flow["states"]["archived"] = {}
    flow["states"]["received"]["transitions"].append({"event": "skip", "target": "nowhere"})

    problems = flow_problems(flow)

    assert len(problems) == 3
    assert any("unknown event 'skip'" in p for p in problems)
    assert any("undeclared state 'nowhere'" in p for p in problems)


def test_flow_without_received_as_initial_state_is_a_problem(flow: dict[str, Any]) -> None:
    del flow["states"]["received"]["initial"]

    assert flow_problems(flow) != []


ROUTE_TO = {
    "received": [], "prompting": ["prompt"], "decoding": ["prompt", "decode"],
    "validating": ["prompt", "decode", "validate"],
    "scoring": ["prompt", "decode", "validate", "score"], "falling_back": ["fall_back"],
    "accepted": ["fall_back", "accept"], "done": ["fall_back", "accept", "finish"],
    "failed": ["fail"],
}  # fmt: skip
"""Events that lead from ``received`` to each state in the default flow."""


def test_a_plain_flow_routes_every_event_as_the_chart_itself_does() -> None:
    from aau.fsm.machine import _chart_class

    for state in sorted(STATES):
        for event in sorted(EVENTS):
            table = RunMachine()
            chart = _chart_class(json.dumps(default_flow()))()
            for step in ROUTE_TO[state]:
                table.send(step)
                chart.send(step)
            allowed = any(e.id == event for e in chart.allowed_events)
            assert table.can(event) == allowed, (state, event)
            if allowed:
                chart.send(event)
                assert table.send(event) == next(iter(chart.configuration_values)), (state, event)


def test_a_flow_with_more_than_routes_keeps_the_charts_own_dispatch(
    flow: dict[str, Any],
) -> None:
    flow["states"]["received"]["transitions"][0]["cond"] = "false"  # a guard: no table
    assert flow_problems(flow) == []

    machine = RunMachine(flow)
    machine.send("prompt")

    assert machine.state == "received"  # the chart evaluated the guard and stayed
    assert RunMachine().send("prompt") == "prompting"
