"""Admission: which requests run now, which wait, and which are refused with a time to retry.

The shared engine serves a bounded number of unit runs at once (``max_units_in_flight``; the
in-process engine batches them). Requests beyond it wait in one first-come queue. Before a
request joins the queue, its wait is estimated from the work ahead of it and the rate at which
the service has been finishing units, and never below the wait of the request at the queue's
head; past ``max_queue_ms`` it is refused at once with 429 and a ``Retry-After`` of that
estimate, instead of joining a queue in which every request would time out. Each tenant also
has a bound on its requests in flight and a token-bucket rate, so one tenant's burst cannot
fill the queue for everyone. Until the first request has finished there is no rate to estimate
from: the head's wait and ``max_queued_units`` bound the queue then.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Admission", "AdmissionSettings", "Refused", "Ticket"]

_WINDOW_S = 10.0
"""The completions the finishing rate is measured over."""


class AdmissionSettings(BaseModel):
    """Bounds on the work a service takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_units_in_flight: int = Field(32, ge=1, le=4096)
    """Unit runs handed to the engine at once (a request of three units takes three)."""
    max_queue_ms: float = Field(10_000.0, gt=0)
    """Longest estimated wait a new request may join the queue with."""
    max_queued_units: int = Field(2048, ge=1)
    """Unit runs waiting at most, whatever the estimate."""
    tenant_requests: int = Field(64, ge=1)
    """One tenant's requests in flight or waiting."""
    tenant_rate: float = Field(200.0, gt=0)
    """One tenant's sustained requests per second."""
    tenant_burst: int = Field(400, ge=1)
    """Requests one tenant may send at once above its rate."""


class Refused(Exception):
    """A request the service will not take now; retry after ``retry_after_s``."""

    def __init__(self, code: str, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after_s = retry_after_s

    @property
    def retry_after(self) -> int:
        """Whole seconds for the ``Retry-After`` header (at least 1)."""
        return max(1, math.ceil(self.retry_after_s))


@dataclass(slots=True)
class Ticket:
    """An admitted request: how long it waited."""

    units: int
    queue_ms: float = 0.0


@dataclass(slots=True)
class _Waiter:
    units: int
    future: asyncio.Future[None]
    since: float


class _Bucket:
    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.at = float(burst), now

    def take(self, now: float) -> float:
        """Take one token; returns 0, or the seconds until one will be there."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class Admission:
    """The service's admission queue (one per process, on its event loop)."""

    def __init__(
        self, settings: AdmissionSettings | None = None, *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.settings = settings or AdmissionSettings()
        self._clock = clock
        self.in_flight_units = 0
        self._queue: deque[_Waiter] = deque()
        self._tenant_requests: dict[str, int] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._done: deque[tuple[float, int]] = deque()  # (finished at, units), last _WINDOW_S
        self._latency_s: float | None = None  # mean time a request held its units (EWMA)
        self._first_admitted: float | None = None

    @property
    def queued_requests(self) -> int:
        """Requests waiting."""
        return len(self._queue)

    @property
    def queued_units(self) -> int:
        """Unit runs waiting."""
        return sum(w.units for w in self._queue)

    def units_per_s(self) -> float | None:
        """The rate at which units have been finishing (None before any has)."""
        now = self._clock()
        while self._done and now - self._done[0][0] > _WINDOW_S:
            self._done.popleft()
        if self._done and self._first_admitted is not None:
            # Over the whole window (or the time since work began, if shorter), and never less
            # than a request's mean hold: a batch finishing at once is not a burst of speed.
            span = max(min(_WINDOW_S, now - self._first_admitted), self._latency_s or 0.0, 0.5)
            return sum(units for _, units in self._done) / span
        if self._latency_s:  # nothing finished lately: capacity over the mean hold time
            return self.settings.max_units_in_flight / self._latency_s
        return None

    def estimated_wait_s(self, units: int) -> float:
        """How long a request of ``units`` would wait if it joined the queue now."""
        capacity = self.settings.max_units_in_flight
        if not self._queue and self.in_flight_units + units <= capacity:
            return 0.0
        # In a first-come queue a newcomer waits about as long as the request now at its head
        # has: a floor that corrects a rate read too high (a batch that finished at once).
        head = self._clock() - self._queue[0].since if self._queue else 0.0
        rate = self.units_per_s()
        if rate is None:
            return head  # nothing finished yet: that floor and the queue-length bound
        ahead = self.queued_units + max(0, self.in_flight_units + units - capacity)
        return max(ahead / rate, head)

    @contextlib.asynccontextmanager
    async def admit(self, tenant: str, units: int) -> AsyncIterator[Ticket]:
        """Hold ``units`` of the engine's capacity for one request of ``tenant``.

        Raises:
            Refused: the tenant is over its rate or its requests in flight, or the queue's
                estimated wait is over ``max_queue_ms`` (``overloaded``).
        """
        units = max(1, min(units, self.settings.max_units_in_flight))
        self._check(tenant, units)
        ticket = Ticket(units)
        self._tenant_requests[tenant] = self._tenant_requests.get(tenant, 0) + 1
        try:
            started = self._clock()
            await self._acquire(units)
            ticket.queue_ms = (self._clock() - started) * 1000
            held = self._clock()
            try:
                yield ticket
            finally:
                self._release(units, self._clock() - held)
        finally:
            left = self._tenant_requests[tenant] - 1
            if left:
                self._tenant_requests[tenant] = left
            else:
                del self._tenant_requests[tenant]

    def _check(self, tenant: str, units: int) -> None:
        s, now = self.settings, self._clock()
        bucket = self._buckets.get(tenant)
        if bucket is None:
            bucket = self._buckets[tenant] = _Bucket(s.tenant_rate, s.tenant_burst, now)
        wait = bucket.take(now)
        if wait:
            raise Refused(
                "rate_limited", f"over the rate of {s.tenant_rate:g} requests/s for this key", wait
            )
        if self._tenant_requests.get(tenant, 0) >= s.tenant_requests:
            raise Refused(
                "tenant_busy",
                f"{s.tenant_requests} requests of this tenant are already in flight or waiting",
                max(self.estimated_wait_s(units), 1.0),
            )
        estimate = self.estimated_wait_s(units)
        if estimate * 1000 > s.max_queue_ms or self.queued_units + units > s.max_queued_units:
            raise Refused(
                "overloaded",
                f"the service is over capacity: a new request would wait about {estimate:.1f} s "
                f"(bound {s.max_queue_ms / 1000:g} s)",
                max(estimate, 1.0),
            )

    async def _acquire(self, units: int) -> None:
        if self._first_admitted is None:
            self._first_admitted = self._clock()
        capacity = self.settings.max_units_in_flight
        if not self._queue and self.in_flight_units + units <= capacity:
            self.in_flight_units += units
            return
        waiter = _Waiter(units, asyncio.get_running_loop().create_future(), self._clock())
        self._queue.append(waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self._release(units, None)  # admitted as it was cancelled: give the units back
            else:
                self._queue.remove(waiter)
                self._wake()
            raise

    def _release(self, units: int, held_s: float | None) -> None:
        self.in_flight_units -= units
        if held_s is not None:
            self._done.append((self._clock(), units))
            self._latency_s = held_s if self._latency_s is None else (
                0.8 * self._latency_s + 0.2 * held_s)  # fmt: skip
        self._wake()

    def _wake(self) -> None:
        """Admit waiters from the head of the queue while their units fit (first come first)."""
        capacity = self.settings.max_units_in_flight
        while self._queue and self.in_flight_units + self._queue[0].units <= capacity:
            waiter = self._queue.popleft()
            self.in_flight_units += waiter.units
            waiter.future.set_result(None)
