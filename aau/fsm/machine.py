"""The unit-run state chart: the default lifecycle and units' own ``flow`` charts.

A flow is a python-statemachine chart in its native YAML/JSON format, compiled by
``statemachine.io`` with its restricted (non-``eval``) expression evaluator, so a unit file can
route events but cannot run code. The runner (``aau.runner``) does each state's work and sends
the event its outcome names; the chart decides where that event leads. Flows may use only the
known states and events below, and every state must be able to reach ``done`` or ``failed``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from statemachine import StateChart
from statemachine.io import load as load_chart

__all__ = [
    "EVENTS",
    "FINAL_STATES",
    "STATES",
    "RunMachine",
    "default_flow",
    "flow_problems",
]

STATES = frozenset({
    "received", "prompting", "decoding", "validating", "scoring", "falling_back", "accepted",
    "done", "failed",
})  # fmt: skip
"""State ids a flow may use: each has fixed work in the runner."""

EVENTS = frozenset(
    {"prompt", "decode", "validate", "score", "accept", "fall_back", "fail", "finish"}
)
"""Events the runner sends."""

FINAL_STATES = frozenset({"done", "failed"})


@cache
def default_flow() -> dict[str, Any]:
    """The default chain: model, then each fallback, then done or failed."""
    text = (Path(__file__).with_name("default_flow.yaml")).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def flow_problems(flow: Any) -> list[str]:
    """Everything wrong with a flow definition (empty when it is usable)."""
    if not isinstance(flow, dict) or not isinstance(flow.get("states"), dict):
        return ["a flow needs a 'states' mapping (python-statemachine's YAML statechart format)"]
    states: dict[str, Any] = flow["states"]
    for sid, body in states.items():
        if body is not None and not isinstance(body, dict):
            return [f"state {sid!r} must be a mapping, got {type(body).__name__}"]
        transitions = (body or {}).get("transitions", []) or []
        if not isinstance(transitions, list) or not all(isinstance(t, dict) for t in transitions):
            return [f"state {sid!r}: 'transitions' must be a list of mappings (event, target)"]
    initial = [sid for sid, body in states.items() if (body or {}).get("initial")]
    if initial != ["received"]:
        return ["exactly one initial state, 'received', must be marked `initial: true`"]
    problems = [
        f"unknown state {sid!r}. Available: {', '.join(sorted(STATES))}"
        for sid in states
        if sid not in STATES
    ]
    edges: dict[str, set[str]] = {sid: set() for sid in states}
    for sid, body in states.items():
        for transition in (body or {}).get("transitions", []) or []:
            event, target = transition.get("event"), transition.get("target")
            if event not in EVENTS:
                problems.append(
                    f"state {sid!r}: unknown event {event!r}. "
                    f"Available: {', '.join(sorted(EVENTS))}"
                )
            if target not in states:
                problems.append(f"state {sid!r}: transition to undeclared state {target!r}")
            else:
                edges[sid].add(target)
    for final in FINAL_STATES:
        if final not in states:
            problems.append(f"the flow must declare the final state {final!r}")
    if problems:
        return problems
    for sid in states:
        seen, todo = {sid}, [sid]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if not seen & FINAL_STATES:
            problems.append(f"state {sid!r} can reach neither 'done' nor 'failed'")
    try:
        _chart_class(json.dumps(flow))
    except Exception as exc:  # the library's own definition errors, as text
        problems.append(f"not a valid state chart: {exc}")
    return problems


@cache
def _chart_class(flow_json: str) -> type[StateChart]:
    return load_chart(flow_json, format="json", trusted=False)


_PLAIN_STATE_KEYS = frozenset({"initial", "final", "transitions"})
_PLAIN_TRANSITION_KEYS = frozenset({"event", "target"})


def _is_plain(flow: dict[str, Any]) -> bool:
    """Whether the flow only routes events (no guards, actions or nested states)."""
    for body in flow["states"].values():
        body = body or {}
        if not _PLAIN_STATE_KEYS.issuperset(body):
            return False
        for transition in body.get("transitions", []) or []:
            if not _PLAIN_TRANSITION_KEYS.issuperset(transition):
                return False
    return True


@cache
def _compiled(flow_json: str) -> tuple[type[StateChart], dict[str, dict[str, str]] | None, str]:
    """The chart class, its routes as a table (plain flows only) and its initial state.

    The table is read off the compiled chart, so the library still defines the flow; it spares
    each run the chart's dispatch (callbacks, listeners, a processing loop), a quarter of a
    millisecond per event. A flow with guards or actions keeps the chart's own dispatch.
    """
    chart = _chart_class(flow_json)
    initial = str(chart.initial_state.id)
    if not _is_plain(json.loads(flow_json)):
        return chart, None, initial
    table: dict[str, dict[str, str]] = {}
    for state in chart.states:
        routes = table.setdefault(str(state.id), {})
        for transition in state.transitions:
            for event in transition.events:
                routes.setdefault(str(event), str(transition.target.id))  # first declared wins
    return chart, table, initial


class RunMachine:
    """One unit run's state machine; remembers every state it entered."""

    def __init__(self, flow: dict[str, Any] | None = None) -> None:
        flow = flow or default_flow()
        # Key order matters: a chart without `initial: true` starts in its first state.
        chart, self._table, self._state = _compiled(json.dumps(flow))
        self._chart = chart() if self._table is None else None

    @property
    def state(self) -> str:
        """The current state id."""
        if self._chart is None:
            return self._state
        return str(next(iter(self._chart.configuration_values)))

    @property
    def is_final(self) -> bool:
        """Whether the run has ended (``done`` or ``failed``)."""
        return self.state in FINAL_STATES

    def can(self, event: str) -> bool:
        """Whether ``event`` has a transition from the current state."""
        if self._table is not None:
            return event in self._table[self._state]
        assert self._chart is not None
        return any(e.id == event for e in self._chart.allowed_events)

    def send(self, event: str) -> str:
        """Send ``event``; return the new state. ``ValueError`` if the flow has no route."""
        if not self.can(event):
            raise ValueError(f"the flow has no transition for event {event!r} from {self.state!r}")
        if self._table is not None:
            self._state = self._table[self._state][event]
        else:
            assert self._chart is not None
            self._chart.send(event)
        return self.state
