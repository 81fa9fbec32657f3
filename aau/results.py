"""Unit results: the contract every unit run ends with, whatever happened.

``output`` (valid against the unit's schema, or null), ``confidence`` in [0, 1], ``path`` that
produced it, ``error`` (null or ``{code, message}``), ``timings`` in ms, ``trace`` of FSM states,
plus ``attempts`` (one per path tried, with its confidence or error), ``spans`` (where each
output field came from in the text), ``sources`` (the same on the document's pages, with OCR
quality) and ``tokens``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["TIMINGS", "Attempt", "Source", "TraceStep", "UnitError", "UnitResult", "zero_timings"]


@dataclass(frozen=True, slots=True)
class UnitError:
    """A stable code and a message that says what and where."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One state the run entered."""

    state: str
    path: str | None
    at_ms: float
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One path tried: its confidence when it answered, its error when not.

    ``output`` is what the path answered, even when it was not delivered: the model's answer
    beside the fallback's that won, or an answer the schema, a grammar or grounding refused
    (then with its ``error``). None when the path gave no answer (an engine error, text that is
    not JSON, a path that found nothing to read).
    """

    path: str
    confidence: float | None = None
    error: UnitError | None = None
    output: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """Where an output field came from in a document: offsets, page, box and OCR quality."""

    start: int
    end: int
    page: int | None
    bbox: tuple[float, float, float, float] | None
    ocr_quality: float


TIMINGS = (
    "ready_ms", "queue_ms", "prefill_ms", "decode_ms", "model_ms", "embed_ms", "total_ms",
)  # fmt: skip
"""The keys of every ``UnitResult.timings``, in order."""


def zero_timings() -> dict[str, float]:
    """Timings of a run that did no work (every key, all 0.0)."""
    return dict.fromkeys(TIMINGS, 0.0)


@dataclass(frozen=True, slots=True)
class UnitResult:
    """The result of one unit over one input."""

    unit: str
    version: str
    output: dict[str, Any] | None
    confidence: float
    path: str | None
    error: UnitError | None
    # ms: ready (waiting for the engine to load or become healthy: not charged to the run's
    # timeout), queue, prefill, decode, total; model (the LLM's forward passes) and embed (the
    # calibrator's sentence-embedding forward passes); the rest of total is the framework's.
    timings: dict[str, float]
    trace: tuple[TraceStep, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    """Per output field, where it is in the document (set when the input is a ``Document``)."""
    engine: str | None = None
    """The engine of the model path's last try (of the unit's ``engines`` chain), if it ran."""

    @property
    def states(self) -> list[str]:
        """The state ids of the trace, in order."""
        return [step.state for step in self.trace]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the batch output's per-unit value)."""
        data = asdict(self)
        data["spans"] = {k: list(v) for k, v in self.spans.items()}
        return data
