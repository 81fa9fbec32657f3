"""The seam every answer path plugs into: what a path returns, how it is called, which answer wins.

A unit run tries its paths in order (the model first, then the declared fallbacks). Each path
returns a ``PathAnswer`` in the unit's output schema, or raises an ``AAUError`` subclass whose
``code`` lands in the result. Paths never see each other; ``select`` is the one rule that picks
the answer a run delivers (the runner applies it as paths answer, the calibration report
replays it over labelled runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Candidate", "FallbackPath", "PathAnswer", "PathContext", "select"]


@dataclass(frozen=True, slots=True)
class PathAnswer:
    """One path's answer, already shaped like the unit's output schema.

    Attributes:
        output: the JSON object, valid against the unit's output schema.
        confidence: the path's own (uncalibrated) confidence in [0, 1].
        spans: output field -> (start, end) character offsets in the analysed text.
        signals: numeric features for the calibrator (entropy, marginals, rule strength…).
    """

    output: dict[str, Any]
    confidence: float
    spans: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    signals: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PathContext:
    """What a fallback path may know about the run besides the text.

    Attributes:
        unit_name: the unit's name, for messages.
        output_schema: the unit's output JSON Schema.
        extras: read-only facts from earlier stages (term hits, OCR quality…).
    """

    unit_name: str
    output_schema: Mapping[str, Any]
    extras: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class FallbackPath(Protocol):
    """A non-LLM path (CRF, heuristic…) that answers in the unit's schema."""

    name: str
    """The path name recorded in results, e.g. ``heuristic``."""

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Answer from ``text``; raise an ``AAUError`` subclass when it cannot."""
        ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """One path's answer as selection sees it.

    Attributes:
        path: the path's name.
        confidence: its calibrated confidence.
        is_valid: whether it passed the checks (only valid answers can be delivered).
    """

    path: str
    confidence: float
    is_valid: bool = True


def select(
    candidates: Sequence[Candidate], threshold: float, *, is_complete: bool = True
) -> int | None:
    """Index of the answer a run delivers, from its paths in the order they are tried.

    The first valid answer whose confidence reaches ``threshold`` is accepted (the paths after
    it need not run); when none does, the most confident valid answer (the earlier one on a
    tie); None when no path gave a valid answer. With ``is_complete=False`` (paths remain to be
    tried), only an answer reaching the threshold is chosen: otherwise None, and the run goes on.
    """
    valid = [i for i, c in enumerate(candidates) if c.is_valid]
    for index in valid:
        if candidates[index].confidence >= threshold:
            return index
    if not valid or not is_complete:
        return None
    return max(valid, key=lambda i: (candidates[i].confidence, -i))
