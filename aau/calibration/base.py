"""The calibrator seam: what a path's answer is judged on, and what judges it.

The runner hands a calibrator one ``PathEvidence`` per scored answer (the answer, the signals
of how it came about, the text and document it came from, the other paths' answers) and gets
back P(correct). Anything with ``confidence`` and ``embed_ms`` is a calibrator: the fitted MLP
(``aau.calibration.calibrator.MlpCalibrator``) or a test's fixed table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from aau.answers import PathAnswer
    from aau.engines.base import Generation
    from aau.ingest import Document

__all__ = ["OUTCOMES", "Calibrator", "Outcome", "PathEvidence"]

Outcome = Literal["valid", "ungrounded", "invalid"]
OUTCOMES: tuple[Outcome, ...] = ("valid", "ungrounded", "invalid")
"""Validator outcomes: schema and grammar valid (and grounded, for the model); valid but not
found in the text; or failing the schema or a field grammar."""


@dataclass(frozen=True, slots=True)
class PathEvidence:
    """Everything one path's answer is judged on.

    Attributes:
        path: the path's name (``primary``, ``crf``, ``heuristic``…).
        answer: its answer (``spans`` locate the values; ``signals`` are the path's own).
        outcome: what the validator said of it.
        text: the analysed text.
        description: the unit's description (coherence is measured against it).
        generation: the model's generation, for the primary path on an engine that reports
            token log-probabilities; None otherwise.
        document: the document ``text`` was read from (``Document.from_text`` for native
            text); None when unknown, which leaves the OCR signals missing.
        witnesses: the outputs of the other paths on the same text; none leaves agreement
            missing.
        normalizers: output field -> normalizer name, to compare with the witnesses.
    """

    path: str
    answer: PathAnswer
    outcome: Outcome
    text: str
    description: str
    generation: Generation | None = None
    document: Document | None = None
    witnesses: Sequence[Mapping[str, Any]] = ()
    normalizers: Mapping[str, str] | None = None


@runtime_checkable
class Calibrator(Protocol):
    """Turns the evidence of one path's answer into the probability that it is right."""

    def confidence(self, evidence: PathEvidence) -> float:
        """P(correct) of the answer ``evidence`` describes, in [0, 1]."""
        ...

    @property
    def logprobs_after_mask(self) -> bool:
        """Whether it was fitted on log-probabilities taken after the constraint mask.

        A server's (vLLM's) are taken after the mask, the in-process engine's before it. The
        runner gives it the generations only of engines of the same kind
        (``EngineCapabilities.logprobs_after_mask``); others are scored on their other signals.
        """
        ...

    @property
    def embed_ms(self) -> float:
        """Milliseconds spent so far in sentence-embedding forward passes (0 if it has none).

        The runner reads it around each ``confidence`` call to report ``timings.embed_ms``.
        """
        ...
