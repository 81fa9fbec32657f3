"""Calibration: turning each answer path's signals into an honest probability that it is right.

``observe`` gathers a path's signals into a ``PathObservation``; a ``Calibrator`` (loaded with
``load_calibrator`` from the artifact ``aau calibrate`` fits) maps it to P(correct); ``select``
picks the answer a run delivers from its paths' calibrated confidences; ``report`` measures how
honest the confidences are. Training lives in the top-level ``calibration/`` folder.
"""

from aau.calibration.calibrator import Calibrator, load_calibrator
from aau.calibration.features import (
    FEATURE_SPEC,
    FeatureSpec,
    PathObservation,
    SentenceEmbedder,
    observe,
)
from aau.calibration.report import EvaluatedAnswer, report

__all__ = [
    "FEATURE_SPEC",
    "Calibrator",
    "EvaluatedAnswer",
    "FeatureSpec",
    "PathObservation",
    "SentenceEmbedder",
    "load_calibrator",
    "observe",
    "report",
]
