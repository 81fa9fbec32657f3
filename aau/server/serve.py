"""Running the service: the application on uvicorn, with a graceful shutdown."""

from __future__ import annotations

import uvicorn

from aau.pipeline import Pipeline
from aau.server.app import ServeSettings, create_app
from aau.server.keys import KeyStore
from aau.server.tracing import ServiceTracer

__all__ = ["serve"]


def serve(
    pipeline: Pipeline,
    keys: KeyStore,
    settings: ServeSettings | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    tracer: ServiceTracer | None = None,
    graceful_timeout_s: float = 30.0,
    log_level: str = "info",
) -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in flight and stop.

    Requests in flight get up to ``graceful_timeout_s`` to finish; new connections are refused
    from the signal on.
    """
    app = create_app(pipeline, keys, settings, tracer=tracer)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=int(graceful_timeout_s),
        server_header=False,
        # Request lines are logged, headers never: keys stay out of the log.
        access_log=True,
    )
    uvicorn.Server(config).run()
