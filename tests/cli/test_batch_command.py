"""``aau batch``: one output line per input line, in order, whatever the input line holds."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aau.cli.batch import parse_line
from aau.cli.main import main
from aau.errors import InputError
from aau.spec.model import UnitSpec
from tests.conftest import UNIT_FILES, UNITS_DIR, assert_result_contract

MEGABYTE_TEXT = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 17600)[
    :999_978
] + " Total due: EUR 99.00."  # 1,000,000 characters: LIMITS.text_chars, the most a line may hold


def record(id_: Any, text: Any, **extra: Any) -> bytes:
    return json.dumps({"id": id_, "text": text, **extra}, ensure_ascii=False).encode()


# (raw line, expected id, expected error code or None when the line is analysed)
BATCH_LINES: list[tuple[bytes, str | None, str | None]] = [
    (record("inv-1", "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April 2024."), "inv-1", None),
    (b"this is not json", None, "invalid_input"),
    (record("po-7", "Please deliver 12 boxes of A4 paper on 3 June 2024."), "po-7", None),
    (json.dumps({"text": "Total 5 EUR"}).encode(), None, "missing_field"),
    (json.dumps({"id": "no-text"}).encode(), "no-text", "missing_field"),
    (record("int-text", 42), "int-text", "invalid_input"),
    (record("null-text", None), "null-text", "invalid_input"),
    (record("list-text", ["Total 5 EUR"]), "list-text", "invalid_input"),
    (b'{"id": "latin1", "text": "caf\xe9 at 5 EUR"}', "latin1", "invalid_utf8"),
    (record("empty", ""), "empty", "empty_input"),
    (record("blank-text", "  \n\t "), "blank-text", "empty_input"),
    (record("binary", "\x00\x01\x02\x03\x04\x05\x06\x07\x08" * 100), "binary", "binary_input"),
    (b"", None, "invalid_input"),  # a blank line in the middle is an input line
    (record("big", MEGABYTE_TEXT), "big", None),
    (b"[1, 2, 3]", None, "invalid_input"),
    (json.dumps({"id": "doc-gone", "path": "gone.pdf"}).encode(), "doc-gone", "file_not_found"),
    (record(17, "Shipment of 2,500 kg steel coils."), 17, None),  # ids keep their JSON type
    (record("uni", "Preis: 49,90 € inkl. MwSt., Lieferung am 5. Juni 2025."), "uni", None),
    # a tenant the term store does not know: a coded error for this line only
    (
        record("tenant", "The licence fee is $3,000 per year.", tenant="acme"),
        "tenant",
        "unknown_tenant",
    ),
    (b'{"id": "truncated", "text": "Total 5 E', None, "invalid_input"),
    (record("nothing", "Thanks for your message, see you next week."), "nothing", None),
    (b"   ", None, "invalid_input"),
    (record("dates", "Signed in Lyon on 02/09/2023 by both parties."), "dates", None),
    (json.dumps({"id": "doc-txt", "path": "note.txt"}).encode(), "doc-txt", None),
    (b"{}", None, "missing_field"),
    (record("nested", "Total: USD 12,474.00 for 3 pallets, 21 March 2023."), "nested", None),
    (record("newline", "Line one\nTotal: 8 EUR\nLine three"), "newline", None),
    (record("control", "Page 1\x0cTotal: 20 EUR"), "control", None),
    (b"\xff\xfe\x00garbage", None, "invalid_utf8"),
    (record("last", "Quantity: 40 kg, price 12.50 EUR, due 1 July 2024."), "last", None),
]


@pytest.fixture(scope="module")
def unit_specs() -> dict[str, UnitSpec]:
    return {path.stem: UnitSpec.from_file(path) for path in UNIT_FILES}


def write_jsonl(folder: Path, lines: list[bytes], ending: bytes = b"\n") -> Path:
    source = folder / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + ending)
    return source


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def batch(folder: Path, source: Path, *units: str, extra: tuple[str, ...] = ()) -> Path:
    target = folder / "out.jsonl"
    args = ["batch", *units, "--input", str(source), "--output", str(target), *extra]
    assert main([*args, "--no-model"]) == 0
    return target


def check_unit_dict(unit: dict[str, Any], spec: UnitSpec) -> None:
    """The per-unit contract, on the JSON a batch wrote."""
    from aau.results import Attempt, TraceStep, UnitError, UnitResult

    result = UnitResult(
        **{
            **unit,
            "error": UnitError(**unit["error"]) if unit["error"] else None,
            "trace": tuple(TraceStep(**step) for step in unit["trace"]),
            "attempts": tuple(
                Attempt(a["path"], a["confidence"], UnitError(**a["error"]) if a["error"] else None)
                for a in unit["attempts"]
            ),
        }
    )
    assert_result_contract(result, spec)
    assert unit["unit"] == spec.name
    assert unit["version"] == spec.version


@dataclass(frozen=True)
class BatchRun:
    folder: Path
    out: list[dict[str, Any]]
    stderr: str


@pytest.fixture(scope="module")
def batch_run(tmp_path_factory: pytest.TempPathFactory) -> BatchRun:
    """The 30-line batch over every shipped unit, run once (its 1 MB line takes seconds)."""
    folder = tmp_path_factory.mktemp("batch")
    source = write_jsonl(folder, [raw for raw, _, _ in BATCH_LINES])
    (folder / "note.txt").write_text("Consulting: 7.5 hours at $120 per hour.", encoding="utf-8")
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        target = batch(folder, source, str(UNITS_DIR), extra=("--concurrency", "8"))
    return BatchRun(folder, read_jsonl(target), stderr.getvalue())


def test_batch_writes_one_result_line_per_input_line_in_order(
    batch_run: BatchRun, unit_specs: dict[str, UnitSpec]
) -> None:
    assert len(BATCH_LINES) == 30
    out = batch_run.out

    assert len(out) == len(BATCH_LINES)
    assert [line["id"] for line in out] == [id_ for _, id_, _ in BATCH_LINES]
    assert batch_run.stderr == f"wrote 30 lines to {batch_run.folder / 'out.jsonl'}\n"
    for number, (line, (_, _, code)) in enumerate(zip(out, BATCH_LINES, strict=True), start=1):
        # the shipped folder holds a derived unit, so a line says which units fed which
        assert set(line) == {"id", "units", "graph"}, number
        assert line["graph"] == {name: list(spec.needs) for name, spec in unit_specs.items()}
        assert sorted(line["units"]) == sorted(unit_specs), number
        for name, unit in line["units"].items():
            check_unit_dict(unit, unit_specs[name])
            if code is None:
                assert unit["error"] is None, (number, unit["error"])
                assert unit["trace"][-1]["state"] == "done"
            elif unit_specs[name].needs and unit["error"]["code"] == "upstream_failed":
                # a text its inputs refused: the derived unit names their code
                assert f"({code})" in unit["error"]["message"], number
            else:
                assert unit["error"]["code"] == code, number


def test_batch_answers_the_readable_lines(batch_run: BatchRun) -> None:
    out = {line["id"]: line["units"] for line in batch_run.out}

    assert out["inv-1"]["extract_price"]["output"] == {"amount": 1250.0, "currency": "EUR"}
    assert out["po-7"]["extract_quantity"]["output"] == {"value": 12, "unit": "box"}
    assert out["big"]["extract_price"]["output"] == {"amount": 99.0, "currency": "EUR"}
    assert out[17]["extract_quantity"]["output"] == {"value": 2500, "unit": "kg"}
    assert out["dates"]["extract_date"]["output"] == {"date": "2023-09-02"}
    assert out["doc-txt"]["extract_quantity"]["output"] == {"value": 7.5, "unit": "h"}
    number = 1 + [id_ for _, id_, _ in BATCH_LINES].index("doc-gone")
    assert out["doc-gone"]["extract_price"]["error"]["message"] == (
        f"line {number}: {batch_run.folder / 'gone.pdf'}: no such file"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"this is not json", "line 2: not JSON: Expecting value (column 1)"),
        (json.dumps({"text": "x"}).encode(), "line 2: missing 'id'"),
        (b"{}", "line 2: missing 'id'"),
        (json.dumps({"id": 1}).encode(), "line 2: missing 'text' (or 'path')"),
        (json.dumps({"id": 1, "path": 5}).encode(), "line 2: 'path' must be a string, got int"),
        (json.dumps({"id": 1, "text": 5}).encode(), "line 2: 'text' must be a string, got int"),
        (b"[1]", "line 2: expected a JSON object, got list"),
        (b'{"id": 1, "text": "\xe9"}', "line 2: not UTF-8 (byte 19)"),
    ],
)
def test_bad_lines_carry_a_message_naming_the_line(
    tmp_path: Path, raw: bytes, message: str
) -> None:
    source = write_jsonl(tmp_path, [record("ok", "Total 5 EUR"), raw])

    out = read_jsonl(batch(tmp_path, source, str(UNITS_DIR / "extract_price.yaml")))

    assert out[1]["units"]["extract_price"]["error"]["message"] == message


@pytest.mark.parametrize(
    ("ending", "count"),
    [(b"", 2), (b"\n", 2), (b"\n\n\n", 2), (b"\r\n", 2)],
    ids=["no-final-newline", "final-newline", "trailing-blank-lines", "crlf"],
)
def test_trailing_blank_lines_are_the_end_of_the_file_not_inputs(
    tmp_path: Path, ending: bytes, count: int
) -> None:
    source = write_jsonl(tmp_path, [record("a", "5 EUR"), record("b", "6 EUR")], ending)

    out = read_jsonl(batch(tmp_path, source, str(UNITS_DIR / "extract_price.yaml")))

    assert [line["id"] for line in out] == ["a", "b"][:count]


def test_empty_input_file_writes_an_empty_output_file(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"")

    target = batch(tmp_path, source, str(UNITS_DIR / "extract_price.yaml"))

    assert target.read_bytes() == b""


def test_parse_line_returns_id_and_text() -> None:
    assert parse_line(record(5, "5 EUR"), 9) == (5, "5 EUR", None, None)
    line = json.dumps({"id": "d", "path": "a.pdf", "tenant": "acme"}).encode()
    assert parse_line(line, 9) == ("d", None, "a.pdf", "acme")


def test_parse_line_refuses_a_bad_line_with_a_coded_input_error() -> None:
    with pytest.raises(InputError, match="^line 9: not JSON: ") as caught:
        parse_line(b"oops", 9)

    assert caught.value.code == "invalid_input"


@pytest.mark.slow
def test_batch_on_the_default_model_answers_good_lines_and_codes_bad_ones(
    tmp_path: Path, default_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aau.pipeline.pipeline as pipeline_module

    built: list[Any] = []

    def shared_engine(config: Any = None) -> Any:
        built.append(config)
        return default_engine  # the session's model, instead of loading a second copy

    monkeypatch.setattr(pipeline_module, "build_engine", shared_engine)
    lines = [
        record("a", "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April."),
        b"not json",
        record("b", "The licence fee is $3,000 per year for up to 12 users."),
        record("c", ""),
        record("d", "\x00\x01\x02\x03" * 50),
        json.dumps({"id": "e"}).encode(),
    ]
    spec = UnitSpec.from_file(UNITS_DIR / "extract_price.yaml")
    source = write_jsonl(tmp_path, lines)
    target = tmp_path / "out.jsonl"

    rc = main(["batch", str(UNITS_DIR / "extract_price.yaml"), "--input", str(source),
               "--output", str(target)])  # fmt: skip

    assert rc == 0
    assert len(built) == 1
    assert built[0].model is None  # the embedded default model
    out = read_jsonl(target)
    assert [line["id"] for line in out] == ["a", None, "b", "c", "d", "e"]
    errors = [line["units"]["extract_price"]["error"] for line in out]
    assert [errors[i]["code"] for i in (1, 3, 4, 5)] == [
        "invalid_input", "empty_input", "binary_input", "missing_field",
    ]  # fmt: skip
    for line in (out[0], out[2]):
        unit = line["units"]["extract_price"]
        check_unit_dict(unit, spec)
        states = [step["state"] for step in unit["trace"]]
        assert "decoding" in states  # the model really ran
        assert unit["attempts"][0]["path"] == "primary"
        assert unit["output"] is not None or unit["error"]["code"]
