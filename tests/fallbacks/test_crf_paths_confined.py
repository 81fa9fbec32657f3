"""A CRF declaration's files stay inside the unit's folder (or ``AAU_UNITS_ROOT``).

``examples``, ``model`` and the record beside it are resolved with their links; an absolute
path, a ``..`` or a link out of the folder is refused at load (S061, located), and every path
accessor refuses it too, so ``aau train`` on a unit built without the check cannot write out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import aau.fallbacks.crf  # noqa: F401  # registers the "crf" kind
from aau.errors import SpecError
from aau.fallbacks.crf import UNITS_ROOT_ENV, CrfFallback, open_model
from aau.fallbacks.crf_training import crf_spec_of, train_unit
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec

UNITS = Path(__file__).resolve().parents[2] / "units"


def write_unit(folder: Path, **changes: str) -> Path:
    """extract_price in ``folder`` with copies of its files, its CRF block changed."""
    folder.mkdir(parents=True, exist_ok=True)
    data, _ = read_yaml((UNITS / "extract_price.yaml").read_text(encoding="utf-8"))
    block = data["fallbacks"][0]
    assert block["kind"] == "crf"
    for name in ("extract_price.annotated.jsonl", "extract_price.crf", "extract_price.crf.json"):
        shutil.copyfile(UNITS / name, folder / name)
    block.update(changes)
    path = folder / "extract_price.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def load_error(path: Path) -> SpecError:
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(path)
    return caught.value


def line_with(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("model", "../victim/target.txt", "outside the unit's folder"),
        ("model", "/etc/passwd", "is an absolute path"),
        ("examples", "/etc/passwd", "is an absolute path"),
        ("examples", "/dev/zero", "is an absolute path"),
        ("examples", "../outside/secret.annotated.jsonl", "outside the unit's folder"),
        ("examples", "sub/../../escape.jsonl", "outside the unit's folder"),
    ],
)
def test_paths_out_of_the_folder_are_refused_at_load(
    tmp_path: Path, field: str, value: str, words: str
) -> None:
    path = write_unit(tmp_path / "unit", **{field: value})
    error = load_error(path)
    assert (error.spec_code, error.field) == ("S061", f"fallbacks[0].{field}")
    assert words in error.message
    assert error.line == line_with(path, f"{field}: {value}")


def test_a_link_inside_the_folder_that_points_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copyfile(UNITS / "extract_price.annotated.jsonl", outside / "secret.jsonl")
    path = write_unit(tmp_path / "unit", examples="examples.jsonl")
    (path.parent / "examples.jsonl").symlink_to(outside / "secret.jsonl")
    error = load_error(path)
    assert error.spec_code == "S061"
    assert str((outside / "secret.jsonl").resolve()) in error.message


def test_a_model_record_linked_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text("{}", encoding="utf-8")
    path = write_unit(tmp_path / "unit")
    record = path.parent / "extract_price.crf.json"
    record.unlink()
    record.symlink_to(victim)
    error = load_error(path)
    assert (error.spec_code, error.field) == ("S061", "fallbacks[0].model")


def test_paths_that_stay_inside_load(tmp_path: Path) -> None:
    folder = tmp_path / "unit"
    path = write_unit(folder, examples="sub/../extract_price.annotated.jsonl")
    (folder / "sub").mkdir()
    unit = UnitSpec.from_file(path)
    spec = crf_spec_of(unit)
    assert (
        spec.examples_path(unit).resolve() == (folder / "extract_price.annotated.jsonl").resolve()
    )


def test_units_root_widens_the_allowed_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "root" / "shared"
    shared.mkdir(parents=True)
    shutil.copyfile(UNITS / "extract_price.annotated.jsonl", shared / "prices.jsonl")
    path = write_unit(tmp_path / "root" / "unit", examples="../shared/prices.jsonl")
    monkeypatch.delenv(UNITS_ROOT_ENV, raising=False)
    assert load_error(path).spec_code == "S061"
    monkeypatch.setenv(UNITS_ROOT_ENV, str(tmp_path / "root"))
    UnitSpec.from_file(path)  # inside the root: allowed
    escape = write_unit(tmp_path / "root" / "other", examples="../../elsewhere.jsonl")
    assert "AAU_UNITS_ROOT" in load_error(escape).message


def test_training_a_unit_built_without_the_check_cannot_write_outside(tmp_path: Path) -> None:
    folder = tmp_path / "unit"
    victim = tmp_path / "victim" / "target.txt"
    victim.parent.mkdir()
    victim.write_text("precious", encoding="utf-8")
    unit = UnitSpec.from_file(write_unit(folder))
    spec = crf_spec_of(unit)
    escaping = spec.model_copy(update={"model": "../victim/target.txt"})  # no validation
    bad = unit.model_copy(update={"fallbacks": [escaping, *unit.fallbacks[1:]]})
    with pytest.raises(SpecError) as caught:
        train_unit(bad)
    assert caught.value.spec_code == "S061"
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not list(victim.parent.glob(".target.txt.*"))
    with pytest.raises(SpecError):
        open_model(escaping, bad)  # nor read it at run time
    assert isinstance(escaping, CrfFallback)


def test_validate_does_not_read_an_absolute_examples_path(tmp_path: Path) -> None:
    path = write_unit(tmp_path / "unit", examples="/etc/passwd")
    error = load_error(path)
    assert error.spec_code == "S061"
    assert "root:" not in str(error)  # the file's content never reaches the message


@pytest.mark.parametrize(
    ("key", "value"),
    [("confidence", float("nan")), ("training", {"c1": float("inf")}),
     ("training", {"held_out": float("nan")})],
)  # fmt: skip
def test_non_finite_crf_numbers_are_refused(key: str, value: object) -> None:
    data, _ = read_yaml((UNITS / "extract_price.yaml").read_text(encoding="utf-8"))
    data["fallbacks"][0][key] = value
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(data)
    assert caught.value.spec_code == "S010"
    assert caught.value.field is not None
    assert caught.value.field.startswith(f"fallbacks[0].{key}")
