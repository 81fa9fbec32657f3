"""The failure policy around an engine's calls: retries with backoff and circuit breakers.

Servers fail in a few distinct ways, each with its own answer:

- **transport** (connection refused or reset, a 5xx, a stalled reply): retried with exponential
  backoff and *full jitter* (each delay drawn uniformly from zero to the exponential bound), so
  that many clients that failed together do not come back together; each failure counts against
  the replica's circuit breaker;
- **rate limited** (429): retried after the server's ``Retry-After`` (capped), not counted
  against the breaker: the replica is alive, only busy;
- **invalid output** (a response that is not the JSON it should be): not retried here; the
  run moves to its next path;
- **timeout**: every wait is bounded by the unit run's one deadline, retries included.

A ``CircuitBreaker`` per replica stops sending to a replica after ``failure_threshold``
consecutive failures (*open*), lets one probe through after ``reset_after_s`` (*half-open*), and
closes again when the probe succeeds. Transitions are logged and kept for results and tests.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BreakerSettings", "BreakerState", "CircuitBreaker", "RetryPolicy", "backoff_s"]

_log = logging.getLogger(__name__)

BreakerState = Literal["closed", "open", "half_open"]


class RetryPolicy(BaseModel):
    """How a failed call is tried again (always within the unit run's deadline)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempts: int = Field(4, ge=1, le=20)
    """Tries in all, the first included."""
    base_s: float = Field(0.2, gt=0, le=60)
    """Bound of the first retry's delay; it doubles with each retry."""
    cap_s: float = Field(5.0, gt=0, le=600)
    """Largest bound of a delay."""
    max_retry_after_s: float = Field(30.0, ge=0, le=3600)
    """The longest ``Retry-After`` honoured; a longer one fails the call at once."""


def backoff_s(policy: RetryPolicy, retry: int, rng: random.Random | None = None) -> float:
    """The delay before retry number ``retry`` (0 for the first): full jitter.

    Uniform in ``[0, min(cap_s, base_s * 2**retry)]``, as in "Exponential Backoff And Jitter"
    (AWS Architecture Blog): it spreads clients out best for the least total wait.
    """
    bound = min(policy.cap_s, policy.base_s * 2 ** min(retry, 30))
    return (rng or random).uniform(0.0, bound)


class BreakerSettings(BaseModel):
    """When a replica's circuit opens and when it is tried again."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    failure_threshold: int = Field(5, ge=1, le=1000)
    """Consecutive failures that open the circuit."""
    reset_after_s: float = Field(10.0, gt=0, le=3600)
    """How long an open circuit waits before one probe request is let through."""


@dataclass(frozen=True, slots=True)
class Transition:
    """One change of a breaker's state."""

    at: float
    """``time.monotonic()`` of the change."""
    name: str
    before: BreakerState
    after: BreakerState
    reason: str


class CircuitBreaker:
    """Closed, open or half-open, for one replica; safe to share between threads."""

    def __init__(
        self,
        name: str,
        settings: BreakerSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[Transition], None] | None = None,
    ) -> None:
        self.name = name
        self.settings = settings or BreakerSettings()
        self._clock = clock
        self._on_change = on_change
        self._lock = threading.Lock()
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False
        self.transitions: list[Transition] = []

    @property
    def state(self) -> BreakerState:
        """The current state; an open circuit past its reset time reads ``half_open``."""
        with self._lock:
            self._maybe_half_open()
            return self._state

    def allow(self) -> bool:
        """Whether a call may go to this replica now (a half-open circuit lets one through)."""
        with self._lock:
            self._maybe_half_open()
            if self._state == "closed":
                return True
            if self._state == "half_open" and not self._probing:
                self._probing = True
                return True
            return False

    def release(self) -> None:
        """A call that was allowed ended with no verdict on the replica (e.g. cancelled)."""
        with self._lock:
            self._probing = False

    def record_success(self) -> None:
        """A call succeeded: the failure count resets and a half-open circuit closes."""
        with self._lock:
            self._failures = 0
            self._probing = False
            if self._state != "closed":
                self._move("closed", "a call succeeded")

    def record_failure(self, reason: str) -> None:
        """A call failed on the replica's side; enough of them in a row open the circuit."""
        with self._lock:
            self._failures += 1
            self._probing = False
            if self._state == "half_open":
                self._opened_at = self._clock()
                self._move("open", f"the probe failed: {reason}")
            elif self._state == "closed" and self._failures >= self.settings.failure_threshold:
                self._opened_at = self._clock()
                self._move("open", f"{self._failures} failures in a row, the last: {reason}")

    def _maybe_half_open(self) -> None:
        if self._state == "open" and self._clock() - self._opened_at >= self.settings.reset_after_s:
            self._move("half_open", f"{self.settings.reset_after_s:g} s since it opened")

    def _move(self, after: BreakerState, reason: str) -> None:
        transition = Transition(self._clock(), self.name, self._state, after, reason)
        self._state = after
        self.transitions.append(transition)
        del self.transitions[:-100]  # bounded: a flapping replica must not grow memory
        _log.warning("circuit %s: %s -> %s (%s)", self.name, transition.before, after, reason)
        if self._on_change is not None:
            self._on_change(transition)
