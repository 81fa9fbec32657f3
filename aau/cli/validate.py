"""``aau validate``: every problem of every unit file, each on its own located line.

For each unit file: every load problem (``UnitSpec.problems_of_file``: all the schema errors, or
all the checks' problems, with "did you mean" for unknown keys), then, for a unit that loads, the
problems of the files its fallbacks read (``data_problems``) and the state of each CRF model: a
stale or corrupt model is an error (the run would go without that path), a model not trained yet
a warning (``aau new`` scaffolds units before there is anything to train on). Each line is
``error: file:line: field: message [check]``; notes follow. Exit 2 when any file has an error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from aau.errors import CalibrationError, SpecError
from aau.fallbacks.crf import CrfFallback, CrfModelError, CrfModelMissing, open_model
from aau.fallbacks.fields import unused_table_notes
from aau.spec.loader import line_of, read_yaml_file
from aau.spec.model import UnitSpec
from aau.spec.problems import every_problem

__all__ = ["crf_model_problems", "validate_units"]


def crf_model_problems(spec: UnitSpec) -> tuple[list[SpecError], list[SpecError]]:
    """The errors (stale, corrupt) and warnings (missing) of the unit's CRF models, located."""
    errors: list[SpecError] = []
    warnings: list[SpecError] = []
    lines = read_yaml_file(spec.source)[1] if spec.source is not None else {}
    for index, fallback in enumerate(spec.fallbacks):
        if not isinstance(fallback, CrfFallback):
            continue
        try:
            open_model(fallback, spec)
        except CrfModelError as exc:
            loc = ("fallbacks", index, "model")
            problem = SpecError(str(exc), file=str(spec.source or "<unit>"),
                                line=line_of(lines, loc), field=f"fallbacks[{index}].model",
                                check=exc.code)  # fmt: skip
            (warnings if isinstance(exc, CrfModelMissing) else errors).append(problem)
        except SpecError as exc:  # a model path outside the unit's folder: the load check says so
            errors.append(exc)
    return errors, warnings


def unit_calibration_problem(spec: UnitSpec) -> str | None:
    """What is wrong with the unit's own calibrator (unreadable, stale), if it has one.

    A warning, not an error: the unit still runs, scored by a calibrator that knew other texts.
    """
    from aau.calibration.unit_calibrator import (
        load_unit_calibrator,
        stale_reason,
        unit_calibration_path,
    )

    path = unit_calibration_path(spec)
    if spec.source is None or not path.is_file():
        return None
    try:
        reason = stale_reason(load_unit_calibrator(path).data, spec)
    except CalibrationError as exc:
        return str(exc)
    if reason is None:
        return None
    return (
        f"{path}: the unit calibration is stale: {reason}; run `aau calibrate --unit {spec.source}`"
    )


def _check_one(path: Path, out: TextIO, err: TextIO) -> bool:
    """Print the problems of one unit file; True when it has none."""
    try:
        spec = UnitSpec.from_file(path)
    except SpecError as exc:  # every load problem (``UnitSpec.problems_of_file``), in file order
        for problem in sorted(every_problem(exc), key=lambda p: p.line or 0):
            print(f"error: {problem}", file=err)
        return False
    errors = [p for fallback in spec.fallbacks for p in fallback.data_problems(spec)]
    model_errors, warnings = crf_model_problems(spec)
    errors += model_errors
    for problem in errors:
        print(f"error: {problem}", file=err)
    for problem in warnings:
        print(f"warning: {problem}", file=err)
    for note in (note for fallback in spec.fallbacks for note in fallback.notes(spec)):
        print(f"note: {note}", file=err)
    for note in unused_table_notes(spec):
        print(f"note: {note}", file=err)
    calibration = unit_calibration_problem(spec)
    if calibration is not None:
        print(f"warning: {calibration}", file=err)
    if not errors:
        print(f"ok: {path} ({spec.key})", file=out)
    return not errors


def validate_units(
    paths: Sequence[Path], out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Check every unit file of ``paths``; 0 when all are fine, 2 otherwise (or none found)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if not paths:
        print("no unit files found", file=err)
        return 2
    failed = sum(not _check_one(path, out, err) for path in paths)
    if len(paths) > 1:
        print(f"{len(paths) - failed} of {len(paths)} unit files ok", file=out)
    return 2 if failed else 0
