"""The runner: the work behind each state of a unit run, and the one selection rule."""

from aau.runner.runner import UnitRunner, primary_confidence

__all__ = ["UnitRunner", "primary_confidence"]
