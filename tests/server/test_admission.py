"""Admission: a bounded queue that refuses with a computed Retry-After instead of collapsing."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import httpx
import pytest

from aau.server import AdmissionSettings, ServeSettings
from aau.server.admission import Admission, Refused
from tests.server.conftest import Keys

TEXT = "Invoice 2291: total due EUR 1,250.00 by 3 May 2024."


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def hold(admission: Admission, gate: asyncio.Event, tenant: str = "t") -> asyncio.Task[None]:
    """A request of one unit that holds it until ``gate`` is set."""

    async def run() -> None:
        async with admission.admit(tenant, 1):
            await gate.wait()

    return asyncio.create_task(run())


async def test_requests_past_capacity_wait_first_come_first_served() -> None:
    admission = Admission(AdmissionSettings(max_units_in_flight=2))
    order: list[str] = []
    release = asyncio.Event()

    async def request(name: str, units: int) -> None:
        async with admission.admit("t", units):
            order.append(name)
            await release.wait()

    tasks = [asyncio.create_task(request(n, u)) for n, u in (("a", 2), ("b", 1), ("c", 1))]
    await asyncio.sleep(0.01)
    assert order == ["a"]
    assert admission.queued_requests == 2
    assert admission.queued_units == 2
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c"]
    assert admission.in_flight_units == 0


async def test_the_wait_estimate_comes_from_the_finishing_rate_and_refuses_past_the_bound() -> None:
    clock = Clock()
    admission = Admission(AdmissionSettings(max_units_in_flight=1, max_queue_ms=3800), clock=clock)
    for _ in range(4):  # four units finished in 2 s: 2 units/s
        async with admission.admit("t", 1):
            clock.now += 0.5
    assert admission.units_per_s() == pytest.approx(2.0)

    gate = asyncio.Event()

    tasks = [hold(admission, gate) for _ in range(8)]
    await asyncio.sleep(0.01)
    # 1 unit running and 7 waiting: a newcomer would wait (7 + 1) / 2 = 4 s
    assert admission.estimated_wait_s(1) == pytest.approx(4.0)
    with pytest.raises(Refused) as refused:
        async with admission.admit("u", 1):
            pass
    assert refused.value.code == "overloaded"
    assert refused.value.retry_after == 4
    gate.set()
    await asyncio.gather(*tasks)


async def test_a_batch_finishing_at_once_does_not_read_as_a_burst_of_speed() -> None:
    clock = Clock()
    admission = Admission(AdmissionSettings(max_units_in_flight=8), clock=clock)
    gate = asyncio.Event()

    tasks = [hold(admission, gate) for _ in range(8)]
    await asyncio.sleep(0.01)
    clock.now += 8.0  # eight units held 8 s each, finishing together: 1 unit/s
    gate.set()
    await asyncio.gather(*tasks)

    assert admission.units_per_s() == pytest.approx(1.0)


async def test_the_wait_at_the_queues_head_is_a_floor_for_the_estimate() -> None:
    clock = Clock()
    admission = Admission(AdmissionSettings(max_units_in_flight=1, max_queue_ms=3000), clock=clock)
    gate = asyncio.Event()
    tasks = [hold(admission, gate), hold(admission, gate)]
    await asyncio.sleep(0.01)
    assert admission.estimated_wait_s(1) == 0.0  # nothing finished: no rate, a fresh head
    clock.now += 5.0  # the head has waited 5 s

    with pytest.raises(Refused) as refused:
        async with admission.admit("u", 1):
            pass
    assert refused.value.retry_after == 5
    gate.set()
    await asyncio.gather(*tasks)


async def test_a_cancelled_waiter_leaves_the_queue_and_frees_nothing_it_did_not_hold() -> None:
    admission = Admission(AdmissionSettings(max_units_in_flight=1))
    gate = asyncio.Event()

    first = hold(admission, gate)
    second = hold(admission, gate)
    await asyncio.sleep(0.01)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert admission.queued_requests == 0
    assert admission.in_flight_units == 1
    gate.set()
    await first
    assert admission.in_flight_units == 0


async def test_a_tenant_over_its_rate_is_told_when_a_token_is_back() -> None:
    clock = Clock()
    admission = Admission(AdmissionSettings(tenant_rate=0.5, tenant_burst=2), clock=clock)
    for _ in range(2):
        async with admission.admit("t", 1):
            pass
    with pytest.raises(Refused) as refused:
        async with admission.admit("t", 1):
            pass
    assert refused.value.code == "rate_limited"
    assert refused.value.retry_after_s == pytest.approx(2.0)
    async with admission.admit("other", 1):  # another tenant's bucket is its own
        pass
    clock.now += 2.0
    async with admission.admit("t", 1):
        pass


async def test_a_tenant_over_its_requests_in_flight_is_refused_alone() -> None:
    admission = Admission(AdmissionSettings(tenant_requests=2))
    gate = asyncio.Event()

    tasks = [hold(admission, gate, "t") for _ in range(2)]
    await asyncio.sleep(0.01)
    with pytest.raises(Refused) as refused:
        async with admission.admit("t", 1):
            pass
    assert refused.value.code == "tenant_busy"
    others = hold(admission, gate, "u")
    await asyncio.sleep(0.01)
    gate.set()
    await asyncio.gather(*tasks, others)


# -- over real HTTP ---------------------------------------------------------------------------


def _burst(url: str, key: str, count: int) -> list[httpx.Response]:
    def one(i: int) -> httpx.Response:
        body = {"id": i, "text": TEXT, "units": ["extract_price", "extract_date"]}
        return httpx.post(f"{url}/v1/analyze", json=body, headers=Keys.auth(key), timeout=120)

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_past_capacity_the_service_answers_429_with_retry_after_and_loses_nothing(
    serve_fallbacks: Any, keys: Keys
) -> None:
    settings = ServeSettings(admission=AdmissionSettings(max_units_in_flight=2, max_queue_ms=300))
    live = serve_fallbacks(settings)
    primer = _burst(live.url, keys.acme, 4)  # a measured finishing rate first

    responses = _burst(live.url, keys.acme, 40)

    codes = [r.status_code for r in responses]
    assert set(codes) <= {200, 429}, codes
    refused = [r for r in responses if r.status_code == 429]
    assert refused, "nothing was refused past capacity"
    for response in refused:
        assert int(response.headers["retry-after"]) >= 1
        assert response.json()["error"]["code"] == "overloaded"
    for response in responses:
        if response.status_code == 200:
            assert set(response.json()["units"]) == {"extract_price", "extract_date"}
    text = httpx.get(f"{live.url}/metrics", headers=Keys.auth(keys.operator)).text
    count = len(refused) + sum(r.status_code == 429 for r in primer)
    assert f'aau_refused_requests_total{{reason="overloaded",tenant="acme"}} {count}.0' in text


def test_a_tenant_over_its_rate_gets_429_while_another_is_served(
    serve_fallbacks: Any, keys: Keys
) -> None:
    live = serve_fallbacks(
        ServeSettings(admission=AdmissionSettings(tenant_rate=0.2, tenant_burst=2))
    )
    responses = [
        httpx.post(f"{live.url}/v1/analyze", json={"text": TEXT}, headers=Keys.auth(keys.acme),
                   timeout=60)
        for _ in range(3)
    ]  # fmt: skip
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert responses[2].json()["error"]["code"] == "rate_limited"
    assert 1 <= int(responses[2].headers["retry-after"]) <= 5
    other = httpx.post(
        f"{live.url}/v1/analyze", json={"text": TEXT}, headers=Keys.auth(keys.globex), timeout=60
    )
    assert other.status_code == 200
