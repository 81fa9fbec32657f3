"""``aau run``: one text (or file) through units, printed as JSON or a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aau.cli.main import main
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML, UNIT_FILES, UNITS_DIR

PRICE_UNIT = str(UNITS_DIR / "extract_price.yaml")


def run_json(capsys: pytest.CaptureFixture[str], *args: str, exit_code: int = 0) -> dict[str, Any]:
    assert main(["run", *args, "--json", "--no-model"]) == exit_code
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "one JSON document on one line"
    return json.loads(out)


def test_run_json_prints_every_contract_key(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, PRICE_UNIT, "--text", "Total due: EUR 1,250.00 by Friday.")

    assert set(data) == {"id", "units"}
    assert data["id"] is None
    unit = data["units"]["extract_price"]
    assert {"output", "confidence", "path", "error", "timings", "trace"} <= set(unit)
    assert unit["output"] == {"amount": 1250.0, "currency": "EUR"}
    spec = UnitSpec.from_file(PRICE_UNIT)
    jsonschema.validate(unit["output"], spec.output)
    assert 0 < unit["confidence"] <= 1
    assert unit["path"] in {fallback.kind for fallback in spec.fallbacks}  # no model: a fallback
    assert unit["error"] is None
    assert set(unit["timings"]) >= {"queue_ms", "prefill_ms", "decode_ms", "total_ms"}
    assert unit["timings"]["total_ms"] >= 0
    assert [step["state"] for step in unit["trace"]][0] == "received"
    assert unit["trace"][-1]["state"] == "done"
    assert unit["version"] == spec.version


def test_run_over_a_folder_runs_every_unit(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, str(UNITS_DIR), "--text", "12 boxes delivered on 14 March 2024.")

    assert sorted(data["units"]) == sorted(p.stem for p in UNIT_FILES)
    for unit_file in UNIT_FILES:
        unit = data["units"][unit_file.stem]
        if unit["output"] is not None:
            jsonschema.validate(unit["output"], UnitSpec.from_file(unit_file).output)


def test_run_reads_the_text_from_a_utf8_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text_file = tmp_path / "invoice.txt"
    text_file.write_text("Rechnung: Preis 49,90 €", encoding="utf-8")

    data = run_json(capsys, PRICE_UNIT, "--file", str(text_file))

    assert data["units"]["extract_price"]["output"] == {"amount": 49.9, "currency": "EUR"}


def test_run_with_a_missing_file_gives_each_unit_a_file_not_found_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.txt"
    data = run_json(capsys, str(UNITS_DIR), "--file", str(missing), exit_code=1)

    for unit in data["units"].values():
        assert unit["output"] is None
        assert unit["error"]["code"] == "file_not_found"
        assert unit["error"]["message"] == f"{missing}: no such file"


def test_run_with_a_non_utf8_text_file_gives_a_coded_error_naming_the_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin1 = tmp_path / "latin1.txt"
    raw = "Total: 5 EUR, café".encode("latin-1")
    latin1.write_bytes(raw)
    bad_byte = raw.index("é".encode("latin-1"))

    data = run_json(capsys, PRICE_UNIT, "--file", str(latin1), exit_code=1)

    unit = data["units"]["extract_price"]
    assert unit["output"] is None
    assert unit["error"]["code"]  # unsupported_format (document reader); see the batch's code
    assert unit["error"]["message"].startswith(f"{latin1}: not UTF-8 text (")
    assert f"at byte {bad_byte})" in unit["error"]["message"]


@pytest.mark.parametrize(
    ("text", "code"),
    [("", "empty_input"), ("\x00\x01\x02\x03\x04\x05\x06\x07" * 100, "binary_input")],
)
def test_run_over_unreadable_text_gives_a_coded_error(
    capsys: pytest.CaptureFixture[str], text: str, code: str
) -> None:
    data = run_json(capsys, PRICE_UNIT, "--text", text)

    assert data["units"]["extract_price"]["error"]["code"] == code


def test_run_without_json_prints_a_table_row_per_unit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", PRICE_UNIT, "--text", "Total due: EUR 1,250.00", "--no-model"]) == 0
    out = capsys.readouterr().out

    kinds = {fallback.kind for fallback in UnitSpec.from_file(PRICE_UNIT).fallbacks}
    assert "extract_price" in out
    assert '{"amount": 1250.0, "currency": "EUR"}' in out
    assert any(kind in out for kind in kinds)


def test_run_with_a_bad_unit_exits_2_with_a_located_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "find_total.yaml"
    bad.write_text(FIND_TOTAL_YAML.replace("{{ text }}", "{{ txt }}"), encoding="utf-8")

    assert main(["run", str(bad), "--text", "x", "--no-model"]) == 2
    err = capsys.readouterr().err

    assert err.startswith(f"error: {bad.resolve()}:")
    assert "prompt.template: unknown template variable 'txt'" in err
    assert err.rstrip().endswith("[S021]")


def test_run_needs_text_or_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", PRICE_UNIT, "--no-model"])

    assert exited.value.code == 2
    assert "one of the arguments --text --file is required" in capsys.readouterr().err


def test_validate_notes_a_pattern_that_runs_under_a_time_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = tmp_path / "find_total.yaml"
    unit.write_text(
        FIND_TOTAL_YAML.replace(
            "patterns:\n", "patterns:\n      - regex: '(?<=EUR )(?P<amount>\\d+)'\n", 1
        ),
        encoding="utf-8",
    )
    assert main(["validate", str(unit)]) == 0  # a note, not an error
    captured = capsys.readouterr()
    assert captured.out.startswith(f"ok: {unit}")
    assert "note: " in captured.err
    assert "patterns[0].regex: needs backtracking (lookaround); it runs under a" in captured.err
