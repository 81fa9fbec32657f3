"""``aau calibrate`` from any folder: paths from its options, and what it needs when they miss.

The fitting code is part of the package (``aau.calibration.training`` below the runner,
``aau.fitting`` above it); the top-level ``calibration/`` folder holds only data and settings.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
import shutil
from pathlib import Path

import pytest
import yaml

from aau.calibration.calibrator import load_calibrator
from aau.calibration.training import HEADLINE
from aau.cli.main import main
from aau.fitting.runs import (
    RUNS_FORMAT,
    EngineKind,
    load_config,
    load_unit,
    runs_fingerprint,
    runs_folder,
)
from aau.spec.model import UnitSpec
from tests.conftest import REPO, UNIT_FILES, UNITS_DIR
from tests.fitting.conftest import small_settings

PACKAGE = REPO / "aau"
SHIPPED_DATA = REPO / "calibration"
CALIBRATION_MAY_IMPORT = {"errors", "files", "results", "answers", "registry", "spec", "decoding",
                          "grammars", "ingest", "terms", "engines", "fallbacks",
                          "calibration", "values"}  # fmt: skip


def calibrate(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["calibrate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- what it needs, and where it looked ----------------------------------------------------------


def test_a_data_folder_without_config_says_what_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = calibrate("--data", str(empty), capsys=capsys)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        "error: aau calibrate needs config.yaml, the settings of the labelled runs and of the "
        "fitting, in its data folder (beside runs/, the cached labelled runs)",
        f"  looked for: {empty.resolve() / 'config.yaml'} (--data: no config.yaml in it)",
        "  pass --data DIR, the folder holding config.yaml and runs/",
    ]


def test_without_data_it_names_the_default_it_tried(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = calibrate(capsys=capsys)
    assert code == 2
    config = elsewhere.resolve() / "calibration" / "config.yaml"
    assert f"  looked for: {config} (the default --data, ./calibration: no such folder)\n" in err


def data_folder(root: Path, *, runs: bool) -> Path:
    """A copy of the shipped settings, with or without the cached runs."""
    data = root / "data"
    data.mkdir()
    shutil.copy(SHIPPED_DATA / "config.yaml", data / "config.yaml")
    if runs:
        shutil.copytree(SHIPPED_DATA / "runs", data / "runs")
    return data


def test_no_runs_and_no_units_to_build_them_from(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = data_folder(tmp_path, runs=False)
    code, _, err = calibrate("--data", str(data), capsys=capsys)
    assert code == 2
    names = load_config(data / "config.yaml")["runs"]["units"]
    lines = err.splitlines()
    assert lines[0].startswith(
        f"error: aau calibrate needs the unit files of the units in {data / 'config.yaml'}: "
        f"{', '.join(f'{n}.yaml' for n in names)}, with the annotated data they name"
    )
    uncached = ", ".join(f"{n}.jsonl.gz" for n in names)
    assert lines[1:] == [
        f"  labelled runs: not cached in {data / 'runs'} (no {uncached}), and there are no unit "
        "files to build them from",
        # both default places, each with why it did not do
        f"  looked in (./units, then the units folder beside --data): {elsewhere / 'units'} "
        f"(no such folder); {tmp_path / 'units'} (no such folder)",
        "  pass --units DIR, the folder holding the unit files",
    ]


def test_cached_runs_without_units_cannot_be_checked(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = data_folder(tmp_path, runs=True)
    units = tmp_path / "some_units"
    units.mkdir()
    shutil.copy(UNITS_DIR / "extract_price.yaml", units)
    code, _, err = calibrate("--data", str(data), "--units", str(units), capsys=capsys)
    assert code == 2
    assert (
        f"  labelled runs: cached in {data / 'runs'}, but without the unit files they cannot be "
        "checked against them\n"
        f"  looked in (--units): {units} (no extract_date.yaml, extract_quantity.yaml)\n" in err
    )


def test_a_unit_without_its_annotated_data_is_refused(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = data_folder(tmp_path, runs=True)
    units = tmp_path / "units"  # beside the data folder: found without --units
    units.mkdir()
    for path in UNIT_FILES:
        shutil.copy(path, units)
    code, _, err = calibrate("--data", str(data), capsys=capsys)
    assert code == 2
    assert "annotated" in err
    assert str(units) in err
    assert "Traceback" not in err


def test_the_root_option_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["calibrate", "--root", "."])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --root" in capsys.readouterr().err


# -- a whole run on a small synthetic set -------------------------------------------------------


def synthetic_data(root: Path, texts: int = 60, engine: EngineKind | None = None) -> Path:
    """Settings and current cached runs of ``extract_quantity``, with made-up path answers.

    ``engine``: the engine the runs pass for (in its folder, with its fingerprint); None: the
    default engine.
    """
    data = root / "synthetic"
    runs = runs_folder(data / "runs", engine)
    runs.mkdir(parents=True)
    settings = small_settings(version=7, chunk=4, epochs=30, patience=10)
    (data / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    config = load_config(data / "config.yaml")
    rng = random.Random(5)
    records = []
    for i in range(texts):
        rows = []
        for path in ("primary", "crf", "heuristic"):
            confidence = round(rng.random(), 4)
            rows.append({"path": path, "outcome": "valid", "output": {"value": i, "unit": "box"},
                         "confidence": confidence, "signals": {"confidence": confidence},
                         "correct": rng.random() < confidence**2, "spans": {}})  # fmt: skip
        records.append({"unit": "extract_quantity", "key": f"text{i}", "variant": "clean",
                        "noise": None, "fold": i % 2, "text": f"{i} boxes", "gold": {},
                        "cases": [], "rows": rows, "errors": {}})  # fmt: skip
    unit = load_unit(UNITS_DIR, "extract_quantity")
    header = {"format": RUNS_FORMAT, "unit": unit.key,
              "fingerprint": runs_fingerprint(unit, config, engine)}  # fmt: skip
    with gzip.open(runs / "extract_quantity.jsonl.gz", "wt", encoding="utf-8") as out:
        for line in (header, *records):
            out.write(json.dumps(line) + "\n")
    return data


@pytest.mark.usefixtures("torch_threads")
def test_a_run_writes_the_artifact_and_its_report_beside_out(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path)
    out = tmp_path / "artifacts" / "mine.pt"
    code, printed, err = calibrate("--data", str(data), "--units", str(UNITS_DIR), "--out",
                                   str(out), "--report", "--json", capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert "extract_quantity: cached runs are current" in err
    lines = printed.splitlines()
    assert lines[0].startswith("policy.threshold by 2-fold cross-validation")
    assert lines[-2].startswith("calibrator v7 fitted on")
    assert f"-> {out}; validation" in lines[-2]
    assert list(json.loads(lines[-1])) == list(HEADLINE)
    assert load_calibrator(out).version == "7"
    summary = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert summary["metadata"]["units"] == ["extract_quantity"]
    shipped = UnitSpec.from_file(UNITS_DIR / "extract_quantity.yaml").policy.threshold
    assert summary["metadata"]["thresholds"] == {"extract_quantity": shipped}
    written = re.search(r"^reliability diagram: (.+)$", printed, re.MULTILINE)
    if written:  # matplotlib installed
        assert Path(written.group(1)) == out.with_name("reliability.png")
        assert out.with_name("reliability.png").is_file()
    assert sorted(p.name for p in data.iterdir()) == ["config.yaml", "runs"]  # data untouched


@pytest.mark.usefixtures("torch_threads")
def test_out_defaults_to_the_data_folder(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path)
    code, printed, err = calibrate("--data", str(data), "--units", str(UNITS_DIR), capsys=capsys)
    assert code == 0, err
    assert (data / "calibrator.pt").is_file()
    assert (data / "calibrator.json").is_file()
    assert not (data / "reliability.png").exists()  # only with --report
    assert "calibration report" not in printed


# -- the package stands alone -------------------------------------------------------------------


def sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "_generated" not in p.parts)


def test_no_module_of_the_package_edits_sys_path() -> None:
    offenders = []
    for path in sources(PACKAGE):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "path"
                    and isinstance(node.value, ast.Name) and node.value.id == "sys"):  # fmt: skip
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute imports; relative ones are not used here)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_the_package_never_imports_the_checkouts_calibration_folder() -> None:
    offenders = {str(p.relative_to(REPO)): sorted(n for n in imported(p)
                                                  if n.split(".")[0] == "calibration")
                 for p in sources(PACKAGE)}  # fmt: skip
    assert {k: v for k, v in offenders.items() if v} == {}
    assert sorted(p.name for p in SHIPPED_DATA.glob("*.py")) == []  # data and settings only


def test_calibration_stays_below_the_runner_and_fitting_above_it() -> None:
    low = {str(p.relative_to(REPO)): sorted(n for n in imported(p) if n.startswith("aau.")
                                            and n.split(".")[1] not in CALIBRATION_MAY_IMPORT)
           for p in sources(PACKAGE / "calibration")}  # fmt: skip
    assert {k: v for k, v in low.items() if v} == {}
    high = {str(p.relative_to(REPO)): sorted(n for n in imported(p) if n.startswith("aau.cli"))
            for p in sources(PACKAGE / "fitting")}  # fmt: skip
    assert {k: v for k, v in high.items() if v} == {}
