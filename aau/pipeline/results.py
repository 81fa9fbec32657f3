"""A pipeline's result: every unit's result for one input, and the terms found in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aau.results import UnitResult

if TYPE_CHECKING:
    from aau.terms import TermHit

__all__ = ["PipelineResult"]


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """Every unit's result for one input, keyed by unit name."""

    id: str | int | None
    """The input's id as given (batch lines keep their JSON type)."""
    units: dict[str, UnitResult]
    terms: Sequence[TermHit] = ()
    """The tenant's dictionary terms found in the input (for routing and audit); not part of
    the batch line."""
    graph: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The DAG the units ran as, each unit -> the units it needs, when any unit needs another
    (empty otherwise); the batch line carries it as ``graph``."""

    route: Mapping[str, Any] | None = None
    """When the pipeline routes: the units that applied and each unit's probability
    (``{"applies": [...], "probabilities": {unit: p}, "threshold": t}``); the units that did
    not apply did not run. The batch line carries it as ``route``."""

    def __getitem__(self, name: str) -> UnitResult:
        return self.units[name]

    def to_dict(self) -> dict[str, Any]:
        """The batch line format: ``{"id", "units": {name: result}}``, ``graph``, ``route``."""
        data: dict[str, Any] = {
            "id": self.id,
            "units": {k: v.to_dict() for k, v in self.units.items()},
        }
        if self.graph:
            data["graph"] = {name: list(needs) for name, needs in self.graph.items()}
        if self.route is not None:
            data["route"] = dict(self.route)
        return data
