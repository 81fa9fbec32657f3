"""The HTTP service (``aau serve``): analysis, tenants' dictionaries, health, metrics.

``create_app`` builds the FastAPI application over a ``Pipeline`` and a ``KeyStore``;
``serve`` runs it on uvicorn. See ``aau.server.app`` for the endpoints.
"""

from aau.server.admission import AdmissionSettings
from aau.server.app import ServeSettings, create_app
from aau.server.keys import KeyRecord, KeyStore
from aau.server.serve import serve
from aau.server.tracing import ServiceTracer, span_exporter

__all__ = [
    "AdmissionSettings",
    "KeyRecord",
    "KeyStore",
    "ServeSettings",
    "ServiceTracer",
    "create_app",
    "serve",
    "span_exporter",
]
