"""The unit-run state machine and the driver that does each state's work."""

from aau.fsm.machine import EVENTS, STATES, RunMachine, default_flow, flow_problems
from aau.fsm.run import UnitRunner

__all__ = ["EVENTS", "STATES", "RunMachine", "UnitRunner", "default_flow", "flow_problems"]
