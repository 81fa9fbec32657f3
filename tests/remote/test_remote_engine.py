"""The shipped units on a real vLLM server through ``OpenAIEngine``: answers, signals, requests.

The server is the session's (``conftest.py``); where a test needs to see what AAU sent, a
``FaultInjector`` in pass-through mode records the requests on the way.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from aau import EngineConfig, Pipeline, build_engine, load_unit
from aau.engines.base import Generation, GenerationRequest
from aau.engines.remote import OpenAIEngine
from aau.prompts import render_messages
from aau.runner import UnitRunner
from tests.conftest import assert_result_contract
from tests.remote.fault_proxy import FaultInjector
from tests.remote.vllm_server import VllmServer

ROOT = Path(__file__).resolve().parents[2]
UNITS = [
    ROOT / "units" / f"{n}.yaml" for n in ("extract_price", "extract_date", "extract_quantity")
]
TEXTS = [
    "Invoice 2024-31: total due EUR 1,250.00 by 30 April 2024 for 12 boxes.",
    "Rechnung vom 03.05.2023 über 4 Stück, Gesamtbetrag 89,90 €.",
    "The meeting moved to Tuesday, room 4.",
]


def remote(url: str, **settings: object) -> OpenAIEngine:
    engine = build_engine(EngineConfig(backend="openai", remote={"base_urls": [url], **settings}))
    assert isinstance(engine, OpenAIEngine)
    return engine


def unit_request(unit_path: Path, text: str, **fields: object) -> GenerationRequest:
    spec = load_unit(unit_path)
    runner = UnitRunner(spec, None)
    return GenerationRequest(
        messages=render_messages(spec, text), schema=runner.schema,
        max_new_tokens=spec.policy.max_new_tokens, key=spec.key, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_shipped_units_run_on_vllm_from_the_python_api(vllm: VllmServer) -> None:
    pipeline = Pipeline(UNITS, engine=remote(vllm.url), calibrator=False)
    answered_by_the_model = accepted = 0
    for text in TEXTS:
        result = pipeline.run(text)
        for spec in pipeline.units:
            unit = result.units[spec.name]
            assert_result_contract(unit, spec)
            assert unit.error is None, unit.error
            assert unit.engine == "default"
            assert unit.tokens["prompt"] > 100
            primary = unit.attempts[0]
            assert primary.path == "primary"
            if primary.output is not None:  # the server's answer, in the unit's schema
                answered_by_the_model += 1
            # without a calibrator the model's confidence is its tokens' (remote) probability
            if primary.error is None:
                accepted += 1
                assert primary.confidence is not None
                assert 0.0 < primary.confidence <= 1.0
    # The server answers every run; how many of its answers the text grounds is the 135M
    # model's own (in bfloat16 its greedy tokens differ between CPUs: 2 of these 9 on one, 3
    # or more on others).
    assert answered_by_the_model == len(TEXTS) * len(UNITS)
    assert accepted >= 1


def test_generations_carry_logprobs_entropies_forced_tokens_and_cache_hits(
    vllm: VllmServer,
) -> None:
    engine = remote(vllm.url)
    request = unit_request(UNITS[0], TEXTS[0])

    async def twice() -> list[Generation]:
        first = (await engine.generate([request]))[0]
        second = (await engine.generate([request]))[0]
        assert isinstance(first, Generation)
        assert isinstance(second, Generation)
        return [first, second]

    first, second = asyncio.run(twice())
    answer = json.loads(second.text)
    jsonschema.validate(answer, load_unit(UNITS[0]).output)
    assert second.finish_reason == "stop"
    assert len(second.token_logprobs) == len(second.token_entropies) == len(second.forced) > 3
    assert all(lp <= 0.0 for lp in second.token_logprobs)
    assert any(second.forced), "a grammar-forced token (after the mask) has probability 1"
    assert not all(second.forced)
    assert all(e >= 0.0 for e in second.token_entropies)
    assert second.prompt_tokens == first.prompt_tokens > 128
    assert second.cached_tokens >= 128  # vLLM caches whole 128-token blocks
    assert engine.capabilities.logprobs_after_mask


def test_requests_use_json_schema_structured_outputs_never_guided_json(vllm: VllmServer) -> None:
    with FaultInjector(vllm.address) as proxy:
        engine = remote(proxy.url, served_model="smollm2")
        request = unit_request(UNITS[1], TEXTS[1])
        result = asyncio.run(engine.generate([request]))[0]
        assert isinstance(result, Generation)
        body = proxy.requests[-1].body
    assert body is not None
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == request.schema
    assert "guided_json" not in body
    assert body["max_tokens"] == load_unit(UNITS[1]).policy.max_new_tokens
    assert body["temperature"] == 0.0
    assert body["logprobs"] is True
    assert body["top_logprobs"] == 5
    assert "cache_salt" not in body  # the default tenant


def test_each_tenant_has_its_own_prefix_cache(vllm: VllmServer) -> None:
    engine = remote(vllm.url)
    text = "Order 99123: 7 pallets, amount payable GBP 4,410.00 on 2024-05-09."

    async def cached(tenant: str) -> int:
        result = (await engine.generate([unit_request(UNITS[0], text, tenant=tenant)]))[0]
        assert isinstance(result, Generation)
        return result.cached_tokens

    async def scenario() -> list[int]:
        # a first call per tenant, then a second: only a tenant's own prompts are ever hits
        return [await cached("acme"), await cached("acme"), await cached("globex")]

    acme_first, acme_again, globex_first = asyncio.run(scenario())
    assert acme_again >= 128
    assert globex_first == 0
    assert acme_first == 0


def test_the_tenant_salt_is_derived_and_does_not_send_the_name(vllm: VllmServer) -> None:
    with FaultInjector(vllm.address) as proxy:
        engine = remote(proxy.url, served_model="smollm2")
        asyncio.run(engine.generate([unit_request(UNITS[2], TEXTS[0], tenant="acme")]))
        body = proxy.requests[-1].body
    assert body is not None
    assert len(body["cache_salt"]) == 64
    assert "acme" not in json.dumps(body)


def test_cancelling_a_request_aborts_it_on_the_server(vllm: VllmServer) -> None:
    engine = remote(vllm.url)
    request = GenerationRequest(
        messages=[{"role": "user", "content": "Write a very long story about a lighthouse."}],
        schema=None, max_new_tokens=1500,
    )  # fmt: skip
    since = vllm.log_offset()

    async def cancel_soon() -> object:
        task = asyncio.ensure_future(engine.generate([request]))
        await asyncio.sleep(1.5)
        request.cancel.set()
        started = time.monotonic()
        result = (await task)[0]
        assert time.monotonic() - started < 3.0, "the cancelled request returns at once"
        return result

    result = asyncio.run(cancel_soon())
    assert getattr(result, "code", None) == "engine_timeout"
    assert "aborted" in vllm.wait_for_log("aborted", since=since, timeout=15).lower()


def test_requests_in_flight_are_bounded_per_replica_and_balanced(vllm: VllmServer) -> None:
    with FaultInjector(vllm.address) as first, FaultInjector(vllm.address) as second:
        engine = build_engine(EngineConfig(backend="openai", remote={
            "base_urls": [first.url, second.url], "served_model": "smollm2",
            "max_in_flight": 2}))  # fmt: skip
        assert isinstance(engine, OpenAIEngine)
        requests = [unit_request(UNITS[i % 3], f"Invoice {i}: EUR {100 + i}.00 due.")
                    for i in range(10)]  # fmt: skip
        peak = [0, 0]

        async def watch(done: asyncio.Event) -> None:
            while not done.is_set():
                for i, replica in enumerate(engine.replicas):
                    peak[i] = max(peak[i], replica.in_flight)
                await asyncio.sleep(0.005)

        async def scenario() -> list[object]:
            done = asyncio.Event()
            watcher = asyncio.ensure_future(watch(done))
            results = await engine.generate(requests)
            done.set()
            await watcher
            return results

        results = asyncio.run(scenario())
        counts = [len(first.requests), len(second.requests)]
    assert all(isinstance(r, Generation) for r in results)
    assert peak == [2, 2]
    assert sum(counts) == 10
    assert min(counts) >= 4, counts  # least outstanding: both replicas carry the load


def test_the_shipped_units_run_on_vllm_from_the_cli(vllm: VllmServer, tmp_path: Path) -> None:
    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "aau.cli.main", "batch", *map(str, UNITS),
               "--input", str(lines), "--output", str(out), "--engine", "openai",
               "--base-url", vllm.url]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == [0, 1, 2]
    specs = {p.stem: load_unit(p) for p in UNITS}
    for row in rows:
        for name, unit in row["units"].items():
            assert unit["error"] is None, unit["error"]
            jsonschema.validate(unit["output"], specs[name].output)
            assert unit["engine"] == "default"


@pytest.mark.parametrize("dialect", ["sglang", "openai"])
def test_other_dialects_send_the_common_request_only(dialect: str) -> None:
    engine = build_engine(EngineConfig(backend="openai", remote={
        "base_urls": ["http://127.0.0.1:9"], "dialect": dialect, "served_model": "m"}))  # fmt: skip
    assert isinstance(engine, OpenAIEngine)
    body = engine.request_body(unit_request(UNITS[0], TEXTS[0], tenant="acme"))
    assert "cache_salt" not in body
    assert body["response_format"]["type"] == "json_schema"
    tokens = "max_completion_tokens" if dialect == "openai" else "max_tokens"
    assert body[tokens] == load_unit(UNITS[0]).policy.max_new_tokens
    assert engine.capabilities.prefix_cache is (dialect == "sglang")


def test_the_calibrator_fitted_on_vllm_reads_the_remote_logprobs(vllm: VllmServer) -> None:
    from aau.calibration.calibrator import engine_artifact_path

    assert engine_artifact_path("openai").is_file(), "calibration/calibrator-openai.pt is shipped"
    pipeline = Pipeline(UNITS, engine=remote(vllm.url))  # the default choice of calibrator
    calibrator = pipeline.calibrator
    assert calibrator is not None
    assert calibrator.logprobs_after_mask
    seen: list[object] = []
    original = calibrator.confidence

    def recording(evidence: object) -> float:  # a spy on the real calibrator, not a double
        seen.append(evidence)
        return original(evidence)  # type: ignore[arg-type]

    calibrator.confidence = recording  # type: ignore[method-assign]
    result = pipeline.run(TEXTS[0])
    for spec in pipeline.units:
        assert_result_contract(result.units[spec.name], spec)
    primaries = [e for e in seen if getattr(e, "path", None) == "primary"]
    assert primaries, "the model's answers were scored"
    assert all(getattr(e, "generation", None) is not None for e in primaries)
