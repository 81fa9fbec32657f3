"""The service on the embedded default model: warm-up, the probe, batching, tenants' caches."""

from __future__ import annotations

import concurrent.futures
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from aau.pipeline import Pipeline
from aau.terms import TermStore
from tests.conftest import SERVED_UNIT_FILES
from tests.server.conftest import Keys

pytestmark = pytest.mark.slow

TEXT = "Invoice 2291 from Hallmark Supplies: total due EUR 1,250.00 by 3 May 2024 for 12 boxes."


@pytest.fixture
def model_service(serve_fallbacks: Any, default_engine: Any, tmp_path: Path) -> Any:
    terms = TermStore(tmp_path / "terms")
    pipeline = Pipeline(SERVED_UNIT_FILES, engine=default_engine, terms=terms)
    return serve_fallbacks(pipeline=pipeline)


def post(live: Any, key: str, units: list[str] | None = None, text: str = TEXT) -> dict[str, Any]:
    body: dict[str, Any] = {"text": text} if units is None else {"text": text, "units": units}
    response = httpx.post(f"{live.url}/v1/analyze", json=body, headers=Keys.auth(key), timeout=300)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_model_answers_batched_and_the_metrics_show_it(model_service: Any, keys: Keys) -> None:
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        bodies = list(pool.map(lambda _: post(model_service, keys.acme), range(4)))

    for body in bodies:
        assert set(body["units"]) == {"extract_date", "extract_price", "extract_quantity"}
        assert any(u["tokens"].get("generated") for u in body["units"].values())
    metrics = httpx.get(f"{model_service.url}/metrics", headers=Keys.auth(keys.operator)).text
    steps = re.search(r'aau_engine_batch_rows_count\{engine="transformers"\} (\S+)', metrics)
    assert steps is not None
    assert float(steps.group(1)) > 0
    rows = float(
        re.search(r'aau_engine_batch_rows_sum\{engine="transformers"\} (\S+)', metrics).group(1)
    )  # type: ignore[union-attr]
    assert rows / float(steps.group(1)) > 1.0  # concurrent requests were decoded together
    assert re.search(r'aau_tokens_total\{kind="generated"\} [1-9]', metrics)
    assert re.search(
        r'aau_unit_phase_seconds_count\{phase="prefill",unit="extract_price"\}', metrics
    )


def test_each_tenant_has_its_own_prefix_cache(model_service: Any, keys: Keys) -> None:
    units, text = ["extract_price"], "Order 7781 from Norvik AS came to NOK 9 400,00 in all."

    def tokens(key: str) -> dict[str, int]:
        return post(model_service, key, units, text)["units"]["extract_price"]["tokens"]

    acme_first, acme_again, globex_first = tokens(keys.acme), tokens(keys.acme), tokens(keys.globex)

    assert acme_again["cached"] > acme_first["cached"]  # acme's own prompt, cached
    # Nothing acme's runs cached reaches globex, not even the unit's own instructions.
    assert globex_first["cached"] == 0
