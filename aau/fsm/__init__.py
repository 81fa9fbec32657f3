"""The unit-run state machine: the default chart and units' own ``flow`` charts (no work)."""

from aau.fsm.machine import EVENTS, STATES, RunMachine, default_flow, flow_problems

__all__ = ["EVENTS", "STATES", "RunMachine", "default_flow", "flow_problems"]
