"""Fixtures for the tests against a real vLLM server: the server itself and a fault injector.

Every test in this folder is marked ``remote`` (registered here). The server is started once per
session from the set-up ``.ci/vllm-setup`` makes (about 30 s here on 2 CPUs, 55 s while other
vLLM servers ran) and warmed up with two requests (first-use costs are paid there, not in a
test); a missing set-up fails these tests, unless ``AAU_SKIP_VLLM=1`` is set, which skips them
(the injector tests that need no server still run then).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.remote.fault_proxy import FaultInjector
from tests.remote.vllm_server import VllmServer, setup_problem

HERE = Path(__file__).resolve().parent

SKIP_ENV = "AAU_SKIP_VLLM"
SKIP_REASON = f"{SKIP_ENV}=1: the tests against a real vLLM server are skipped"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``remote`` marker."""
    config.addinivalue_line(
        "markers",
        f"remote: talks to a real vLLM server on loopback (.ci/vllm-setup; {SKIP_ENV}=1 skips)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test collected from this folder ``remote``."""
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.remote)


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """A warmed-up vLLM server on loopback, once per session (stopped at the end)."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(SKIP_REASON)
    problem = setup_problem()
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    server = VllmServer(log_dir=tmp_path_factory.mktemp("vllm"))
    _SERVERS.append(server)
    server.start()
    _TIMINGS["start_s"] = server.startup_s or 0.0
    try:
        _TIMINGS.update(server.warm_up())
        yield server
    finally:
        server.stop()


_SERVERS: list[VllmServer] = []
_TIMINGS: dict[str, float] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line on the session's vLLM server: start and warm-up times, restarts, its log."""
    for server in _SERVERS:
        timings = ", ".join(f"{name} {value:.1f}" for name, value in _TIMINGS.items())
        terminalreporter.write_line(
            f"vLLM server: {timings}; {server.starts} start(s), last {server.startup_s or 0:.1f} s;"
            f" log {server.log_path}"
        )


@pytest.fixture
def vllm(vllm_server: VllmServer) -> VllmServer:
    """The session's server, restarted first if an earlier test left it dead."""
    return vllm_server.ensure_running()


@pytest.fixture
def fault_proxy(vllm: VllmServer) -> Iterator[FaultInjector]:
    """A fresh fault injector (pass-through) in front of the session's vLLM server."""
    with FaultInjector(vllm.address) as proxy:
        yield proxy
