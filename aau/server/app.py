"""The HTTP service: ``create_app`` builds the FastAPI application ``aau serve`` runs.

Endpoints (all JSON; errors are ``{"error": {"code", "message"}}`` with a stable code):

- ``POST /v1/analyze``: a text (JSON) or an uploaded document (multipart), analysed by the
  named ``units`` or ``pipeline`` (default: every unit the service holds); the answer is a
  batch line, ``{"id", "units": {name: unit result}}``, plus the tenant's ``terms`` found;
- ``GET /v1/units``: the units and pipelines served, with their output schemas;
- ``POST/GET /v1/tenants/{tenant}/termdicts``, ``DELETE …/termdicts/{name}``: the calling
  tenant's own term dictionaries (another tenant's path is 403, whatever it holds);
- ``GET /healthz`` (the process answers), ``GET /readyz`` (warmed up, and a probe generation
  succeeded lately), ``GET /metrics`` (Prometheus), ``GET /openapi.json`` and ``/docs``.

Every ``/v1`` call carries ``Authorization: Bearer <key>``; the key names the tenant
(``aau.server.keys``). Bodies are bounded before they are read whole (JSON at
``batch_line_bytes``, documents at ``document_bytes``, dictionaries at ``dictionary_bytes``);
work is admitted by ``aau.server.admission``, which answers 429 with ``Retry-After`` when the
queue's wait would pass its bound. Nothing a request holds reaches a traceback: an unexpected
fault is a 500 ``internal_error`` with the exception's type, logged in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException

from aau.engines.base import Generation, GenerationRequest
from aau.errors import InputError, TermDictionaryError
from aau.ingest import Document
from aau.limits import LIMITS
from aau.pipeline import Pipeline, PipelineResult
from aau.server.admission import Admission, AdmissionSettings, Refused
from aau.server.keys import KeyRecord, KeyStore
from aau.server.metrics import ServiceMetrics
from aau.server.tracing import ServiceTracer
from aau.terms.store import DictionaryInfo, DictionaryUpload, TermStore

__all__ = ["ServeSettings", "create_app"]

_log = logging.getLogger("aau.server")

_MAX_TERM_HITS = 1000
"""Term hits returned with an answer (all of them reach the units)."""
_LANGUAGES = re.compile(r"[a-z_]{3,16}(?:\+[a-z_]{3,16}){0,7}")
_ENVELOPE = 64 * 2**10
"""Bytes a multipart body may hold beyond its file (boundaries, headers, small fields)."""


class ServeSettings(BaseModel):
    """How the service runs, beside the units and the engine it is given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    admission: AdmissionSettings = AdmissionSettings()
    pipelines: dict[str, list[str]] = Field(default_factory=dict)
    """Named unit lists a request may ask for by name (``pipeline``)."""
    routed: frozenset[str] = frozenset()
    """The named pipelines whose units the router picks from, per request (``route: true``
    in their pipeline file); they need a service whose pipeline has a router."""
    probe_interval_s: float = Field(10.0, gt=0)
    """How often readiness is proved by a one-token generation."""
    probe_timeout_s: float = Field(30.0, gt=0)
    """How long a probe generation may take before the service reads not ready."""
    languages: str = "eng"
    """Tesseract languages for uploaded scans, unless a request names its own."""
    max_units_per_request: int = Field(64, ge=1)


class AnalyzeRequest(BaseModel):
    """A text to analyse (``POST /v1/analyze`` with a JSON body)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    id: str | int | None = None
    """Returned as given, to match answers with requests."""
    units: list[str] | None = Field(None, max_length=256)
    """The units to run, by name; with neither this nor ``pipeline``, every unit served."""
    pipeline: str | None = None
    """A named pipeline of the service (``GET /v1/units`` lists them)."""
    route: bool | None = None
    """True: run only the units (named, the pipeline's, or all served) that the router says
    apply to this text; false: never route. Unset: a routed pipeline routes, nothing else."""


class ErrorBody(BaseModel):
    """What a failed request answers."""

    error: dict[str, str] = Field(examples=[{"code": "overloaded", "message": "…"}])


class AnalyzeResponse(BaseModel):
    """The batch line of the input, and the tenant's dictionary terms found in it."""

    id: str | int | None
    units: dict[str, dict[str, Any]]
    """Per unit: ``output``, ``confidence``, ``path``, ``error``, ``timings``, ``trace``…"""
    terms: list[dict[str, Any]]
    graph: dict[str, list[str]] | None = None
    """When a unit needs others: each unit -> the units it computed from."""
    route: dict[str, Any] | None = None
    """When routed: ``applies`` (the units that ran), every candidate's ``probabilities``,
    and the ``threshold``."""


class ApiError(Exception):
    """A request answered with an HTTP error and a stable code."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def _error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message[:2000]}}
    return JSONResponse(body, status_code=status, headers=headers)


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in {
        400: "a bad body, or a unit or pipeline that does not exist",
        401: "no key, or a key this service does not know",
        413: "a body, text or document over its bound",
        429: "over a tenant's rate or concurrency, or over capacity (see Retry-After)",
    }.items()
}


class _Readiness:
    """Whether the service is warm and its engine answered a probe lately."""

    def __init__(self) -> None:
        self.warm = False
        self.draining = False
        self.probed_at: float | None = None
        self.problem: str | None = "warming up"


class Service:
    """What the endpoints share: the pipeline, keys, admission, metrics, spans, readiness."""

    def __init__(
        self, pipeline: Pipeline, keys: KeyStore, settings: ServeSettings, tracer: ServiceTracer
    ) -> None:
        self.pipeline = pipeline
        self.keys = keys
        self.settings = settings
        names = {u.name for u in pipeline.units}
        if settings.routed - set(settings.pipelines):
            raise ValueError(
                f"routed pipelines not among the pipelines: "
                f"{', '.join(sorted(settings.routed - set(settings.pipelines)))}"
            )
        if settings.routed and pipeline.router is None:
            raise ValueError("routed pipelines need a pipeline with a router (router=True)")
        for name, units in settings.pipelines.items():
            unknown = sorted(set(units) - names)
            if unknown or not units:
                raise ValueError(
                    f"pipeline {name!r} names units the service does not hold: "
                    f"{', '.join(unknown) or '(none given)'}"
                )
        self.admission = Admission(settings.admission)
        engines = list({id(e): e for e in pipeline.engines.values()}.values())
        self.metrics = ServiceMetrics(engines, self.admission)
        self.tracer = tracer
        self.readiness = _Readiness()
        self._tenants_made: set[str] = set()

    # -- tenants ----------------------------------------------------------------------------

    def ensure_tenant(self, tenant: str) -> None:
        """Register a key's tenant in the term store the first time it is seen."""
        store = self.pipeline.terms
        if store is None or tenant in self._tenants_made:
            return
        if tenant not in store.tenants():
            with contextlib.suppress(TermDictionaryError):  # made meanwhile by another process
                store.create_tenant(tenant)
        self._tenants_made.add(tenant)

    # -- readiness --------------------------------------------------------------------------

    async def warm_and_probe(self) -> None:
        """Warm every unit up, then prove the engine answers, every ``probe_interval_s``.

        A failed warm-up is tried again at each interval; ``/readyz`` says why meanwhile.
        """
        while True:
            if not self.readiness.warm:
                try:
                    await self.pipeline.warmup()
                    self.readiness.warm = True
                except Exception as exc:
                    self.readiness.problem = f"warm-up failed: {type(exc).__name__}: {exc}"
                    _log.warning("%s", self.readiness.problem)
            if self.readiness.warm:
                await self.probe()
            await asyncio.sleep(self.settings.probe_interval_s)

    async def probe(self) -> None:
        """One one-token generation on the default engine, within ``probe_timeout_s``."""
        engine = self.pipeline.engine
        if engine is None:  # fallback paths only: warm is ready
            self.readiness.probed_at, self.readiness.problem = time.monotonic(), None
            return
        timeout = self.settings.probe_timeout_s
        request = GenerationRequest(
            messages=[{"role": "user", "content": "Reply with OK."}], schema=None,
            max_new_tokens=1, deadline=time.monotonic() + timeout, key="aau-serve-probe",
        )  # fmt: skip
        try:
            (answer,) = await asyncio.wait_for(engine.generate([request]), timeout + 1)
        except Exception as exc:
            answer = exc  # type: ignore[assignment]
        if isinstance(answer, Generation):
            self.readiness.probed_at, self.readiness.problem = time.monotonic(), None
        else:
            self.readiness.problem = f"probe generation failed: {type(answer).__name__}: {answer}"
            _log.warning("%s", self.readiness.problem)

    def ready(self) -> tuple[bool, str]:
        """Whether to take traffic, and why not."""
        r = self.readiness
        if r.draining:
            return False, "shutting down"
        if not r.warm:
            return False, r.problem or "warming up"
        if r.problem is not None:
            return False, r.problem
        stale = 3 * self.settings.probe_interval_s + self.settings.probe_timeout_s
        if r.probed_at is None or time.monotonic() - r.probed_at > stale:
            return False, "no probe generation succeeded lately"
        return True, "ready"

    # -- analysis ---------------------------------------------------------------------------

    def routes(self, route: bool | None, pipeline: str | None) -> bool:
        """Whether a request is routed: as it asks, else as its pipeline (or the service's)."""
        if route is None:
            spec = self.pipeline.spec
            if pipeline is not None:
                return pipeline in self.settings.routed
            return bool(spec is not None and spec.route and self.pipeline.router is not None)
        if route and self.pipeline.router is None:
            raise ApiError(400, "routing_unavailable",
                           "this service has no router: start it with --route, or serve a "
                           "pipeline file with route: true")  # fmt: skip
        return route

    def unit_names(self, units: list[str] | None, pipeline: str | None) -> list[str]:
        """The units a request asks for, checked."""
        served = [u.name for u in self.pipeline.units]
        if units is not None and pipeline is not None:
            raise ApiError(400, "invalid_request", "name units or a pipeline, not both")
        if pipeline is not None:
            if pipeline not in self.settings.pipelines:
                known = ", ".join(sorted(self.settings.pipelines)) or "none"
                raise ApiError(
                    404, "unknown_pipeline", f"no pipeline {pipeline[:100]!r} (served: {known})"
                )
            return self.settings.pipelines[pipeline]
        if units is None:
            return served
        if not units:
            raise ApiError(400, "invalid_request", "units is empty: name at least one unit")
        if len(units) > self.settings.max_units_per_request:
            raise ApiError(
                413, "input_too_large",
                f"{len(units)} units; a request may name {self.settings.max_units_per_request}",
            )  # fmt: skip
        unknown = sorted(set(units) - set(served))
        if unknown:
            shown = ", ".join(repr(u[:100]) for u in unknown[:5])
            raise ApiError(
                404, "unknown_unit", f"no unit {shown} here (served: {', '.join(served)})"
            )
        return list(dict.fromkeys(units))

    async def analyze(
        self, source: str | Document, names: list[str], tenant: str, id: str | int | None,  # noqa: A002
        route: bool = False,
    ) -> tuple[PipelineResult, float]:  # fmt: skip
        """Admit, run and account one request; returns the result and its queue wait (ms).

        A routed request is admitted for all of ``names`` (the router has not chosen yet).
        """
        self.ensure_tenant(tenant)
        queued_ns = time.time_ns()
        try:
            async with self.admission.admit(tenant, len(names)) as ticket:
                self.metrics.queue_wait.observe(ticket.queue_ms / 1000)
                self.tracer.admission(queued_ns, time.time_ns())
                result = await self.pipeline.arun(source, id=id, tenant=tenant, units=names,
                                                  route=route)  # fmt: skip
        except Refused as refused:
            self.metrics.refused.labels(refused.code, tenant).inc()
            raise ApiError(
                429, refused.code, str(refused), {"Retry-After": str(refused.retry_after)}
            ) from None
        self.metrics.observe_units(tenant, list(result.units.values()))
        self.tracer.units(list(result.units.values()), time.time_ns())
        return result, ticket.queue_ms


# -- the ASGI guard: body bounds, request metrics, no traceback ---------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over the limit of {limit:,} bytes")


def _body_limit(headers: Mapping[bytes, bytes], path: str) -> int:
    """The bytes a request's body may hold: by what it carries."""
    content_type = headers.get(b"content-type", b"").decode("latin-1").lower()
    if content_type.startswith("multipart/"):
        if path.endswith("/termdicts"):
            return LIMITS.dictionary_bytes + _ENVELOPE
        return LIMITS.document_bytes + _ENVELOPE
    return LIMITS.batch_line_bytes


class _Guard:
    """Bounds every body, times every request, contains every fault.

    The outermost of the service's own middleware (Starlette's error middleware sits outside
    it, and never sees an exception).
    """

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        limit = _body_limit(headers, scope.get("path", ""))
        started, status, sent = time.perf_counter(), [500], [False]
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await _error_response(413, "input_too_large", str(_BodyTooLarge(limit)))(
                scope, receive, send
            )
            self._observe(scope, 413, started)
            return
        seen = [0]

        async def bounded_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen[0] += len(message.get("body", b""))
                if seen[0] > limit:
                    raise _BodyTooLarge(limit)
            return message

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0], sent[0] = message["status"], True
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracked_send)
        except _BodyTooLarge as exc:
            if not sent[0]:
                await _error_response(413, "input_too_large", str(exc))(scope, receive, send)
                status[0] = 413
        except Exception as exc:  # contained: one log line, a coded 500, no traceback
            _log.error("internal error on %s %s: %s: %s", scope.get("method"),
                       scope.get("path"), type(exc).__name__, str(exc)[:500])  # fmt: skip
            if not sent[0]:
                await _error_response(
                    500, "internal_error", f"the request could not be served: {type(exc).__name__}"
                )(scope, receive, send)
                status[0] = 500
        self._observe(scope, status[0], started)

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        route = scope.get("route")
        endpoint = getattr(route, "path", None) or "unmatched"
        tenant = scope.get("aau.tenant") or ""
        self.service.metrics.requests.labels(endpoint, tenant, str(status)).observe(
            time.perf_counter() - started
        )


# -- who is calling ---------------------------------------------------------------------------

_bearer = HTTPBearer(auto_error=False, description="an API key made by `aau keys add`")


def _key(request: Request, credentials: HTTPAuthorizationCredentials | None) -> KeyRecord:
    if credentials is None:
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <key>",
                       {"WWW-Authenticate": "Bearer"})  # fmt: skip
    service: Service = request.app.state.service
    record = service.keys.lookup(credentials.credentials)
    if record is None:
        raise ApiError(401, "unauthorized", "this key is not known here",
                       {"WWW-Authenticate": 'Bearer error="invalid_token"'})  # fmt: skip
    return record


async def _caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The tenant of the request's key (401 without a known key, 403 for an operator key)."""
    record = _key(request, credentials)
    if record.role != "tenant":
        raise ApiError(403, "forbidden", "an operator key reaches no tenant's data")
    request.scope["aau.tenant"] = record.tenant
    return record.tenant


async def _operator(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Let only operator keys through (what they read names every tenant)."""
    record = _key(request, credentials)
    if record.role != "operator":
        raise ApiError(403, "forbidden", "this needs an operator key (aau keys add --operator)")


Tenant = Annotated[str, Depends(_caller)]
"""An endpoint parameter: the calling tenant."""


# -- the application ------------------------------------------------------------------------


def create_app(
    pipeline: Pipeline,
    keys: KeyStore,
    settings: ServeSettings | None = None,
    *,
    tracer: ServiceTracer | None = None,
    warm: bool = True,
) -> FastAPI:
    """The service over ``pipeline``'s units and engines, for the tenants of ``keys``.

    Args:
        pipeline: every unit served, on its shared engine(s) and term store.
        keys: the API keys, each naming a tenant.
        settings: bounds and named pipelines.
        tracer: where spans go (default: nowhere).
        warm: warm the units up and probe the engine in the background from start (``/readyz``
            reads not ready until then); False leaves both to the caller (``Service.probe``).
    """
    service = Service(pipeline, keys, settings or ServeSettings(), tracer or ServiceTracer())

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        for tenant in keys.tenants():
            await asyncio.to_thread(service.ensure_tenant, tenant)
        task = asyncio.create_task(service.warm_and_probe()) if warm else None
        try:
            yield
        finally:
            service.readiness.draining = True
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            service.tracer.shutdown()

    app = FastAPI(
        title="AAU",
        summary="Atomic analysis units over HTTP",
        version=_version(),
        lifespan=lifespan,
        responses=_ERRORS,
    )
    app.state.service = service

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error_response(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error_response(422, "invalid_request", _describe(exc.errors()))

    # -- analysis ---------------------------------------------------------------------------

    @app.post(
        "/v1/analyze",
        response_model=AnalyzeResponse,
        summary="Analyse a text or a document with units",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": AnalyzeRequest.model_json_schema()},
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file"],
                            "properties": {
                                "file": {
                                    "type": "string",
                                    "format": "binary",
                                    "description": "PDF, PNG, JPEG, TIFF or UTF-8 text",
                                },
                                "units": {
                                    "type": "string",
                                    "description": "unit names, comma-separated",
                                },
                                "pipeline": {"type": "string"},
                                "route": {
                                    "type": "string",
                                    "enum": ["true", "false"],
                                    "description": "let the router pick the units",
                                },
                                "id": {"type": "string"},
                                "languages": {
                                    "type": "string",
                                    "description": "tesseract languages (eng+deu)",
                                },
                            },
                        }
                    },  # fmt: skip
                },
            }
        },
    )
    async def analyze(request: Request, tenant: Tenant) -> JSONResponse:
        """Run units over the body's text or document; the answer is the input's batch line.

        A unit that fails says so in its own result (``error.code``); the request still
        answers 200 with every unit. 429 carries ``Retry-After``.
        """
        content_type = request.headers.get("content-type", "").lower()
        source: str | Document
        input_id: str | int | None
        if content_type.startswith("multipart/form-data"):
            source, names, input_id, route = await _document_request(request, service)
        elif content_type.startswith("application/json") or not content_type:
            body = _parse_json(await request.body())
            try:
                parsed = AnalyzeRequest.model_validate(body)
            except ValidationError as exc:
                raise ApiError(422, "invalid_request", _describe(exc.errors())) from None
            if len(parsed.text) > LIMITS.text_chars:
                raise ApiError(413, "input_too_large",
                               f"the text has {len(parsed.text):,} characters, over the limit "
                               f"of {LIMITS.text_chars:,}; split it")  # fmt: skip
            source, input_id = parsed.text, parsed.id
            names = service.unit_names(parsed.units, parsed.pipeline)
            route = service.routes(parsed.route, parsed.pipeline)
        else:
            raise ApiError(
                415, "unsupported_media_type", "send application/json or multipart/form-data"
            )
        started = time.perf_counter()
        with service.tracer.request("/v1/analyze", tenant) as span:
            result, queue_ms = await service.analyze(source, names, tenant, input_id, route)
            span.set_attribute("aau.units", ",".join(result.units))
        spent = (time.perf_counter() - started) * 1000
        body = result.to_dict()
        body["terms"] = [
            {"start": h.start, "end": h.end, "text": h.text, "canonical": h.canonical,
             "category": h.entry.term.category, "dictionary": h.entry.dictionary}
            for h in result.terms[:_MAX_TERM_HITS]
        ]  # fmt: skip
        timing = f"queue;dur={queue_ms:.1f}, analyze;dur={spent - queue_ms:.1f}"
        return JSONResponse(body, headers={"Server-Timing": timing})

    @app.get("/v1/units", summary="The units and pipelines this service runs")
    async def units(tenant: Tenant) -> dict[str, Any]:
        """Every unit served (name, version, description, output schema) and the pipelines."""
        return {
            "units": [
                {
                    "name": u.name,
                    "version": u.version,
                    "description": u.description,
                    "output": u.output,
                }
                for u in service.pipeline.units
            ],  # fmt: skip
            "pipelines": service.settings.pipelines,
            "routed_pipelines": sorted(service.settings.routed),
            "router": service.pipeline.router is not None,
        }

    # -- term dictionaries ------------------------------------------------------------------

    async def own_store(tenant: str, path_tenant: str) -> TermStore:
        """The term store, once the path is the caller's own tenant (registered there)."""
        if path_tenant != tenant:  # the same answer whether that tenant exists or not
            raise ApiError(403, "forbidden", "a key reaches only its own tenant's data")
        terms = service.pipeline.terms
        if terms is None:
            raise ApiError(404, "not_found", "this service runs without term dictionaries")
        await asyncio.to_thread(service.ensure_tenant, tenant)
        return terms

    @app.get("/v1/tenants/{tenant_name}/termdicts", summary="The tenant's term dictionaries")
    async def list_termdicts(tenant_name: str, tenant: Tenant) -> dict[str, Any]:
        """The shipped dictionaries (``tenant`` null) and the tenant's own uploads."""
        terms = await own_store(tenant, tenant_name)
        infos = await asyncio.to_thread(terms.list, tenant)
        return {"dictionaries": [_info(i) for i in infos]}

    @app.post(
        "/v1/tenants/{tenant_name}/termdicts",
        status_code=201,
        summary="Upload term dictionaries (all or nothing)",
        openapi_extra={"requestBody": {"required": True, "content": {"multipart/form-data": {
            "schema": {"type": "object", "required": ["file"], "properties": {
                "file": {"type": "array", "items": {"type": "string", "format": "binary"},
                         "description": ".tsv, .csv or .yaml dictionaries"}}}}}}},
    )  # fmt: skip
    async def add_termdicts(
        request: Request, tenant_name: str, tenant: Tenant, replace: bool = False
    ) -> dict[str, Any]:
        """Validate every file whole, then make them all active at once (or none)."""
        terms = await own_store(tenant, tenant_name)
        if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
            raise ApiError(415, "unsupported_media_type", "upload files as multipart/form-data")
        try:
            form = await request.form(max_files=16, max_fields=16, max_part_size=_ENVELOPE)
        except MultiPartException as exc:
            raise ApiError(400, "invalid_request", f"the upload cannot be read: {exc}") from None
        uploads = []
        for item in form.getlist("file"):
            if not isinstance(item, UploadFile):
                raise ApiError(400, "invalid_request", "each `file` part must be a file")
            uploads.append(DictionaryUpload(item.filename or "upload", await item.read()))
        await form.close()
        if not uploads:
            raise ApiError(400, "invalid_request", "no `file` part: upload at least one file")
        try:
            added = await asyncio.to_thread(terms.add, tenant, uploads, replace=replace)
        except TermDictionaryError as exc:
            raise ApiError(400, exc.code, str(exc)) from None
        by_name = {d.name for d in added}
        infos = await asyncio.to_thread(terms.list, tenant)
        return {"added": [_info(i) for i in infos if i.tenant == tenant and i.name in by_name]}

    @app.delete(
        "/v1/tenants/{tenant_name}/termdicts/{name}", status_code=204,
        summary="Remove one of the tenant's dictionaries",
    )  # fmt: skip
    async def remove_termdict(tenant_name: str, name: str, tenant: Tenant) -> Response:
        """Active at the tenant's next request."""
        terms = await own_store(tenant, tenant_name)
        try:
            await asyncio.to_thread(terms.remove, tenant, name)
        except TermDictionaryError as exc:  # no such dictionary (or tenant): nothing to remove
            raise ApiError(404, "not_found", str(exc)) from None
        return Response(status_code=204)

    @app.delete(
        "/v1/tenants/{tenant_name}/termdicts", status_code=204,
        summary="Remove every dictionary of the tenant",
    )  # fmt: skip
    async def remove_termdicts(tenant_name: str, tenant: Tenant) -> Response:
        """The shipped dictionaries stay; the tenant's own go, at its next request."""
        terms = await own_store(tenant, tenant_name)
        for info in await asyncio.to_thread(terms.list, tenant):
            if info.tenant == tenant:
                with contextlib.suppress(TermDictionaryError):  # removed meanwhile
                    await asyncio.to_thread(terms.remove, tenant, info.name)
        return Response(status_code=204)

    # -- operations -------------------------------------------------------------------------

    @app.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> dict[str, str]:
        """Always ``ok`` while the event loop runs."""
        return {"status": "ok"}

    @app.get(
        "/readyz", summary="Readiness: warmed up, and the engine answered a probe lately",
        responses={503: {"model": ErrorBody, "description": "not ready, and why"}},
    )  # fmt: skip
    async def readyz() -> JSONResponse:
        """200 only after warm-up and while probe generations succeed."""
        ok, why = service.ready()
        if ok:
            return JSONResponse({"status": "ready"})
        return _error_response(503, "not_ready", why)

    @app.get(
        "/metrics", summary="Prometheus metrics (operator key)", response_class=Response,
        dependencies=[Depends(_operator)],
    )  # fmt: skip
    async def metrics() -> Response:
        """Latency, paths, errors, confidence, queue, batch sizes, tokens, breakers.

        They are labelled by tenant, so only an operator key reads them.
        """
        data = await asyncio.to_thread(generate_latest, service.metrics.registry)
        return Response(data, media_type=CONTENT_TYPE_LATEST)

    app.add_middleware(_Guard, service=service)
    return app


async def _document_request(
    request: Request, service: Service
) -> tuple[Document, list[str], str | None, bool]:
    """The document, units, id and routing of a multipart analysis request."""
    try:
        form = await request.form(max_files=1, max_fields=8, max_part_size=_ENVELOPE)
    except MultiPartException as exc:
        raise ApiError(400, "invalid_request", f"the form cannot be read: {exc}") from None
    try:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise ApiError(400, "invalid_request", "send the document as the `file` part")
        data = await file.read()
        fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
    finally:
        await form.close()
    unknown = sorted(set(fields) - {"units", "pipeline", "id", "languages", "route"})
    if unknown:
        raise ApiError(422, "invalid_request", f"unknown form fields: {', '.join(unknown)[:200]}")
    units = (
        [u.strip() for u in fields["units"].split(",") if u.strip()] if "units" in fields else None
    )
    names = service.unit_names(units, fields.get("pipeline"))
    asked = fields.get("route")
    if asked not in (None, "true", "false"):
        raise ApiError(422, "invalid_request", "route is true or false")
    route = service.routes(None if asked is None else asked == "true", fields.get("pipeline"))
    languages = fields.get("languages", service.settings.languages)
    if not _LANGUAGES.fullmatch(languages):
        raise ApiError(
            422, "invalid_request", "languages are tesseract names joined by + (eng+deu)"
        )
    try:
        document = await asyncio.to_thread(
            Document.from_bytes, data, filename=_safe_name(file.filename), languages=languages
        )
    except InputError as exc:
        status = 413 if exc.code == "input_too_large" else 400
        raise ApiError(status, exc.code, str(exc)) from None
    return document, names, fields.get("id"), route


def _parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:
        raise ApiError(400, "input_too_deep", "the JSON body nests too deeply") from None
    except ValueError as exc:  # not UTF-8, not JSON, an integer over Python's digit limit
        raise ApiError(400, "invalid_json", f"the body is not JSON: {str(exc)[:200]}") from None


def _describe(errors: Any) -> str:
    """Validation errors as one line, naming fields but never echoing the input."""
    parts = []
    for error in list(errors)[:10]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)[:1000] or "the request is not valid"


def _safe_name(name: str | None) -> str | None:
    """A sender's file name, for messages only: its last component, printable, bounded."""
    if not name:
        return None
    last = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c for c in last if c.isprintable())[:120] or None


def _info(info: DictionaryInfo) -> dict[str, Any]:
    return {"name": info.name, "tenant": info.tenant, "terms": info.terms,
            "surfaces": info.surfaces, "source": info.source}  # fmt: skip


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aau")
    except PackageNotFoundError:
        return "0"
