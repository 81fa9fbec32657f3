"""A loopback HTTP fault injector for the remote-engine tests.

``FaultInjector`` is a **test double**: a tiny HTTP/1.1 proxy that sits between a client (the
remote engine, or plain httpx in its own tests) and an upstream HTTP server (the vLLM server),
and misbehaves on demand. It is not a general proxy: it handles exactly one request per
connection, forwards it upstream with ``Connection: close`` and relays the answer, then closes.

Fault modes (``MODES``):

``pass``
    Forward and relay unchanged (streamed through, so SSE works). If the client goes away before
    the answer is complete, the upstream connection is closed too, so the server sees the abort.
``stall``
    Read the request, never answer; keep the socket open until the client goes away or the
    injector stops.
``drop``
    Close the connection right after reading the request (the client sees an empty reply).
``reset``
    Set ``SO_LINGER`` to 0 and close: the client sees a TCP RST.
``truncate``
    Forward, then relay only the first half of the upstream response's bytes and close.
``status``
    Answer with ``status`` (e.g. 503, 500, 429), an optional ``Retry-After`` header and a small
    OpenAI-style JSON error body, without contacting upstream.
``malformed_json``
    A 200 with ``Content-Type: application/json`` whose body is not valid JSON.
``wrong_schema``
    Forward, then replace every ``choices[i].message.content`` of an OpenAI chat completion with
    ``{"unexpected": true}`` (``Content-Length`` fixed).

The injector runs its asyncio server in a daemon thread, so sync and async tests alike can use
it; every method is safe to call from any thread other than that loop's. Everything is bounded:
header bytes and read time, body size and read time, upstream connect and answer time; a stuck
client never wedges it, and ``stop()`` returns within a couple of seconds.

Example::

    with FaultInjector(("127.0.0.1", 8000)) as proxy:
        proxy.set_mode("status", status=503, retry_after="1", count=2)  # next two, then pass
        httpx.post(proxy.url + "/v1/chat/completions", json=body)
        assert [r.mode for r in proxy.requests] == ["status"]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

MODES = frozenset(
    {"pass", "stall", "drop", "reset", "truncate", "status", "malformed_json", "wrong_schema"}
)
"""The fault modes ``FaultInjector.set_mode`` accepts."""

MALFORMED_BODY = b'{"id": "x", "choices": ['
"""The body of a ``malformed_json`` answer: cut off in the middle, not JSON."""

WRONG_SCHEMA_CONTENT = '{"unexpected": true}'
"""The assistant content a ``wrong_schema`` answer carries instead of the real one."""

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024

_REASONS = {
    200: "OK",
    400: "Bad Request",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(frozen=True)
class Fault:
    """One fault to apply: the mode and, for ``status``, the code and ``Retry-After`` value."""

    mode: str = "pass"
    status: int = 503
    retry_after: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown fault mode {self.mode!r}; one of {sorted(MODES)}")


PASS = Fault()


@dataclass
class RecordedRequest:
    """What the injector saw of one request."""

    time: float
    """``time.monotonic()`` when the request line arrived."""
    method: str
    path: str
    mode: str
    """The fault mode applied to it."""
    headers: dict[str, str] = field(default_factory=dict)
    """Header names in lower case (a repeated header keeps its last value)."""
    body: Any = None
    """The parsed JSON body; None when there was none or it was not JSON."""
    raw_body: bytes = b""


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class FaultInjector:
    """A loopback HTTP/1.1 fault-injecting proxy: a test double for the remote-engine tests.

    Args:
        upstream: ``(host, port)`` of the real server; None for the modes that never contact it
            (``stall``, ``drop``, ``reset``, ``status``, ``malformed_json``). A forwarding mode
            without an upstream, or with one that refuses, answers 502.
        port: The port to listen on; 0 (default) picks a free one.
        header_timeout: Seconds a client gets to send its request line and headers.
        body_timeout: Seconds a client gets to send its body.
        upstream_timeout: Seconds upstream gets to answer completely (connect: 5 s at most).
        max_body: The largest request body accepted (larger: 413).
    """

    def __init__(
        self,
        upstream: tuple[str, int] | None = None,
        *,
        port: int = 0,
        header_timeout: float = 10.0,
        body_timeout: float = 30.0,
        upstream_timeout: float = 300.0,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.upstream = upstream
        self.host = "127.0.0.1"
        self.port = port
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.upstream_timeout = upstream_timeout
        self.max_body = max_body
        self._lock = threading.Lock()
        self._default = PASS
        self._pending: deque[Fault] = deque()
        self._requests: list[RecordedRequest] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping: asyncio.Event | None = None

    # -- life cycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the port is known once started)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> FaultInjector:
        """Start listening (in a daemon thread); returns self."""
        if self._thread is not None:
            raise RuntimeError("already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # noqa: BLE001  # re-raised in start()
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=main, name=f"fault-injector-{id(self)}", daemon=True)
        self._thread.start()
        if not ready.wait(10.0):
            raise RuntimeError("fault injector did not start within 10 s")
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop: close the listener and every open connection, end the thread. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        with contextlib.suppress(RuntimeError):  # the loop may be closing already
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            with contextlib.suppress(Exception):
                future.result(timeout)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None

    def __enter__(self) -> FaultInjector:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def refuse(self) -> None:
        """Close the listening socket: new connections are refused (open ones go on)."""
        self._call(self._close_listener())

    def accept(self) -> None:
        """Listen again, on the same port, after ``refuse()``."""
        self._call(self._open())

    @property
    def open_connections(self) -> int:
        """How many client connections are being handled now."""
        return len(self._tasks)

    @property
    def listening(self) -> bool:
        """Whether the listening socket is open."""
        return self._server is not None

    # -- faults and records ----------------------------------------------------------------------

    def set_mode(
        self,
        mode: str,
        *,
        status: int = 503,
        retry_after: str | float | None = None,
        count: int | None = None,
    ) -> None:
        """Choose the fault for the requests to come.

        Args:
            mode: One of ``MODES``.
            status: The code a ``status`` fault answers with.
            retry_after: The ``Retry-After`` header of a ``status`` fault (none by default).
            count: None: this fault for every request from now on (and no queued ones). N: this
                fault for the next N requests (queued after any already queued), then
                pass-through (the standing mode becomes ``pass``).
        """
        fault = Fault(mode, status, None if retry_after is None else str(retry_after))
        with self._lock:
            if count is None:
                self._pending.clear()
                self._default = fault
            else:
                if count < 0:
                    raise ValueError("count must be >= 0")
                self._default = PASS
                self._pending.extend([fault] * count)

    def reset_mode(self) -> None:
        """Back to pass-through for every request (queued faults dropped)."""
        self.set_mode("pass")

    @property
    def mode(self) -> str:
        """The mode the next request would get."""
        with self._lock:
            return (self._pending[0] if self._pending else self._default).mode

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the records so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        """Forget the records so far."""
        with self._lock:
            self._requests.clear()

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until at least ``n`` requests were recorded; the records (TimeoutError if not)."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.requests
            if len(records) >= n:
                return records
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(records)} of {n} requests after {timeout} s")
            time.sleep(0.01)

    # -- internals: loop side --------------------------------------------------------------------

    def _call(self, coro: Any, timeout: float = 10.0) -> Any:
        if self._loop is None or self._thread is None:
            coro.close()
            raise RuntimeError("not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _open(self) -> None:
        if self._server is not None:
            return
        if self._stopping is None:
            self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(
            self._serve,
            self.host,
            self.port,
            limit=MAX_HEADER_BYTES,
            reuse_address=True,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close_listener(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()  # no wait_closed(): on 3.12+ it waits for open connections

    async def _shutdown(self) -> None:
        await self._close_listener()
        if self._stopping is not None:
            self._stopping.set()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)

    def _next_fault(self) -> Fault:
        with self._lock:
            return self._pending.popleft() if self._pending else self._default

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (asyncio.CancelledError, ConnectionError, OSError):
            pass
        finally:
            self._tasks.discard(task)
            if not writer.is_closing():
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.header_timeout)
        except (TimeoutError, asyncio.IncompleteReadError):
            return  # the client went away, or never finished its headers
        except asyncio.LimitOverrunError:
            await self._answer(writer, 431, {"error": {"message": "request headers too large"}})
            return
        arrived = time.monotonic()
        try:
            method, target, headers, header_lines = _parse_head(head)
            body = await asyncio.wait_for(self._read_body(reader, headers), self.body_timeout)
        except _BadRequest as exc:
            await self._answer(writer, exc.status, {"error": {"message": str(exc)}})
            return
        except TimeoutError:
            await self._answer(writer, 408, {"error": {"message": "request body too slow"}})
            return
        except asyncio.IncompleteReadError:
            return
        fault = self._next_fault()
        parsed: Any = None
        if body:
            with contextlib.suppress(ValueError):
                parsed = json.loads(body)
        with self._lock:
            self._requests.append(
                RecordedRequest(arrived, method, target, fault.mode, headers, parsed, body)
            )
        await self._apply(fault, reader, writer, method, target, header_lines, body)

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            size_total = 0
            while True:
                line = await reader.readuntil(b"\r\n")
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError as exc:
                    raise _BadRequest(400, "bad chunk size") from exc
                if size == 0:
                    # trailers: read lines until the empty one
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    return b"".join(chunks)
                size_total += size
                if size_total > self.max_body:
                    raise _BadRequest(413, f"request body over {self.max_body} bytes")
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        length_text = headers.get("content-length")
        if length_text is None:
            return b""
        try:
            length = int(length_text)
        except ValueError as exc:
            raise _BadRequest(400, "bad Content-Length") from exc
        if length < 0:
            raise _BadRequest(400, "bad Content-Length")
        if length > self.max_body:
            raise _BadRequest(413, f"request body over {self.max_body} bytes")
        return await reader.readexactly(length)

    async def _apply(
        self,
        fault: Fault,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        header_lines: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        mode = fault.mode
        if mode == "stall":
            await self._until_client_gone(reader)
        elif mode == "drop":
            return  # _serve closes the connection
        elif mode == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif mode == "status":
            extra = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            error = {
                "error": {
                    "message": f"injected fault: HTTP {fault.status}",
                    "type": "fault_injector",
                    "param": None,
                    "code": fault.status,
                }
            }
            await self._answer(writer, fault.status, error, extra)
        elif mode == "malformed_json":
            await self._answer_raw(writer, 200, MALFORMED_BODY, "application/json")
        elif mode == "pass":
            await self._forward(reader, writer, method, target, header_lines, body, stream=True)
        else:  # truncate, wrong_schema: buffer the whole answer
            await self._forward(
                reader, writer, method, target, header_lines, body, stream=False, fault=mode
            )

    async def _until_client_gone(self, reader: asyncio.StreamReader) -> None:
        """Return when the client closes its side (EOF or error) or the injector stops."""
        assert self._stopping is not None
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            while not self._stopping.is_set():
                reading = asyncio.ensure_future(reader.read(65536))
                done, _ = await asyncio.wait({reading, stopping}, return_when="FIRST_COMPLETED")
                if reading not in done:
                    reading.cancel()
                    return
                try:
                    data = reading.result()
                except (ConnectionError, OSError):
                    return
                if not data:
                    return
        finally:
            stopping.cancel()

    async def _forward(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        header_lines: list[tuple[str, str]],
        body: bytes,
        *,
        stream: bool,
        fault: str = "pass",
    ) -> None:
        if self.upstream is None:
            await self._answer(writer, 502, {"error": {"message": "no upstream configured"}})
            return
        host, port = self.upstream
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), min(5.0, self.upstream_timeout)
            )
        except (TimeoutError, OSError) as exc:
            await self._answer(writer, 502, {"error": {"message": f"upstream unreachable: {exc}"}})
            return
        try:
            up_writer.write(_request_bytes(method, target, header_lines, body, host, port))
            await up_writer.drain()
            relay = asyncio.ensure_future(
                self._relay(up_reader, writer)
                if stream
                else self._buffered(up_reader, writer, fault)
            )
            gone = asyncio.ensure_future(self._until_client_gone(reader))
            try:
                done, _ = await asyncio.wait(
                    {relay, gone}, timeout=self.upstream_timeout, return_when="FIRST_COMPLETED"
                )
                if relay in done:
                    relay.result()
                elif not done:
                    await self._answer(writer, 504, {"error": {"message": "upstream too slow"}})
            finally:
                for pending in (relay, gone):
                    pending.cancel()
                await asyncio.gather(relay, gone, return_exceptions=True)
        finally:
            up_writer.close()  # the upstream server sees the client's abort here
            with contextlib.suppress(Exception):
                await asyncio.wait_for(up_writer.wait_closed(), 1.0)

    async def _relay(self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await up_reader.read(65536):
            writer.write(data)
            await writer.drain()

    async def _buffered(
        self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fault: str
    ) -> None:
        answer = await up_reader.read(-1)
        if fault == "truncate":
            writer.write(answer[: len(answer) // 2])
        else:
            writer.write(_with_wrong_schema(answer))
        await writer.drain()

    async def _answer(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        body = json.dumps(payload).encode()
        await self._answer_raw(writer, status, body, "application/json", extra_headers)

    async def _answer_raw(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        content_type: str,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        headers = {"Content-Type": content_type, **(extra_headers or {})}
        with contextlib.suppress(ConnectionError, OSError):
            writer.write(_response_bytes(status, headers, body))
            await writer.drain()


# -- HTTP bytes ----------------------------------------------------------------------------------


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str], list[tuple[str, str]]]:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes anything
        raise _BadRequest(400, "undecodable head") from exc
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _BadRequest(400, f"bad request line {lines[0][:80]!r}")
    method, target, _version = parts
    header_lines: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise _BadRequest(400, f"bad header line {line[:80]!r}")
        header_lines.append((name.strip(), value.strip()))
    headers = {name.lower(): value for name, value in header_lines}
    return method, target, headers, header_lines


_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade"}


def _request_bytes(
    method: str,
    target: str,
    header_lines: list[tuple[str, str]],
    body: bytes,
    host: str,
    port: int,
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}"]
    for name, value in header_lines:
        if name.lower() in _HOP_BY_HOP | {"host", "content-length"}:
            continue
        lines.append(f"{name}: {value}")
    if body or method.upper() in {"POST", "PUT", "PATCH"}:
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _response_bytes(status: int, headers: dict[str, str], body: bytes) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    rest = body
    while rest:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        rest = rest[size + 2 :]
    return bytes(out)


def _with_wrong_schema(answer: bytes) -> bytes:
    """The upstream answer with each choice's message content replaced (others unchanged)."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return answer
    lines = head.decode("latin-1").split("\r\n")
    headers = [line.partition(":") for line in lines[1:]]
    chunked = any(
        name.strip().lower() == "transfer-encoding" and "chunked" in value.lower()
        for name, _, value in headers
    )
    if chunked:
        body = _dechunk(body)
    try:
        payload = json.loads(body)
        changed = False
        for choice in payload.get("choices", []):
            message = choice.get("message")
            if isinstance(message, dict):
                message["content"] = WRONG_SCHEMA_CONTENT
                changed = True
    except (ValueError, AttributeError, TypeError):
        return answer
    if not changed:
        return answer
    new_body = json.dumps(payload).encode()
    kept = [
        f"{name}:{value}"
        for name, _, value in headers
        if name.strip().lower() not in {"content-length", "transfer-encoding", "connection"}
    ]
    kept += [f"Content-Length: {len(new_body)}", "Connection: close"]
    return ("\r\n".join([lines[0], *kept]) + "\r\n\r\n").encode("latin-1") + new_body
