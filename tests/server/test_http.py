"""The service's endpoints over real HTTP on loopback (shipped units, fallback paths only)."""

from __future__ import annotations

import dataclasses
import io
import logging
from typing import Any

import httpx
import jsonschema
import pytest
from PIL import Image, ImageDraw, ImageFont

import aau.server.app as app_module
from aau.limits import LIMITS
from aau.server import ServeSettings
from tests.server.conftest import Keys, LiveServer

PRICE_TEXT = "Invoice 2291: total due EUR 1,250.00 by 3 May 2024 for 12 boxes."


@pytest.fixture
def live(shared: tuple[LiveServer, Keys]) -> LiveServer:
    return shared[0]


@pytest.fixture
def mkeys(shared: tuple[LiveServer, Keys]) -> Keys:
    return shared[1]


def analyze(live: LiveServer, key: str, body: Any, **kwargs: Any) -> httpx.Response:
    return httpx.post(
        f"{live.url}/v1/analyze", json=body, headers=Keys.auth(key), timeout=60, **kwargs
    )


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    assert "Traceback" not in response.text
    return body


# -- analysis -------------------------------------------------------------------------------


def test_analyze_answers_a_batch_line_with_schema_valid_outputs(
    live: LiveServer, mkeys: Keys
) -> None:
    response = analyze(
        live, mkeys.acme, {"id": 7, "text": PRICE_TEXT, "units": ["extract_price", "extract_date"]}
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == 7
    assert set(body["units"]) == {"extract_price", "extract_date"}
    assert body["units"]["extract_price"]["output"] == {"amount": 1250.0, "currency": "EUR"}
    assert body["units"]["extract_date"]["output"] == {"date": "2024-05-03"}
    schemas = {
        u["name"]: u["output"]
        for u in httpx.get(f"{live.url}/v1/units", headers=Keys.auth(mkeys.acme)).json()["units"]
    }
    for name, result in body["units"].items():
        jsonschema.validate(result["output"], schemas[name])
        assert 0.0 <= result["confidence"] <= 1.0
        assert result["path"] in {"crf", "heuristic"}
    assert "queue;dur=" in response.headers["server-timing"]


def test_analyze_without_units_runs_every_unit_served(live: LiveServer, mkeys: Keys) -> None:
    body = analyze(live, mkeys.acme, {"text": PRICE_TEXT}).json()

    assert set(body["units"]) == {"extract_date", "extract_price", "extract_quantity"}
    assert body["id"] is None


def test_a_named_pipeline_runs_its_units(tmp_path: Any, keys: Keys, serve_fallbacks: Any) -> None:
    live = serve_fallbacks(ServeSettings(pipelines={"money": ["extract_price"]}))

    body = analyze(live, keys.acme, {"text": PRICE_TEXT, "pipeline": "money"}).json()
    assert list(body["units"]) == ["extract_price"]
    assert_error(
        analyze(live, keys.acme, {"text": "x", "pipeline": "nope"}), 404, "unknown_pipeline"
    )


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"text": "x", "units": ["nope"]}, 404, "unknown_unit"),
        ({"text": "x", "units": []}, 400, "invalid_request"),
        ({"text": "x", "units": ["extract_price"], "pipeline": "p"}, 400, "invalid_request"),
        ({"units": ["extract_price"]}, 422, "invalid_request"),
        ({"text": 5}, 422, "invalid_request"),
        ({"text": "x", "id": {"nested": True}}, 422, "invalid_request"),
        (["text"], 422, "invalid_request"),
    ],
)
def test_bad_requests_get_a_coded_answer(
    live: LiveServer, mkeys: Keys, body: Any, status: int, code: str
) -> None:
    assert_error(analyze(live, mkeys.acme, body), status, code)


def test_validation_errors_name_the_field_but_never_echo_the_input(
    live: LiveServer, mkeys: Keys
) -> None:
    secret = "s3cr3t-value-that-must-not-come-back"
    body = assert_error(
        analyze(live, mkeys.acme, {"text": "x", "extra_field": secret}), 422, "invalid_request"
    )
    assert "extra_field" in body["error"]["message"]
    assert secret not in body["error"]["message"]
    body = assert_error(analyze(live, mkeys.acme, {"text": ["x", secret]}), 422, "invalid_request")
    assert secret not in body["error"]["message"]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", "invalid_json"),
        (b"\xff\xfe{}", "invalid_json"),
        (b"[" * 100_000 + b"]" * 100_000, "input_too_deep"),
        (b'{"text": "x", "id": ' + b"9" * 5000 + b"}", "invalid_json"),
    ],
)
def test_hostile_json_bodies_are_refused_with_a_code(
    live: LiveServer, mkeys: Keys, raw: bytes, code: str
) -> None:
    response = httpx.post(
        f"{live.url}/v1/analyze",
        content=raw,
        timeout=30,
        headers={**Keys.auth(mkeys.acme), "content-type": "application/json"},
    )
    assert_error(response, 400, code)


def test_bodies_over_the_bound_are_refused_before_they_are_read(
    live: LiveServer, mkeys: Keys
) -> None:
    headers = {**Keys.auth(mkeys.acme), "content-type": "application/json"}
    big = b'{"text": "' + b"a" * (LIMITS.batch_line_bytes + 10) + b'"}'
    assert_error(
        httpx.post(f"{live.url}/v1/analyze", content=big, headers=headers, timeout=30),
        413,
        "input_too_large",
    )

    def chunks() -> Any:  # no Content-Length: the body is counted as it arrives
        yield b'{"text": "'
        for _ in range(LIMITS.batch_line_bytes // 65536 + 2):
            yield b"a" * 65536
        yield b'"}'

    response = httpx.post(f"{live.url}/v1/analyze", content=chunks(), headers=headers, timeout=30)
    assert_error(response, 413, "input_too_large")
    assert analyze(live, mkeys.acme, {"text": PRICE_TEXT}).status_code == 200  # still serving


def test_a_text_over_the_character_bound_is_refused(
    live: LiveServer, mkeys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "LIMITS", dataclasses.replace(LIMITS, text_chars=100))

    assert_error(analyze(live, mkeys.acme, {"text": "a" * 101}), 413, "input_too_large")


def test_other_media_types_are_refused(live: LiveServer, mkeys: Keys) -> None:
    response = httpx.post(
        f"{live.url}/v1/analyze",
        content=b"text=x",
        timeout=30,
        headers={**Keys.auth(mkeys.acme), "content-type": "text/plain"},
    )
    assert_error(response, 415, "unsupported_media_type")


def test_unknown_paths_and_methods_are_coded(live: LiveServer, mkeys: Keys) -> None:
    assert_error(httpx.get(f"{live.url}/v1/nothing"), 404, "not_found")
    assert_error(
        httpx.get(f"{live.url}/v1/analyze", headers=Keys.auth(mkeys.acme)),
        405,
        "method_not_allowed",
    )


# -- documents ------------------------------------------------------------------------------


def _scan(text: str) -> bytes:
    image = Image.new("RGB", (1400, 120), "white")
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
    ImageDraw.Draw(image).text((20, 30), text, fill="black", font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_an_uploaded_scan_is_read_by_ocr_and_placed_on_its_page(
    live: LiveServer, mkeys: Keys
) -> None:
    files = {"file": ("invoice.png", _scan("Total due: EUR 1,250.00"), "image/png")}
    response = httpx.post(
        f"{live.url}/v1/analyze",
        files=files,
        timeout=60,
        data={"units": "extract_price", "id": "scan-1"},
        headers=Keys.auth(mkeys.acme),
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == "scan-1"
    price = body["units"]["extract_price"]
    assert price["output"] == {"amount": 1250.0, "currency": "EUR"}
    assert price["sources"]["amount"]["page"] == 1
    assert 0.0 < price["sources"]["amount"]["ocr_quality"] <= 1.0


@pytest.mark.parametrize(
    ("files", "data", "status", "code"),
    [
        ({"file": ("x.pdf", b"%PDF-1.7 not really", "application/pdf")}, {}, 400, None),
        ({"file": ("x.png", b"\x89PNG\r\n\x1a\nbroken", "image/png")}, {}, 400, None),
        (
            {"file": ("x.txt", b"EUR 5", "text/plain")},
            {"languages": "eng; rm -rf /"},
            422,
            "invalid_request",
        ),
        ({"file": ("x.txt", b"EUR 5", "text/plain")}, {"extra": "1"}, 422, "invalid_request"),
        ({}, {"units": "extract_price"}, 400, "invalid_request"),
    ],
)
def test_bad_documents_get_a_coded_answer(
    live: LiveServer, mkeys: Keys, files: Any, data: Any, status: int, code: str | None
) -> None:
    if not files:  # a form with no file part
        files = {"other": ("x.txt", b"x", "text/plain")}
    response = httpx.post(
        f"{live.url}/v1/analyze", files=files, data=data, timeout=60, headers=Keys.auth(mkeys.acme)
    )

    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] != "internal_error"
    if code is not None:
        assert error["code"] == code
    assert "Traceback" not in response.text


def test_a_document_over_its_bound_is_refused(
    live: LiveServer, mkeys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "LIMITS", dataclasses.replace(LIMITS, document_bytes=1000))
    files = {"file": ("big.txt", b"EUR 5 " * 50_000, "text/plain")}
    response = httpx.post(
        f"{live.url}/v1/analyze", files=files, timeout=60, headers=Keys.auth(mkeys.acme)
    )
    assert_error(response, 413, "input_too_large")


# -- keys -----------------------------------------------------------------------------------


def test_requests_without_a_known_key_are_401(live: LiveServer, mkeys: Keys) -> None:
    body = {"text": PRICE_TEXT}
    response = httpx.post(f"{live.url}/v1/analyze", json=body)
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")
    for key in ("aau_00000000_wrong", "not-a-key", "aau_" + "x" * 5000):
        assert_error(analyze(live, key, body), 401, "unauthorized")
    assert_error(httpx.get(f"{live.url}/v1/units"), 401, "unauthorized")


def test_an_operator_key_reads_metrics_but_no_tenant_data(live: LiveServer, mkeys: Keys) -> None:
    assert_error(analyze(live, mkeys.operator, {"text": "x"}), 403, "forbidden")
    assert_error(httpx.get(f"{live.url}/metrics", headers=Keys.auth(mkeys.acme)), 403, "forbidden")
    assert_error(httpx.get(f"{live.url}/metrics"), 401, "unauthorized")
    assert httpx.get(f"{live.url}/metrics", headers=Keys.auth(mkeys.operator)).status_code == 200


def test_a_revoked_key_stops_working_without_a_restart(live: LiveServer, mkeys: Keys) -> None:
    import time

    key = mkeys.store.add("acme")
    assert analyze(live, key, {"text": PRICE_TEXT}).status_code == 200
    mkeys.store.revoke(key.split("_")[1])
    time.sleep(1.1)  # the service re-reads the key file at most once a second

    assert_error(analyze(live, key, {"text": PRICE_TEXT}), 401, "unauthorized")


def test_keys_are_never_stored_or_logged_in_clear(
    live: LiveServer, mkeys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    analyze(live, mkeys.acme, {"text": PRICE_TEXT})
    analyze(live, mkeys.acme + "x", {"text": PRICE_TEXT})  # a failed try is not logged either
    metrics = httpx.get(f"{live.url}/metrics", headers=Keys.auth(mkeys.operator)).text

    stored = mkeys.path.read_text()
    for key in (mkeys.acme, mkeys.globex, mkeys.operator):
        secret = key.split("_", 2)[2]
        assert secret not in stored
        assert secret not in caplog.text
        assert secret not in metrics
    assert oct(mkeys.path.stat().st_mode & 0o777) == "0o600"
    assert any("/v1/analyze" in r.getMessage() for r in caplog.records)  # the log is on


# -- operations -----------------------------------------------------------------------------


def test_health_and_readiness(live: LiveServer) -> None:
    assert httpx.get(f"{live.url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{live.url}/readyz").json() == {"status": "ready"}


def test_metrics_show_latency_paths_codes_confidence_and_queue(
    live: LiveServer, mkeys: Keys
) -> None:
    analyze(live, mkeys.acme, {"text": PRICE_TEXT, "units": ["extract_price"]})
    analyze(live, mkeys.acme, {"text": "", "units": ["extract_price"]})  # a coded unit error
    text = httpx.get(f"{live.url}/metrics", headers=Keys.auth(mkeys.operator)).text

    assert (
        'aau_request_seconds_bucket{endpoint="/v1/analyze",le="0.5",status="200",'
        'tenant="acme"}' in text
    )
    assert 'aau_unit_seconds_count{path="crf",tenant="acme",unit="extract_price"}' in text
    assert 'aau_unit_results_total{code="ok",path="crf",tenant="acme",unit="extract_price"}' in text
    assert 'code="empty_input",path="none",tenant="acme"' in text
    assert 'aau_unit_confidence_bucket{le="0.9",unit="extract_price"}' in text
    assert "aau_queue_depth 0.0" in text
    assert "aau_units_in_flight 0.0" in text


def test_openapi_documents_every_endpoint(live: LiveServer) -> None:
    spec = httpx.get(f"{live.url}/openapi.json").json()
    paths = {p: set(m) for p, m in spec["paths"].items()}

    assert paths["/v1/analyze"] == {"post"}
    assert paths["/v1/units"] == {"get"}
    assert paths["/v1/tenants/{tenant_name}/termdicts"] == {"get", "post", "delete"}
    assert paths["/v1/tenants/{tenant_name}/termdicts/{name}"] == {"delete"}
    assert {"/healthz", "/readyz", "/metrics"} <= set(paths)
    body = spec["paths"]["/v1/analyze"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/json", "multipart/form-data"}
    assert "text" in body["application/json"]["schema"]["properties"]
    assert "429" in spec["paths"]["/v1/analyze"]["post"]["responses"]
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_an_unexpected_fault_is_a_coded_500_and_the_service_goes_on(
    live: LiveServer,
    mkeys: Keys,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def injected_fault(*args: Any, **kwargs: Any) -> Any:  # fault injection
        raise RuntimeError("injected fault")

    monkeypatch.setattr(live.service.pipeline, "arun", injected_fault)
    response = analyze(live, mkeys.acme, {"text": PRICE_TEXT})
    body = assert_error(response, 500, "internal_error")
    assert "RuntimeError" in body["error"]["message"]
    assert "Traceback" not in caplog.text
    monkeypatch.undo()
    assert analyze(live, mkeys.acme, {"text": PRICE_TEXT}).status_code == 200
