"""``aau batch --ray``: the batch contract of ``aau.cli.batch``, its lines spread over Ray.

The driver reads the input with the local batch's bounded reader (a line over
``batch_line_bytes`` is kept only by its start, never held whole) and hands the numbered lines
to Ray Data (``from_items``, then ``map_batches`` over a fixed pool of actors). Each actor builds
one ``aau.Pipeline`` once, from plain configuration (the command's engine options: the
in-process engine per worker, or a client of the shared OpenAI-compatible endpoints), and
answers its share of the lines with the same per-line function as the local batch
(``aau.cli.batch.answer_line``): the same parsing, bounds, document path checks, coded errors
and output encoding. Ray Data keeps the input order, and the driver writes each output line as
it arrives, with the same progress bar.

Workers must see the driver's filesystem (a local cluster does; a remote one needs a shared
one): they read the unit files and term stores, and the documents of ``path`` lines, whose
checks (inside the input file's folder or ``--documents-root``) run in the worker exactly as in
the local batch. The driver's ``AAU_*`` variables are set in the workers too, so bounds and
engine settings are the same everywhere. The input's lines are held in Ray's object store while
the batch runs (each within its bound), unlike the local batch, which holds a window of them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, cast

from aau.cli.batch import (
    Answerer,
    BatchContext,
    InputLine,
    allowed_root,
    answer_line,
    batch_context,
    write_batch,
)
from aau.errors import AAUError, InputError
from aau.limits import LIMITS, Limits
from aau.pipeline import Pipeline

try:
    import pyarrow as pa
    import ray
    from ray.data import DataContext
    from ray.data.exceptions import SystemException
except ImportError as exc:  # the extra is optional; the plain batch never imports this module
    raise ImportError("aau batch --ray needs Ray Data: pip install 'aau[ray]'") from exc

__all__ = ["run_ray_batch"]

_PROBE_TIMEOUT_S = 5.0
"""How long the driver waits for a cluster's address to accept a connection. Without the probe,
``ray.init`` retries an address nobody listens on for minutes."""
_LINES_PER_WORKER_CALL = 4
"""Lines handed to a worker at a time, per line it analyses at once (``concurrency``)."""


class _WorkerSettings(NamedTuple):
    """What a worker needs besides its pipeline: plain values, sent to every actor."""

    root: Path
    languages: str
    tenant: str | None
    limits: Limits
    concurrency: int


class _LineWorker:
    """One Ray actor: one pipeline, built once, answering the batches of lines it is given.

    Its own event loop lives as long as the actor, since an engine client (connection pools,
    limits) belongs to the loop it was first used on.
    """

    def __init__(self, build_pipeline: Callable[[], Pipeline], settings: _WorkerSettings) -> None:
        self._loop = asyncio.new_event_loop()
        self._context: BatchContext | None = None
        self._error: str | None = None
        try:
            self._context = batch_context(
                build_pipeline(), settings.root, concurrency=settings.concurrency,
                languages=settings.languages, tenant=settings.tenant, limits=settings.limits,
            )  # fmt: skip
        except Exception as exc:  # a unit, an engine setting, a model that does not load
            # Raised here, the error would be lost under Ray Data's replacements of the worker
            # (each failing loudly), and raised later, reworded on its way; it goes back as text.
            self._error = _describe(exc)

    def __call__(self, batch: pa.Table) -> pa.Table:
        """The output lines of a batch of input lines (columns of ``InputLine``), in order.

        A worker without a pipeline answers each line with its error (column ``error``).
        """
        numbers = batch.column("number").to_pylist()
        if self._context is None:
            outputs, errors = [b""] * len(numbers), [self._error] * len(numbers)
        else:
            lines = [InputLine(**row) for row in batch.to_pylist()]
            outputs = self._loop.run_until_complete(_answer_all(lines, self._context))
            errors = [None] * len(numbers)
        return pa.table(
            {
                "number": pa.array(numbers, pa.int64()),
                "output": pa.array(outputs, pa.large_binary()),
                "error": pa.array(errors, pa.large_string()),
            }
        )


def _describe(exc: Exception) -> str:
    """An error as the driver reports it: the message (type named, unless AAU's), then notes."""
    message = str(exc) if isinstance(exc, AAUError) else f"{type(exc).__name__}: {exc}"
    return "\n".join([message, *getattr(exc, "__notes__", [])])


async def _answer_all(lines: list[InputLine], context: BatchContext) -> list[bytes]:
    # gather() inside a coroutine: a worker's call runs in a thread with no current loop.
    return await asyncio.gather(*(answer_line(line, context) for line in lines))


def run_ray_batch(
    build_pipeline: Callable[[], Pipeline], source: Path, target: Path, *,
    address: str | None = None, workers: int | None = None, concurrency: int = 8,
    languages: str = "eng", tenant: str | None = None, documents_root: Path | None = None,
    limits: Limits | None = None,
) -> int:  # fmt: skip
    """Process ``source`` into ``target`` on a Ray cluster; return the number of lines written.

    Args:
        build_pipeline: builds a worker's pipeline, once per worker; it is pickled to the
            workers, so it must carry plain configuration (e.g. the command's options), never
            a built engine.
        source: the input JSONL file.
        target: the output JSONL file.
        address: the cluster to connect to (``ray.init(address=...)``); None starts a local one
            sized to the machine, or attaches to the one ``RAY_ADDRESS`` or ``ray start`` names.
            When Ray is already initialised in this process, that connection is used (and
            kept), as is its logging. The current ``DataContext`` is set to keep the order.
        workers: actors, each with its own pipeline (default: the cluster's CPUs).
        concurrency: lines each worker analyses at once.
        languages: tesseract languages for scanned documents.
        tenant: the tenant of lines that name none.
        documents_root: the folder ``path`` lines must resolve inside (default: the input
            file's folder).
        limits: the bounds on lines, texts and documents (default ``aau.limits.LIMITS``).

    Raises:
        InputError: the input cannot be opened (``file_not_found``), the documents root does
            not exist (``path_not_allowed``), or no cluster answers at ``address``.
        AAUError: a worker could not build its pipeline (a unit, an engine setting).
    """
    limits = limits or LIMITS
    settings = _WorkerSettings(
        allowed_root(documents_root or source.parent), languages, tenant, limits,
        max(1, concurrency),
    )  # fmt: skip
    owned = not ray.is_initialized()
    if owned:
        _connect(address)
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        pool = max(1, workers or cpus)
        return asyncio.run(
            write_batch(source, target, _answerer(build_pipeline, settings, pool, cpus),
                        limits=limits)
        )  # fmt: skip
    finally:
        if owned:
            # Stops what a local cluster started (and waits for it); from a remote one, only
            # disconnects.
            ray.shutdown(wait_for_processes=True)


def _connect(address: str | None) -> None:
    """``ray.init``, quiet: no dashboard, no worker logs on this terminal, no usage stats."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if address is not None:
        _probe(address)
    env = {name: value for name, value in os.environ.items() if name.startswith("AAU_")}
    try:
        ray.init(
            address=address, include_dashboard=False, log_to_driver=False,
            logging_level=logging.ERROR, runtime_env={"env_vars": env} if env else None,
        )  # fmt: skip
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f" {address}" if address else ""
        # Ray sends its token to an address given only when asked to (RAY_AUTH_MODE=token).
        hint = "; a cluster with token authentication needs RAY_AUTH_MODE=token"
        hint = hint if address and "RAY_AUTH_MODE" not in os.environ else ""
        raise InputError(f"--ray{where}: cannot connect to a Ray cluster ({exc}){hint}") from None
    # Ray Data reports each run on the console; its log file (ray-data.log) keeps the reports,
    # and a failure comes back here as the batch's own error.
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        ):
            handler.setLevel(logging.CRITICAL + 1)


def _probe(address: str) -> None:
    """Fail fast when nothing listens at a ``host:port`` (or ``ray://host:port``) address."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local" or a form ray.init itself explains
    try:
        socket.create_connection((host.strip("[]"), int(port)), _PROBE_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(
            f"--ray {address}: no Ray cluster answers there ({reason}); start one with "
            "`ray start --head`, or leave ADDRESS out to run a local one"
        ) from None


def _answerer(
    build_pipeline: Callable[[], Pipeline], settings: _WorkerSettings, workers: int, cpus: int
) -> Answerer:
    """The answerer ``write_batch`` hands the input lines to: a Ray Data pipeline of workers."""

    async def answerer(lines: AsyncIterator[InputLine]) -> AsyncIterator[bytes]:
        rows = [line._asdict() async for line in lines]
        if not rows:
            return
        count = len(rows)
        context = DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False  # write_batch draws the batch's own bar
        context.print_on_execution_start = False
        context.enable_auto_log_stats = False
        context.raise_original_map_exception = True  # a failure names its own type and message
        dataset = ray.data.from_items(rows).map_batches(
            _LineWorker, fn_constructor_args=(build_pipeline, settings),
            batch_size=_LINES_PER_WORKER_CALL * settings.concurrency, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers),
            # More workers than CPUs share them: a client of a remote engine mostly waits.
            num_cpus=min(1.0, cpus / workers),
        )  # fmt: skip
        del rows  # the object store holds them now
        tables = dataset.iter_batches(batch_size=None, batch_format="pyarrow")
        batches = cast("Iterator[pa.Table]", iter(tables))  # the format makes each a table
        expected = 1
        while True:
            try:
                table = await asyncio.to_thread(next, batches, None)
            except (ray.exceptions.RayError, SystemException) as exc:
                raise _batch_error(exc, expected - 1) from None
            if table is None:
                break
            failure = next((e for e in table.column("error").to_pylist() if e is not None), None)
            if failure is not None:
                message, *notes = failure.split("\n")
                error = AAUError(f"a Ray worker could not build its pipeline: {message}")
                for note in notes:
                    error.add_note(note)
                raise error
            for number, output in zip(
                table.column("number").to_pylist(), table.column("output").to_pylist(), strict=True
            ):
                if number != expected:  # preserve_order guarantees this; never write out of order
                    raise RuntimeError(f"Ray returned line {number} where {expected} was due")
                expected += 1
                yield output
        if expected != count + 1:
            raise RuntimeError(f"Ray returned {expected - 1} lines of {count}")

    return answerer


def _batch_error(exc: BaseException, written: int) -> AAUError:
    """What stopped the batch (a bug in a worker's own code, a worker Ray lost), in one line.

    The innermost exception under Ray's wrappers names it; Ray's report of it goes on for
    pages, and stays in the session's logs.
    """
    seen: set[int] = set()
    current: Any = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        exc, current = current, getattr(current, "cause", None) or current.__cause__
    first = (str(exc).strip().splitlines() or [""])[0]
    return AAUError(
        f"the Ray batch stopped after {written} lines: {type(exc).__name__}: {first} "
        "(the Ray session's logs hold the details)"
    )
