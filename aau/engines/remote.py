"""``OpenAIEngine``: a unit's engine on OpenAI-compatible servers (vLLM, SGLang, OpenAI).

Each request becomes one ``POST /v1/chat/completions`` with the unit's bounded schema as
``response_format: {type: json_schema}`` (never vLLM's legacy ``guided_json``, which vLLM 0.32
ignores without a word), greedy, the unit's token budget, and ``logprobs``/``top_logprobs`` for
the calibrator. The answer is checked here only for being a completion; the runner validates it
against the unit's schema and grammars as it does every engine's (servers drop keywords they do
not support).

Replicas serving the same model are balanced by least outstanding requests, each with a bound
on requests in flight and its own circuit breaker (``aau.engines.resilience``); failures are
retried on the failure class's policy within the request's deadline. Cancelling a request
(``request.cancel`` or cancelling the task) closes its connection, which makes vLLM abort the
generation on its side.

httpx is the HTTP client. Its connection pool belongs to one event loop while callers come from
many (``Pipeline.run`` starts a loop per call), so the engine does its I/O on an event loop of
its own, on one daemon thread, as the local engine computes on its own worker thread; callers
await the results from theirs. ``close`` ends that loop and its connections.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from aau.engines.base import (
    EngineCapabilities,
    Generation,
    GenerationRequest,
    Timings,
    notify_start,
)
from aau.engines.registry import EngineConfig, RemoteSettings
from aau.engines.resilience import CircuitBreaker, backoff_s
from aau.errors import (
    EngineBadResponse,
    EngineError,
    EngineOverloaded,
    EngineTimeout,
    EngineUnavailable,
)

__all__ = ["OpenAIEngine", "Replica", "RetryRecord"]

_log = logging.getLogger(__name__)

_HEALTH_PATH = {"vllm": "/health", "sglang": "/health", "openai": "/v1/models"}
_CANCEL_POLL_S = 0.05
_MAX_RESPONSE_BYTES = 16 * 2**20  # a completion of a unit's budget is kilobytes
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RetryRecord:
    """One retry the engine made: what failed and how long it waited (for traces and tests)."""

    at: float
    """``time.monotonic()`` when the failure was seen."""
    replica: str
    retry: int
    """0 for the first retry of a request."""
    delay_s: float
    reason: str


@dataclass
class Replica:
    """One server: its URL, requests in flight and circuit breaker."""

    url: str
    breaker: CircuitBreaker
    in_flight: int = 0
    sent: int = 0

    def __str__(self) -> str:
        return self.url


class _Retry(Exception):
    """An attempt failed in a way worth trying again (internal to ``_one``)."""

    def __init__(self, error: EngineError, *, delay_s: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay_s = delay_s  # the server's Retry-After, when it gave one


class OpenAIEngine:
    """A unit's engine on one or more OpenAI-compatible servers."""

    name = "openai"

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig(backend="openai")
        self.settings: RemoteSettings = self.config.remote
        if not self.settings.base_urls:
            raise EngineUnavailable(
                "the openai engine needs remote.base_urls (or AAU_BASE_URLS), e.g. "
                "http://127.0.0.1:8000"
            )
        self.capabilities = EngineCapabilities(
            token_logprobs=True,
            logprobs_after_mask=True,
            prefix_cache=self.settings.dialect in {"vllm", "sglang"},
        )
        self.replicas = [
            Replica(url, CircuitBreaker(url, self.settings.breaker))
            for url in self.settings.base_urls
        ]
        self.served_model = self.settings.served_model
        self.retries: list[RetryRecord] = []
        """The retries made, newest last (bounded), with their delays: the schedule."""
        self._api_key = os.environ.get(self.settings.api_key_env) or None
        self._lock = threading.Lock()
        # The engine's own I/O loop, its client and the wake-up for freed slots (made on start).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: httpx.AsyncClient | None = None
        self._freed: asyncio.Condition | None = None
        self._ready_lock: asyncio.Lock | None = None
        self._rng = random.Random()
        self._ready = False
        self._turn = 0  # breaks ties between equally loaded replicas in turn

    # -- the Engine protocol -----------------------------------------------------------

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """Send the requests concurrently; each failure stays in its own slot."""
        return await self._on_engine_loop(self._generate(requests))

    async def ready(self) -> None:
        """Wait until a replica answers its health check (and learn the served model's name).

        Once one has, this returns at once: the breakers watch the replicas from then on.

        Raises:
            EngineUnavailable: no replica was healthy within ``ready_timeout_s``.
        """
        if not self._ready:
            await self._on_engine_loop(self._wait_ready())

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Wait for a healthy replica; the server compiles schemas and caches prefixes itself."""
        await self.ready()

    def close(self) -> None:
        """Close the connections and end the engine's I/O loop (a later call starts them anew)."""
        with self._lock:
            loop, thread, client = self._loop, self._thread, self._client
            self._loop = self._thread = self._client = self._freed = self._ready_lock = None
        if loop is None or thread is None:
            return
        if client is not None:
            with contextlib.suppress(Exception):  # closing must not fail on a dead server
                asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()
        atexit.unregister(self.close)

    # -- the engine's own loop -----------------------------------------------------------

    async def _on_engine_loop(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run ``work`` on the engine's loop and await it from the caller's; cancel it with us."""
        future = asyncio.run_coroutine_threadsafe(work, self._started())
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()  # cancels the task there: its connection closes, vLLM aborts
            raise

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is not None:
                return self._loop
            loop = asyncio.new_event_loop()
            ready = concurrent.futures.Future[None]()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                size = self.settings.max_in_flight * len(self.replicas)
                self._client = httpx.AsyncClient(
                    limits=httpx.Limits(max_connections=size + 8, max_keepalive_connections=size)
                )
                self._freed = asyncio.Condition()
                self._ready_lock = asyncio.Lock()
                ready.set_result(None)
                loop.run_forever()

            thread = threading.Thread(target=serve, name="aau-remote-engine", daemon=True)
            thread.start()
            ready.result(timeout=10)
            self._loop, self._thread = loop, thread
            atexit.register(self.close)
            return loop

    async def _generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        if self.served_model is None:  # the name comes from the server: ask it first
            try:
                await self._wait_ready()
            except EngineError as exc:
                return [exc for _ in requests]
        return list(await asyncio.gather(*(self._guarded(r) for r in requests)))

    async def _wait_ready(self) -> None:
        assert self._ready_lock is not None
        async with self._ready_lock:  # runs arriving together share one round of health checks
            if not self._ready:
                await self._poll_health()

    async def _poll_health(self) -> None:
        timeout_s = self.config.ready_timeout_s
        deadline = time.monotonic() + timeout_s
        last = "no replica answered"
        while True:
            for replica in self.replicas:
                try:
                    await self._health(replica, min(5.0, max(0.1, deadline - time.monotonic())))
                except EngineError as exc:
                    last = str(exc)
                    continue
                if self.served_model is None:
                    await self._learn_model(replica)
                self._ready = True
                return
            if time.monotonic() >= deadline:
                raise EngineUnavailable(f"no replica was ready within {timeout_s:g} s: {last}")
            await asyncio.sleep(min(1.0, max(0.0, deadline - time.monotonic())))

    # -- one request -------------------------------------------------------------------

    async def _guarded(self, request: GenerationRequest) -> Generation | EngineError:
        """``_one`` raced against ``request.cancel`` and the deadline; never raises an error."""
        task = asyncio.ensure_future(self._one(request))
        try:
            while not task.done():
                remaining = (
                    None if request.deadline is None else request.deadline - time.monotonic()
                )
                if request.cancel.is_set():
                    task.cancel()  # closes the connection: vLLM aborts the request
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    return EngineTimeout("the request was cancelled")
                if remaining is not None and remaining <= 0:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    return EngineTimeout(
                        "the unit run's deadline passed before the server answered"
                    )
                wait = _CANCEL_POLL_S if remaining is None else min(_CANCEL_POLL_S, remaining)
                await asyncio.wait({task}, timeout=wait)
            return task.result()
        except asyncio.CancelledError:
            task.cancel()
            raise
        except EngineError as exc:
            return exc
        except Exception as exc:  # a bug here fails this request, never its batch
            return EngineUnavailable(f"the openai engine failed: {exc!r}")

    async def _one(self, request: GenerationRequest) -> Generation | EngineError:
        policy = self.settings.retry
        started = time.perf_counter()
        body = self.request_body(request)
        queue_ms = 0.0
        last: EngineError | None = None
        failed: Replica | None = None
        for attempt in range(policy.attempts):
            waited = time.perf_counter()
            replica = await self._acquire(request, avoid=failed)
            queue_ms += (time.perf_counter() - waited) * 1000
            try:
                generation = await self._attempt(replica, request, body, started, queue_ms)
                return dataclasses.replace(generation, notes=self._notes(attempt))
            except _Retry as retry:
                last, failed = retry.error, replica
                delay = retry.delay_s  # the server said when: honour it
            finally:
                await self._release(replica)  # before any backoff: the slot is not ours to hold
            if attempt + 1 >= policy.attempts:
                last.add_note(f"gave up after {policy.attempts} tries")
                break
            if delay is not None and delay > policy.max_retry_after_s:
                last.add_note(f"the server asked to wait {delay:g} s, over retry.max_retry_after_s")
                break
            if delay is None:
                delay = backoff_s(policy, attempt, self._rng)
            if request.deadline is not None and time.monotonic() + delay >= request.deadline:
                last.add_note(f"gave up after {attempt + 1} tries: no time left for another")
                break
            self._record(RetryRecord(time.monotonic(), replica.url, attempt, delay, str(last)))
            await asyncio.sleep(delay)
        assert last is not None
        return last

    async def _attempt(
        self,
        replica: Replica,
        request: GenerationRequest,
        body: dict[str, Any],
        started: float,
        queue_ms: float,
    ) -> Generation:
        assert self._client is not None
        client = self._client
        timeout = self.settings.request_timeout_s
        if request.deadline is not None:
            timeout = min(timeout, max(0.01, request.deadline - time.monotonic()))
        sent = time.perf_counter()
        notify_start(request)
        try:
            response = await client.post(
                f"{replica.url}/v1/chat/completions",
                json=body,
                headers=self._headers(),
                timeout=httpx.Timeout(
                    timeout, connect=min(timeout, self.settings.connect_timeout_s)
                ),
            )
        except httpx.TimeoutException as exc:
            replica.breaker.record_failure(f"timeout ({type(exc).__name__})")
            raise _Retry(EngineTimeout(f"{replica}: no answer within {timeout:.1f} s")) from None
        except (httpx.TransportError, OSError) as exc:
            replica.breaker.record_failure(type(exc).__name__)
            raise _Retry(EngineUnavailable(f"{replica}: {type(exc).__name__}: {exc}")) from None
        except asyncio.CancelledError:
            replica.breaker.release()
            raise
        status = response.status_code
        if status == 429:
            replica.breaker.release()  # alive, only busy: no mark against it
            raise _Retry(
                EngineOverloaded(f"{replica}: 429 too many requests"),
                delay_s=_retry_after(response.headers.get("retry-after")),
            )
        if status >= 500:
            replica.breaker.record_failure(f"HTTP {status}")
            raise _Retry(EngineUnavailable(f"{replica}: HTTP {status}: {_excerpt(response)}"))
        if status != 200:  # our request is wrong for this server: trying again will not help
            replica.breaker.release()
            raise EngineUnavailable(f"{replica}: HTTP {status}: {_excerpt(response)}")
        try:
            generation = self._generation(response, started, queue_ms, sent)
        except EngineBadResponse:
            replica.breaker.record_failure("a response that is no completion")
            raise
        replica.breaker.record_success()
        return generation

    # -- requests and answers -----------------------------------------------------------

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body of ``request`` in this engine's dialect."""
        body: dict[str, Any] = {
            "model": self.served_model or "default",
            "messages": [dict(m) for m in request.messages],
            "temperature": 0.0,
            "stream": False,
        }
        tokens_key = "max_completion_tokens" if self.settings.dialect == "openai" else "max_tokens"
        body[tokens_key] = request.max_new_tokens
        body["logprobs"] = True  # the calibrator's signals of the model's answer
        body["top_logprobs"] = self.settings.top_logprobs
        if request.schema is not None:
            name = _SCHEMA_NAME.sub("_", request.key or "answer")[:64] or "answer"
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": request.schema, "strict": True},
            }
        if self.settings.dialect == "vllm" and request.tenant is not None:
            # vLLM keeps prefix-cache blocks apart by salt: one tenant's cached_tokens never
            # tell of another's prompts. The salt is derived, so processes sharing a server
            # share each tenant's cache, and a tenant's name is not sent.
            body["cache_salt"] = hashlib.sha256(f"aau-tenant:{request.tenant}".encode()).hexdigest()
        return body

    def _generation(
        self, response: httpx.Response, started: float, queue_ms: float, sent: float
    ) -> Generation:
        if len(response.content) > _MAX_RESPONSE_BYTES:
            raise EngineBadResponse(f"the response has {len(response.content):,} bytes")
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"]["content"]
            finish = choice.get("finish_reason")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise EngineBadResponse(
                f"the server's response is not a chat completion ({type(exc).__name__}: {exc})"
            ) from None
        if not isinstance(text, str):
            raise EngineBadResponse("the completion has no text content")
        if finish not in {"stop", "length"}:
            raise EngineBadResponse(f"the generation ended with finish_reason={finish!r}")
        logprobs, entropies, forced = _token_signals(choice.get("logprobs"))
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        details = usage.get("prompt_tokens_details") or {}
        http_ms = (time.perf_counter() - sent) * 1000
        return Generation(
            text=text,
            finish_reason=finish,
            token_logprobs=logprobs,
            token_entropies=entropies,
            forced=forced,
            prompt_tokens=_int(usage.get("prompt_tokens")),
            cached_tokens=_int(details.get("cached_tokens") if isinstance(details, dict) else 0),
            model_ms=http_ms,  # the server's time as this client sees it
            timings=Timings(queue_ms=round(queue_ms, 3), decode_ms=round(http_ms, 3)),
        )

    # -- replicas -------------------------------------------------------------------------

    async def _acquire(self, request: GenerationRequest, avoid: Replica | None = None) -> Replica:
        """The least loaded replica whose circuit lets a call through; waits for a free slot.

        ``avoid`` (the replica a retry's last attempt failed on) comes last, if others can serve.

        Raises:
            EngineUnavailable: every replica's circuit is open.
            EngineTimeout: the deadline passed while every replica was at its limit.
        """
        freed = self._freed
        assert freed is not None
        async with freed:
            while True:
                replica = self._pick(avoid)
                if replica is not None:
                    return replica
                if all(r.breaker.state == "open" for r in self.replicas):
                    states = ", ".join(f"{r.url}: open" for r in self.replicas)
                    raise EngineUnavailable(f"every replica's circuit is open ({states})")
                remaining = None
                if request.deadline is not None:
                    remaining = request.deadline - time.monotonic()
                    if remaining <= 0:
                        raise EngineTimeout("the deadline passed while waiting for a free replica")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(freed.wait(), min(remaining or 1.0, 1.0))

    def _pick(self, avoid: Replica | None = None) -> Replica | None:
        with self._lock:
            free = [r for r in self.replicas if r.in_flight < self.settings.max_in_flight]
            free.sort(key=lambda r: r.in_flight)
            self._turn += 1
            least = [r for r in free if r.in_flight == free[0].in_flight] if free else []
            # In turn among the least loaded, then the others: a half-open probe may be refused.
            order = (
                least[self._turn % len(least) :] + least[: self._turn % len(least)] if least else []
            )
            candidates = order + [r for r in free if r not in least]
            if avoid in candidates and len(candidates) > 1:
                candidates = [r for r in candidates if r is not avoid] + [avoid]
            for replica in candidates:
                if replica.breaker.allow():
                    replica.in_flight += 1
                    replica.sent += 1
                    return replica
        return None

    async def _release(self, replica: Replica) -> None:
        with self._lock:
            replica.in_flight -= 1
        if self._freed is not None:
            async with self._freed:
                self._freed.notify()

    def _notes(self, attempt: int) -> tuple[str, ...]:
        """The trace's account of an answered request: its retries, circuits not closed."""
        notes = []
        if attempt:
            notes.append(f"answered after {attempt} {'retry' if attempt == 1 else 'retries'}")
        states = {url: state for url, state in self.breaker_states().items() if state != "closed"}
        if states:
            notes.append("circuits " + ", ".join(f"{url}: {s}" for url, s in states.items()))
        return tuple(notes)

    def breaker_states(self) -> dict[str, str]:
        """Each replica's circuit state, for results, logs and health endpoints."""
        return {r.url: r.breaker.state for r in self.replicas}

    # -- plumbing -------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    async def _health(self, replica: Replica, timeout_s: float) -> None:
        assert self._client is not None
        client = self._client
        try:
            response = await client.get(
                replica.url + _HEALTH_PATH[self.settings.dialect],
                headers=self._headers(),
                timeout=timeout_s,
            )
        except (httpx.HTTPError, OSError) as exc:
            raise EngineUnavailable(f"{replica}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise EngineUnavailable(f"{replica}: health check answered HTTP {response.status_code}")

    async def _learn_model(self, replica: Replica) -> None:
        assert self._client is not None
        client = self._client
        try:
            response = await client.get(
                f"{replica.url}/v1/models", headers=self._headers(), timeout=5.0
            )
            self.served_model = str(response.json()["data"][0]["id"])
        except (httpx.HTTPError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise EngineUnavailable(
                f"{replica}: cannot learn the served model ({exc}); set remote.served_model"
            ) from None

    def _record(self, record: RetryRecord) -> None:
        _log.info("retry %d on %s in %.3f s: %s", record.retry, record.replica, record.delay_s,
                  record.reason)  # fmt: skip
        with self._lock:
            self.retries.append(record)
            del self.retries[:-1000]


def _token_signals(
    logprobs: Any,
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[bool, ...]]:
    """Per-token log-probabilities, entropies (over the top alternatives) and forced flags.

    vLLM reports log-probabilities after the grammar mask: a token the grammar forced has
    probability 1 (log-probability 0), so it is marked forced, as the local engine marks it.
    """
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return (), (), ()
    values: list[float] = []
    entropies: list[float] = []
    forced: list[bool] = []
    for token in content:
        if not isinstance(token, dict):
            return (), (), ()
        lp = _finite(token.get("logprob"))
        values.append(lp)
        tops = [_finite(t.get("logprob")) for t in token.get("top_logprobs") or []
                if isinstance(t, dict)]  # fmt: skip
        probs = [math.exp(t) for t in tops] or [math.exp(lp)]
        rest = max(0.0, 1.0 - sum(probs))
        entropies.append(-sum(p * math.log(p) for p in [*probs, rest] if p > 0))
        forced.append(lp > -1e-6)
    return tuple(values), tuple(entropies), tuple(forced)


def _finite(value: Any) -> float:
    """A log-probability as a float; missing or -inf as a large negative number."""
    if isinstance(value, int | float) and math.isfinite(value):
        return min(0.0, float(value))
    return -1e4


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds; an HTTP date is read as 1 s)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return 1.0


def _excerpt(response: httpx.Response) -> str:
    text = response.text[:300].replace("\n", " ")
    return json.dumps(text)[1:-1]
