"""A real vLLM OpenAI-compatible server on loopback, for the remote-engine tests.

``VllmServer`` starts ``vllm.entrypoints.openai.api_server`` from the set-up that
``.ci/vllm-setup`` makes (``$AAU_VLLM_HOME``, default ``~/.cache/aau-vllm``, holding ``venv/`` and
``model/``), serving the embedded default model as ``smollm2`` on ``127.0.0.1``, and tracks it by
PID: it runs in its own process group (vLLM forks an engine-core process), so ``kill()`` and
``stop()`` reach every process it made. Its output goes to a log file (``.log_path``); when the
server dies before it is healthy, the error carries the log's tail.

Example::

    with VllmServer() as server:
        httpx.get(server.url + "/health")
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SERVED_MODEL = "smollm2"
"""The name the server answers to (``model`` in a request body)."""

START_TIMEOUT_S = 300.0


def vllm_home() -> Path:
    """The folder ``.ci/vllm-setup`` fills (``$AAU_VLLM_HOME`` or ``~/.cache/aau-vllm``)."""
    return Path(os.environ.get("AAU_VLLM_HOME") or Path.home() / ".cache" / "aau-vllm")


def setup_problem(home: Path | None = None) -> str | None:
    """Why the vLLM set-up can't be used (None when it is complete)."""
    home = home or vllm_home()
    missing = [
        str(marker)
        for marker in (home / "venv" / ".installed", home / "model" / ".ready")
        if not marker.is_file()
    ]
    if missing:
        return (
            f"the vLLM set-up in {home} is missing or incomplete (no {', '.join(missing)}); "
            "run .ci/vllm-setup (slow the first time), or set AAU_SKIP_VLLM=1 to skip"
        )
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VllmServer:
    """A vLLM OpenAI-compatible server process on loopback.

    Args:
        home: The set-up folder (default: ``vllm_home()``).
        port: The port (default: a free one); ``restart()`` keeps it.
        log_dir: Where the log goes (default: a new temporary folder).
        start_timeout: Seconds to wait for ``GET /health`` to answer 200.
        log_requests: Pass ``--enable-log-requests``: the log then says ``Added request ID.``
            and, when a client goes away mid-request, ``Aborted request(s) ID.`` (without it
            vLLM aborts such a request silently).
        extra_args: More command-line arguments for the server.
        env: Environment overrides (e.g. ``VLLM_CPU_OMP_THREADS_BIND``); a None value unsets.
    """

    def __init__(
        self,
        home: Path | None = None,
        *,
        port: int | None = None,
        log_dir: Path | None = None,
        start_timeout: float = START_TIMEOUT_S,
        log_requests: bool = True,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str | None] | None = None,
    ) -> None:
        self.home = Path(home) if home is not None else vllm_home()
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.log_dir = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp("-vllm"))
        self.log_path = self.log_dir / "vllm.log"
        self.start_timeout = start_timeout
        self.log_requests = log_requests
        self.extra_args = tuple(extra_args)
        self.env_overrides = dict(env or {})
        self.startup_s: float | None = None
        """Seconds the last start took, from spawn to a healthy ``/health``."""
        self.starts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._atexit_registered = False

    # -- what it is ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the OpenAI API is under ``/v1``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)``, e.g. the upstream of a ``FaultInjector``."""
        return (self.host, self.port)

    @property
    def pid(self) -> int | None:
        """The server's PID (also its process-group id); None when not started."""
        return self._proc.pid if self._proc is not None else None

    @property
    def model_dir(self) -> Path:
        """The HF model folder it serves."""
        return self.home / "model"

    def command(self) -> list[str]:
        """The command line that starts it."""
        return [
            str(self.home / "venv" / "bin" / "python"),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--served-model-name",
            SERVED_MODEL,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--enforce-eager",
            "--dtype",
            "bfloat16",
            "--max-model-len",
            "2048",
            "--enable-prompt-tokens-details",
            *(["--enable-log-requests"] if self.log_requests else []),
            *self.extra_args,
        ]

    def environment(self) -> dict[str, str]:
        """The server's environment: offline, a 2 GiB CPU KV cache, no usage reports.

        ``VLLM_CPU_OMP_THREADS_BIND`` is left unset: vLLM's ``auto`` works here (on 2 CPUs it
        binds its one OpenMP thread to core 0 and keeps core 1 for the API server).
        """
        env = dict(os.environ)
        for name in ("VLLM_CPU_OMP_THREADS_BIND", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"):
            env.pop(name, None)
        env.update(
            VLLM_CPU_KVCACHE_SPACE="2",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
            PYTHONUNBUFFERED="1",
        )
        for name, value in self.env_overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def running(self) -> bool:
        """Whether the process is alive (healthy or not)."""
        return self._proc is not None and self._proc.poll() is None

    def healthy(self, timeout: float = 2.0) -> bool:
        """Whether ``GET /health`` answers 200 now."""
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=timeout) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def chat(self, body: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
        """POST ``body`` to ``/v1/chat/completions`` (``model`` filled in); the parsed answer."""
        payload = json.dumps({"model": SERVED_MODEL, **body}).encode()
        request = urllib.request.Request(
            self.url + "/v1/chat/completions",
            data=payload,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return dict(json.loads(answer.read()))

    def warm_up(self) -> dict[str, float]:
        """One plain request and one with ``json_schema`` and logprobs, so later ones don't pay
        first-use costs (measured here: the first request with logprobs took about 3 s more than
        the next; a first structured-output request once took 18 s); the seconds each took.
        """
        timings: dict[str, float] = {}
        messages = [{"role": "user", "content": "Say OK."}]
        began = time.monotonic()
        self.chat({"messages": messages, "max_tokens": 4})
        timings["plain_s"] = time.monotonic() - began
        schema = {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": False,
        }
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "warm_up", "schema": schema, "strict": True},
        }
        began = time.monotonic()
        self.chat(
            {
                "messages": messages,
                "max_tokens": 16,
                "response_format": response_format,
                "logprobs": True,
                "top_logprobs": 5,
            }
        )
        timings["json_schema_logprobs_s"] = time.monotonic() - began
        return timings

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def log_text(self) -> str:
        """The whole log so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_offset(self) -> int:
        """The log's size now: pass it as ``since`` to look only at what comes after."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def wait_for_log(self, text: str, *, since: int = 0, timeout: float = 10.0) -> str:
        """Wait until a log line after byte ``since`` contains ``text``; that line.

        Raises:
            TimeoutError: No such line within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                with open(self.log_path, "rb") as log:
                    log.seek(since)
                    fresh = log.read().decode(errors="replace")
            except OSError:
                fresh = ""
            for line in fresh.splitlines():
                if text in line:
                    return line
            if time.monotonic() > deadline:
                raise TimeoutError(f"no log line with {text!r} within {timeout} s")
            time.sleep(0.1)

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> VllmServer:
        """Spawn the server and wait until it is healthy; returns self.

        Raises:
            RuntimeError: The set-up is missing, the process died (the log's tail is in the
                message), or it was not healthy within ``start_timeout`` (then it is killed).
        """
        if self.running():
            raise RuntimeError(f"already running (pid {self.pid})")
        problem = setup_problem(self.home)
        if problem is not None:
            raise RuntimeError(problem)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with open(self.log_path, "ab") as log:
            log.write(f"\n==== start {self.starts + 1}: {' '.join(self.command())}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=self.log_dir,
                start_new_session=True,
            )
        self.starts += 1
        if not self._atexit_registered:
            atexit.register(self.kill)
            self._atexit_registered = True
        deadline = began + self.start_timeout
        while True:
            code = self._proc.poll()
            if code is not None:
                self._reap_group()
                raise RuntimeError(
                    f"vLLM server exited with code {code} while starting; log {self.log_path}:\n"
                    + self.log_tail()
                )
            if self.healthy(timeout=1.0):
                self.startup_s = time.monotonic() - began
                return self
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(
                    f"vLLM server not healthy after {self.start_timeout:.0f} s; "
                    f"log {self.log_path}:\n" + self.log_tail()
                )
            time.sleep(0.25)

    def kill(self) -> None:
        """SIGKILL the whole process group at once (no clean shutdown) and reap it."""
        if self._proc is None:
            return
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(10.0)
        self._reap_group()

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM the process group; SIGKILL what is left after ``grace`` seconds."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self._proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(10.0)
        self._reap_group()

    def restart(self, grace: float = 15.0) -> VllmServer:
        """Stop it (if it runs) and start it again on the same port; returns self."""
        self.stop(grace)
        return self.start()

    def ensure_running(self, *, warm: bool = True) -> VllmServer:
        """Restart it if it is dead or unhealthy (e.g. a test killed it and failed).

        Args:
            warm: After a restart, also ``warm_up()``.
        """
        if not (self.running() and self.healthy()):
            self.restart()
            if warm:
                self.warm_up()
        return self

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- internals -------------------------------------------------------------------------------

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    def group_alive(self) -> bool:
        """Whether any process of its group is left (zombies count until they are reaped)."""
        if self._proc is None:
            return False
        try:
            os.killpg(self._proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # pragma: no cover - the group id was reused by another user
            return False
        return True

    def _reap_group(self, timeout: float = 10.0) -> None:
        """Kill any process of the group still alive (e.g. an orphaned engine core), and wait
        until the group is gone: orphans are reaped by PID 1, here after a second or two."""
        if self._proc is None:
            return
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(5.0)
        deadline = time.monotonic() + timeout
        while self.group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
