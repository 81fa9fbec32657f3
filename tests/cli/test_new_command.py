"""``aau new``: each kind scaffolds a unit with its files, and the scaffold validates at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from aau.cli.main import main
from aau.cli.new import KINDS
from aau.fitting.golden import load_cases
from aau.spec.model import UnitSpec

DATA_FILES = {
    "extract": ["annotated.jsonl"],
    "classify": ["labelled.jsonl"],
    "records": ["annotated.jsonl"],
    "derived": [],
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_scaffolds_a_unit_that_validates(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"new_{kind}"

    assert main(["new", name, "--kind", kind, "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr()

    unit = tmp_path / f"{name}.yaml"
    for suffix in ["yaml", "golden.yaml", *DATA_FILES[kind]]:
        assert (tmp_path / f"{name}.{suffix}").is_file(), suffix
    assert f"ok: {unit} ({name}@1)" in out.out
    assert "error:" not in out.err
    spec = UnitSpec.from_file(unit)
    assert spec.kind == kind
    assert "{name}" not in unit.read_text(encoding="utf-8")
    assert "TODO" in unit.read_text(encoding="utf-8"), "it says what to fill in"
    assert load_cases(spec), "placeholder golden cases that load"


def test_new_refuses_to_overwrite_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = tmp_path / "notice_period.golden.yaml"
    golden.write_text("cases: []\n", encoding="utf-8")

    assert main(["new", "notice_period", "--dir", str(tmp_path)]) == 2

    assert "refusing to overwrite" in capsys.readouterr().err
    assert not (tmp_path / "notice_period.yaml").exists()
    assert golden.read_text(encoding="utf-8") == "cases: []\n"


def test_new_refuses_a_name_no_unit_may_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", "../escape", "--dir", str(tmp_path)]) == 2

    assert "is not a unit name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
