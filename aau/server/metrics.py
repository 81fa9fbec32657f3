"""The service's Prometheus metrics, on a registry of its own (``GET /metrics``).

Requests and unit runs are counted as they finish; the engine's batch sizes and breaker states
and the admission queue are read at scrape time, so a scrape always shows the present.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from aau.engines.base import BatchStats, BreakerStates, Engine
from aau.results import UnitResult

if TYPE_CHECKING:
    from aau.server.admission import Admission

__all__ = ["ServiceMetrics"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
_CONFIDENCE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
_BREAKER_STATES = ("closed", "half_open", "open")


class ServiceMetrics:
    """Every metric of one service.

    Args:
        engines: the engines whose batch sizes and circuit breakers are shown.
        admission: the queue whose depth is shown.
    """

    def __init__(self, engines: Sequence[Engine], admission: Admission) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Histogram(
            "aau_request_seconds", "HTTP request latency, by endpoint, tenant and status",
            ["endpoint", "tenant", "status"], buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.unit_latency = Histogram(
            "aau_unit_seconds", "Unit run latency (total_ms), by unit, tenant and answering path",
            ["unit", "tenant", "path"], buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.unit_phase = Histogram(
            "aau_unit_phase_seconds", "Time of a unit run in each phase (queue, prefill, decode)",
            ["unit", "phase"], buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.unit_results = Counter(
            "aau_unit_results", "Unit runs by answering path (primary, crf, heuristic…) and "
            "error code (ok when none): the fallback and error rates",
            ["unit", "tenant", "path", "code"], registry=r,
        )  # fmt: skip
        self.confidence = Histogram(
            "aau_unit_confidence", "Confidence of the answers, by unit",
            ["unit"], buckets=_CONFIDENCE_BUCKETS, registry=r,
        )  # fmt: skip
        self.tokens = Counter(
            "aau_tokens", "Prompt tokens read (cached: from the prefix cache) and tokens generated",
            ["kind"], registry=r,
        )  # fmt: skip
        self.refused = Counter(
            "aau_refused_requests", "Requests answered 429, by reason", ["reason", "tenant"],
            registry=r,
        )  # fmt: skip
        self.queue_wait = Histogram(
            "aau_admission_wait_seconds", "Time an admitted request waited in the queue",
            buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        queued = Gauge("aau_queue_depth", "Requests waiting for the engine", registry=r)
        queued.set_function(lambda: admission.queued_requests)
        flying = Gauge("aau_units_in_flight", "Unit runs holding engine capacity", registry=r)
        flying.set_function(lambda: admission.in_flight_units)
        r.register(_EngineCollector(engines))

    def observe_units(self, tenant: str, results: Sequence[UnitResult]) -> None:
        """Count finished unit runs of ``tenant``."""
        for result in results:
            path = result.path or "none"
            self.unit_results.labels(result.unit, tenant, path,
                                     result.error.code if result.error else "ok").inc()  # fmt: skip
            self.unit_latency.labels(result.unit, tenant, path).observe(
                result.timings.get("total_ms", 0.0) / 1000
            )
            for phase in ("queue", "prefill", "decode"):
                spent = result.timings.get(f"{phase}_ms", 0.0)
                if spent:
                    self.unit_phase.labels(result.unit, phase).observe(spent / 1000)
            if result.output is not None:
                self.confidence.labels(result.unit).observe(result.confidence)
            for kind in ("prompt", "cached", "generated"):
                count = result.tokens.get(kind, 0)
                if count:
                    self.tokens.labels(kind).inc(count)


class _EngineCollector(Collector):
    """Batch sizes of engines that batch, breaker states of engines with replicas."""

    def __init__(self, engines: Sequence[Engine]) -> None:
        self._engines = engines

    def describe(self) -> list[Metric]:
        return []  # collected fresh at each scrape

    def collect(self) -> Iterator[Metric]:
        batch = HistogramMetricFamily(
            "aau_engine_batch_rows", "Rows decoded together in one engine step", labels=["engine"]
        )
        breakers = GaugeMetricFamily(
            "aau_engine_breaker_state",
            "Circuit breaker of each replica: 1 for its present state",
            labels=["engine", "replica", "state"],
        )
        for engine in self._engines:
            if isinstance(engine, BatchStats):
                counts = dict(engine.step_rows)
                buckets = [
                    (str(float(bound)), float(sum(n for k, n in counts.items() if k <= bound)))
                    for bound in _BATCH_BUCKETS
                ]
                buckets.append(("+Inf", float(sum(counts.values()))))
                batch.add_metric(
                    [engine.name], buckets, sum_value=sum(rows * n for rows, n in counts.items())
                )
            if isinstance(engine, BreakerStates):
                for replica, state in engine.breaker_states().items():
                    for name in _BREAKER_STATES:
                        breakers.add_metric([engine.name, replica, name], float(state == name))
        yield batch
        yield breakers
