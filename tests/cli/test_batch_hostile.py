"""``aau batch`` against hostile lines and documents: no line kills, hangs or floods the batch,
loses a result or reads outside the folder the caller allowed."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import os
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

import aau.cli.batch as batch_module
from aau.cli.batch import parse_line
from aau.cli.main import main
from aau.errors import InputError
from aau.limits import LIMITS
from aau.pipeline import Pipeline, PipelineResult
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR

DEADLINE_S = 300.0
"""How long one batch may run before the test calls it a hang (a guard, not a timing)."""
PRICE = str(UNITS_DIR / "extract_price.yaml")


def record(id_: Any, text: Any = None, **extra: Any) -> bytes:
    fields = {"id": id_, **({"text": text} if text is not None else {}), **extra}
    return json.dumps(fields, ensure_ascii=False).encode()


def text_pdf(*pages: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.cell(text=text)
    return bytes(pdf.output())


def with_broken_second_page(data: bytes) -> bytes:
    """A real corrupt page: page 2's object overwritten (same length, so the xref stays right)."""
    start = data.index(b"5 0 obj\n") + len(b"5 0 obj\n")
    end = data.index(b"endobj", start)
    return data[:start] + b"(" + b"x" * (end - start - 3) + b")\n" + data[end:]


@contextlib.contextmanager
def fifo_released(fifos: list[Path]) -> Any:
    """On the way out, open each FIFO's writing end once, so a reader stuck on one returns."""
    try:
        yield
    finally:
        for fifo in fifos:
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading it, as it should be
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def run_cli(
    source: Path, *units: str, extra: tuple[str, ...] = (), fifos: list[Path] | None = None
) -> tuple[int, list[dict[str, Any]], bytes, str]:
    """``aau batch`` in-process, in a thread with a deadline: exit code, parsed and raw output,
    stderr."""
    target = source.with_name(source.stem + ".out.jsonl")
    argv = ["batch", *(units or (str(UNITS_DIR),)), "--input", str(source), "--output",
            str(target), "--no-model", *extra]  # fmt: skip
    outcome: dict[str, Any] = {}
    stderr = io.StringIO()

    def target_thread() -> None:
        try:
            outcome["rc"] = main(argv)
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    with fifo_released(fifos or []), contextlib.redirect_stderr(stderr):
        thread = threading.Thread(target=target_thread, daemon=True)
        thread.start()
        thread.join(DEADLINE_S)
        assert not thread.is_alive(), f"aau batch still running after {DEADLINE_S} s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    raw = target.read_bytes() if target.exists() else b""
    lines = [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # strict UTF-8
    return outcome["rc"], lines, raw, stderr.getvalue()


def stable(units: dict[str, Any]) -> dict[str, Any]:
    """A line's unit results without what varies between runs (timings, trace times)."""
    out = {}
    for name, unit in units.items():
        unit = {k: v for k, v in unit.items() if k != "timings"}
        unit["trace"] = [{k: v for k, v in step.items() if k != "at_ms"} for step in unit["trace"]]
        out[name] = unit
    return out


# -- the mixed batch --------------------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path: Path) -> tuple[Path, Path]:
    """The batch's folder (documents, a FIFO, symlinks) and a folder outside it with a secret."""
    folder, outside = tmp_path / "batch", tmp_path / "outside"
    (folder / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("Secret price: EUR 66.00", encoding="utf-8")
    (folder / "sub" / "note.txt").write_text("Consulting: 7.5 hours at $120 per hour.")
    (folder / "ok.pdf").write_bytes(text_pdf("Total due: EUR 1.00", "Second page: EUR 2.00"))
    (folder / "broken.pdf").write_bytes(with_broken_second_page(text_pdf("EUR 1.00", "EUR 2.00")))
    (folder / "inside-link.txt").symlink_to(folder / "sub" / "note.txt")
    (folder / "leak.txt").symlink_to(outside / "secret.txt")
    (folder / "zero.txt").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.pdf")
    return folder, outside


GOOD: list[tuple[bytes, str | int]] = [
    (record("inv-1", "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April 2024."), "inv-1"),
    (b'{"id": "\\ud800", "text": "Total due: EUR 7.00"}', "\ud800"),  # lone-surrogate id
    (b'{"id": "lone-text", "text": "\\ud800 Total due: EUR 8.00 \\udfff"}', "lone-text"),
    (record("pdf-ok", path="ok.pdf"), "pdf-ok"),
    (record("txt-ok", path="sub/note.txt"), "txt-ok"),
    (record("link-in", path="inside-link.txt"), "link-in"),  # a symlink that stays inside
    (record(17, "Shipment of 2,500 kg steel coils."), 17),
    (record("last", "Quantity: 40 kg, price 12.50 EUR, due 1 July 2024."), "last"),
]


def bad_lines(outside: Path) -> list[tuple[bytes, str | int | None, str, str]]:
    """(raw line, id written, code of every unit, a piece of the message)."""
    return [
        (b'{"id": "deep", "text": "x", "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
         "deep", "input_too_deep", "JSON nested deeper than 50 levels"),
        (b'{"id": ' + b"9" * 5000 + b', "text": "Total 5 EUR"}',
         None, "invalid_input", "an integer of 5,000 digits"),
        (b'{"id": "nul", "path": "sub/note\\u0000.txt"}', "nul", "invalid_path", "NUL byte"),
        (record("broken-page", path="broken.pdf"),
         "broken-page", "pdf_corrupt", "page 2 cannot be loaded"),
        (record("dev-zero", path="/dev/zero"), "dev-zero", "path_not_allowed", "resolves outside"),
        (record("zero-link", path="zero.txt"), "zero-link", "path_not_allowed", "resolves outside"),
        (record("fifo", path="pipe.pdf"), "fifo", "file_not_found", "is a FIFO (named pipe)"),
        (record("huge", "x" * 10_000_000), "huge", "input_too_large",
         "10,000,026 bytes, over the limit of 2,097,152 (AAU_MAX_BATCH_LINE_BYTES)"),
        (record("absolute", path=str(outside / "secret.txt")),
         "absolute", "path_not_allowed", "resolves outside"),
        (record("dotdot", path="../outside/secret.txt"),
         "dotdot", "path_not_allowed", "resolves outside"),
        (record("symlink-out", path="leak.txt"),
         "symlink-out", "path_not_allowed", "resolves outside"),
        (record("long-text", "ab" * 500_001), "long-text", "input_too_large",
         "'text' has 1,000,002 characters, over the limit of 1,000,000"),
        (record("long-path", path="x/" * 2100), "long-path", "invalid_path", "is too long"),
        (b'{"id": "surrogate-path", "path": "\\ud800.txt"}',
         "surrogate-path", "invalid_path", "a lone surrogate"),
        (record("bad-tenant", "Total 5 EUR", tenant="acme\x00"),
         "bad-tenant", "invalid_term_dictionary", "tenant name"),
        (b"not json at all", None, "invalid_input", "not JSON"),
    ]  # fmt: skip


def test_a_mixed_batch_answers_every_line_in_order_and_codes_every_bad_one(
    hostile_folder: tuple[Path, Path],
) -> None:
    folder, outside = hostile_folder
    bad = bad_lines(outside)
    # Bad lines between the good ones, the first and the last line good.
    mixed: list[tuple[bytes, str | int | None, str | None, str | None]] = []
    rest = iter(bad)
    for raw, id_ in GOOD:
        mixed.append((raw, id_, None, None))
        mixed.extend(itertools.islice(rest, 2))
    mixed.extend(rest)
    mixed.append((GOOD[0][0], GOOD[0][1], None, None))  # the first good line again, last
    assert sum(code is not None for _, _, code, _ in mixed) == len(bad)
    source = folder / "in.jsonl"
    source.write_bytes(b"\n".join(raw for raw, *_ in mixed) + b"\n")

    rc, out, raw_out, stderr = run_cli(
        source, extra=("--concurrency", "4"), fifos=[folder / "pipe.pdf"]
    )

    assert rc == 0
    assert stderr == f"wrote {len(mixed)} lines to {source.with_name('in.out.jsonl')}\n"
    assert "Traceback" not in stderr
    assert len(out) == len(mixed)
    assert [line["id"] for line in out] == [id_ for _, id_, _, _ in mixed]
    assert b'"id": "\\ud800"' in raw_out  # kept as given, escaped: the line stays UTF-8 JSON
    for number, (line, (_, _, code, message)) in enumerate(zip(out, mixed, strict=True), 1):
        for unit in line["units"].values():
            if code is None:
                assert unit["error"] is None, (number, unit["error"])
            else:
                assert unit["error"]["code"] == code, (number, unit["error"])
                if code != "invalid_term_dictionary":  # the term store's own error, as is
                    assert unit["error"]["message"].startswith(f"line {number}: "), number
                assert message in unit["error"]["message"], (number, unit["error"])
                assert unit["output"] is None

    # The good lines' results are those of a batch of the good lines alone.
    alone = folder / "good.jsonl"
    valid_text = record("lone-text", "\ufffd Total due: EUR 8.00 \ufffd")
    alone.write_bytes(b"\n".join([raw for raw, _ in GOOD] + [valid_text]) + b"\n")
    rc, alone_out, _, _ = run_cli(alone)
    assert rc == 0
    good_in_mixed = [line for line, (_, _, code, _) in zip(out, mixed, strict=True) if not code]
    assert [stable(line["units"]) for line in good_in_mixed] == [
        stable(line["units"]) for line in alone_out[: len(GOOD)] + alone_out[:1]
    ]
    # A text with lone surrogates reaches the units as U+FFFD, at the same offsets.
    assert stable(alone_out[2]["units"]) == stable(alone_out[-1]["units"])
    assert alone_out[2]["units"]["extract_price"]["output"] == {"amount": 8.0, "currency": "EUR"}


def test_documents_root_is_where_paths_resolve_and_stay(tmp_path: Path) -> None:
    inputs, docs = tmp_path / "inputs", tmp_path / "docs"
    inputs.mkdir()
    docs.mkdir()
    (docs / "note.txt").write_text("Total due: EUR 5.00")
    (inputs / "beside.txt").write_text("Total due: EUR 6.00")
    source = inputs / "in.jsonl"
    source.write_bytes(
        b"\n".join([
            record("relative", path="note.txt"),
            record("absolute-inside", path=str(docs / "note.txt")),
            record("beside-input", path="beside.txt"),
            record("back-to-input", path="../inputs/beside.txt"),
        ]) + b"\n"
    )  # fmt: skip

    rc, out, _, _ = run_cli(source, PRICE, extra=("--documents-root", str(docs)))

    assert rc == 0
    units = [line["units"]["extract_price"] for line in out]
    assert units[0]["output"] == {"amount": 5.0, "currency": "EUR"}
    assert units[1]["output"] == {"amount": 5.0, "currency": "EUR"}
    assert units[2]["error"]["code"] == "file_not_found"  # looked for in docs/, not inputs/
    assert units[3]["error"]["code"] == "path_not_allowed"


def test_a_root_that_allows_devices_still_reads_regular_files_only(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(record("zero", path="zero") + b"\n" + record("null", path="null") + b"\n")

    rc, out, _, _ = run_cli(source, PRICE, extra=("--documents-root", "/dev"))

    assert rc == 0
    errors = [line["units"]["extract_price"]["error"] for line in out]
    assert [error["code"] for error in errors] == ["file_not_found", "file_not_found"]
    assert errors[0]["message"] == "line 1: /dev/zero: is a character device, not a regular file"


def test_a_documents_root_that_does_not_exist_stops_the_batch_before_it_starts(
    tmp_path: Path,
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(record("a", "Total 5 EUR") + b"\n")

    rc, out, _, stderr = run_cli(source, PRICE, extra=("--documents-root", str(tmp_path / "no")))

    assert rc == 2
    assert out == []
    assert stderr.startswith(f"error: documents root {tmp_path / 'no'}: cannot be resolved")


def test_an_unexpected_exception_is_that_lines_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: the pipeline raises, as a bug below the batch would, for one text.
    real = Pipeline.arun

    async def buggy(self: Pipeline, source: Any, **kwargs: Any) -> PipelineResult:
        if source == "trigger the bug":
            raise RuntimeError("boom\nsecond line")
        return await real(self, source, **kwargs)

    monkeypatch.setattr(Pipeline, "arun", buggy)
    source = tmp_path / "in.jsonl"
    source.write_bytes(
        b"\n".join([record("a", "Total 5 EUR"), record("b", "trigger the bug"),
                    record("c", "Total 6 EUR")]) + b"\n"
    )  # fmt: skip

    rc, out, _, stderr = run_cli(source, PRICE)

    assert rc == 0
    assert "Traceback" not in stderr
    assert [line["id"] for line in out] == ["a", "b", "c"]
    error = out[1]["units"]["extract_price"]["error"]
    assert error == {"code": "internal_error",
                     "message": "line 2: unexpected RuntimeError: boom\nsecond line"}  # fmt: skip
    assert out[2]["units"]["extract_price"]["output"] == {"amount": 6.0, "currency": "EUR"}


def test_a_result_that_cannot_be_written_is_still_one_coded_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: one result holds a value JSON cannot write, the first time it is written.
    real = PipelineResult.to_dict
    broken: list[object] = []

    def to_dict(self: PipelineResult) -> dict[str, Any]:
        data = real(self)
        if self.id == "b" and not broken:
            broken.append(self)
            data["units"]["extract_price"]["output"] = {"amount": object()}
        return data

    monkeypatch.setattr(PipelineResult, "to_dict", to_dict)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(record(i, f"Total {n} EUR") for n, i in enumerate("abc")))

    rc, out, _, _ = run_cli(source, PRICE)

    assert rc == 0
    assert [line["id"] for line in out] == ["a", "b", "c"]
    error = out[1]["units"]["extract_price"]["error"]
    assert error["code"] == "internal_error"
    assert error["message"].startswith("line 2: unexpected TypeError: Object of type object")


# -- lines, one at a time ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (b'{"id": "d", "text": "x", "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
         "input_too_deep", "line 3: JSON nested deeper than 50 levels (AAU_MAX_JSON_DEPTH)"),
        (b"[" * 100_000, "input_too_deep", "line 3: JSON nested deeper than 50 levels"),
        (b'{"id": ' + b"9" * 5000 + b', "text": "x"}',
         "invalid_input", "line 3: an integer of 5,000 digits, over the limit of 4,300 digits"),
        (b'{"id": "n", "text": "x", "n": -' + b"1" * 4301 + b"}",
         "invalid_input", "line 3: an integer of 4,301 digits"),
        (record("big", "x" * (2 * 2**20)), "input_too_large",
         "line 3: 2,097,177 bytes, over the limit of 2,097,152 (AAU_MAX_BATCH_LINE_BYTES)"),
        (record("long", "é" * 1_000_001), "input_too_large",
         "line 3: 'text' has 1,000,001 characters, over the limit of 1,000,000"),
    ],
    ids=["deep-object", "deep-array", "5000-digit-id", "4301-digit-field", "2MiB-line",
         "text-chars"],
)  # fmt: skip
def test_parse_line_refuses_what_is_over_a_bound_with_a_code(
    raw: bytes, code: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        parse_line(raw, 3)

    assert caught.value.code == code
    assert str(caught.value).startswith(message)


def test_parse_line_keeps_what_is_within_the_bounds() -> None:
    nested = b'{"id": 1, "text": "x", "n": ' + b"[" * 49 + b"]" * 49 + b"}"
    assert parse_line(nested, 1).id == 1
    brackets = record("s", "[[[[" * 1000 + "}}}}" * 1000)  # brackets in a string do not nest
    assert parse_line(brackets, 1).text == "[[[[" * 1000 + "}}}}" * 1000
    four_thousand_three_hundred = int("9" * 4300)
    assert parse_line(b'{"id": ' + b"9" * 4300 + b', "text": "x"}', 1).id == (
        four_thousand_three_hundred
    )
    assert parse_line(record("t", "é" * 1_000_000), 1).text == "é" * 1_000_000


def test_a_lower_integer_limit_set_in_the_interpreter_applies() -> None:
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(InputError) as caught:
            parse_line(b'{"id": ' + b"9" * 1000 + b', "text": "x"}', 1)
        recovered = batch_module._id_of(b'{"id": ' + b"9" * 1000 + b', "text": "x"}', LIMITS)
    finally:
        sys.set_int_max_str_digits(before)

    assert caught.value.code == "invalid_input"
    assert "an integer of 1,000 digits, over the limit of 640 digits" in str(caught.value)
    assert recovered is None


def test_parse_line_hands_on_valid_text_for_lone_surrogates() -> None:
    line = parse_line(b'{"id": "\\udc80", "text": "a\\ud800b\\ud83d\\ude00c\\udfff"}', 1)

    assert line.id == "\udc80"  # the id as given
    assert line.text == "a\ufffdb\U0001f600c\ufffd"  # same length: offsets stay valid
    assert line.text.encode("utf-8")


def test_the_depth_scan_is_linear_on_an_unterminated_string_full_of_escaped_quotes() -> None:
    # A regex matching whole strings retries from every escaped quote: hours on this line.
    raw = b'{"id": "q", "text": "' + b'\\"' * 1_000_000

    with pytest.raises(InputError) as caught:
        parse_line(raw, 1)

    assert caught.value.code == "invalid_input"


def test_the_id_of_a_refused_line_is_recovered_when_it_can_be() -> None:
    limits = LIMITS
    assert batch_module._id_of(b'{"id": "d", "n": ' + b"[" * 100_000, limits) == "d"
    assert batch_module._id_of(b'{"id": 7, "text": "' + b"x" * 3_000_000 + b'"}', limits) == 7
    assert batch_module._id_of(b'{"id": ' + b"9" * 5000 + b"}", limits) is None
    assert batch_module._id_of(b'{"id": "k", "n": ' + b"9" * 5000 + b"}", limits) == "k"
    assert batch_module._id_of(b'{"id": "cut", "text": "Total', limits) is None  # as before
    assert batch_module._id_of(b'{"id": true}', limits) is None


@pytest.mark.parametrize(
    "id_", ["\ud800", "a\udfffb", "€ and \udc80", "plain", "", 42, None, "\U0001f600"]
)
def test_the_writer_writes_any_id_as_utf8_json_that_reads_back_the_same(id_: Any) -> None:
    pipeline = Pipeline([UnitSpec.from_file(PRICE)], engine=False, terms=False)
    result = pipeline.failed(InputError("bad \ud800 message", code="invalid_input"), id=id_)

    line = batch_module._encode(result)

    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    data = json.loads(line.decode("utf-8"))  # strict UTF-8
    assert data["id"] == id_
    assert data["units"]["extract_price"]["error"]["message"] == "bad \ud800 message"
    if isinstance(id_, str) and "€" in id_:
        assert "€".encode() in line  # only lone surrogates are escaped; the rest stays UTF-8


# -- reading the input ------------------------------------------------------------------------


def read_lines(data: bytes, limit: int, tmp_path: Path) -> list[Any]:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)

    async def collect() -> list[Any]:
        with path.open("rb") as file:
            return [item async for item in batch_module._read_lines(file, limit)]

    return asyncio.run(collect())


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\nb\n", [b"a", b"b"]),
        (b"a\r\nb\rc", [b"a", b"b", b"c"]),
        (b"a\n\n  \nb\n\n\n \n", [b"a", b"", b"  ", b"b"]),  # trailing blank lines: the end
        (b"", []),
        (b"\n\n", []),
        (b"x" * 65535 + b"\r\nb", [b"x" * 65535, b"b"]),  # "\r" ends one chunk, "\n" the next
        (b"x" * 65535 + b"\rb", [b"x" * 65535, b"b"]),
    ],
)
def test_lines_split_like_splitlines_without_trailing_blank_lines(
    data: bytes, expected: list[bytes], tmp_path: Path
) -> None:
    assert read_lines(data, 2**20, tmp_path) == expected


def test_an_over_long_line_is_skipped_in_chunks_never_held_whole(tmp_path: Path) -> None:
    huge = record("huge", "x" * 10_000_000)
    data = record("a", "1") + b"\n" + huge + b"\r\n" + record("b", "2") + b"\n" + huge

    tracemalloc.start()
    try:
        items = read_lines(data, 2 * 2**20, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert [type(item).__name__ for item in items] == ["bytes", "_Oversized", "bytes", "_Oversized"]
    assert items[1].size == items[3].size == len(huge)
    assert batch_module._leading_id(items[1].prefix) == "huge"
    assert peak < 3 * 2 * 2**20  # the line bound and a chunk, not the 10 MB line


@pytest.mark.slow
def test_lone_surrogates_on_the_default_model(
    tmp_path: Path, default_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aau.pipeline.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "build_engine", lambda config=None: default_engine)
    source = tmp_path / "in.jsonl"
    source.write_bytes(
        b"\n".join([
            b'{"id": "\\ud800", "text": "Invoice 7. Total due: EUR 1,250.00 by 30 April."}',
            b'{"id": "t", "text": "The licence fee is $3,000 per year. \\ud800"}',
            b'{"id": "deep", "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ]) + b"\n"
    )  # fmt: skip
    target = tmp_path / "out.jsonl"
    stderr = io.StringIO()

    with contextlib.redirect_stderr(stderr):
        rc = main(["batch", PRICE, "--input", str(source), "--output", str(target)])

    assert rc == 0
    out = [json.loads(line) for line in target.read_bytes().decode("utf-8").splitlines()]
    assert [line["id"] for line in out] == ["\ud800", "t", "deep"]
    units = [line["units"]["extract_price"] for line in out]
    assert units[0]["error"] is None
    assert units[0]["output"] == {"amount": 1250.0, "currency": "EUR"}
    assert units[1]["error"] is None
    assert units[1]["output"] == {"amount": 3000.0, "currency": "USD"}
    assert units[2]["error"]["code"] == "input_too_deep"
    assert "Traceback" not in stderr.getvalue()
