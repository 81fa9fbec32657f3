"""``aau validate``: every problem of a file at once, "did you mean", folders walked, CRF models."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aau.cli.main import main
from aau.cli.paths import unit_paths
from aau.errors import SpecError
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML, UNITS_DIR


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def errors_of(capsys: pytest.CaptureFixture[str], *args: str, exit_code: int = 2) -> list[str]:
    assert main(["validate", *args]) == exit_code
    err = capsys.readouterr().err
    return [line for line in err.splitlines() if line.startswith("error: ")]


def test_every_schema_error_is_printed_located_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FIND_TOTAL_YAML.replace("threshold: 0.6", "threshold: high")
    text = text.replace("timeout_s: 30", "timout_s: 30").replace("fallbacks:", "fallback:")
    path = tmp_path / "find_total.yaml"
    path.write_text(text, encoding="utf-8")
    where = path.resolve()

    errors = errors_of(capsys, str(path))

    assert errors == [
        f"error: {where}:{line_of(text, 'fallback:')}: fallback: unknown field; "
        "did you mean 'fallbacks'? [S010]",
        f"error: {where}:{line_of(text, 'threshold: high')}: policy.threshold: Input should be a "
        "valid number, unable to parse string as a number (got 'high') [S010]",
        f"error: {where}:{line_of(text, 'timout_s')}: policy.timout_s: unknown field; "
        "did you mean 'timeout_s'? [S010]",
    ]


def test_an_unknown_key_with_no_close_field_gets_no_guess(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML.replace("policy:", "zebra: 1\npolicy:"), encoding="utf-8")

    (problem,) = UnitSpec.problems_of_file(path)

    assert (problem.field, problem.message, problem.check) == ("zebra", "unknown field", "S010")


def test_a_misspelt_key_inside_a_fallback_is_matched_against_that_kind(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML.replace("    keywords: [total]", "    keywordz: [total]"),
                    encoding="utf-8")  # fmt: skip

    (problem,) = UnitSpec.problems_of_file(path)

    assert problem.field == "fallbacks[0].keywordz"
    assert problem.message == "unknown field; did you mean 'keywords'?"


def test_every_check_problem_is_printed_not_only_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FIND_TOTAL_YAML.replace('template: "Text: {{ text }}"', 'template: "{{ txt }}"')
    text = text.replace(
        "output: {amount: 10, currency: USD}", "output: {amount: ten, currency: USD}"
    )
    text = text.replace("(?P<amount>", "(?P<amount")  # a pattern that does not compile
    path = tmp_path / "find_totals.yaml"  # the name differs from the stem too
    path.write_text(text, encoding="utf-8")

    problems = UnitSpec.problems_of_file(path)
    errors = errors_of(capsys, str(path))

    assert sorted(p.check for p in problems) == ["S005", "S021", "S022", "S031"]
    assert len(errors) == 4
    assert all(e.startswith(f"error: {path.resolve()}:") and e.endswith("]") for e in errors)
    lines = [int(e.split(":")[2]) for e in errors]
    assert lines == sorted(lines), "printed in file order"
    assert f":{line_of(text, 'template:')}: prompt.template: unknown template variable 'txt'" in (
        "\n".join(errors)
    )


def test_loading_still_raises_the_first_problem_with_the_rest_as_notes(tmp_path: Path) -> None:
    text = FIND_TOTAL_YAML.replace('template: "Text: {{ text }}"', 'template: "{{ txt }}"')
    text = text.replace("(?P<amount>", "(?P<amount")
    path = tmp_path / "find_total.yaml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(path)

    assert caught.value.spec_code == "S021"
    assert len(caught.value.__notes__) == 1
    assert "patterns[0].regex" in caught.value.__notes__[0]


def test_folders_are_walked_recursively_skipping_side_files_and_pipelines(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    (tmp_path / "pipelines").mkdir()
    for name in ("top.yaml", "a/inner.yaml", "a/deep/deepest.yaml", "top.golden.yaml",
                 "a/inner.labelled.yaml", "pipelines/flow.yaml", "notes.txt"):  # fmt: skip
        (tmp_path / name).write_text("{}", encoding="utf-8")

    found = unit_paths([tmp_path])

    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a/deep/deepest.yaml", "a/inner.yaml", "top.yaml",
    ]  # fmt: skip


def _price_copy(tmp_path: Path) -> Path:
    for source in UNITS_DIR.glob("extract_price.*"):
        if ".golden" not in source.name:
            shutil.copy(source, tmp_path / source.name)
    return tmp_path / "extract_price.yaml"


def test_a_stale_crf_model_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unit = _price_copy(tmp_path)
    annotated = tmp_path / "extract_price.annotated.jsonl"
    lines = annotated.read_text(encoding="utf-8").splitlines(keepends=True)
    annotated.write_text("".join(lines[:-1]), encoding="utf-8")  # one example fewer

    errors = errors_of(capsys, str(unit))

    (error,) = errors
    text = unit.read_text(encoding="utf-8")
    assert error.startswith(f"error: {unit}:{line_of(text, 'model: extract_price.crf')}: "
                            "fallbacks[0].model: ")  # fmt: skip
    assert "is stale: the annotated examples" in error
    assert error.endswith("[crf_model_stale]")


def test_a_missing_crf_model_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = _price_copy(tmp_path)
    (tmp_path / "extract_price.crf").unlink()

    assert main(["validate", str(unit)]) == 0
    out = capsys.readouterr()

    assert out.out.startswith(f"ok: {unit} ")
    assert "warning: " in out.err
    assert "not found" in out.err
    assert out.err.rstrip().endswith("[crf_model_missing]")


def test_the_shipped_units_with_current_models_have_no_problem() -> None:
    for path in unit_paths([UNITS_DIR]):
        if not path.stem.startswith("extract_"):
            continue
        assert UnitSpec.problems_of_file(path) == [], path
