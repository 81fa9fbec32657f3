"""A real ``aau serve`` application on loopback: uvicorn in a thread, real HTTP, real files."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from aau.pipeline import Pipeline
from aau.server import KeyStore, ServeSettings, ServiceTracer, create_app
from aau.terms import TermStore
from tests.conftest import SERVED_UNIT_FILES


class LiveServer:
    """An application served by uvicorn on 127.0.0.1 from a background thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="info", lifespan="on", timeout_graceful_shutdown=10)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            assert self.thread.is_alive(), "the server thread died"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()

    @property
    def service(self) -> Any:
        return self.app.state.service

    def wait_ready(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while (answer := httpx.get(f"{self.url}/readyz", timeout=30)).status_code != 200:
            assert time.monotonic() < deadline, answer.text
            time.sleep(0.1)


class Keys:
    """A key file with keys for tenants ``acme`` and ``globex`` and an operator key."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "keys.json"
        self.store = KeyStore(self.path)
        self.acme = self.store.add("acme")
        self.globex = self.store.add("globex")
        self.operator = self.store.add("ops", role="operator")

    @staticmethod
    def auth(key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    return Keys(tmp_path)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Keys]]:
    """One warmed-up service over the shipped units (no model) for a whole test module."""
    folder = tmp_path_factory.mktemp("service")
    module_keys = Keys(folder)
    app = create_app(fallback_pipeline(folder), module_keys.store)
    with LiveServer(app) as server:
        server.wait_ready()
        yield server, module_keys


def fallback_pipeline(tmp_path: Path) -> Pipeline:
    """The served units without a model (CRF and heuristics answer), a fresh term store."""
    return Pipeline(SERVED_UNIT_FILES, engine=False, terms=TermStore(tmp_path / "terms"))


@pytest.fixture
def serve_fallbacks(tmp_path: Path, keys: Keys) -> Iterator[Any]:
    """Start a service over ``fallback_pipeline`` with the given settings; yields the starter."""
    servers: list[LiveServer] = []

    def start(
        settings: ServeSettings | None = None,
        *,
        tracer: ServiceTracer | None = None,
        pipeline: Pipeline | None = None,
    ) -> LiveServer:
        app = create_app(
            pipeline or fallback_pipeline(tmp_path), keys.store, settings, tracer=tracer
        )
        server = LiveServer(app).__enter__()
        servers.append(server)
        server.wait_ready()
        return server

    yield start
    for server in servers:
        server.__exit__()


def free_port() -> int:
    """A loopback port nothing listens on (for a service started as its own process)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve_process(
    args: list[str], tmp_path: Path, port: int, ready_s: float = 180
) -> subprocess.Popen[str]:
    """``aau serve ARGS --keys … --port PORT`` as its own process, returned once it is ready.

    Its term store is in ``tmp_path``; its output is piped (the caller reads and closes it).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "aau.cli.main", "serve", *args,
         "--keys", str(tmp_path / "keys.json"), "--port", str(port)],
        env={**os.environ, "AAU_TERMS_DIR": str(tmp_path / "terms")},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + ready_s
    while True:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("the service did not become ready")
        time.sleep(0.2)


def stop_serve_process(process: subprocess.Popen[str]) -> None:
    """Kill it if still running, and close its output."""
    if process.poll() is None:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
