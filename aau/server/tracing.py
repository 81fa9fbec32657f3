"""OpenTelemetry spans of the service: one per request, one per unit run, one per phase.

A request's span holds its admission wait and one span per unit run; a unit run's span holds
its queue, prefill and decode times and one span per state of its trace (the primary path, each
fallback tried, the calibration), placed at the times the run recorded. The unit runs are
timed by the runner, so their spans are written when the run ends, with those times.

The service owns its ``TracerProvider`` (none is set process-wide); the exporter is chosen at
start (``aau serve --traces console|otlp``; ``otlp`` needs ``opentelemetry-exporter-otlp``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode

from aau.results import UnitResult

__all__ = ["ServiceTracer", "span_exporter"]

_MS = 1_000_000  # nanoseconds


def span_exporter(name: str | None) -> SpanExporter | None:
    """The exporter called ``name`` (``console``, ``otlp``), or None for ``none``/None."""
    if name in (None, "none"):
        return None
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ValueError(
                "--traces otlp needs the OTLP exporter: pip install opentelemetry-exporter-otlp"
            ) from None
        return OTLPSpanExporter()  # endpoint from OTEL_EXPORTER_OTLP_ENDPOINT
    raise ValueError(f"unknown span exporter {name!r}: use none, console or otlp")


class ServiceTracer:
    """The service's tracer; without an exporter, spans are not recorded at all."""

    def __init__(self, exporter: SpanExporter | None = None) -> None:
        self.provider: TracerProvider | None = None
        if exporter is None:
            self._tracer: trace.Tracer = trace.NoOpTracer()
            return
        self.provider = TracerProvider(resource=Resource.create({"service.name": "aau"}))
        self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self.provider.get_tracer("aau.server")

    @contextlib.contextmanager
    def request(self, endpoint: str, tenant: str | None) -> Iterator[Span]:
        """The span of one request (current while the block runs)."""
        attributes = {"aau.endpoint": endpoint, "aau.tenant": tenant or ""}
        with self._tracer.start_as_current_span(f"aau {endpoint}", attributes=attributes) as span:
            yield span

    def admission(self, start_ns: int, end_ns: int) -> None:
        """The admission wait of the current request."""
        self._tracer.start_span("aau.admission", start_time=start_ns).end(end_time=end_ns)

    def units(self, results: Sequence[UnitResult], end_ns: int) -> None:
        """One span per unit run of the current request, ending at ``end_ns``."""
        for result in results:
            total = int(result.timings.get("total_ms", 0.0) * _MS)
            start = end_ns - total
            span = self._tracer.start_span(
                f"aau.unit {result.unit}",
                start_time=start,
                attributes={
                    "aau.unit": result.unit,
                    "aau.unit.version": result.version,
                    "aau.path": result.path or "",
                    "aau.confidence": result.confidence,
                    "aau.error": result.error.code if result.error else "",
                    "aau.engine": result.engine or "",
                    **{f"aau.tokens.{k}": v for k, v in result.tokens.items()},
                },
            )
            if result.error is not None:
                span.set_status(Status(StatusCode.ERROR, result.error.code))
            context = trace.set_span_in_context(span)
            at = start
            for phase in ("queue", "prefill", "decode"):
                spent = int(result.timings.get(f"{phase}_ms", 0.0) * _MS)
                if spent:
                    child = self._tracer.start_span(f"aau.{phase}", context, start_time=at)
                    child.end(end_time=min(at + spent, end_ns))
                    at += spent
            steps = result.trace
            for i, step in enumerate(steps):
                step_start = start + int(step.at_ms * _MS)
                step_end = start + int(steps[i + 1].at_ms * _MS) if i + 1 < len(steps) else end_ns
                attributes = {"aau.path": step.path or "", "aau.detail": (step.detail or "")[:200]}
                child = self._tracer.start_span(
                    f"aau.state {step.state}", context, start_time=step_start,
                    attributes=attributes,
                )  # fmt: skip
                child.end(end_time=max(step_start, min(step_end, end_ns)))
            span.end(end_time=end_ns)

    def shutdown(self) -> None:
        """Export what is pending and stop."""
        if self.provider is not None:
            self.provider.shutdown()
