"""``aau batch``: JSONL in, JSONL out, one output line per input line, in input order.

A line is ``{"id", "text"}`` or ``{"id", "path"}`` (a PDF, image or text file), and may name
the ``tenant`` whose term dictionaries apply. Nothing a line holds escapes it: a bad line (not
UTF-8, not JSON, no ``id``/``text``, over a bound, an unreadable or forbidden document), and
even an unexpected exception while one line is analysed (``internal_error``, type and message,
no traceback), becomes an output line whose every unit carries the line's error code; the batch
goes on. The bounds are those of ``aau.limits``:

- a line over ``batch_line_bytes`` is ``input_too_large`` and is never parsed nor held whole
  (the file is read in chunks), its id read from the line's start (``{"id": …`` first);
- JSON nested deeper than ``json_depth`` is ``input_too_deep``, found by a scan of the brackets
  outside strings before anything is built;
- an integer over 4,300 digits (Python's conversion limit) is ``invalid_input``; such an id is
  written as ``null``, not as text that would pass for a different id;
- a ``text`` over ``text_chars`` characters is ``input_too_large``; lone surrogates in a text
  (JSON can escape one: backslash, ``ud800``) reach the units as U+FFFD, at the same offsets;
- a ``path`` must resolve, symlinks followed, inside the input file's folder or the
  ``documents_root`` given (``--documents-root``): ``path_not_allowed`` otherwise, an absolute
  path included unless it is inside; a NUL byte, a lone surrogate or an over-long path is
  ``invalid_path``; documents are read in a worker thread within the document bounds (see
  ``aau.ingest.Document.from_path`` for their codes: a FIFO or device is ``file_not_found``).

Ids are written as given (a string keeps its lone surrogates, written as JSON escapes, so every
output line is UTF-8 JSON). Inputs run concurrently (a bounded window, and a bound on the bytes
of the lines in flight, so a few big lines do not run together) so the shared engine always has
work queued, and lines are written as soon as every earlier line is done, so a crash loses
nothing already written.

The reading, the per-line work and the writing are shared with ``aau batch --ray``
(``aau.cli.ray_batch``): ``write_batch`` reads the input and writes the output lines an
answerer yields, ``answer_line`` turns one ``InputLine`` into its output line under a
``BatchContext``; only how the lines are spread over pipelines differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeGuard

from aau.errors import AAUError, InputError
from aau.ingest import aload_document
from aau.limits import LIMITS, Limits
from aau.pipeline import Pipeline, PipelineResult
from aau.terms.store import check_tenant_name

__all__ = [
    "Answerer",
    "BatchContext",
    "BatchLine",
    "InputLine",
    "allowed_root",
    "answer_line",
    "batch_context",
    "parse_line",
    "run_batch",
    "write_batch",
]

_CHUNK = 1 << 16
"""Bytes read from the input file at a time."""
_ID_WINDOW = 1 << 16
"""Bytes kept of an over-long line, to read its id from."""
_MAX_INT_DIGITS = 4300
"""Digits of the longest integer a line may hold: CPython's default conversion limit (a lower
one set in the interpreter applies; an unlimited one does not, since conversion is quadratic)."""
_PATH_BYTES, _NAME_BYTES = 4096, 255
"""Longest path and longest path component (Linux's PATH_MAX and NAME_MAX)."""
_MESSAGE_CHARS = 2000
"""Characters kept of an unexpected exception's message."""

_EOL = re.compile(rb"\r\n|\r|\n")
_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)
_LEADING_ID = re.compile(
    rb'\A[ \t\r\n]*\{[ \t\r\n]*"id"[ \t\r\n]*:[ \t\r\n]*'
    rb'("[^"\\]*(?:\\.[^"\\]*)*"|-?(?:0|[1-9][0-9]*)(?![0-9.eE]))',
    re.DOTALL,
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class BatchLine(NamedTuple):
    """One parsed input line."""

    id: str | int
    text: str | None
    path: str | None
    tenant: str | None = None


class _Oversized(NamedTuple):
    """A line over ``batch_line_bytes``: its first bytes and its size, the rest skipped."""

    prefix: bytes
    size: int


class InputLine(NamedTuple):
    """One line of the input file as read, in plain values (a worker process can be sent one)."""

    number: int
    """The line's number, from 1."""
    data: bytes
    """The line's bytes; of a line over ``batch_line_bytes`` only its first bytes, enough to
    read its id from: such a line is never held whole."""
    size: int
    """The line's size in bytes (more than ``len(data)`` when only its start was kept)."""

    @property
    def oversized(self) -> bool:
        """Whether only the line's start was kept (it is over ``batch_line_bytes``)."""
        return self.size > len(self.data)


class _NumberTooLong(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(f"an integer of {digits:,} digits")
        self.digits = digits


class _TooLongInt:
    """Stands for an integer too long to convert, while a bad line's id is looked for."""


def _int_digits() -> int:
    return min(_MAX_INT_DIGITS, sys.get_int_max_str_digits() or _MAX_INT_DIGITS)


def _strict_int(token: str) -> int:
    digits = len(token) - token.startswith("-")
    if digits > _int_digits():
        raise _NumberTooLong(digits)
    return int(token)


def _lenient_int(token: str) -> int | _TooLongInt:
    return _TooLongInt() if len(token) - token.startswith("-") > _int_digits() else int(token)


def _depth(line: str, limit: int) -> int:
    """How deep the line's brackets outside strings nest, counting no further than ``limit + 1``.

    One pass over the quotes, escapes and brackets, in time linear in the line (a regex for
    whole strings would retry from every quote of an unterminated one). Exact for JSON; for
    text that is not JSON, a number the parser's error then supersedes.
    """
    depth = deepest = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(line):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:  # a bracket in a string, or an escape
            continue
        elif token in "[{":
            depth += 1
            if depth > limit:
                return depth
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_line(raw: bytes, number: int, *, limits: Limits | None = None) -> BatchLine:
    """The fields of one input line; ``InputError`` names the line and what is wrong.

    A line has ``id`` and either ``text`` or ``path`` (a PDF, image or text file), and may
    name the ``tenant`` whose term dictionaries apply. The line is refused, with a code, when it
    is over ``limits.batch_line_bytes`` (``input_too_large``, before it is decoded), not UTF-8
    (``invalid_utf8``), nested deeper than ``limits.json_depth`` (``input_too_deep``, before it
    is parsed), not a JSON object, holds an integer over 4,300 digits (``invalid_input``), or a
    ``text`` over ``limits.text_chars`` characters (``input_too_large``). Lone surrogates of a
    ``text`` become U+FFFD.
    """
    limits = limits or LIMITS
    if len(raw) > limits.batch_line_bytes:
        raise _too_large(number, len(raw), limits)
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"line {number}: not UTF-8 (byte {exc.start})", code="invalid_utf8"
        ) from None
    if _depth(line, limits.json_depth) > limits.json_depth:
        raise _too_deep(number, limits)
    try:
        record: Any = json.loads(line, parse_int=_strict_int)
    except _NumberTooLong as exc:
        raise InputError(
            f"line {number}: {exc}, over the limit of {_int_digits():,} digits; "
            "send long numbers (ids too) as strings",
            code="invalid_input",
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"line {number}: not JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # the scan above keeps this from happening; kept as a last guard
        raise _too_deep(number, limits) from None
    if not isinstance(record, dict):
        raise InputError(f"line {number}: expected a JSON object, got {type(record).__name__}")
    if "id" not in record:
        raise InputError(f"line {number}: missing 'id'", code="missing_field")
    if isinstance(record["id"], bool) or not isinstance(record["id"], str | int):
        kind = type(record["id"]).__name__
        raise InputError(f"line {number}: 'id' must be a string or an integer, got {kind}")
    if "text" not in record and "path" not in record:
        raise InputError(f"line {number}: missing 'text' (or 'path')", code="missing_field")
    for key in ("text", "path", "tenant"):
        if key in record and not isinstance(record[key], str):
            kind = type(record[key]).__name__
            raise InputError(f"line {number}: {key!r} must be a string, got {kind}")
    text = record.get("text")
    if text is not None:
        if len(text) > limits.text_chars:
            raise InputError(
                f"line {number}: 'text' has {len(text):,} characters, over the limit of "
                f"{limits.text_chars:,} (AAU_MAX_TEXT_CHARS); split the document",
                code="input_too_large",
            )
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return BatchLine(record["id"], text, record.get("path"), record.get("tenant"))


def _too_large(number: int, size: int, limits: Limits) -> InputError:
    return InputError(
        f"line {number}: {size:,} bytes, over the limit of {limits.batch_line_bytes:,} "
        "(AAU_MAX_BATCH_LINE_BYTES); the line was not read",
        code="input_too_large",
    )


def _too_deep(number: int, limits: Limits) -> InputError:
    return InputError(
        f"line {number}: JSON nested deeper than {limits.json_depth} levels "
        "(AAU_MAX_JSON_DEPTH); the line was not parsed",
        code="input_too_deep",
    )


def _id_of(raw: bytes, limits: Limits) -> str | int | None:
    """The id of a line that failed to parse, when one can still be read.

    A line that parses as JSON gives its ``id``; one too long or too deep to parse, the id it
    starts with (``{"id": …``). An integer id too long to convert gives None.
    """
    if len(raw) <= limits.batch_line_bytes:
        line = raw.decode("utf-8", "replace")
        if _depth(line, limits.json_depth) <= limits.json_depth:
            try:
                record = json.loads(line, parse_int=_lenient_int)
            except (ValueError, RecursionError):
                return None
            value = record.get("id") if isinstance(record, dict) else None
            return value if _is_id(value) else None
    return _leading_id(raw)


def _leading_id(raw: bytes) -> str | int | None:
    match = _LEADING_ID.match(raw[:_ID_WINDOW])
    if match is None:
        return None
    try:
        value = json.loads(match.group(1).decode("utf-8", "replace"), parse_int=_lenient_int)
    except ValueError:
        return None
    return value if _is_id(value) else None


def _is_id(value: object) -> TypeGuard[str | int]:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _document_path(path: str, root: Path) -> Path:
    """Where a line's ``path`` points, symlinks resolved, if that is inside ``root``.

    Raises:
        InputError: ``invalid_path`` (a NUL byte, a lone surrogate, too long, a symlink loop)
            or ``path_not_allowed`` (outside ``root``).
    """
    if "\x00" in path:
        raise InputError(f"'path' {path!r} contains a NUL byte", code="invalid_path")
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        raise InputError(
            f"'path' {path!r} holds characters no file name can (a lone surrogate)",
            code="invalid_path",
        ) from None
    if len(encoded) > _PATH_BYTES or any(len(name) > _NAME_BYTES for name in encoded.split(b"/")):
        raise InputError(
            f"'path' is too long ({len(encoded):,} bytes; at most {_PATH_BYTES:,}, and "
            f"{_NAME_BYTES} per name)",
            code="invalid_path",
        )
    try:
        resolved = (root / path).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop
        raise InputError(
            f"'path' {path!r} cannot be resolved ({exc})", code="invalid_path"
        ) from None
    if not resolved.is_relative_to(root):
        raise InputError(
            f"'path' {path!r} resolves outside {root}; documents are read only from there "
            "(aau batch --documents-root DIR allows another folder)",
            code="path_not_allowed",
        )
    return resolved


def allowed_root(folder: Path) -> Path:
    """The folder documents may be read from, resolved; it must exist."""
    try:
        root = folder.resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:
        raise InputError(
            f"documents root {folder}: cannot be resolved ({exc})", code="path_not_allowed"
        ) from None
    if not root.is_dir():
        raise InputError(f"documents root {folder}: not a folder", code="path_not_allowed")
    return root


class BatchContext(NamedTuple):
    """What every line analysed by one pipeline shares; ``batch_context`` builds one."""

    pipeline: Pipeline
    root: Path
    """The folder documents are read from, resolved."""
    languages: str
    tenant: str | None
    """The tenant of lines that name none."""
    limits: Limits
    admission: _Admission
    """How many lines (and bytes of lines) run at once."""


def batch_context(
    pipeline: Pipeline, documents_root: Path, *, concurrency: int = 8, languages: str = "eng",
    tenant: str | None = None, limits: Limits | None = None,
) -> BatchContext:  # fmt: skip
    """The context of lines analysed by ``pipeline``, ``concurrency`` of them at once.

    Raises:
        InputError: ``documents_root`` does not exist or is no folder (``path_not_allowed``).
    """
    limits = limits or LIMITS
    admission = _Admission(max(1, concurrency), 2 * limits.batch_line_bytes)
    return BatchContext(
        pipeline, allowed_root(documents_root), languages, tenant, limits, admission
    )


async def answer_line(line: InputLine, context: BatchContext) -> bytes:
    """The output line of one input line, once the context admits it; never raises.

    This is the whole per-line work of a batch, whichever process runs it.
    """
    async with context.admission.admit(len(line.data)):
        result = await _one(line, context)
    return _output_line(result, line.number, context.pipeline)


async def _one(input_line: InputLine, context: BatchContext) -> PipelineResult:
    """One line's result; nothing raised while reading or analysing it escapes."""
    pipeline, limits = context.pipeline, context.limits
    number, data = input_line.number, input_line.data
    id_: str | int | None = None
    try:
        if input_line.oversized:
            return pipeline.failed(
                _too_large(number, input_line.size, limits), id=_leading_id(data)
            )
        try:
            line = parse_line(data, number, limits=limits)
        except InputError as exc:
            return pipeline.failed(exc, id=_id_of(data, limits))
        id_ = line.id
        tenant = line.tenant or context.tenant
        if tenant is not None and pipeline.terms is not None:
            check_tenant_name(tenant)  # before the store makes a file name of it
        if line.text is not None:
            return await pipeline.arun(line.text, id=id_, tenant=tenant)
        assert line.path is not None
        try:
            path = _document_path(line.path, context.root)
            document = await aload_document(path, languages=context.languages, limits=limits)
        except InputError as exc:
            return pipeline.failed(InputError(f"line {number}: {exc}", code=exc.code), id=id_)
        return await pipeline.arun(document, id=id_, tenant=tenant)
    except AAUError as exc:
        return pipeline.failed(exc, id=id_)
    except Exception as exc:  # a bug, here or below: this line's error, never the batch's
        return pipeline.failed(_internal(number, exc), id=id_)


def _internal(number: int, exc: BaseException) -> InputError:
    message = str(exc)
    if len(message) > _MESSAGE_CHARS:
        message = message[:_MESSAGE_CHARS] + "…"
    return InputError(
        f"line {number}: unexpected {type(exc).__name__}: {message}", code="internal_error"
    )


def _encode(result: PipelineResult) -> bytes:
    """One output line: UTF-8 JSON, lone surrogates (an id, a message) written as escapes."""
    text = json.dumps(result.to_dict(), ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate can only be inside a JSON string here, where its \uXXXX escape is
        # what ensure_ascii=True would write: json.loads reads the same string back.
        escaped = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        return escaped.encode("utf-8") + b"\n"


def _output_line(result: PipelineResult, number: int, pipeline: Pipeline) -> bytes:
    """``_encode``, or the line's ``internal_error`` when its result cannot be written."""
    try:
        return _encode(result)
    except Exception as exc:  # e.g. an output JSON cannot hold: still one line for the input
        error = _internal(number, exc)
    try:
        return _encode(pipeline.failed(error, id=result.id))
    except Exception:  # the id itself
        return _encode(pipeline.failed(error))


async def _read_lines(file: IO[bytes], limit: int) -> AsyncIterator[bytes | _Oversized]:
    """The file's lines, split like ``bytes.splitlines``, read in chunks off the event loop.

    A line over ``limit`` bytes comes as an ``_Oversized`` (its first bytes, its size) without
    ever being held whole. Blank lines at the end of the file are its end, not inputs; inner
    blank lines are inputs.
    """
    buffer = bytearray()
    skipped: _Oversized | None = None  # the over-long line being skipped, until its end
    blanks: list[tuple[bytes, int]] = []  # held back until a non-blank line: (raw, count) runs
    eof = False
    while not eof:
        data = await asyncio.to_thread(file.read, _CHUNK)
        eof = not data
        buffer += data
        start = 0
        lines: list[bytes | _Oversized] = []
        while True:
            match = _EOL.search(buffer, start)
            if match is None or (match.end() == len(buffer) and match.group() == b"\r" and not eof):
                break  # no end of line yet, or a "\r" whose "\n" may be in the next chunk
            piece = bytes(buffer[start : match.start()])
            if skipped is not None:
                lines.append(_Oversized(skipped.prefix, skipped.size + len(piece)))
                skipped = None
            elif len(piece) > limit:
                lines.append(_Oversized(piece[:_ID_WINDOW], len(piece)))
            else:
                lines.append(piece)
            start = match.end()
        del buffer[:start]
        # Of an over-long line only the first bytes are kept; a final "\r" stays, since its
        # "\n" may come next.
        keep = 1 if buffer.endswith(b"\r") and not eof else 0
        if skipped is not None:
            skipped = _Oversized(skipped.prefix, skipped.size + len(buffer) - keep)
            del buffer[: len(buffer) - keep]
        elif len(buffer) > limit:
            skipped = _Oversized(bytes(buffer[:_ID_WINDOW]), len(buffer) - keep)
            del buffer[: len(buffer) - keep]
        if eof:
            if skipped is not None:
                lines.append(skipped)
            elif buffer:
                lines.append(bytes(buffer))
        for line in lines:
            if isinstance(line, bytes) and not line.strip():
                if blanks and blanks[-1][0] == line:
                    blanks[-1] = (line, blanks[-1][1] + 1)
                else:
                    blanks.append((line, 1))
                continue
            for blank, count in blanks:
                for _ in range(count):
                    yield blank
            blanks.clear()
            yield line


class _Admission:
    """At most ``slots`` lines analysed at once, with at most ``budget`` bytes of lines.

    One line may always run, however big.
    """

    def __init__(self, slots: int, budget: int) -> None:
        self._slots, self._budget = slots, budget
        self._running = self._bytes = 0
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def admit(self, size: int) -> AsyncIterator[None]:
        """Wait for room for a line of ``size`` bytes, and hold it while the block runs."""

        def room() -> bool:
            if self._running == 0:
                return True
            return self._running < self._slots and self._bytes + size <= self._budget

        async with self._changed:
            await self._changed.wait_for(room)
            self._running += 1
            self._bytes += size
        try:
            yield
        finally:
            async with self._changed:
                self._running -= 1
                self._bytes -= size
                self._changed.notify_all()


Answerer = Callable[[AsyncIterator[InputLine]], AsyncIterator[bytes]]
"""Turns the input lines into their output lines, one each, in input order."""


async def write_batch(
    source: Path, target: Path, answerer: Answerer, *, limits: Limits | None = None
) -> int:
    """Read ``source``'s lines, have ``answerer`` answer them, write its lines to ``target``.

    The lines are read in chunks, one over ``limits.batch_line_bytes`` kept only by its start;
    each output line is flushed as soon as it comes, with a progress bar on a terminal. Return
    the number of lines written.

    Raises:
        InputError: ``source`` cannot be opened (``file_not_found``).
    """
    limits = limits or LIMITS
    try:
        file = source.open("rb")
    except OSError as exc:
        raise InputError(f"--input {source}: cannot be read ({exc.strerror})",
                         code="file_not_found") from None  # fmt: skip

    async def lines() -> AsyncIterator[InputLine]:
        number = 0
        async for item in _read_lines(file, limits.batch_line_bytes):
            number += 1
            if isinstance(item, _Oversized):
                yield InputLine(number, item.prefix, item.size)
            else:
                yield InputLine(number, item, len(item))

    progress = _Progress(source)
    written = 0
    with file, target.open("wb") as out, contextlib.closing(progress):
        async for output in answerer(lines()):
            out.write(output)
            out.flush()
            written += 1
            progress()
    return written


async def run_batch(
    pipeline: Pipeline, source: Path, target: Path, *, concurrency: int = 8,
    languages: str = "eng", tenant: str | None = None, documents_root: Path | None = None,
    limits: Limits | None = None,
) -> int:  # fmt: skip
    """Process ``source`` into ``target``; return the number of lines written.

    ``path`` values resolve against ``documents_root`` (default: the input file's folder)
    and must stay inside it; ``tenant`` applies to lines that name none; ``limits`` (default
    ``aau.limits.LIMITS``) bounds lines, texts and documents.

    Raises:
        InputError: the input cannot be opened (``file_not_found``) or the documents root
            does not exist (``path_not_allowed``); a bad line never raises.
    """
    limits = limits or LIMITS
    context = batch_context(
        pipeline, documents_root or source.parent, concurrency=concurrency,
        languages=languages, tenant=tenant, limits=limits,
    )  # fmt: skip
    # Lines read ahead of the one being written: enough to keep every slot busy behind a slow
    # line, bounded in number and bytes so that a big input is never held in memory.
    ahead_lines, ahead_bytes = max(16, 4 * max(1, concurrency)), 8 * limits.batch_line_bytes

    async def answerer(lines: AsyncIterator[InputLine]) -> AsyncIterator[bytes]:
        pending: deque[tuple[asyncio.Task[bytes], int]] = deque()
        held = 0
        async for line in lines:
            size = len(line.data)
            while pending and (len(pending) >= ahead_lines or held + size > ahead_bytes):
                task, done = pending.popleft()
                held -= done
                yield await task  # in input order; later lines keep running meanwhile
            pending.append((asyncio.create_task(answer_line(line, context)), size))
            held += size
        while pending:
            yield await pending.popleft()[0]

    return await write_batch(source, target, answerer, limits=limits)


class _Progress:
    """A progress bar on a terminal (lines of ``source``, counted first), else nothing."""

    def __init__(self, source: Path) -> None:
        self._advance: Callable[[], None] | None = None
        self._stop: Callable[[], None] | None = None
        if not sys.stderr.isatty():
            return
        from rich.progress import Progress

        with source.open("rb") as file:
            total = sum(chunk.count(b"\n") for chunk in iter(lambda: file.read(1 << 20), b""))
        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("analysing", total=total or None)
        self._advance, self._stop = (lambda: bar.advance(task)), bar.stop

    def __call__(self) -> None:
        """One more line written."""
        if self._advance is not None:
            self._advance()

    def close(self) -> None:
        """Take the bar off the terminal."""
        if self._stop is not None:
            self._stop()
