"""Composition of units into pipelines, and their results."""

from aau.pipeline.pipeline import Pipeline, load_unit, run
from aau.pipeline.results import PipelineResult
from aau.results import Attempt, TraceStep, UnitError, UnitResult

__all__ = [
    "Attempt",
    "Pipeline",
    "PipelineResult",
    "TraceStep",
    "UnitError",
    "UnitResult",
    "load_unit",
    "run",
]
