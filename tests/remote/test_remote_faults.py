"""Faults between AAU and a real vLLM server: every unit run ends in time, answered or coded.

A ``FaultInjector`` (a test double: a loopback proxy that misbehaves on demand) stands between
the remote engine and the session's vLLM server; the last test kills the server itself by PID
mid-batch. Each run must end within its deadline with a schema-valid answer (from another
replica, the next engine or a fallback path) or a coded error, and no result may be lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aau import EngineConfig, Pipeline, build_engine, load_unit
from aau.engines.base import Generation
from aau.engines.remote import OpenAIEngine
from aau.pipeline import PipelineResult
from aau.spec.model import UnitSpec
from tests.conftest import assert_result_contract
from tests.remote.fault_proxy import FaultInjector
from tests.remote.test_remote_engine import unit_request
from tests.remote.vllm_server import VllmServer

ROOT = Path(__file__).resolve().parents[2]
PRICE = ROOT / "units" / "extract_price.yaml"
TEXT = "Invoice 2024-31: total due EUR 1,250.00 by 30 April."
SLACK_S = 2.0  # scheduling and the fallback paths' own work after the deadline's last wait


def price_unit(**policy: Any) -> UnitSpec:
    spec = load_unit(PRICE)
    return spec.model_copy(update={"policy": spec.policy.model_copy(update=policy)})


def engine_for(*urls: str, **remote: Any) -> OpenAIEngine:
    """A remote engine that has seen its servers healthy (the faults come after)."""
    settings = {"base_urls": list(urls), "served_model": "smollm2", **remote}
    engine = build_engine(EngineConfig(backend="openai", remote=settings))
    assert isinstance(engine, OpenAIEngine)
    asyncio.run(engine.ready())
    return engine


def completions(proxy: FaultInjector) -> list[Any]:
    """The chat completion requests the proxy saw (not the health checks)."""
    return [r for r in proxy.requests if r.path.endswith("/chat/completions")]


def fast_retries(**retry: Any) -> dict[str, Any]:
    return {"retry": {"attempts": 4, "base_s": 0.05, "cap_s": 0.4, **retry}}


@pytest.fixture
def proxy(vllm: VllmServer) -> Iterator[FaultInjector]:
    with FaultInjector(vllm.address) as injector:
        yield injector


def run_many(pipeline: Pipeline, texts: list[str]) -> tuple[list[PipelineResult], float]:
    async def scenario() -> list[PipelineResult]:
        return list(await asyncio.gather(*(pipeline.arun(t, id=i) for i, t in enumerate(texts))))

    started = time.monotonic()
    results = asyncio.run(scenario())
    return results, time.monotonic() - started


def assert_in_time_and_valid(results: list[PipelineResult], spec: UnitSpec, count: int) -> None:
    assert sorted(r.id for r in results) == list(range(count)), "no result may be lost"
    for result in results:
        unit = result.units[spec.name]
        assert_result_contract(unit, spec)
        spent_s = (unit.timings["total_ms"] - unit.timings["ready_ms"]) / 1000
        assert spent_s <= spec.policy.timeout_s + SLACK_S, (spent_s, unit.trace)


# -- transport failures and their retries -----------------------------------------------------


def test_5xx_is_retried_with_full_jitter_then_the_fallbacks_answer(proxy: FaultInjector) -> None:
    engine = engine_for(proxy.url, **fast_retries(attempts=5),
                        breaker={"failure_threshold": 100})  # fmt: skip
    proxy.set_mode("status", status=503)
    spec = price_unit(timeout_s=20)
    results, _ = run_many(Pipeline([spec], engine=engine, calibrator=False), [TEXT] * 6)

    assert_in_time_and_valid(results, spec, 6)
    for result in results:
        unit = result.units[spec.name]
        assert unit.path in {"crf", "heuristic"}
        assert unit.output == {"amount": 1250.0, "currency": "EUR"}
        assert unit.attempts[0].error is not None
        assert unit.attempts[0].error.code == "engine_unavailable"
    # the recorded schedule: 4 retries per request, each delay drawn anew under its bound
    schedule = engine.retries
    assert len(schedule) == 6 * 4
    assert len(completions(proxy)) == 6 * 5
    for record in schedule:
        bound = min(0.4, 0.05 * 2**record.retry)
        assert 0.0 <= record.delay_s <= bound
    first_retries = [r.delay_s for r in schedule if r.retry == 0]
    assert len(set(first_retries)) == len(first_retries), "jittered, not in lockstep"
    assert all("HTTP 503" in r.reason for r in schedule)


def test_a_transient_5xx_is_retried_into_the_models_answer(proxy: FaultInjector) -> None:
    engine = engine_for(proxy.url, **fast_retries())
    proxy.set_mode("status", status=502, count=2)  # the next two requests, then pass-through
    request = unit_request(PRICE, TEXT)

    result = asyncio.run(engine.generate([request]))[0]

    assert isinstance(result, Generation)
    assert [r.mode for r in completions(proxy)] == ["status", "status", "pass"]
    assert [r.retry for r in engine.retries] == [0, 1]


def test_the_trace_tells_of_the_retries_and_of_circuits_not_closed(
    proxy: FaultInjector, vllm: VllmServer
) -> None:
    engine = engine_for(vllm.url, proxy.url, **fast_retries(),
                        breaker={"failure_threshold": 1, "reset_after_s": 60})  # fmt: skip
    pipeline = Pipeline([price_unit()], engine=engine, calibrator=False)
    proxy.refuse()
    pipeline.run(TEXT)  # one request meets the refusing replica and opens its circuit
    unit = pipeline.run(TEXT).units["extract_price"]

    notes = " ".join(s.detail or "" for s in unit.trace)
    assert f"circuits {proxy.url}: open" in notes


def test_429_honours_retry_after(proxy: FaultInjector) -> None:
    engine = engine_for(proxy.url, **fast_retries())
    proxy.set_mode("status", status=429, retry_after="1", count=1)
    started = time.monotonic()

    result = asyncio.run(engine.generate([unit_request(PRICE, TEXT)]))[0]

    assert isinstance(result, Generation)
    assert time.monotonic() - started >= 1.0
    assert [(r.delay_s, r.reason) for r in engine.retries] == [
        (1.0, f"{proxy.url}: 429 too many requests")]  # fmt: skip
    assert all(r.breaker.state == "closed" for r in engine.replicas), "busy is not broken"


def test_a_retry_after_beyond_the_cap_gives_up_with_engine_overloaded(
    proxy: FaultInjector,
) -> None:
    engine = engine_for(proxy.url, **fast_retries(max_retry_after_s=5))
    proxy.set_mode("status", status=429, retry_after="120")
    started = time.monotonic()

    result = asyncio.run(engine.generate([unit_request(PRICE, TEXT)]))[0]

    assert getattr(result, "code", None) == "engine_overloaded"
    assert time.monotonic() - started < 10.0, "it does not wait the 120 s it was asked to"
    assert len(completions(proxy)) == 1


@pytest.mark.parametrize("mode", ["drop", "reset", "truncate"])
def test_a_broken_connection_is_retried_on_another_replica(
    mode: str, proxy: FaultInjector, vllm: VllmServer
) -> None:
    engine = engine_for(proxy.url, vllm.url, **fast_retries())
    proxy.set_mode(mode)
    requests = [unit_request(PRICE, f"Invoice {i}: total due EUR {i}00.00.") for i in range(1, 7)]

    results = asyncio.run(engine.generate(requests))

    assert all(isinstance(r, Generation) for r in results), results
    assert completions(proxy), "the faulty replica was tried"
    assert {r.replica for r in engine.retries} == {proxy.url}


def test_a_stalled_server_costs_each_run_no_more_than_its_deadline(proxy: FaultInjector) -> None:
    engine = engine_for(proxy.url, request_timeout_s=1.5, breaker={"failure_threshold": 100},
                        **fast_retries())  # fmt: skip
    proxy.set_mode("stall")
    spec = price_unit(timeout_s=4)
    results, wall_s = run_many(Pipeline([spec], engine=engine, calibrator=False), [TEXT] * 4)

    assert_in_time_and_valid(results, spec, 4)
    assert wall_s <= 4 + SLACK_S + 1
    for result in results:
        unit = result.units[spec.name]
        assert unit.attempts[0].error is not None
        assert unit.attempts[0].error.code == "engine_timeout"
        assert unit.path in {"crf", "heuristic"}


# -- answers that are not what was asked for --------------------------------------------------


def test_a_malformed_response_moves_the_run_to_the_next_path(proxy: FaultInjector) -> None:
    pipeline = Pipeline([price_unit()], engine=engine_for(proxy.url), calibrator=False)
    spec = pipeline.units[0]
    proxy.set_mode("malformed_json")

    unit = pipeline.run(TEXT).units[spec.name]

    assert_result_contract(unit, spec)
    assert unit.path == "crf"
    assert unit.attempts[0].error is not None
    assert unit.attempts[0].error.code == "invalid_output"
    assert "not a chat completion" in unit.attempts[0].error.message
    assert len(completions(proxy)) == 1, "a bad answer is not retried: the next path runs"


def test_an_answer_against_the_schema_is_revalidated_and_refused(proxy: FaultInjector) -> None:
    pipeline = Pipeline([price_unit()], engine=engine_for(proxy.url), calibrator=False)
    spec = pipeline.units[0]
    proxy.set_mode("wrong_schema")  # the server 'forgot' the schema

    unit = pipeline.run(TEXT).units[spec.name]

    assert unit.path == "crf"
    jsonschema.validate(unit.output, spec.output)
    assert unit.attempts[0].error is not None
    assert unit.attempts[0].error.code == "invalid_output"
    assert "violates" in unit.attempts[0].error.message


# -- circuit breakers and the engine chain ----------------------------------------------------


def test_the_breaker_opens_after_the_failures_and_closes_after_recovery(
    proxy: FaultInjector, caplog: pytest.LogCaptureFixture
) -> None:
    # reset_after_s leaves the open state time to be seen on a loaded machine
    engine = engine_for(proxy.url, retry={"attempts": 1},
                        breaker={"failure_threshold": 3, "reset_after_s": 4.0})  # fmt: skip
    request = unit_request(PRICE, TEXT)

    async def one() -> object:
        return (await engine.generate([request]))[0]

    with caplog.at_level(logging.WARNING, logger="aau.engines.resilience"):
        proxy.refuse()
        codes = [getattr(asyncio.run(one()), "code", None) for _ in range(3)]
        assert codes == ["engine_unavailable"] * 3
        assert engine.breaker_states() == {proxy.url: "open"}
        proxy.accept()
        refused = asyncio.run(one())  # the circuit is open: nothing is sent
        assert "every replica's circuit is open" in str(refused)
        assert completions(proxy) == []
        time.sleep(4.1)
        assert engine.breaker_states() == {proxy.url: "half_open"}
        assert isinstance(asyncio.run(one()), Generation)  # the probe goes through
    assert engine.breaker_states() == {proxy.url: "closed"}
    assert [(t.before, t.after) for t in engine.replicas[0].breaker.transitions] == [
        ("closed", "open"), ("open", "half_open"), ("half_open", "closed")]  # fmt: skip
    assert f"circuit {proxy.url}: closed -> open" in caplog.text


def test_an_open_circuit_sends_every_request_to_the_healthy_replica(
    proxy: FaultInjector, vllm: VllmServer
) -> None:
    engine = engine_for(proxy.url, vllm.url, retry={"attempts": 3, "base_s": 0.01},
                        breaker={"failure_threshold": 2, "reset_after_s": 60})  # fmt: skip
    proxy.refuse()
    requests = [unit_request(PRICE, f"Order {i}: EUR {i}0.00 due.") for i in range(1, 11)]

    first_wave = asyncio.run(engine.generate(requests))
    sent_before = engine.replicas[0].sent
    second_wave = asyncio.run(engine.generate(requests))

    assert all(isinstance(r, Generation) for r in first_wave + second_wave)
    assert engine.breaker_states()[proxy.url] == "open"
    assert engine.replicas[0].sent == sent_before, "a replica whose circuit is open gets nothing"


def test_the_model_level_chain_falls_over_to_the_next_engine(
    proxy: FaultInjector, vllm: VllmServer
) -> None:
    spec = price_unit().model_copy(update={"engines": ["glm5", "backup"]})
    pipeline = Pipeline([spec], engine=False, calibrator=False, engines={
        "glm5": engine_for(proxy.url, **fast_retries(attempts=2)),
        "backup": engine_for(vllm.url)})  # fmt: skip
    proxy.set_mode("status", status=500)

    unit = pipeline.run(TEXT).units[spec.name]

    assert_result_contract(unit, spec)
    assert unit.engine == "backup"
    details = [s.detail for s in unit.trace if s.state == "decoding"]
    assert details[1] == "engine glm5: engine_unavailable; next engine backup"


# -- the server killed mid-batch ----------------------------------------------------------------


def test_killing_the_server_mid_batch_loses_nothing(vllm: VllmServer) -> None:
    spec = price_unit(timeout_s=15)
    engine = engine_for(vllm.url, **fast_retries(),
                        breaker={"failure_threshold": 3, "reset_after_s": 30})  # fmt: skip
    pipeline = Pipeline([spec], engine=engine, calibrator=False)
    texts = [f"Invoice {i}: total due EUR {i},250.00 by 30 April." for i in range(1, 17)]

    async def scenario() -> tuple[list[PipelineResult], dict[str, str]]:
        runs = [asyncio.ensure_future(pipeline.arun(t, id=i)) for i, t in enumerate(texts)]
        await asyncio.sleep(0.8)  # requests are in flight on the server
        await asyncio.to_thread(vllm.kill)
        results = list(await asyncio.gather(*runs))
        return results, engine.breaker_states()  # before the restart, which takes its time

    try:
        results, states = asyncio.run(scenario())
    finally:
        vllm.restart()
    assert_in_time_and_valid(results, spec, 16)
    answered = [r.units[spec.name] for r in results if r.units[spec.name].output is not None]
    assert len(answered) == 16, "the fallbacks answer whatever the model could not"
    assert states == {vllm.url: "open"}
