"""``aau serve`` (the HTTP service) and ``aau keys`` (its API keys).

``aau keys add TENANT --keys FILE``      make a key; it is printed once, only its digest is kept
``aau keys add NAME --operator …``       a key for /metrics (names every tenant: no tenant's)
``aau keys list --keys FILE``            key ids and tenants (never the keys)
``aau keys revoke ID --keys FILE``       remove a key; a running service stops taking it
``aau serve UNIT... --keys FILE``        serve the units over HTTP (see ``aau.server``)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from aau.pipeline import Pipeline
from aau.spec.pipelines import PipelineSpec

__all__ = ["add_serve_parsers"]


def cmd_keys(args: argparse.Namespace) -> int:
    """Make, list or revoke API keys."""
    from aau.server.keys import KeyStore, Role

    keys = KeyStore(args.keys)
    if args.action == "add":
        if not args.name:
            print("error: aau keys add needs a TENANT", file=sys.stderr)
            return 2
        role: Role = "operator" if args.operator else "tenant"
        key = keys.add(args.name, role=role)
        print(key)
        print(f"({role} key of {args.name!r}; it is not shown again)", file=sys.stderr)
    elif args.action == "list":
        for record in keys.records():
            print(f"{record.id}\t{record.role}\t{record.tenant}\t{record.created}")
    else:
        if not args.name:
            print("error: aau keys revoke needs a key ID (see: aau keys list)", file=sys.stderr)
            return 2
        record = keys.revoke(args.name)
        print(f"revoked {record.id} of tenant {record.tenant!r}", file=sys.stderr)
    return 0


def _serve(build_pipeline: Callable[[argparse.Namespace], Pipeline]) -> Callable[..., int]:
    def cmd_serve(args: argparse.Namespace) -> int:
        """Serve the units over HTTP until interrupted."""
        from aau.server import (
            AdmissionSettings,
            KeyStore,
            ServeSettings,
            ServiceTracer,
            serve,
            span_exporter,
        )

        keys = KeyStore(args.keys)
        if not keys.records():
            print(f"error: {args.keys} holds no key; make one: aau keys add TENANT --keys "
                  f"{args.keys}", file=sys.stderr)  # fmt: skip
            return 2
        pipelines: dict[str, list[str]] = {}
        routed: set[str] = set()
        for item in args.pipeline or []:
            if item.endswith(".yaml") and "=" not in item:  # a pipeline file
                spec = PipelineSpec.from_file(item)
                pipelines[spec.name] = list(spec.units)
                if spec.route:
                    routed.add(spec.name)
                continue
            name, _, units = item.partition("=")
            pipelines[name] = [u for u in units.split(",") if u]
        args.route = args.route or bool(routed)
        admission: dict[str, Any] = {
            k: v for k, v in {
                "max_units_in_flight": args.max_units_in_flight,
                "max_queue_ms": args.max_queue_ms,
                "tenant_requests": args.tenant_requests,
                "tenant_rate": args.tenant_rate,
            }.items() if v is not None
        }  # fmt: skip
        settings = ServeSettings(
            admission=AdmissionSettings(**admission), pipelines=pipelines,
            routed=frozenset(routed), languages=args.lang,
        )  # fmt: skip
        tracer = ServiceTracer(span_exporter(args.traces))
        pipeline = build_pipeline(args)
        try:
            serve(pipeline, keys, settings, host=args.host, port=args.port, tracer=tracer,
                  graceful_timeout_s=args.graceful_timeout)  # fmt: skip
        except ValueError as exc:  # a named pipeline the served units cannot run
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0

    return cmd_serve


def add_serve_parsers(
    sub: Any,
    add_engine_options: Callable[[argparse.ArgumentParser], None],
    build_pipeline: Callable[[argparse.Namespace], Pipeline],
) -> None:
    """Add ``serve`` and ``keys`` to the ``aau`` parser (``sub``: its subparsers)."""
    p = sub.add_parser("keys", help="API keys of the HTTP service")
    p.add_argument("action", choices=["add", "list", "revoke"])
    p.add_argument("name", nargs="?", help="the tenant (add) or the key id (revoke)")
    p.add_argument("--keys", required=True, metavar="FILE", help="the key file (JSON)")
    p.add_argument(
        "--operator", action="store_true", help="add: a key for /metrics, not for a tenant"
    )
    p.set_defaults(func=cmd_keys)

    p = sub.add_parser("serve", help="serve units over HTTP")
    p.add_argument("units", nargs="+", help="unit files or folders")
    p.add_argument("--keys", required=True, metavar="FILE", help="API keys (aau keys add)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--pipeline", action="append", metavar="NAME=UNIT,UNIT|FILE.yaml",
        help="a named unit list, or a pipeline file (units/pipelines/x.yaml; route: true routes "
        "it), that requests may ask for by name (repeat)",
    )  # fmt: skip
    p.add_argument(
        "--route", action="store_true",
        help="load the router (calibration/router.json): requests may send route: true",
    )  # fmt: skip
    p.add_argument("--lang", default="eng", help="tesseract languages for scans (eng+deu…)")
    limits = p.add_argument_group("admission (429 with Retry-After past these)")
    limits.add_argument("--max-units-in-flight", type=int, help="unit runs at once (default 32)")
    limits.add_argument(
        "--max-queue-ms", type=float, help="longest estimated queue wait (default 10000)"
    )
    limits.add_argument("--tenant-requests", type=int, help="per tenant, in flight (default 64)")
    limits.add_argument("--tenant-rate", type=float, help="per tenant, requests/s (default 200)")
    p.add_argument(
        "--traces", choices=["none", "console", "otlp"], default="none",
        help="where OpenTelemetry spans go (otlp: OTEL_EXPORTER_OTLP_ENDPOINT)",
    )  # fmt: skip
    p.add_argument(
        "--graceful-timeout", type=float, default=30.0,
        help="seconds requests in flight get to finish at shutdown (default 30)",
    )  # fmt: skip
    add_engine_options(p)
    p.set_defaults(func=_serve(build_pipeline))
