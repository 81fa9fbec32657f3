"""`aau serve` under load: a real service process on loopback, real HTTP, three phases.

    python benchmarks/serve_load.py [--requests 2000] [--concurrency 32]
        [--faulted-requests 400] [--overload-requests 400] [--skip-faulted] [--skip-overload]
        [--port-base 18760] [--work-dir DIR] [--quick]

The service is started as its own process (``aau serve`` on the three shipped units, a key made
by ``aau keys add`` in a temp folder, ``AAU_TERMS_DIR`` in a temp folder) and load is sent only
once ``GET /readyz`` answers 200. The client is ``httpx.AsyncClient`` with one connection per
request in flight. Every request is a short business sentence (a price, a date or a quantity,
from a few templates filled from a seeded generator) with ``units: [one unit]``, the units taken
in turn, so that a request is one unit run.

1. **nominal**: the default model (in-process engine), admission bounds set out of the way
   (``--max-queue-ms 600000``). ``lost`` counts the requests with no HTTP answer, a body that is
   not JSON, a 5xx, another status that is neither 200 nor 429, a 200 without a requested unit,
   or a unit result that breaks the contract (an ``output`` not valid against the unit's schema
   from ``GET /v1/units``, or a null output without ``error.code``), and the requests the phase's
   deadline left unsent. A 429 is not lost; it is counted (none is expected here).
2. **faulted**: ``aau serve --engine openai`` on a real vLLM CPU server (``tests/remote``,
   made by ``.ci/vllm-setup``), through a fault-injecting proxy that draws a fault for about one
   engine call in six (resets, dropped connections, 500/503/429, truncated and malformed bodies,
   answers of the wrong shape, 3 s delays, the odd stall). Every request must be answered: a 200
   whose every unit is schema-valid or carries an error code (a fallback path answering is
   fine), or an error answer with a code; ``faulted_lost`` counts the rest. Without the vLLM
   set-up the phase is skipped (``faulted_lost: null``, ``faulted_skipped`` says why).
3. **overload**: the default model again with tight admission (8 unit runs in flight, 2 s of
   estimated queue; the per-tenant bounds lifted, so that what refuses is the queue's bound). A
   few requests at capacity first give admission a measured rate; then requests arrive on a
   fixed schedule at four times the unit runs/s the nominal phase measured (open loop, at most
   ``--overload-concurrency`` in flight; ``--overload-rate 0``: a closed loop of that many).
   Every 429 must carry an integer ``Retry-After`` >= 1 and a JSON error with a code
   (violations are lost); ``overload_p99_ms`` is the p99 latency of the accepted requests, which
   should stay near the queue's bound plus a run's time. A few refused requests are sent again
   after their ``Retry-After`` to show that they then get in.

Everything is bounded: each request by ``--request-timeout-s``, each phase by a deadline, each
start by a readiness bound; the service, the vLLM server and the proxy are stopped on the way
out whatever happens (Ctrl-C and SIGTERM included). The service's output goes to a log in a temp
folder, whose tail is printed when the process dies.

Each phase prints one line; the last line is one JSON object: ``requests``, ``lost``,
``p50_ms``, ``p95_ms``, ``p99_ms``, ``units_s`` (the nominal phase: unit runs answered per second
of its wall time), ``faulted_lost``, ``overload_429s``, ``overload_p99_ms``, plus ``phases`` (the
figures of each phase). The exit status is 1 when a phase lost a request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.remote holds the vLLM launcher and the fault proxy

from benchmarks._stats import percentile  # noqa: E402
from tests.remote.fault_proxy import PASS, Fault, FaultInjector  # noqa: E402
from tests.remote.vllm_server import SERVED_MODEL, VllmServer, setup_problem  # noqa: E402

UNITS = ("extract_price", "extract_date", "extract_quantity")
UNIT_FILES = [str(ROOT / "units" / f"{name}.yaml") for name in UNITS]
READY_TIMEOUT_S = 300.0
"""A start's bound: model load, warm-up of every unit and a first probe generation."""

# -- the texts --------------------------------------------------------------------------------

COMPANIES = ["Acme Logistics", "Brenner GmbH", "Northwind Traders", "Globex Ltd", "Initech",
             "Umbrella Supplies", "Vandelay Imports", "Stark Components"]  # fmt: skip
PRODUCTS = ["boxes of printer paper", "office chairs", "steel bolts", "laptops",
            "pallets of bottled water", "safety helmets", "LED panels", "copper fittings"]  # fmt: skip
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
CURRENCIES = [("EUR", "€"), ("USD", "$"), ("GBP", "£"), ("CHF", "CHF ")]
MEASURES = ["kg", "metres", "feet", "rolls", "spools", "tonnes"]

TEMPLATES = {
    "extract_price": [
        "Invoice {inv} from {company}: the total due is {sym}{amount} for {q} {product}, "
        "payable within thirty days of receipt.",
        "{company} quoted {amount} {cur} for the annual maintenance contract, including "
        "on-site support and spare parts.",
        "Please note that the licence fee rises to {cur} {amount} per year from next quarter "
        "for all {q} seats.",
        "The purchase order for {q} {product} was approved at a total price of {amount} {cur}, "
        "shipping not included.",
    ],
    "extract_date": [
        "The delivery of {q} {product} from {company} is scheduled for {day} {month} {year} "
        "at the Rotterdam warehouse.",
        "Our contract with {company} expires on {month} {day}, {year}; please send the "
        "renewal notice before then.",
        "The audit meeting has been moved to {iso} because the finance team is travelling "
        "for most of that week.",
        "Payment for invoice {inv} was received on {day}.{mm}.{year}, two weeks after the "
        "agreed payment deadline.",
    ],
    "extract_quantity": [
        "{company} confirmed an order of {q} {product} to be shipped in two batches from "
        "the main depot.",
        "The storage tank at the northern site holds {q} litres of diesel, enough for about "
        "three weeks of normal operation.",
        "For the substation upgrade next month we need {q} {measure} of copper wire and a "
        "few spare connectors.",
        "The warehouse counted {q} {product} during the stocktake, twelve fewer than the "
        "inventory system shows.",
    ],
}


def make_jobs(count: int, seed: int, offset: int = 0) -> list[tuple[str, str]]:
    """``count`` (unit, text) pairs: the units in turn, each with a sentence of its kind."""
    rng = random.Random(seed)
    jobs = []
    for i in range(offset, offset + count):
        unit = UNITS[i % len(UNITS)]
        cur, sym = rng.choice(CURRENCIES)
        day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(2023, 2026)
        amount = rng.choice([f"{rng.uniform(10, 999):.2f}", f"{rng.randint(1, 95)},{rng.randint(0, 999):03d}.00"])  # fmt: skip
        text = rng.choice(TEMPLATES[unit]).format(
            inv=f"{year}-{rng.randint(100, 9999)}", company=rng.choice(COMPANIES), sym=sym,
            cur=cur, amount=amount, q=rng.randint(2, 950), product=rng.choice(PRODUCTS),
            day=day, month=MONTHS[month - 1], year=year, mm=f"{month:02d}",
            iso=f"{year}-{month:02d}-{day:02d}", measure=rng.choice(MEASURES),
        )  # fmt: skip
        jobs.append((unit, text))
    return jobs


# -- the service process ----------------------------------------------------------------------


def aau_command() -> list[str]:
    """The ``aau`` console script of this interpreter's environment (or ``-m`` if absent)."""
    script = Path(sys.executable).parent / "aau"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "aau.cli.main"]


def make_key(folder: Path) -> tuple[Path, str]:
    """A key file with one tenant key (``aau keys add``); the file and the key."""
    path = folder / "keys.json"
    done = subprocess.run(
        [*aau_command(), "keys", "add", "bench", "--keys", str(path)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return path, done.stdout.strip().splitlines()[-1]


class ServeProcess:
    """One ``aau serve`` process in its own process group, its output in a log file."""

    def __init__(self, name: str, extra: list[str], port: int, keys: Path, work: Path) -> None:
        self.name, self.port = name, port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = work / f"serve-{name}.log"
        self.command = [*aau_command(), "serve", *UNIT_FILES, "--keys", str(keys),
                        "--port", str(port), "--graceful-timeout", "5", *extra]  # fmt: skip
        self.env = {**os.environ, "AAU_TERMS_DIR": str(work / f"terms-{name}")}
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready_s: float | None = None
        self.exit_code: int | None = None
        self.is_stopped = False

    def start(self, timeout_s: float = READY_TIMEOUT_S) -> ServeProcess:
        """Spawn it and wait until ``/readyz`` is 200 (RuntimeError, log tail, if not)."""
        began = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.env, cwd=ROOT, start_new_session=True,
            )  # fmt: skip
        with httpx.Client(timeout=5.0) as client:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"aau serve ({self.name}) exited with code {self.proc.returncode} while "
                        f"starting; log {self.log_path}:\n{self.log_tail()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.url}/readyz").status_code == 200:
                        self.ready_s = time.monotonic() - began
                        return self
                if time.monotonic() - began > timeout_s:
                    self.stop()
                    raise RuntimeError(
                        f"aau serve ({self.name}) not ready after {timeout_s:.0f} s; "
                        f"log {self.log_path}:\n{self.log_tail()}"
                    )
                time.sleep(0.5)

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM the group (the service drains for up to 5 s), SIGKILL what is left."""
        if self.proc is None or self.is_stopped:
            return
        self.is_stopped = True
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        self._signal(signal.SIGKILL)  # anything of the group left behind
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10.0)
        self.exit_code = self.proc.returncode

    def _signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of its log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def problems(self) -> list[str]:
        """Log lines that tell of a fault inside the service (5xx, tracebacks, errors)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return []
        pattern = re.compile(r"internal error|Traceback|^ERROR|\" 5\d\d\b|exception", re.I)
        return [
            line for line in text.splitlines() if pattern.search(line) and "/readyz" not in line
        ]

    def breaker_opened(self) -> int:
        """How often the remote engine's circuit breaker opened (its log lines)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return 0
        return len(re.findall(r"circuit \S+: (?:closed|half_open) -> open", text))


# -- the fault mix ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Delay(Fault):
    """Forward unchanged, after ``delay_s`` seconds."""

    delay_s: float = 3.0


FAULT_MIX: list[tuple[str, float, Fault]] = [
    ("reset", 0.03, Fault("reset")),
    ("drop", 0.02, Fault("drop")),
    ("status_503", 0.03, Fault("status", 503)),
    ("status_500", 0.01, Fault("status", 500)),
    ("status_429", 0.01, Fault("status", 429, "1")),
    ("truncate", 0.02, Fault("truncate")),
    ("malformed_json", 0.01, Fault("malformed_json")),
    ("wrong_schema", 0.01, Fault("wrong_schema")),
    ("delay_3s", 0.02, Delay()),
    ("stall", 0.005, Fault("stall")),
]
"""(label, share of engine calls, fault): about one call in six misbehaves."""


class MixedFaults(FaultInjector):
    """The tests' fault proxy, drawing each request's fault from ``FAULT_MIX`` (seeded)."""

    def __init__(self, upstream: tuple[str, int], seed: int) -> None:
        super().__init__(upstream, upstream_timeout=120.0)
        self.rng = random.Random(seed)
        self.is_faulting = False
        self.drawn: Counter[str] = Counter()

    def _next_fault(self) -> Fault:
        with self._lock:
            if not self.is_faulting:
                return PASS
            draw, edge = self.rng.random(), 0.0
            for label, share, fault in FAULT_MIX:
                edge += share
                if draw < edge:
                    self.drawn[label] += 1
                    return fault
            self.drawn["pass"] += 1
            return PASS

    async def _apply(self, fault: Fault, *args: Any, **kwargs: Any) -> None:
        if isinstance(fault, Delay):
            await asyncio.sleep(fault.delay_s)
            fault = PASS
        await super()._apply(fault, *args, **kwargs)


# -- the client -------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one request got."""

    unit: str
    verdict: str
    """``ok``, ``refused`` (a well-formed 429), ``coded_error`` or why it is lost."""
    status: int | None = None
    ms: float = 0.0
    code: str | None = None
    """The error code of a non-200 answer."""
    retry_after: str | None = None
    path: str | None = None
    unit_error: str | None = None
    queue_ms: float | None = None
    """The service's own queue wait (``Server-Timing``)."""


@dataclass
class Phase:
    """The outcomes of one phase and its wall time."""

    outcomes: list[Outcome]
    wall_s: float
    unsent: int
    retried: list[dict[str, Any]] = field(default_factory=list)
    lag_s: float = 0.0
    """Open loop: the longest an arrival waited for a free slot."""


def error_code(body: Any) -> str | None:
    """``error.code`` of an error body, if it has one."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        return str(code) if code else None
    return None


def judge(unit: str, response: httpx.Response, validators: dict[str, Any], ms: float,
          coded_ok: bool) -> Outcome:  # fmt: skip
    """The verdict on one answer (see the module's docstring for what is lost)."""
    status = response.status_code
    retry_after = response.headers.get("retry-after")
    timing = re.search(r"queue;dur=([\d.]+)", response.headers.get("server-timing", ""))
    out = Outcome(unit, "ok", status, ms, retry_after=retry_after,
                  queue_ms=float(timing.group(1)) if timing else None)  # fmt: skip
    try:
        body = response.json()
    except ValueError:
        out.verdict = "not_json"
        return out
    out.code = error_code(body) if status != 200 else None
    if status == 429:
        ok = retry_after is not None and retry_after.isdigit() and int(retry_after) >= 1
        out.verdict = "refused" if ok and out.code else "bad_429"
    elif status != 200:
        if coded_ok and out.code:
            out.verdict = "coded_error"
        else:
            out.verdict = "5xx" if status >= 500 else "other_status"
    else:
        result = (body.get("units") or {}).get(unit) if isinstance(body, dict) else None
        if not isinstance(result, dict):
            out.verdict = "missing_unit"
            return out
        out.path = result.get("path")
        out.unit_error = error_code(result)
        if result.get("output") is not None:
            if not validators[unit].is_valid(result["output"]):
                out.verdict = "invalid_output"
        elif not out.unit_error:
            out.verdict = "null_without_code"
    return out


async def send(client: httpx.AsyncClient, unit: str, text: str, validators: dict[str, Any],
               timeout_s: float, coded_ok: bool) -> Outcome:  # fmt: skip
    """POST one analysis; never raises (a missing answer is an outcome too)."""
    started = time.perf_counter()
    try:
        response = await asyncio.wait_for(
            client.post("/v1/analyze", json={"text": text, "units": [unit]}), timeout_s
        )
    except (httpx.HTTPError, TimeoutError) as exc:
        ms = (time.perf_counter() - started) * 1000
        return Outcome(unit, "no_response", None, ms, code=type(exc).__name__)
    ms = (time.perf_counter() - started) * 1000
    return judge(unit, response, validators, ms, coded_ok)


async def fetch_validators(url: str, key: str) -> dict[str, Any]:
    """A JSON Schema validator of each served unit's output (``GET /v1/units``)."""
    async with httpx.AsyncClient(timeout=30.0) as client:
        answer = await client.get(f"{url}/v1/units", headers={"Authorization": f"Bearer {key}"})
        answer.raise_for_status()
    validators = {}
    for unit in answer.json()["units"]:
        cls = jsonschema.validators.validator_for(unit["output"])
        cls.check_schema(unit["output"])
        validators[unit["name"]] = cls(unit["output"])
    missing = set(UNITS) - set(validators)
    assert not missing, f"the service does not serve {sorted(missing)}"
    return validators


async def load(url: str, key: str, jobs: list[tuple[str, str]], concurrency: int, *,
               deadline_s: float, timeout_s: float, coded_ok: bool = False,
               rate: float | None = None, honour: int = 0) -> Phase:  # fmt: skip
    """Send ``jobs``, until done or ``deadline_s`` has passed.

    Args:
        concurrency: requests in flight at most; without ``rate`` there are always that many
            (closed loop: each answer sends the next).
        rate: requests per second, sent on a fixed schedule whatever the answers (open loop);
            an arrival that finds ``concurrency`` requests in flight waits for one to end.
        honour: that many refused requests are sent again after their ``Retry-After`` (up to
            four more times, beside the load), their tries kept apart in ``Phase.retried``.
    """
    validators = await fetch_validators(url, key)
    limits = httpx.Limits(max_connections=concurrency + honour,
                          max_keepalive_connections=concurrency + honour)  # fmt: skip
    headers = {"Authorization": f"Bearer {key}"}
    pending = iter(jobs)
    outcomes: list[Outcome] = []
    retried: list[dict[str, Any]] = []
    retry_tasks: list[asyncio.Task[None]] = []
    started = time.perf_counter()
    end = time.monotonic() + deadline_s
    lag = [0.0]

    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits,
                                 timeout=httpx.Timeout(timeout_s, connect=10.0)) as client:  # fmt: skip

        async def again(unit: str, text: str, first: Outcome) -> None:
            tries: list[Any] = [first.retry_after]
            outcome = first
            for _ in range(4):
                wait = int(outcome.retry_after or 1)
                if time.monotonic() + wait + timeout_s > end:
                    break
                await asyncio.sleep(min(wait, 30))
                outcome = await send(client, unit, text, validators, timeout_s, coded_ok)
                tries.append(outcome.status)
                if outcome.verdict != "refused":
                    break
                tries.append(outcome.retry_after)
            retried.append({"verdict": outcome.verdict, "status": outcome.status,
                            "tries": tries, "ms": round(outcome.ms, 1)})  # fmt: skip

        async def one(unit: str, text: str) -> None:
            outcome = await send(client, unit, text, validators, timeout_s, coded_ok)
            outcomes.append(outcome)
            if outcome.verdict == "refused" and len(retry_tasks) < honour:
                retry_tasks.append(asyncio.create_task(again(unit, text, outcome)))

        async def worker() -> None:
            for unit, text in pending:
                if time.monotonic() > end:
                    return
                await one(unit, text)

        async def schedule() -> None:
            slots = asyncio.Semaphore(concurrency)
            sent: list[asyncio.Task[None]] = []

            async def held(unit: str, text: str) -> None:
                try:
                    await one(unit, text)
                finally:
                    slots.release()

            t0, every_s = time.monotonic(), 1 / (rate or 1.0)
            for i, (unit, text) in enumerate(pending):
                await asyncio.sleep(max(0.0, t0 + i * every_s - time.monotonic()))
                if time.monotonic() > end:
                    break
                await slots.acquire()
                lag[0] = max(lag[0], time.monotonic() - (t0 + i * every_s))
                sent.append(asyncio.create_task(held(unit, text)))
            if sent:
                await asyncio.wait(sent)

        if rate:
            loops = [asyncio.create_task(schedule())]
        else:
            loops = [asyncio.create_task(worker()) for _ in range(concurrency)]
        # Each request is bounded by timeout_s, so the loops end by the deadline plus that.
        _, late = await asyncio.wait(loops, timeout=deadline_s + timeout_s + 10)
        wall_s = time.perf_counter() - started
        if retry_tasks:
            await asyncio.wait(retry_tasks, timeout=4 * (30 + timeout_s))
        tasks = [*late, *retry_tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return Phase(outcomes, wall_s, len(jobs) - len(outcomes), retried, lag[0])


# -- figures ----------------------------------------------------------------------------------


def rounded_percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile to 0.1 ms (None for no values)."""
    return round(percentile(values, q), 1) if values else None


def figures(phase: Phase) -> dict[str, Any]:
    """Counts, latency percentiles of the 200s and the unit-run rate of one phase."""
    outs = phase.outcomes
    answered = [o for o in outs if o.verdict == "ok"]
    kept = {"ok", "refused", "coded_error"}
    lost_by = Counter(o.verdict for o in outs if o.verdict not in kept)
    if phase.unsent:
        lost_by["unsent"] = phase.unsent
    latencies = [o.ms for o in answered]
    queue = [o.queue_ms for o in answered if o.queue_ms is not None]
    return {
        "requests": len(outs) + phase.unsent,
        "answered": len(answered),
        "lost": sum(lost_by.values()),
        "lost_by": dict(lost_by),
        "refused_429": sum(o.status == 429 for o in outs),
        "refused_codes": dict(Counter(o.code for o in outs if o.status == 429)),
        "coded_errors": dict(
            Counter(f"{o.status} {o.code}" for o in outs if o.verdict == "coded_error")
        ),
        "statuses": {
            str(k): v
            for k, v in sorted(Counter(o.status for o in outs).items(), key=lambda kv: str(kv[0]))
        },
        "p50_ms": rounded_percentile(latencies, 0.50),
        "p95_ms": rounded_percentile(latencies, 0.95),
        "p99_ms": rounded_percentile(latencies, 0.99),
        "max_ms": round(max(latencies), 1) if latencies else None,
        "queue_p99_ms": rounded_percentile(queue, 0.99),
        "units_s": round(len(answered) / phase.wall_s, 3) if phase.wall_s else None,
        "wall_s": round(phase.wall_s, 1),
        "paths": dict(Counter(str(o.path) for o in answered)),
        "unit_errors": dict(Counter(o.unit_error for o in answered if o.unit_error)),
    }


def line(name: str, f: dict[str, Any], extra: str = "") -> str:
    """One human-readable line for a phase."""
    return (
        f"{name}: {f['requests']} requests, {f['answered']} answered, {f['lost']} lost "
        f"{f['lost_by'] or ''}, {f['refused_429']} refused (429); p50 {f['p50_ms']} ms, "
        f"p95 {f['p95_ms']} ms, p99 {f['p99_ms']} ms; {f['units_s']} unit runs/s over "
        f"{f['wall_s']} s; paths {f['paths']}{extra}"
    )


def check_log(serve: ServeProcess, f: dict[str, Any]) -> None:
    """Put the service's fault lines into the figures; the log's tail if it died."""
    problems = serve.problems()
    f["server_ready_s"] = round(serve.ready_s or 0.0, 1)
    f["server_log_problems"] = len(problems)
    for text in problems[:5]:
        print(f"  {serve.name} log: {text[:300]}", flush=True)
    if not serve.alive():
        f["server_died"] = True
        print(f"  aau serve ({serve.name}) died; log {serve.log_path}:\n{serve.log_tail()}",
              flush=True)  # fmt: skip


# -- the phases -------------------------------------------------------------------------------


@dataclass
class Run:
    """What every phase needs: options, the key, the temp folder, the things to stop."""

    args: argparse.Namespace
    work: Path
    keys: Path
    key: str
    stack: contextlib.ExitStack
    nominal_units_s: float | None = None

    def serve(self, name: str, port: int, extra: list[str]) -> ServeProcess:
        """A started service, stopped when the run ends (whatever happens)."""
        serve = ServeProcess(name, extra, port, self.keys, self.work)
        self.stack.callback(serve.stop)
        return serve.start()

    def deadline(self, requests: int) -> float:
        """A phase's deadline: ``--phase-deadline-s``, or 300 s plus one per request."""
        return self.args.phase_deadline_s or 300.0 + requests


def nominal(run: Run) -> dict[str, Any]:
    a = run.args
    serve = run.serve("nominal", a.port_base, ["--max-queue-ms", "600000"])
    print(f"nominal: aau serve ready in {serve.ready_s:.1f} s; {a.requests} requests, "
          f"{a.concurrency} in flight", flush=True)  # fmt: skip
    phase = asyncio.run(load(serve.url, run.key, make_jobs(a.requests, a.seed), a.concurrency,
                             deadline_s=run.deadline(a.requests),
                             timeout_s=a.request_timeout_s))  # fmt: skip
    f = figures(phase)
    check_log(serve, f)
    serve.stop()
    f["server_exit_code"] = serve.exit_code
    print(line("nominal", f), flush=True)
    return f


def faulted(run: Run) -> dict[str, Any]:
    a = run.args
    problem = setup_problem()
    if problem is not None:
        print(f"faulted: skipped: {problem}", flush=True)
        return {"skipped": problem}
    vllm = VllmServer(log_dir=run.work / "vllm")
    run.stack.callback(vllm.kill)
    try:
        vllm.start()
        vllm.warm_up()
    except (RuntimeError, OSError) as exc:
        reason = f"the vLLM server did not start: {str(exc).splitlines()[0]}"
        print(f"faulted: skipped: {reason}\n{vllm.log_tail(20)}", flush=True)
        return {"skipped": reason}
    proxy = MixedFaults(vllm.address, a.seed)
    run.stack.callback(proxy.stop)
    proxy.start()
    extra = ["--engine", "openai", "--base-url", proxy.url, "--served-model", SERVED_MODEL,
             "--max-queue-ms", "600000"]  # fmt: skip
    serve = run.serve("faulted", a.port_base + 1, extra)
    print(f"faulted: vLLM healthy in {vllm.startup_s:.1f} s, aau serve ready in "
          f"{serve.ready_s:.1f} s; {a.faulted_requests} requests, {a.concurrency} in flight, "
          f"faults on {sum(s for _, s, _ in FAULT_MIX):.1%} of engine calls", flush=True)  # fmt: skip
    proxy.is_faulting = True
    jobs = make_jobs(a.faulted_requests, a.seed + 1, offset=1)
    phase = asyncio.run(load(serve.url, run.key, jobs, a.concurrency, coded_ok=True,
                             deadline_s=run.deadline(a.faulted_requests),
                             timeout_s=a.request_timeout_s))  # fmt: skip
    proxy.is_faulting = False
    f = figures(phase)
    calls = len(proxy.requests)
    f["engine_calls"] = calls
    f["faults"] = {k: v for k, v in sorted(proxy.drawn.items()) if k != "pass"}
    f["fault_share"] = round(sum(f["faults"].values()) / calls, 3) if calls else None
    f["breaker_opened"] = serve.breaker_opened()
    check_log(serve, f)
    serve.stop()
    f["server_exit_code"] = serve.exit_code
    print(line("faulted", f, f"; {calls} engine calls, faults {f['faults']}"), flush=True)
    return f


def overload(run: Run) -> dict[str, Any]:
    a = run.args
    extra = ["--max-units-in-flight", "8", "--max-queue-ms", "2000",
             "--tenant-requests", "4096", "--tenant-rate", "100000"]  # fmt: skip
    serve = run.serve("overload", a.port_base + 2, extra)
    rate = a.overload_rate
    if rate is None:  # four times what the nominal phase measured the service to finish
        rate = round(4 * (run.nominal_units_s or 3.0), 1)
    how = f"{rate:g} requests/s (open loop)" if rate else "a closed loop"
    print(f"overload: aau serve ready in {serve.ready_s:.1f} s (8 unit runs in flight, 2 s "
          f"queue bound); {a.overload_primer} requests at capacity, then "
          f"{a.overload_requests} at {how}, at most {a.overload_concurrency} in flight",
          flush=True)  # fmt: skip
    primer = None
    if a.overload_primer:
        primer = asyncio.run(load(serve.url, run.key, make_jobs(a.overload_primer, a.seed + 2),
                                  8, deadline_s=run.deadline(a.overload_primer),
                                  timeout_s=a.request_timeout_s))  # fmt: skip
    jobs = make_jobs(a.overload_requests, a.seed + 3, offset=2)
    phase = asyncio.run(load(serve.url, run.key, jobs, a.overload_concurrency,
                             deadline_s=run.deadline(a.overload_requests),
                             timeout_s=a.request_timeout_s, rate=rate or None,
                             honour=a.honour_retry_after))  # fmt: skip
    f = figures(phase)
    f["offered_rate"] = rate or None
    f["arrival_lag_s"] = round(phase.lag_s, 2)
    refused = [o for o in phase.outcomes if o.status == 429]
    after = [int(o.retry_after) for o in refused if (o.retry_after or "").isdigit()]
    f["retry_after_s"] = {"min": min(after), "max": max(after)} if after else None
    f["honoured_retry_after"] = phase.retried
    if primer is not None:
        p = figures(primer)
        f["primer"] = {k: p[k] for k in ("requests", "answered", "lost", "refused_429",
                                         "p50_ms", "units_s")}  # fmt: skip
    check_log(serve, f)
    serve.stop()
    f["server_exit_code"] = serve.exit_code
    got_in = sum(r["verdict"] == "ok" for r in phase.retried)
    print(line("overload", f, f"; Retry-After {f['retry_after_s']} s; queue p99 "
               f"{f['queue_p99_ms']} ms; {got_in} of {len(phase.retried)} refused requests "
               "sent again after Retry-After got in"), flush=True)  # fmt: skip
    return f


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="nominal phase")
    parser.add_argument("--concurrency", type=int, default=32, help="nominal and faulted")
    parser.add_argument("--faulted-requests", type=int, default=400)
    parser.add_argument("--overload-requests", type=int, default=400)
    parser.add_argument("--overload-concurrency", type=int, default=128,
                        help="overload requests in flight at most")  # fmt: skip
    parser.add_argument("--overload-rate", type=float,
                        help="overload arrivals per second (default: 4x the nominal unit runs/s; "
                             "0: a closed loop of --overload-concurrency)")  # fmt: skip
    parser.add_argument("--overload-primer", type=int, default=16,
                        help="requests at capacity before the burst (0: the burst meets a "
                             "service that has measured nothing)")  # fmt: skip
    parser.add_argument("--honour-retry-after", type=int, default=5, metavar="N",
                        help="refused requests sent again after their Retry-After")  # fmt: skip
    parser.add_argument("--skip-faulted", action="store_true")
    parser.add_argument("--skip-overload", action="store_true")
    parser.add_argument("--port-base", type=int, default=18760,
                        help="nominal, faulted and overload services on this port and the next two")  # fmt: skip
    parser.add_argument("--request-timeout-s", type=float, default=180.0)
    parser.add_argument("--phase-deadline-s", type=float, help="default: 300 + 1 per request")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work-dir", type=Path,
                        help="keep the keys, term stores and logs here (default: a temp folder)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="60 / 40 / 80 requests")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.faulted_requests, args.overload_requests = 60, 40, 80
        args.overload_primer = min(args.overload_primer, 8)

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)  # unwinds through the stack below: everything stopped

    signal.signal(signal.SIGTERM, terminate)
    began = time.monotonic()
    with contextlib.ExitStack() as stack:
        if args.work_dir:
            work = args.work_dir.resolve()
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aau-serve-load-")))
        keys, key = make_key(work)
        run = Run(args, work, keys, key, stack)
        phases: dict[str, Any] = {"nominal": nominal(run)}
        run.nominal_units_s = phases["nominal"]["units_s"]
        if args.skip_faulted:
            phases["faulted"] = {"skipped": "--skip-faulted"}
            print("faulted: skipped (--skip-faulted)", flush=True)
        else:
            phases["faulted"] = faulted(run)
        if args.skip_overload:
            phases["overload"] = {"skipped": "--skip-overload"}
            print("overload: skipped (--skip-overload)", flush=True)
        else:
            phases["overload"] = overload(run)
    n, fl, ov = phases["nominal"], phases["faulted"], phases["overload"]
    result = {
        "requests": n["requests"], "lost": n["lost"], "p50_ms": n["p50_ms"],
        "p95_ms": n["p95_ms"], "p99_ms": n["p99_ms"], "units_s": n["units_s"],
        "faulted_lost": fl.get("lost"),
        "overload_429s": ov.get("refused_429"),
        "overload_p99_ms": ov.get("p99_ms"),
        "nominal_429s": n["refused_429"],
        "overload_lost": ov.get("lost"),
        "faulted_requests": fl.get("requests"),
        "overload_requests": ov.get("requests"),
        "seconds": round(time.monotonic() - began, 1),
        "phases": phases,
    }  # fmt: skip
    for name in ("faulted", "overload"):
        if "skipped" in phases[name]:
            result[f"{name}_skipped"] = phases[name]["skipped"]
    print(json.dumps(result))
    lost = [v for v in (n["lost"], fl.get("lost"), ov.get("lost")) if v]
    return 1 if lost else 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # the processes were stopped on the way out of main()
        print(
            "interrupted: the services, the vLLM server and the proxy are stopped", file=sys.stderr
        )
        raise SystemExit(130) from None
