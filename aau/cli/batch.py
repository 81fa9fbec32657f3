"""``aau batch``: JSONL in, JSONL out, one output line per input line, in input order.

A line is ``{"id", "text"}`` or ``{"id", "path"}`` (a PDF, image or text file). A bad line
(not UTF-8, not JSON, no ``id``/``text``, an unreadable document) becomes an output line whose
every unit carries the line's error code; the batch goes on. Inputs run concurrently (a
bounded window) so the shared engine always has work queued, and lines are written as soon as
every earlier line is done, so a crash loses nothing already written.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

from aau.errors import InputError
from aau.ingest import aload_document
from aau.pipeline import Pipeline, PipelineResult

__all__ = ["BatchLine", "parse_line", "run_batch"]


class BatchLine(NamedTuple):
    """One parsed input line."""

    id: str | int
    text: str | None
    path: str | None
    tenant: str | None = None


def parse_line(raw: bytes, number: int) -> BatchLine:
    """The fields of one input line; ``InputError`` names the line and what is wrong.

    A line has ``id`` and either ``text`` or ``path`` (a PDF, image or text file), and may
    name the ``tenant`` whose term dictionaries apply.
    """
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"line {number}: not UTF-8 (byte {exc.start})", code="invalid_utf8"
        ) from None
    try:
        record: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"line {number}: not JSON: {exc.msg} (column {exc.colno})") from None
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
    return BatchLine(record["id"], record.get("text"), record.get("path"), record.get("tenant"))


def _id_of(raw: bytes) -> str | int | None:
    """The id of a line that failed to parse, when one can still be read."""
    try:
        record = json.loads(raw.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        return None
    if isinstance(record, dict) and isinstance(record.get("id"), str | int):
        return record["id"]
    return None


async def _one(
    pipeline: Pipeline, raw: bytes, number: int, folder: Path, languages: str,
    default_tenant: str | None = None,
) -> PipelineResult:  # fmt: skip
    try:
        id_, text, path, tenant = parse_line(raw, number)
    except InputError as exc:
        return pipeline.failed(exc, id=_id_of(raw))
    tenant = tenant or default_tenant
    if text is not None:
        return await pipeline.arun(text, id=id_, tenant=tenant)
    assert path is not None
    try:
        document = await aload_document(folder / path, languages=languages)
    except InputError as exc:
        return pipeline.failed(InputError(f"line {number}: {exc}", code=exc.code), id=id_)
    return await pipeline.arun(document, id=id_, tenant=tenant)


async def run_batch(
    pipeline: Pipeline, source: Path, target: Path, *, concurrency: int = 8,
    languages: str = "eng", tenant: str | None = None,
) -> int:  # fmt: skip
    """Process ``source`` into ``target``; return the number of lines written.

    Relative ``path`` values resolve against the input file's folder; ``tenant`` applies to
    lines that name none.
    """
    lines = source.read_bytes().splitlines()
    # A trailing empty line is the file's end, not an input; inner blank lines are inputs.
    while lines and not lines[-1].strip():
        lines.pop()
    window = asyncio.Semaphore(max(1, concurrency))

    async def bounded(raw: bytes, number: int) -> PipelineResult:
        async with window:
            return await _one(pipeline, raw, number, source.parent, languages, tenant)

    tasks = [asyncio.create_task(bounded(raw, n)) for n, raw in enumerate(lines, start=1)]
    progress = _progress(len(tasks))
    with target.open("w", encoding="utf-8") as out:
        for task in tasks:  # in input order; later lines keep running meanwhile
            result = await task
            out.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
            out.flush()
            progress()
    return len(tasks)


def _progress(total: int):  # noqa: ANN202  # a callable advancing the bar
    if not sys.stderr.isatty():
        return lambda: None
    from rich.progress import Progress

    bar = Progress(transient=True)
    bar.start()
    task = bar.add_task("analysing", total=total)

    def advance() -> None:
        bar.advance(task)
        if bar.tasks[0].completed >= total:
            bar.stop()

    return advance
