"""``POST /v1/analyze`` with the router: ``route: true``, routed pipeline files, multipart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from aau.pipeline import Pipeline
from aau.server import ServeSettings
from aau.terms import TermStore
from tests.conftest import SERVED_UNIT_FILES, UNITS_DIR
from tests.server.conftest import (
    Keys,
    LiveServer,
    free_port,
    start_serve_process,
    stop_serve_process,
)

COMPLAINT = (
    "Dear team, I am writing to complain: my order arrived broken and nobody answered my "
    "calls. I want a refund."
)
FILES = [*SERVED_UNIT_FILES, UNITS_DIR / "detect_complaint.yaml"]
NAMES = {path.stem for path in FILES}


@pytest.fixture
def routed_service(serve_fallbacks: Any, tmp_path: Path) -> LiveServer:
    pipeline = Pipeline(FILES, engine=False, terms=TermStore(tmp_path / "terms"), router=True)
    settings = ServeSettings(
        pipelines={"mail": ["detect_complaint", "extract_date"], "all": sorted(NAMES)},
        routed=frozenset({"mail"}),
    )
    return serve_fallbacks(settings, pipeline=pipeline)  # type: ignore[no-any-return]


def post(live: LiveServer, key: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{live.url}/v1/analyze", json=body, headers=Keys.auth(key), timeout=60)


def test_route_true_runs_only_the_units_that_apply(routed_service: LiveServer, keys: Keys) -> None:
    response = post(routed_service, keys.acme, {"text": COMPLAINT, "route": True})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["route"]["applies"] == ["detect_complaint"]
    assert set(body["units"]) == {"detect_complaint"}
    assert set(body["route"]["probabilities"]) == NAMES
    assert body["units"]["detect_complaint"]["output"]["is_complaint"] is True


def test_without_route_every_unit_runs_and_no_route_is_reported(
    routed_service: LiveServer, keys: Keys
) -> None:
    body = post(routed_service, keys.acme, {"text": COMPLAINT}).json()

    assert set(body["units"]) == NAMES
    assert "route" not in body
    named = post(routed_service, keys.acme, {"text": COMPLAINT, "pipeline": "all"}).json()
    assert set(named["units"]) == NAMES  # a pipeline not routed runs all of its units


def test_a_routed_pipeline_routes_among_its_own_units(
    routed_service: LiveServer, keys: Keys
) -> None:
    body = post(routed_service, keys.acme, {"text": COMPLAINT, "pipeline": "mail"}).json()

    assert set(body["route"]["probabilities"]) == {"detect_complaint", "extract_date"}
    assert set(body["units"]) == set(body["route"]["applies"]) == {"detect_complaint"}
    unrouted = post(
        routed_service, keys.acme, {"text": COMPLAINT, "pipeline": "mail", "route": False}
    ).json()
    assert set(unrouted["units"]) == {"detect_complaint", "extract_date"}


def test_a_routed_upload_names_route_as_a_form_field(
    routed_service: LiveServer, keys: Keys
) -> None:
    files = {"file": ("mail.txt", COMPLAINT.encode(), "text/plain")}
    headers = Keys.auth(keys.acme)
    url = f"{routed_service.url}/v1/analyze"
    response = httpx.post(url, files=files, data={"route": "true"}, headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    assert set(response.json()["units"]) == {"detect_complaint"}
    bad = httpx.post(url, files=files, data={"route": "maybe"}, headers=headers, timeout=60)
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "invalid_request"


def test_route_true_without_a_router_is_a_coded_400(
    shared: tuple[LiveServer, Keys],
) -> None:
    live, keys = shared
    response = post(live, keys.acme, {"text": COMPLAINT, "route": True})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "routing_unavailable"
    assert "--route" in response.json()["error"]["message"]


def test_the_units_endpoint_says_which_pipelines_route(
    routed_service: LiveServer, keys: Keys
) -> None:
    body = httpx.get(f"{routed_service.url}/v1/units", headers=Keys.auth(keys.acme)).json()

    assert body["router"] is True
    assert body["routed_pipelines"] == ["mail"]


def test_aau_serve_takes_a_pipeline_file_and_routes_it(tmp_path: Path) -> None:
    key = Keys(tmp_path).acme
    port = free_port()
    pipeline_file = UNITS_DIR / "pipelines" / "document_review.yaml"
    args = [str(UNITS_DIR), "--no-model", "--pipeline", str(pipeline_file)]
    process = start_serve_process(args, tmp_path, port)
    try:
        body = httpx.post(f"http://127.0.0.1:{port}/v1/analyze", json={"text": COMPLAINT,
                          "pipeline": "document_review"}, headers=Keys.auth(key),
                          timeout=60).json()  # fmt: skip
        assert body["route"]["applies"]
        assert set(body["units"]) == set(body["route"]["applies"])
        assert "extract_revenue_current" in body["route"]["probabilities"]  # a needed unit
    finally:
        process.terminate()
        process.wait(30)
        stop_serve_process(process)
