"""Fitting the calibrator from the framework's own runs: the work behind ``aau calibrate``.

This package sits above the unit runner: ``runs`` runs every answer path of the shipped units on
their labelled texts (through ``aau.runner``) and caches the labelled runs; ``calibrate`` loads
them, fits and measures the calibrator with ``aau.calibration.training`` and writes its artifact,
one per engine kind (``EngineKind``: the in-process engine's, or a server's with ``--engine``).
Data and settings stay outside the package, in a folder given by argument (a checkout's
``calibration/``: ``config.yaml``, ``runs/``).
"""

from aau.fitting.calibrate import MissingCalibrationInput, calibrate
from aau.fitting.runs import (
    EngineKind,
    build_runs,
    engine_kind,
    is_correct,
    load_config,
    load_runs,
)

__all__ = [
    "EngineKind",
    "MissingCalibrationInput",
    "build_runs",
    "calibrate",
    "engine_kind",
    "is_correct",
    "load_config",
    "load_runs",
]
