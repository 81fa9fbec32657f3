"""``aau calibrate``: from the labelled runs to the fitted calibrator, its report and thresholds.

``calibrate`` reads the settings (``config.yaml`` of the data folder), builds and caches the
labelled runs that are missing or stale (``aau.fitting.runs``), splits the texts
deterministically into training and validation texts, chooses the thresholds by cross-validation
on the training texts, fits the calibrator on them (``aau.calibration.training``) and measures
it on the validation texts. It writes the artifact, a readable summary beside it
(``calibrator.json``) and, with ``report=True``, the full report and the reliability diagram
(``reliability.png``, beside the artifact too).

Every path comes from the arguments: the data folder (``config.yaml`` and ``runs/``), the folder
of the unit files (their thresholds, their normalizers and, to check or build the runs, their
annotated data) and the artifact. When one of them is missing, ``MissingCalibrationInput`` says
what is needed and where it was looked for.

The calibrator is fitted per engine kind (``engine``, ``aau calibrate --engine``): by default the
in-process engine with the embedded model, whose runs are ``runs/`` and whose artifact is
``calibrator.pt``; with another engine the runs are made with it and cached in
``runs/<engine>/``, and the artifact is ``calibrator-<engine>.pt`` (its summary and
``reliability-<engine>.png`` beside it). ``metadata["engine"]`` records the engine's name, the
kind of its log-probabilities (``logprobs_after_mask``) and its served model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json as jsonlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aau.calibration.calibrator import artifact_name
from aau.calibration.report import report as print_report
from aau.calibration.report import summarize
from aau.calibration.training import (
    HEADLINE,
    ThresholdSettings,
    TrainingSettings,
    choose_thresholds,
    evaluate,
    fit_calibrator,
    labelled_answers,
    print_thresholds,
    split_texts,
    unit_normalizers,
    write_summary,
)
from aau.engines.registry import EngineConfig
from aau.errors import CalibrationError
from aau.fallbacks.crf_training import crf_spec_of
from aau.fitting.runs import (
    EngineKind,
    build_runs,
    engine_kind,
    load_config,
    load_runs,
    load_unit,
    runs_folder,
    runs_path,
)

__all__ = [
    "ARTIFACT_NAME",
    "CONFIG_NAME",
    "DEFAULT_DATA",
    "DEFAULT_UNITS",
    "MissingCalibrationInput",
    "calibrate",
    "find_units",
    "report_png_name",
    "unit_thresholds",
]

DEFAULT_DATA = Path("calibration")  # relative to the working directory
DEFAULT_UNITS = Path("units")  # relative to the working directory
CONFIG_NAME = "config.yaml"
ARTIFACT_NAME = artifact_name()  # the default engine's: calibrator.pt
REPORT_PNG_NAME = "reliability.png"


def report_png_name(engine: EngineKind) -> str:
    """The reliability diagram's file name for ``engine``.

    ``reliability.png``; ``reliability-<engine>.png`` for an engine other than the in-process
    one, so that it never replaces the default's.
    """
    return REPORT_PNG_NAME if engine.in_process else f"reliability-{engine.name}.png"


class MissingCalibrationInput(CalibrationError):
    """Something ``aau calibrate`` needs is not where it looked; the message says what and where."""

    code = "calibration_input_missing"


def _data_folder(data: Path | None) -> Path:
    """The data folder, resolved; refused unless it holds ``config.yaml``."""
    folder = (data if data is not None else DEFAULT_DATA).resolve()
    config = folder / CONFIG_NAME
    if config.is_file():
        return folder
    given = "--data" if data is not None else "the default --data, ./calibration"
    why = "no such folder" if not folder.is_dir() else f"no {CONFIG_NAME} in it"
    raise MissingCalibrationInput(
        f"aau calibrate needs {CONFIG_NAME}, the settings of the labelled runs and of the "
        "fitting, in its data folder (beside runs/, the cached labelled runs)\n"
        f"  looked for: {config} ({given}: {why})\n"
        f"  pass --data DIR, the folder holding {CONFIG_NAME} and runs/"
    )


def _unit_names(config: Any, path: Path) -> list[str]:
    """``runs.units`` of the settings, checked to be a list of names."""
    runs = config.get("runs") if isinstance(config, Mapping) else None
    names = runs.get("units") if isinstance(runs, Mapping) else None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise MissingCalibrationInput(
            f"aau calibrate needs `runs: units: [<unit name>, ...]` in {path}, the units to "
            f"calibrate; found {names!r}"
        )
    return names


def find_units(units: Path | None, data: Path, names: Sequence[str]) -> Path | None:
    """The folder holding every ``<name>.yaml``, or None.

    Args:
        units: the folder given (``--units``); None tries ``./units``, then the ``units``
            folder beside the data folder (a source checkout's layout).
        data: the data folder.
        names: the units' names.

    Returns:
        The first candidate folder that holds every unit file, resolved.
    """
    for folder in _candidates(units, data):
        if all((folder / f"{n}.yaml").is_file() for n in names):
            return folder
    return None


def _candidates(units: Path | None, data: Path) -> list[Path]:
    if units is not None:
        return [units.resolve()]
    folders = [DEFAULT_UNITS.resolve(), (data / ".." / "units").resolve()]
    return list(dict.fromkeys(folders))


def _missing_units(
    units: Path | None, data: Path, names: Sequence[str], runs: Path, config_path: Path
) -> MissingCalibrationInput:
    """The error saying which unit files were looked for where, and what the runs lack."""
    looked = []
    for folder in _candidates(units, data):
        if not folder.is_dir():
            looked.append(f"{folder} (no such folder)")
        else:
            absent = [f"{n}.yaml" for n in names if not (folder / f"{n}.yaml").is_file()]
            looked.append(f"{folder} (no {', '.join(absent)})")
    cached = [n for n in names if runs_path(n, runs).is_file()]
    if len(cached) == len(names):
        about_runs = (
            f"cached in {runs}, but without the unit files they cannot be checked against them"
        )
    else:
        uncached = ", ".join(runs_path(n, runs).name for n in names if n not in cached)
        about_runs = (
            f"not cached in {runs} (no {uncached}), and there are no unit files to build them from"
        )
    where = "--units" if units is not None else "./units, then the units folder beside --data"
    return MissingCalibrationInput(
        f"aau calibrate needs the unit files of the units in {config_path}: "
        f"{', '.join(f'{n}.yaml' for n in names)}, with the annotated data they name (it reads "
        "their policy.threshold and normalizers, and checks or builds the labelled runs from "
        "them)\n"
        f"  labelled runs: {about_runs}\n"
        f"  looked in ({where}): {'; '.join(looked)}\n"
        "  pass --units DIR, the folder holding the unit files"
    )


def _check_data_of_units(units: Path, names: Iterable[str]) -> None:
    """Refuse units whose annotated data (the runs' texts and gold outputs) is missing."""
    absent = []
    for name in names:
        unit = load_unit(units, name)
        examples = crf_spec_of(unit).examples_path(unit)
        if not examples.is_file():
            absent.append(f"{examples} (the annotated data of {name}, from {unit.source})")
    if absent:
        raise MissingCalibrationInput(
            "aau calibrate needs the annotated data of each unit, to check the cached labelled "
            "runs against it or to build them\n  not found: " + "; ".join(absent)
        )


def unit_thresholds(units: Path, names: Iterable[str]) -> dict[str, float]:
    """Unit name -> the ``policy.threshold`` its file declares.

    Args:
        units: the folder of the unit files.
        names: the units' names, in the order wanted.
    """
    return {n: load_unit(units, n).policy.threshold for n in names}


def calibrate(
    data: Path | None = None,
    *,
    units: Path | None = None,
    out: Path | None = None,
    report: bool = False,
    json: bool = False,
    rebuild: bool = False,
    engine: EngineConfig | None = None,
    print_fn: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fit the calibrator from the labelled runs and measure it on the validation texts.

    First the thresholds are chosen by cross-validation on the training texts and printed
    (``choose_thresholds``); the units' files are not rewritten, so a unit whose
    ``policy.threshold`` differs from the choice gets a warning. Selection on the validation
    texts uses the units' own thresholds.

    Args:
        data: the folder holding ``config.yaml`` and the cached runs ``runs/``; default
            ``./calibration``.
        units: the folder of the unit files and their annotated data; default ``./units``,
            else the ``units`` folder beside ``data``.
        out: where the fitted calibrator is written; default ``<data>/calibrator.pt``
            (``<data>/calibrator-<engine>.pt`` for another engine than the in-process one). Its
            summary (``.json``) and, with ``report``, ``reliability.png`` (or
            ``reliability-<engine>.png``) go beside it.
        report: print the full report and write the reliability diagram.
        json: end the output with one JSON line of the headline figures.
        rebuild: run every path on every labelled text again, even when the cache is current.
        engine: the engine the model path's runs are made with; None: the in-process engine
            with the embedded model. Another engine's runs are cached in ``<data>/runs/<engine>``.
        print_fn: where lines go.

    Returns:
        The validation figures (see ``aau.calibration.report.report``).

    Raises:
        MissingCalibrationInput: the settings, the unit files or their annotated data are not
            where they were looked for.
        EngineUnavailable: the engine cannot be built, or its server did not answer when asked
            for its served model (pass it to need no server while the runs are cached).
    """
    folder = _data_folder(data)
    config_path = folder / CONFIG_NAME
    config = load_config(config_path)
    names = _unit_names(config, config_path)
    # Where the runs are depends on the engine's name only; what it is, on the engine built.
    runs = runs_folder(folder / "runs", EngineKind(engine or EngineConfig()))
    unit_folder = find_units(units, folder, names)
    if unit_folder is None:
        raise _missing_units(units, folder, names, runs, config_path)
    _check_data_of_units(unit_folder, names)
    kind = engine_kind(engine)
    artifact = (out if out is not None else folder / artifact_name(kind.name)).resolve()
    artifact.parent.mkdir(parents=True, exist_ok=True)
    png = artifact.with_name(report_png_name(kind))

    # keeps cached runs that are current
    build_runs(config, runs, unit_folder, force=rebuild, engine=kind)
    began = time.perf_counter()
    records = load_runs(config, runs, unit_folder, engine=kind)
    answers = labelled_answers(records, unit_normalizers(unit_folder, names))
    validation = validation_keys(records, config["split"])
    train = [a for a in answers if a.key not in validation]
    held = [a for a in answers if a.key in validation]
    settings = TrainingSettings.from_mapping(config["training"])
    threshold_settings = ThresholdSettings.from_mapping(config.get("threshold", {}))
    choices = choose_thresholds(train, settings, threshold_settings)
    thresholds = unit_thresholds(unit_folder, names)
    print_thresholds(choices, thresholds, threshold_settings, print_fn)
    fingerprint = hashlib.sha256(
        "".join(sorted(f"{a.text}{a.observation.path}" for a in answers)).encode()
    ).hexdigest()
    calibrator = fit_calibrator(
        [a.observation for a in train], [a.is_correct for a in train], [a.text for a in train],
        settings, version=str(config.get("version", 1)),
        metadata={"units": list(names), "engine": kind.metadata(), "data_sha256": fingerprint,
                  "train_texts": len({a.key for a in train}),
                  "validation_texts": len(validation),
                  "threshold_cross_validation": {
                      "settings": dataclasses.asdict(threshold_settings),
                      "choices": {k: c.to_dict() for k, c in choices.items()}},
                  "thresholds": thresholds},
    )  # fmt: skip
    evaluated = evaluate(calibrator, held)
    # The JSON line must close the output, after the summary line below, so it is printed here.
    figures = print_report(
        evaluated, thresholds, png=png if report else None, json=False,
        print_fn=print_fn if report else (lambda _: None),
    )  # fmt: skip
    calibrator.metadata["validation"] = figures
    calibrator.save(artifact, hidden=settings.hidden)
    write_summary(artifact.with_suffix(".json"), calibrator, figures)
    overall = summarize(evaluated, thresholds)
    print_fn(
        f"calibrator v{calibrator.version} fitted on {len(train)} answers "
        f"({len({a.key for a in train})} texts) in {time.perf_counter() - began:.1f} s -> "
        f"{_shown(artifact)}; validation ({overall.texts} texts): ECE {overall.ece:.3f} "
        f"(raw {overall.ece_raw:.3f}), Brier {overall.brier:.3f}, selection accuracy "
        f"{overall.selection_accuracy:.3f} (best single path {overall.best_single_path[1]:.3f})"
    )
    if json:
        print_fn(jsonlib.dumps({k: figures[k] for k in HEADLINE}))
    return figures


def validation_keys(records: Sequence[Mapping[str, Any]], split: Mapping[str, Any]) -> set[str]:
    """The texts held out for validation: by text, and external texts by whole source group.

    An external text (a record with a ``group``: its language and spec file) is held out with
    every other text of its group, so the validation figures are on sources and languages the
    calibrator never saw; the unit's own texts are held out one by one (a scan with its text).
    """
    group_of = {r["key"]: r.get("group") or r["key"] for r in records}
    held = split_texts(sorted(set(group_of.values())), seed=split["seed"],
                       share=split["validation_share"])  # fmt: skip
    return {key for key, group in group_of.items() if group in held}


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
