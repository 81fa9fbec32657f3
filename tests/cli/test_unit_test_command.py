"""``aau test``: golden cases replayed offline from recordings, recorded from the real model.

The shipped units' recordings are real generations of the embedded model (``aau test units/
--record``), so the replay tests run the real unit paths and calibrator on real model output,
without a model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import aau.cli.unit_test
from aau.cli.main import main
from aau.fitting.golden import load_cases, recording_path, run_golden
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR

SHIPPED = ["extract_price", "extract_date", "extract_quantity"]
KINDS = ["detect_complaint", "extract_penalty_clauses", "compare_numeric_range"]
"""A classify, a records and a derived unit: their golden cases replay too."""


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building an engine fails: a replay that tried to run the model would say so."""

    def refuse(*_: object) -> None:
        raise AssertionError("a replayed run built a model engine")

    monkeypatch.setattr(aau.cli.unit_test, "build_engine", refuse)


def unit_copy(tmp_path: Path, name: str = "extract_price") -> Path:
    """The shipped unit with its data, golden cases and recording, in ``tmp_path``."""
    for source in UNITS_DIR.glob(f"{name}.*"):
        shutil.copy(source, tmp_path / source.name)
    return tmp_path / f"{name}.yaml"


def test_the_shipped_units_pass_their_golden_cases_replayed(
    no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", *(str(UNITS_DIR / f"{n}.yaml") for n in SHIPPED), "--json"]) == 0
    out = capsys.readouterr().out

    for name in SHIPPED:
        assert f"{name}@" in out
    assert out.count("(replayed)") == len(SHIPPED)
    figures = json.loads(out.splitlines()[-1])
    assert [f["mode"] for f in figures] == ["replay"] * len(SHIPPED)
    assert all(f["passed"] == f["total"] == 8 for f in figures)
    assert all(0 <= f["ece"] <= 1 and 0 <= f["brier"] <= 1 for f in figures)


def test_each_unit_kind_replays_its_golden_cases(
    no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", *(str(UNITS_DIR / f"{n}.yaml") for n in KINDS), "--json"]) == 0
    figures = {f["unit"]: f for f in json.loads(capsys.readouterr().out.splitlines()[-1])}

    assert sorted(figures) == sorted(KINDS)
    for figure in figures.values():
        assert figure["mode"] == "replay"
        assert figure["total"] == 8
        # every failing case is a known one, with its reason
        assert figure["total"] - figure["passed"] == figure["known_failures"]
        assert all(f["known_failure"] for f in figure["failures"])


def test_a_replay_is_deterministic(tmp_path: Path, no_model: None) -> None:
    spec = UnitSpec.from_file(unit_copy(tmp_path))
    cases = load_cases(spec)

    first = run_golden(spec, cases, "replay")
    second = run_golden(spec, cases, "replay")

    assert [(o.result.output, o.result.confidence, o.result.path) for o in first.outcomes] == [
        (o.result.output, o.result.confidence, o.result.path) for o in second.outcomes
    ]
    assert all(o.result.engine is not None for o in first.outcomes if o.result.path == "primary")


def test_a_broken_case_fails_with_exit_1_and_says_what_differs(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = unit_copy(tmp_path)
    golden = tmp_path / "extract_price.golden.yaml"
    text = golden.read_text(encoding="utf-8")
    # The expected output changes, the inputs do not: the recording is still current.
    golden.write_text(text.replace("expected: {amount: 1176.0, currency: EUR}",
                                   "expected: {amount: 1177.0, currency: EUR}"),
                      encoding="utf-8")  # fmt: skip

    assert main(["test", str(unit)]) == 1
    out = capsys.readouterr().out

    assert "(replayed): 7/8 passed" in out
    assert "FAIL case 0 " in out
    assert "amount: expected 1177.0, got 1176" in out


def mark_first_case(tmp_path: Path, amount: float, reason: str) -> Path:
    """The price unit copied, its first golden case expecting ``amount``, marked known failure."""
    unit = unit_copy(tmp_path)
    golden = tmp_path / "extract_price.golden.yaml"
    text = golden.read_text(encoding="utf-8")
    golden.write_text(text.replace(
        "expected: {amount: 1176.0, currency: EUR}",
        f"expected: {{amount: {amount}, currency: EUR}}\n    known_failure: {reason}",
    ), encoding="utf-8")  # fmt: skip
    return unit


def test_a_known_failure_counts_against_accuracy_but_does_not_fail_the_suite(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = mark_first_case(tmp_path, 1177.0, "a rounding the unit lacks")

    assert main(["test", str(unit), "--json"]) == 0
    out = capsys.readouterr().out
    assert "(replayed): 7/8 passed, accuracy 0.875" in out
    assert "(1 known failures)" in out
    assert "known failure case 0 " in out
    figures = json.loads(out.splitlines()[-1])[0]
    assert figures["known_failures"] == 1
    assert figures["failures"][0]["known_failure"] == "a rounding the unit lacks"


def test_a_known_failure_that_passes_is_reported_as_fixed(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = mark_first_case(tmp_path, 1176.0, "it used to round wrong")  # what the unit gives

    assert main(["test", str(unit)]) == 0
    out = capsys.readouterr().out
    assert "8/8 passed" in out
    assert "fixed case 0 " in out
    assert "remove its known_failure" in out


def test_a_request_missing_from_the_recording_is_not_recorded(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = unit_copy(tmp_path)
    golden = tmp_path / "extract_price.golden.yaml"
    text = golden.read_text(encoding="utf-8")
    changed = text.replace("renews on 1 March", "renews on 2 March")  # one input changes
    golden.write_text(changed, encoding="utf-8")

    assert main(["test", str(unit), "--replay"]) == 1
    out = capsys.readouterr().out

    assert "(replayed): 7/8 passed" in out
    assert "FAIL case 1 " in out
    assert "not_recorded" in out


def test_a_stale_recording_is_not_replayed_by_default(tmp_path: Path) -> None:
    from aau.fitting.golden import choose_mode

    spec = UnitSpec.from_file(unit_copy(tmp_path))
    cases = load_cases(spec)
    assert choose_mode(spec, cases, record=False, replay=False) == ("replay", None)

    changed = [cases[0].model_copy(update={"input": cases[0].input + " Thanks."}), *cases[1:]]
    mode, why = choose_mode(spec, changed, record=False, replay=False)

    assert mode == "model"
    assert why is not None
    assert "stale" in why


def test_replay_without_a_recording_is_a_located_error(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = unit_copy(tmp_path)
    recording_path(UnitSpec.from_file(unit)).unlink()

    assert main(["test", str(unit), "--replay"]) == 2
    assert "extract_price.golden.recorded.jsonl" in capsys.readouterr().err


def test_a_malformed_recording_is_refused_with_its_line(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = unit_copy(tmp_path)
    path = tmp_path / "extract_price.golden.recorded.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["finish_reason"] = "exploded"
    path.write_text("\n".join([*lines[:2], json.dumps(row), *lines[3:]]) + "\n", encoding="utf-8")

    assert main(["test", str(unit), "--replay"]) == 2
    err = capsys.readouterr().err

    assert f"error: {path}:3: finish_reason: " in err
    assert "[G012]" in err


@pytest.mark.slow
def test_record_then_replay_gives_identical_results(tmp_path: Path, default_engine: object) -> None:
    unit = unit_copy(tmp_path)
    recording_path(UnitSpec.from_file(unit)).unlink()
    golden = tmp_path / "extract_price.golden.yaml"
    golden.write_text(
        "cases:\n"
        "  - input: 'Invoice 88. Total due: USD 420.00 by Monday.'\n"
        "    expected: {amount: 420.0, currency: USD}\n"
        "  - input: 'No charge applies to this visit.'\n"
        "    expected: {amount: null, currency: null}\n",
        encoding="utf-8",
    )
    spec = UnitSpec.from_file(unit)
    cases = load_cases(spec)

    recorded = run_golden(spec, cases, "record", engine=lambda: default_engine)  # type: ignore[arg-type,return-value]
    replayed = run_golden(spec, cases, "replay")

    assert recording_path(spec).is_file()
    assert [o.result.output for o in recorded.outcomes] == [
        o.result.output for o in replayed.outcomes
    ]
    assert [o.result.confidence for o in recorded.outcomes] == [
        o.result.confidence for o in replayed.outcomes
    ]
    assert [o.result.path for o in recorded.outcomes] == [o.result.path for o in replayed.outcomes]
    assert (recorded.passed, recorded.ece, recorded.brier) == (
        replayed.passed, replayed.ece, replayed.brier,
    )  # fmt: skip
    assert (recorded.mode, replayed.mode) == ("record", "replay")
