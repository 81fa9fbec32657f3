"""The failure policy's parts: full-jitter backoff and the circuit breaker's states."""

from __future__ import annotations

import random

import pytest

from aau.engines.resilience import BreakerSettings, CircuitBreaker, RetryPolicy, backoff_s


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_backoff_is_full_jitter_under_an_exponential_cap() -> None:
    policy = RetryPolicy(base_s=0.1, cap_s=1.0)
    rng = random.Random(7)
    for retry, bound in [(0, 0.1), (1, 0.2), (2, 0.4), (3, 0.8), (4, 1.0), (10, 1.0)]:
        delays = [backoff_s(policy, retry, rng) for _ in range(200)]
        assert all(0.0 <= d <= bound for d in delays)
        # spread over the whole range, not clustered at the bound: that is the jitter
        assert min(delays) < 0.1 * bound
        assert max(delays) > 0.9 * bound
        assert len(set(delays)) == len(delays)


def test_breaker_opens_after_the_threshold_and_refuses() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "r1", BreakerSettings(failure_threshold=3, reset_after_s=5), clock=clock
    )
    for _ in range(2):
        breaker.record_failure("HTTP 503")
        assert breaker.state == "closed"
        assert breaker.allow()
    breaker.record_failure("HTTP 503")
    assert breaker.state == "open"
    assert not breaker.allow()
    assert [(t.before, t.after) for t in breaker.transitions] == [("closed", "open")]
    assert "3 failures in a row" in breaker.transitions[0].reason


def test_a_success_resets_the_count_of_failures_in_a_row() -> None:
    breaker = CircuitBreaker("r1", BreakerSettings(failure_threshold=2), clock=Clock())
    breaker.record_failure("reset")
    breaker.record_success()
    breaker.record_failure("reset")
    assert breaker.state == "closed"


def test_half_open_lets_one_probe_through_and_closes_on_its_success() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "r1", BreakerSettings(failure_threshold=1, reset_after_s=5), clock=clock
    )
    breaker.record_failure("refused")
    clock.now += 4.9
    assert not breaker.allow()
    clock.now += 0.2
    assert breaker.state == "half_open"
    assert breaker.allow()  # the probe
    assert not breaker.allow()  # only one at a time
    breaker.record_success()
    assert breaker.state == "closed"
    assert [t.after for t in breaker.transitions] == ["open", "half_open", "closed"]


def test_a_failed_probe_opens_the_circuit_again_for_a_full_period() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "r1", BreakerSettings(failure_threshold=1, reset_after_s=5), clock=clock
    )
    breaker.record_failure("refused")
    clock.now += 5
    assert breaker.allow()
    breaker.record_failure("refused again")
    assert breaker.state == "open"
    clock.now += 4
    assert not breaker.allow()
    clock.now += 1
    assert breaker.allow()


def test_a_probe_released_without_a_verdict_lets_the_next_one_through() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "r1", BreakerSettings(failure_threshold=1, reset_after_s=1), clock=clock
    )
    breaker.record_failure("x")
    clock.now += 1
    assert breaker.allow()
    breaker.release()  # e.g. the probe was cancelled
    assert breaker.allow()


def test_transitions_are_reported_to_a_listener_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen = []
    breaker = CircuitBreaker("http://r1", BreakerSettings(failure_threshold=1), clock=Clock(),
                             on_change=seen.append)  # fmt: skip
    with caplog.at_level("WARNING", logger="aau.engines.resilience"):
        breaker.record_failure("HTTP 500")
    assert [(t.name, t.after) for t in seen] == [("http://r1", "open")]
    assert "circuit http://r1: closed -> open" in caplog.text
