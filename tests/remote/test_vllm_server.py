"""The real vLLM server the remote engine talks to: what its OpenAI API gives back, and its
life cycle (kill, restart). Plain httpx, no aau code.

The kill/restart test is last in the file: it restarts the session's server (about 30 s).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from typing import Any

import httpx
import jsonschema
import pytest

from tests.remote.fault_proxy import FaultInjector
from tests.remote.vllm_server import SERVED_MODEL, VllmServer

CHAT = "/v1/chat/completions"

INVOICE_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "number"},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    },
    "required": ["amount", "currency"],
    "additionalProperties": False,
}

SYSTEM = (
    "You read invoices. Reply with the invoice total as a JSON object with the amount as a "
    "number and the currency as its ISO code, nothing else. "
) * 6
"""Long enough (> 128 tokens, vLLM's CPU KV block) for the prefix cache to report hits."""


def invoice_request(nonce: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": SERVED_MODEL,
        "messages": [
            # the nonce first, so nothing of an earlier test's prompt is cached
            {"role": "system", "content": f"[{nonce}] {SYSTEM}"},
            {"role": "user", "content": "Invoice 7. Total: 120.50 EUR, due in 30 days."},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "t", "schema": INVOICE_SCHEMA, "strict": True},
        },
        "logprobs": True,
        "top_logprobs": 5,
        "max_tokens": 48,
        "temperature": 0,
    }
    body.update(extra)
    return body


def running_requests(client: httpx.Client) -> float:
    metrics = client.get("/metrics").text
    found = re.search(r"^vllm:num_requests_running\{[^}]*\} (\S+)$", metrics, re.MULTILINE)
    assert found, "no vllm:num_requests_running in /metrics"
    return float(found.group(1))


@pytest.fixture
def client(vllm: VllmServer) -> Any:
    with httpx.Client(base_url=vllm.url, timeout=120) as http:
        yield http


def test_health_and_models(vllm: VllmServer, client: httpx.Client) -> None:
    assert vllm.pid is not None
    os.killpg(vllm.pid, 0)  # its own process group, alive
    assert client.get("/health").status_code == 200
    models = client.get("/v1/models").json()
    assert [model["id"] for model in models["data"]] == [SERVED_MODEL]
    assert models["data"][0]["max_model_len"] == 2048


def test_json_schema_logprobs_and_prefix_cache(client: httpx.Client) -> None:
    # One fixed prompt, not a new nonce per run: in bfloat16 the cached and the uncached prefill
    # differ in their last bits, which for a rare nonce flipped the tiny model's near-tie between
    # "120.50" and "30" (none of 24 nonces in a loop did). The prompt is new to the server still.
    body = invoice_request("json-schema-logprobs-and-prefix-cache")
    first = client.post(CHAT, json=body)
    assert first.status_code == 200, first.text
    data = first.json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    jsonschema.validate(json.loads(choice["message"]["content"]), INVOICE_SCHEMA)

    entries = choice["logprobs"]["content"]
    assert len(entries) == data["usage"]["completion_tokens"]
    # the end-of-turn token is the last entry (and counted), though not in the content
    assert entries[-1]["token"] == "<|im_end|>"
    assert "".join(entry["token"] for entry in entries[:-1]) == choice["message"]["content"]
    for entry in entries:
        assert entry["logprob"] <= 0.0
        assert len(entry["top_logprobs"]) == 5
        assert entry["token"] in {top["token"] for top in entry["top_logprobs"]}
    # the grammar's masked tokens show up among the top ones with a logprob of -9999.0
    assert any(top["logprob"] == -9999.0 for entry in entries for top in entry["top_logprobs"])

    details = data["usage"]["prompt_tokens_details"]
    assert data["usage"]["prompt_tokens"] > 128
    assert details["cached_tokens"] == 0
    again = client.post(CHAT, json=body).json()
    cached = again["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0
    assert cached % 128 == 0  # whole KV blocks only
    assert again["choices"][0]["message"]["content"] == choice["message"]["content"]


def test_logprobs_without_top_logprobs(client: httpx.Client) -> None:
    body = invoice_request(uuid.uuid4().hex)
    del body["top_logprobs"]
    entries = client.post(CHAT, json=body).json()["choices"][0]["logprobs"]["content"]
    assert entries
    assert all(entry["top_logprobs"] == [] for entry in entries)
    body["top_logprobs"] = 21
    refused = client.post(CHAT, json=body)
    assert refused.status_code == 400
    assert "max allowed: 20" in refused.json()["error"]["message"]


def test_cache_salt_is_accepted_and_isolates_the_cache(client: httpx.Client) -> None:
    body = invoice_request("shared-nonce-for-salt-test")
    client.post(CHAT, json=body)  # the unsalted prompt is cached now
    salted = dict(body, cache_salt=uuid.uuid4().hex)
    first = client.post(CHAT, json=salted)
    assert first.status_code == 200, first.text
    assert first.json()["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    again = client.post(CHAT, json=salted).json()
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] > 0


def test_errors_are_openai_shaped(client: httpx.Client) -> None:
    unknown = client.post(CHAT, json=invoice_request("x", model="nope"))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["type"] == "NotFoundError"
    too_long = client.post(CHAT, json=invoice_request("x", max_tokens=5000))
    assert too_long.status_code == 400
    assert too_long.json()["error"]["param"] == "max_tokens"
    broken = client.post(
        CHAT,
        content=b'{"model": "smollm2", "messages": [',
        headers={"content-type": "application/json"},
    )
    assert broken.status_code == 400
    # an unknown field is ignored, not refused
    assert client.post(CHAT, json=invoice_request("x", max_tokens=4, bogus=1)).status_code == 200


def test_client_disconnect_aborts_the_request(vllm: VllmServer, client: httpx.Client) -> None:
    request_id = f"gone-{uuid.uuid4().hex[:12]}"
    since = vllm.log_offset()
    long = {
        "model": SERVED_MODEL,
        "messages": [{"role": "user", "content": "Count."}],
        "max_tokens": 1500,
        "ignore_eos": True,
    }
    with httpx.Client(base_url=vllm.url, timeout=httpx.Timeout(10, read=1.0)) as impatient:
        with pytest.raises(httpx.ReadTimeout):
            impatient.post(CHAT, json=long, headers={"X-Request-Id": request_id})
    vllm.wait_for_log(f"Aborted request(s) chatcmpl-{request_id}", since=since)
    deadline = time.monotonic() + 5
    while running_requests(client) > 0:
        assert time.monotonic() < deadline, "the aborted request is still running"
        time.sleep(0.1)


def test_kill_then_restart(vllm: VllmServer, client: httpx.Client) -> None:
    pid, port = vllm.pid, vllm.port
    assert pid is not None
    with FaultInjector(vllm.address) as proxy:
        try:
            vllm.kill()
            assert not vllm.running()
            assert not vllm.group_alive()  # API server, engine core and worker all gone
            with pytest.raises(ProcessLookupError):
                os.killpg(pid, 0)
            with pytest.raises(httpx.ConnectError):
                client.get("/health")
            with httpx.Client(timeout=10) as other:
                through = other.get(proxy.url + "/health")
            assert through.status_code == 502
            assert "upstream unreachable" in through.json()["error"]["message"]
        finally:
            vllm.restart()
            vllm.warm_up()
        assert vllm.port == port
        assert vllm.pid != pid
        assert vllm.startup_s is not None
        assert client.get("/health").status_code == 200
        with httpx.Client(timeout=60) as other:
            answer = other.post(proxy.url + CHAT, json=invoice_request("after-restart"))
        assert answer.status_code == 200
        jsonschema.validate(
            json.loads(answer.json()["choices"][0]["message"]["content"]), INVOICE_SCHEMA
        )
