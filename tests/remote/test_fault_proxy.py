"""The fault injector: each mode's effect on a plain httpx client, its records and its bounds.

The modes that never contact upstream run against an injector without one (no vLLM needed, so
they run even with ``AAU_SKIP_VLLM=1``); the forwarding ones go through the ``fault_proxy``
fixture to the session's vLLM server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import within
from tests.remote.fault_proxy import MALFORMED_BODY, WRONG_SCHEMA_CONTENT, FaultInjector
from tests.remote.vllm_server import SERVED_MODEL, VllmServer

CHAT = "/v1/chat/completions"


def chat_body(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": SERVED_MODEL,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 8,
        "temperature": 0,
    }
    body.update(extra)
    return body


def wait_until(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def lone_proxy() -> Iterator[FaultInjector]:
    """An injector with no upstream, for the modes that never contact one."""
    with FaultInjector(None, header_timeout=1.0, body_timeout=1.0) as proxy:
        yield proxy


# -- pass-through ----------------------------------------------------------------------------------


def test_pass_forwards_and_records(fault_proxy: FaultInjector) -> None:
    before = time.monotonic()
    with httpx.Client(base_url=fault_proxy.url, timeout=60) as client:
        answer = client.post(CHAT, json=chat_body())
        models = client.get("/v1/models")
    assert answer.status_code == 200, answer.text
    assert answer.json()["object"] == "chat.completion"
    assert answer.headers["connection"] == "close"
    assert models.json()["data"][0]["id"] == SERVED_MODEL
    first, second = fault_proxy.requests
    assert (first.method, first.path, first.mode) == ("POST", CHAT, "pass")
    assert first.body == chat_body()
    assert first.headers["content-type"] == "application/json"
    assert (second.method, second.path, second.body) == ("GET", "/v1/models", None)
    assert before <= first.time <= second.time <= time.monotonic()


def test_pass_streams_server_sent_events(fault_proxy: FaultInjector) -> None:
    body = chat_body(stream=True, max_tokens=6, stream_options={"include_usage": True})
    with httpx.Client(base_url=fault_proxy.url, timeout=60) as client:
        with client.stream("POST", CHAT, json=body) as answer:
            events = [line for line in answer.iter_lines() if line]
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "data: [DONE]"
    assert json.loads(events[-2].removeprefix("data: "))["usage"]["completion_tokens"] == 6


async def test_async_client_through_proxy(fault_proxy: FaultInjector) -> None:
    async with httpx.AsyncClient(base_url=fault_proxy.url, timeout=60) as client:
        answer = await client.post(CHAT, json=chat_body())
    assert answer.status_code == 200
    assert fault_proxy.requests[0].mode == "pass"


def test_client_going_away_aborts_upstream_request(
    fault_proxy: FaultInjector, vllm: VllmServer
) -> None:
    """Through the proxy, a client that gives up still makes vLLM abort the generation."""
    request_id = f"abort-{uuid.uuid4().hex[:12]}"
    since = vllm.log_offset()
    long = chat_body(max_tokens=1500, ignore_eos=True)
    with httpx.Client(base_url=fault_proxy.url, timeout=httpx.Timeout(10, read=1.0)) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post(CHAT, json=long, headers={"X-Request-Id": request_id})
    line = vllm.wait_for_log(f"Aborted request(s) chatcmpl-{request_id}", since=since)
    assert "INFO" in line
    assert wait_until(lambda: fault_proxy.open_connections == 0)


# -- faults answered without upstream --------------------------------------------------------------


def test_stall_gives_a_read_timeout_and_ends_when_the_client_leaves(
    lone_proxy: FaultInjector,
) -> None:
    lone_proxy.set_mode("stall")
    began = time.monotonic()
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.5)) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post(lone_proxy.url + CHAT, json=chat_body())
    assert time.monotonic() - began < 3.0
    assert lone_proxy.requests[0].mode == "stall"
    assert lone_proxy.requests[0].body == chat_body()
    assert wait_until(lambda: lone_proxy.open_connections == 0)


def test_stall_holds_the_socket_open_until_stop() -> None:
    proxy = FaultInjector(None).start()
    proxy.set_mode("stall")
    sock = socket.create_connection((proxy.host, proxy.port), timeout=5)
    try:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        proxy.wait_for_requests(1)
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # nothing comes, and the socket stays open
        began = time.monotonic()
        proxy.stop()
        assert time.monotonic() - began < 3.0
        sock.settimeout(3.0)
        assert sock.recv(1) == b""  # closed by the stop
    finally:
        sock.close()
        proxy.stop()


def test_drop_closes_without_an_answer(lone_proxy: FaultInjector) -> None:
    lone_proxy.set_mode("drop")
    with httpx.Client(timeout=5) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending"):
            client.post(lone_proxy.url + CHAT, json=chat_body())
    assert lone_proxy.requests[0].mode == "drop"


def test_reset_sends_a_tcp_rst(lone_proxy: FaultInjector) -> None:
    lone_proxy.set_mode("reset")
    with httpx.Client(timeout=5) as client:
        with pytest.raises(httpx.ReadError) as caught:
            client.post(lone_proxy.url + CHAT, json=chat_body())
    assert (
        isinstance(caught.value.__context__, ConnectionResetError)
        or "reset" in str(caught.value).lower()
    )
    # a raw socket sees the reset as such
    lone_proxy.set_mode("reset")
    with socket.create_connection((lone_proxy.host, lone_proxy.port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        with pytest.raises(ConnectionResetError):
            sock.recv(1024)


@pytest.mark.parametrize(
    ("status", "retry_after"), [(503, "2"), (500, None), (429, "1"), (502, None)]
)
def test_status_answers_without_upstream(
    lone_proxy: FaultInjector, status: int, retry_after: str | None
) -> None:
    lone_proxy.set_mode("status", status=status, retry_after=retry_after)
    with httpx.Client(timeout=5) as client:
        answer = client.post(lone_proxy.url + CHAT, json=chat_body())
    assert answer.status_code == status
    assert answer.headers.get("retry-after") == retry_after
    assert answer.headers["content-type"] == "application/json"
    error = answer.json()["error"]
    assert error["code"] == status
    assert str(status) in error["message"]
    assert lone_proxy.requests[0].mode == "status"


def test_malformed_json_is_a_200_that_does_not_parse(lone_proxy: FaultInjector) -> None:
    lone_proxy.set_mode("malformed_json")
    with httpx.Client(timeout=5) as client:
        answer = client.post(lone_proxy.url + CHAT, json=chat_body())
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.content == MALFORMED_BODY
    with pytest.raises(json.JSONDecodeError):
        answer.json()


def test_forwarding_without_upstream_is_a_502(lone_proxy: FaultInjector) -> None:
    with httpx.Client(timeout=5) as client:
        answer = client.get(lone_proxy.url + "/health")
    assert answer.status_code == 502
    assert "no upstream" in answer.json()["error"]["message"]


# -- faults on the upstream answer -----------------------------------------------------------------


def test_truncate_cuts_the_answer_in_half(fault_proxy: FaultInjector) -> None:
    fault_proxy.set_mode("truncate")
    with httpx.Client(base_url=fault_proxy.url, timeout=60) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete|closed"):
            client.post(CHAT, json=chat_body(max_tokens=16))
    with socket.create_connection((fault_proxy.host, fault_proxy.port), timeout=30) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(
        next(
            line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        ).split(b":")[1]
    )
    assert 0 < len(body) < length
    assert len(fault_proxy.requests) == 2


def test_wrong_schema_replaces_the_assistant_content(fault_proxy: FaultInjector) -> None:
    fault_proxy.set_mode("wrong_schema")
    with httpx.Client(base_url=fault_proxy.url, timeout=60) as client:
        answer = client.post(CHAT, json=chat_body())
    assert answer.status_code == 200
    assert int(answer.headers["content-length"]) == len(answer.content)
    data = answer.json()  # still valid JSON, still an OpenAI chat completion
    assert data["object"] == "chat.completion"
    assert data["usage"]["completion_tokens"] > 0
    assert data["choices"][0]["message"]["content"] == WRONG_SCHEMA_CONTENT
    assert json.loads(data["choices"][0]["message"]["content"]) == {"unexpected": True}


# -- switching modes, listening, bounds ------------------------------------------------------------


def test_next_n_then_pass(fault_proxy: FaultInjector) -> None:
    fault_proxy.set_mode("status", status=503, retry_after="1", count=2)
    with httpx.Client(base_url=fault_proxy.url, timeout=30) as client:
        codes = [client.get("/health").status_code for _ in range(4)]
    assert codes == [503, 503, 200, 200]
    assert [r.mode for r in fault_proxy.requests] == ["status", "status", "pass", "pass"]


def test_queued_faults_run_in_order_and_set_mode_overrides(lone_proxy: FaultInjector) -> None:
    lone_proxy.set_mode("status", status=429, count=1)
    lone_proxy.set_mode("status", status=500, count=1)
    assert lone_proxy.mode == "status"
    with httpx.Client(base_url=lone_proxy.url, timeout=5) as client:
        assert client.get("/a").status_code == 429
        assert client.get("/b").status_code == 500
        assert client.get("/c").status_code == 502  # pass, and no upstream
        lone_proxy.set_mode("status", status=503, count=5)
        lone_proxy.set_mode("malformed_json")  # standing mode: drops the queued ones
        assert client.get("/d").content == MALFORMED_BODY
        assert client.get("/e").content == MALFORMED_BODY
        lone_proxy.reset_mode()
        assert client.get("/f").status_code == 502
    with pytest.raises(ValueError, match="unknown fault mode"):
        lone_proxy.set_mode("explode")


def test_mode_changes_from_many_threads(lone_proxy: FaultInjector) -> None:
    def flip() -> None:
        for _ in range(200):
            lone_proxy.set_mode("status", status=500, count=1)
            lone_proxy.set_mode("malformed_json")
            lone_proxy.reset_mode()

    threads = [threading.Thread(target=flip) for _ in range(4)]
    for thread in threads:
        thread.start()
    with httpx.Client(base_url=lone_proxy.url, timeout=5) as client:
        codes = {client.get("/x").status_code for _ in range(20)}
    for thread in threads:
        thread.join(10)
    assert codes <= {200, 500, 502}
    assert len(lone_proxy.requests) == 20


def test_refuse_then_accept_on_the_same_port(lone_proxy: FaultInjector) -> None:
    url, port = lone_proxy.url, lone_proxy.port
    lone_proxy.set_mode("status", status=503)
    lone_proxy.refuse()
    assert not lone_proxy.listening
    with httpx.Client(timeout=5) as client:
        with pytest.raises(httpx.ConnectError):
            client.get(url + "/health")
        lone_proxy.accept()
        assert lone_proxy.port == port
        assert client.get(url + "/health").status_code == 503
    assert len(lone_proxy.requests) == 1


def test_body_over_the_cap_is_refused() -> None:
    with FaultInjector(None, max_body=1024) as proxy:
        with httpx.Client(timeout=5) as client:
            answer = client.post(proxy.url + CHAT, content=b"x" * 4096)
        assert answer.status_code == 413
        assert proxy.requests == []


def test_a_client_that_never_finishes_its_headers_is_cut_off() -> None:
    with FaultInjector(None, header_timeout=0.3, body_timeout=0.3) as proxy:
        with socket.create_connection((proxy.host, proxy.port), timeout=5) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            began = time.monotonic()
            assert sock.recv(1024) == b""
            assert time.monotonic() - began < 2.0
        with socket.create_connection((proxy.host, proxy.port), timeout=5) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nshort")
            began = time.monotonic()
            assert b" 408 " in sock.recv(1024)
            assert time.monotonic() - began < 2.0


def test_stop_is_quick_with_clients_hanging() -> None:
    proxy = FaultInjector(None).start()
    proxy.set_mode("stall")
    raised: list[BaseException] = []

    def hang() -> None:
        try:
            with httpx.Client(timeout=30) as client:
                client.get(proxy.url + "/health")
        except httpx.HTTPError as exc:
            raised.append(exc)

    clients = [threading.Thread(target=hang, daemon=True) for _ in range(3)]
    for thread in clients:
        thread.start()
    proxy.wait_for_requests(3)
    assert within(3.0, proxy.stop) is None
    for thread in clients:
        thread.join(5)
    assert len(raised) == 3
    assert all(isinstance(exc, httpx.RemoteProtocolError) for exc in raised)
