"""The unit-file JSON Schema: generated from the models, shipped twice, and useful to editors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import jsonschema
import pytest

from aau.cli.main import main
from aau.spec.loader import read_yaml
from aau.spec.model import FALLBACK_KINDS
from aau.spec.schema import PACKAGED_SCHEMA, unit_file_schema, unit_file_schema_text
from tests.conftest import FIND_TOTAL_YAML, UNIT_FILES, UNITS_DIR

SHIPPED_COPIES = [PACKAGED_SCHEMA, UNITS_DIR / "unit.schema.json"]


@pytest.mark.parametrize("shipped", SHIPPED_COPIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_unit_file_schema_equals_the_generated_one(shipped: Path) -> None:
    assert shipped.read_text(encoding="utf-8") == unit_file_schema_text(), (
        f"{shipped} is stale; regenerate it with: aau schema > {shipped}"
    )


def test_schema_command_prints_the_generated_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out

    assert printed == unit_file_schema_text()
    assert json.loads(printed) == unit_file_schema()


def test_unit_file_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = unit_file_schema()

    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "AAU unit"
    assert "source" not in schema["properties"]  # runtime only, never written by authors
    # A derived unit has no prompt, so the schema leaves it to the kind check (S090-S101).
    assert set(schema["required"]) == {"name", "version", "description", "output"}


def test_unit_file_schema_spells_out_every_fallback_kind() -> None:
    text = unit_file_schema_text()
    assert FALLBACK_KINDS.names() == ["classifier", "crf", "heuristic", "keyword_rules", "records"]
    for kind in FALLBACK_KINDS.names():
        assert f'"const": "{kind}"' in text


def test_unit_file_schema_validates_the_test_unit() -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)

    jsonschema.validate(data, unit_file_schema())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, "Additional properties are not allowed ('colour' was unexpected)"),
        ({"policy": {"threshold": 2}}, "2 is greater than the maximum of 1"),
        ({"fallbacks": [{"kind": "oracle"}]}, "'oracle'"),
    ],
)
def test_unit_file_schema_refuses_what_the_loader_refuses(
    change: dict[str, object], message: str
) -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data = {**data, "version": "3", **change}
    validator = jsonschema.Draft202012Validator(unit_file_schema())

    def messages(errors: Iterable[jsonschema.ValidationError]) -> Iterator[str]:
        for error in errors:
            yield error.message
            yield from messages(error.context or [])

    found = list(messages(validator.iter_errors(data)))
    assert any(message in text for text in found), found


@pytest.mark.parametrize("unit_file", UNIT_FILES, ids=lambda p: p.stem)
def test_unit_file_schema_validates_the_shipped_units(unit_file: Path) -> None:
    data, _ = read_yaml(unit_file.read_text(encoding="utf-8"))

    jsonschema.validate(data, unit_file_schema())


@pytest.mark.parametrize("unit_file", UNIT_FILES, ids=lambda p: p.stem)
def test_shipped_units_point_editors_at_the_schema(unit_file: Path) -> None:
    first = unit_file.read_text(encoding="utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="

    assert first.startswith(prefix), f"{unit_file} must start with {prefix}…"
    target = (unit_file.parent / first.removeprefix(prefix)).resolve()
    assert target == (UNITS_DIR / "unit.schema.json").resolve()


# -- aau validate ---------------------------------------------------------------------------------


def test_validate_command_accepts_the_shipped_units(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(UNITS_DIR)]) == 0
    out = capsys.readouterr()

    assert out.err == ""
    for unit_file in UNIT_FILES:
        assert f"ok: {unit_file} ({unit_file.stem}@" in out.out


def test_validate_command_exits_2_with_a_located_message_on_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "find_total.yaml"
    bad.write_text(FIND_TOTAL_YAML.replace("threshold: 0.6", "threshold: high"), encoding="utf-8")
    line = FIND_TOTAL_YAML.splitlines().index("  threshold: 0.6") + 1

    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err

    assert err.startswith(f"error: {bad.resolve()}:{line}: policy.threshold: ")
    assert "(got 'high') [S010]" in err


def test_validate_command_reports_every_file_of_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "find_total.yaml").write_text(FIND_TOTAL_YAML, encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")

    assert main(["validate", str(tmp_path)]) == 2
    out = capsys.readouterr()

    assert f"ok: {tmp_path / 'find_total.yaml'} (find_total@3)" in out.out
    assert f"error: {tmp_path / 'broken.yaml'}:" in out.err
    assert "not valid YAML" in out.err
    assert "[S001]" in out.err


def test_validate_command_prints_every_mistake_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "find_total.yaml"
    text = FIND_TOTAL_YAML.replace("threshold: 0.6", "threshold: high")
    bad.write_text(text.replace("max_new_tokens: 32", "max_new_tokens: lots"), encoding="utf-8")

    assert main(["validate", str(bad)]) == 2
    lines = capsys.readouterr().err.splitlines()

    assert lines[0].startswith("error: ")
    assert any(line.startswith("error: ") and "policy.max_new_tokens" in line for line in lines[1:])


def test_validate_command_on_a_folder_without_units_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "no unit files found\n"


def test_validate_command_on_a_missing_file_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "gone.yaml"

    assert main(["validate", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: {missing}: file not found [S002]\n"
