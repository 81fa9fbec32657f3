"""Readiness that proves the engine answers, OpenTelemetry spans, and a graceful shutdown."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from aau.errors import EngineUnavailable
from aau.pipeline import Pipeline
from aau.server import ServeSettings, ServiceTracer
from aau.terms import TermStore
from aau.testing import FunctionEngine
from tests.conftest import PRICE_UNIT, SERVED_UNIT_FILES
from tests.server.conftest import Keys, free_port, start_serve_process, stop_serve_process

TEXT = "Invoice 2291: total due EUR 1,250.00 by 3 May 2024."


def test_readiness_follows_the_probe_generation(
    serve_fallbacks: Any, keys: Keys, tmp_path: Path
) -> None:
    healthy = threading.Event()
    healthy.set()

    def answer(request: Any) -> Any:  # fault injection: the engine stops answering on demand
        return (
            '{"amount": null, "currency": null}' if healthy.is_set() else EngineUnavailable("down")
        )

    pipeline = Pipeline(
        [PRICE_UNIT], engine=FunctionEngine(answer), terms=TermStore(tmp_path / "t")
    )
    live = serve_fallbacks(
        ServeSettings(probe_interval_s=0.1, probe_timeout_s=1), pipeline=pipeline
    )
    assert httpx.get(f"{live.url}/readyz").status_code == 200

    healthy.clear()
    deadline = time.monotonic() + 10
    while (response := httpx.get(f"{live.url}/readyz")).status_code == 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "not_ready"
    assert "probe generation failed" in response.json()["error"]["message"]
    assert httpx.get(f"{live.url}/healthz").status_code == 200  # alive all the same

    healthy.set()
    live.wait_ready(10)


def test_spans_cover_the_request_its_units_and_their_states(
    serve_fallbacks: Any, keys: Keys
) -> None:
    exporter = InMemorySpanExporter()
    tracer = ServiceTracer(exporter)
    live = serve_fallbacks(tracer=tracer)
    response = httpx.post(
        f"{live.url}/v1/analyze",
        json={"text": TEXT, "units": ["extract_price", "extract_date"]},
        headers=Keys.auth(keys.acme),
        timeout=60,
    )
    assert response.status_code == 200
    assert tracer.provider is not None
    tracer.provider.force_flush()

    spans = exporter.get_finished_spans()
    by_name = {s.name: s for s in spans}
    request = by_name["aau /v1/analyze"]
    assert request.attributes["aau.tenant"] == "acme"
    units = [s for s in spans if s.name.startswith("aau.unit ")]
    assert {s.attributes["aau.unit"] for s in units} == {"extract_price", "extract_date"}
    for unit in units:
        assert unit.parent.span_id == request.context.span_id
        assert unit.attributes["aau.path"] in {"crf", "heuristic"}
        states = [s for s in spans if s.parent and s.parent.span_id == unit.context.span_id]
        names = {s.name for s in states}
        assert {"aau.state received", "aau.state falling_back", "aau.state done"} <= names
        for state in states:
            assert unit.start_time <= state.start_time <= state.end_time <= unit.end_time
    assert by_name["aau.admission"].parent.span_id == request.context.span_id


def test_sigterm_lets_the_requests_in_flight_finish(tmp_path: Path) -> None:
    key = Keys(tmp_path).acme
    port = free_port()
    args = [*map(str, SERVED_UNIT_FILES), "--no-model"]
    process = start_serve_process(args, tmp_path, port, ready_s=120)
    url = f"http://127.0.0.1:{port}"
    try:
        answers: list[httpx.Response] = []
        long_text = " ".join([TEXT] * 400)  # a few seconds of fallback work

        def send() -> None:
            answers.append(httpx.post(f"{url}/v1/analyze", json={"text": long_text},
                                      headers=Keys.auth(key), timeout=120))  # fmt: skip

        senders = [threading.Thread(target=send) for _ in range(3)]
        for sender in senders:
            sender.start()
        time.sleep(0.5)  # the requests are in flight
        process.send_signal(signal.SIGTERM)
        for sender in senders:
            sender.join(120)

        assert [a.status_code for a in answers] == [200, 200, 200]
        assert all(len(a.json()["units"]) == 3 for a in answers)
        # uvicorn re-raises the signal once it has shut down: the process ends by SIGTERM.
        assert process.wait(60) in {0, -signal.SIGTERM}
        output = process.stdout.read() if process.stdout else ""
        assert "Application shutdown complete" in output
        assert "Traceback" not in output
        assert key.split("_", 2)[2] not in output
    finally:
        stop_serve_process(process)
