"""Calibration: turning each answer path's signals into an honest probability that it is right.

A ``Calibrator`` (the seam, ``aau.calibration.base``) takes one ``PathEvidence`` per scored
answer and returns P(correct). The shipped one is an ``MlpCalibrator`` loaded with
``load_calibrator`` from the artifact ``aau calibrate`` fits: ``observe`` gathers the evidence's
signals into a ``PathObservation``, the MLP maps it to P(correct). ``report`` measures how honest
the confidences are; ``aau.calibration.training`` fits the MLP from labelled answers.
"""

from typing import TYPE_CHECKING, Any

from aau.calibration.base import OUTCOMES, Calibrator, Outcome, PathEvidence
from aau.calibration.features import (
    FEATURE_SPEC,
    FeatureSpec,
    PathObservation,
    SentenceEmbedder,
    observe,
)
from aau.calibration.report import EvaluatedAnswer, report

if TYPE_CHECKING:
    from aau.calibration.calibrator import MlpCalibrator, load_calibrator

__all__ = [
    "FEATURE_SPEC",
    "OUTCOMES",
    "Calibrator",
    "EvaluatedAnswer",
    "FeatureSpec",
    "MlpCalibrator",
    "Outcome",
    "PathEvidence",
    "PathObservation",
    "SentenceEmbedder",
    "load_calibrator",
    "observe",
    "report",
]


def __getattr__(name: str) -> Any:
    # The fitted calibrator needs torch (a second or two to import): loaded when first named,
    # so that `aau validate`, `aau schema` and runs without a calibrator never pay for it.
    if name in {"MlpCalibrator", "load_calibrator"}:
        from aau.calibration import calibrator

        return getattr(calibrator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
