"""``aau batch --ray``: the batch contract on Ray Data, line for line the local batch's output.

The commands run as subprocesses (the real CLI, its own Ray driver) without a model, so the CRF
and heuristic paths answer. One local cluster, started by a helper process, serves the module;
every process a cluster starts carries a marker variable, so the tests can tell that none is
left when the cluster is gone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aau.cli.main import main
from tests.conftest import REPO, UNITS_DIR

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="needs Ray Data: pip install 'aau[ray]'"
)

UNITS = [str(UNITS_DIR / f"{name}.yaml") for name in
         ("extract_price", "extract_date", "extract_quantity")]  # fmt: skip
LINE_BYTES = 8192
"""AAU_MAX_BATCH_LINE_BYTES for both runs: low, so that a few lines are over it."""
TEXT_CHARS = 3000
"""AAU_MAX_TEXT_CHARS for both runs."""
RUN_TIMEOUT_S = 300
MARKER = "AAU_RAY_TEST_MARKER"
"""Set in every process the tests start; each Ray process started from one inherits it."""

CLUSTER_SCRIPT = """
import sys, ray
context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
print(context.address_info["gcs_address"], flush=True)
sys.stdin.read()  # until the test closes it
ray.shutdown(wait_for_processes=True)
"""


def record(id_: Any, text: Any = None, **extra: Any) -> bytes:
    fields = {"id": id_, **({"text": text} if text is not None else {}), **extra}
    return json.dumps(fields, ensure_ascii=False).encode()


def shipped_texts(unit: str, count: int) -> list[str]:
    """``count`` texts spread over a shipped unit's annotated examples."""
    path = UNITS_DIR / f"{unit}.annotated.jsonl"
    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    step = len(texts) // count
    return texts[::step][:count]


def batch_lines() -> tuple[list[bytes], dict[int, str]]:
    """200 input lines, and the error code expected of each bad one (by index)."""
    texts = [*shipped_texts("extract_price", 60), *shipped_texts("extract_date", 60),
             *shipped_texts("extract_quantity", 60)]  # fmt: skip
    texts[::3], texts[1::3], texts[2::3] = texts[:60], texts[60:120], texts[120:]  # mixed units
    lines = [record(f"t-{n}", text) for n, text in enumerate(texts)]
    bad: list[tuple[bytes, str]] = [
        (b"this is not json", "invalid_input"),
        (record("no-text"), "missing_field"),
        (json.dumps({"text": "Total 5 EUR"}).encode(), "missing_field"),
        (record("long", "Total: EUR 12.00. " * 500), "input_too_large"),  # over LINE_BYTES
        (record("huge", "x" * 100_000), "input_too_large"),  # over the 64 KiB kept of a line
        (record("many-chars", "é" * (TEXT_CHARS + 1)), "input_too_large"),
        (record("escape", path="../outside.txt"), "path_not_allowed"),
        (record("absolute", path="/etc/hostname"), "path_not_allowed"),
        (record("gone", path="gone.txt"), "file_not_found"),
        (b'{"id": "latin1", "text": "caf\xe9 at 5 EUR"}', "invalid_utf8"),
        (b'{"id": "deep", "text": "x", "n": ' + b"[" * 60 + b"]" * 60 + b"}", "input_too_deep"),
        (record("empty", ""), "empty_input"),
        (b"", "invalid_input"),  # a blank line inside the file is an input line
        (record("tenant", "The fee is $3,000 per year.", tenant="nobody"), "unknown_tenant"),
        (b'{"id": "cut", "text": "Total 5 E', "invalid_input"),
    ]
    good_extra = [
        record("doc", path="note.txt"),
        record(17, "Shipment of 2,500 kg steel coils, invoiced USD 12,474.00 on 21 March 2023."),
        record("de", "Preis: 49,90 € inkl. MwSt., Lieferung am 5. Juni 2025."),
        record("nothing", "Thanks for your message, see you next week."),
        b'{"id": "surrogate", "text": "Total \\ud800 5 EUR"}',  # a lone surrogate, escaped
    ]
    for n, (raw, _) in enumerate(bad):
        lines.insert(7 + n * 12, raw)
    for n, raw in enumerate(good_extra):
        lines.insert(5 + n * 37, raw)
    assert len(lines) == 200
    return lines, {lines.index(raw): code for raw, code in bad}


def stable(line: dict[str, Any]) -> dict[str, Any]:
    """An output line without what the wall clock decides: timings, the trace's times."""
    units = {}
    for name, unit in line["units"].items():
        unit = {key: value for key, value in unit.items() if key != "timings"}
        unit["trace"] = [{k: v for k, v in step.items() if k != "at_ms"} for step in unit["trace"]]
        units[name] = unit
    return {**line, "units": units}


def environment(**extra: str) -> dict[str, str]:
    # Token authentication, Ray's default for a local cluster: a driver that names the
    # cluster's address must ask for it (the token is the user's, in ~/.ray/auth_token).
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", **extra}
    env.pop("RAY_ADDRESS", None)
    return env


def start_batch(
    source: Path, target: Path, *extra: str, env: dict[str, str]
) -> subprocess.Popen[str]:
    """``aau batch`` over the three units, without a model, as its own process."""
    command = [sys.executable, "-m", "aau.cli.main", "batch", *UNITS, "--input", str(source),
               "--output", str(target), "--no-model", *extra]  # fmt: skip
    return subprocess.Popen(  # noqa: S603  # our own command line
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit code and stderr of a started batch, once it ends."""
    _, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    return process.returncode, stderr


def both(
    source: Path, local: Path, ray: Path, *ray_options: str, env: dict[str, str]
) -> tuple[tuple[int, str], tuple[int, str]]:
    """The local batch and the Ray batch of ``source``, run side by side to save time."""
    processes = [start_batch(source, local, env=env),
                 start_batch(source, ray, *ray_options, env=env)]  # fmt: skip
    local_run, ray_run = (finish(process) for process in processes)
    return local_run, ray_run


def marked_processes(marker: str) -> list[int]:
    """The processes whose environment holds ``MARKER=marker``."""
    needle = f"{MARKER}={marker}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return pids


def assert_all_gone(marker: str, within_s: float = 30.0) -> None:
    """Ray's workers exit shortly after their raylet: wait a little for them."""
    deadline = time.monotonic() + within_s
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"Ray processes left running: {left}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster of 2 CPUs for the module; its address. Stopped and checked after."""
    marker = uuid.uuid4().hex
    helper = subprocess.Popen(  # noqa: S603  # our own interpreter
        [sys.executable, "-c", CLUSTER_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env=environment(**{MARKER: marker}),
    )  # fmt: skip
    assert helper.stdin is not None
    assert helper.stdout is not None
    try:
        address = helper.stdout.readline().strip()
        assert address, "the Ray cluster did not start"
        yield address
    finally:
        helper.stdin.close()
        helper.wait(timeout=60)
        helper.stdout.close()
        assert_all_gone(marker)


@pytest.fixture(scope="module")
def batch_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, str]]:
    folder = tmp_path_factory.mktemp("ray-batch")
    (folder / "data").mkdir()
    (folder / "outside.txt").write_text("Secret price: EUR 66.00", encoding="utf-8")
    (folder / "data" / "note.txt").write_text("Consulting: 7.5 hours at $120 per hour.")
    lines, expected = batch_lines()
    (folder / "data" / "in.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return folder / "data", expected


def test_an_unreachable_address_is_a_one_line_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        source = tmp_path / "in.jsonl"
        source.write_bytes(record("a", "Total 5 EUR") + b"\n")
        started = time.monotonic()
        rc, stderr = finish(start_batch(source, tmp_path / "out.jsonl", "--ray",
                                        f"127.0.0.1:{port}", env=environment()))  # fmt: skip

    assert rc == 2
    assert time.monotonic() - started < 60
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: --ray 127.0.0.1:{port}: no Ray cluster answers there")
    assert "ray start --head" in lines[0]


def test_without_ray_installed_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as without the extra
    monkeypatch.delitem(sys.modules, "aau.cli.ray_batch", raising=False)
    source = tmp_path / "in.jsonl"
    source.write_bytes(record("a", "Total 5 EUR") + b"\n")

    rc = main(["batch", UNITS[0], "--input", str(source), "--output", str(tmp_path / "out"),
               "--no-model", "--ray"])  # fmt: skip

    assert rc == 2
    assert capsys.readouterr().err == (
        "error: aau batch --ray needs Ray Data: pip install 'aau[ray]'\n"
    )


def test_the_plain_batch_and_the_package_never_import_ray(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(record("a", "Total 5 EUR") + b"\n")
    check = (
        "import sys, aau, aau.cli.main\n"
        f"assert aau.cli.main.main(['batch', {UNITS[0]!r}, '--input', {str(source)!r}, "
        f"'--output', {str(tmp_path / 'out')!r}, '--no-model']) == 0\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    run = subprocess.run(  # noqa: S603  # our own interpreter
        [sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


def test_ray_without_an_address_runs_a_local_cluster_and_stops_it(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    source = tmp_path / "in.jsonl"
    lines = [record("a", "Total due: EUR 1,250.00 by 30 April 2024."), b"not json",
             record("b", "12 boxes, 3 June 2024")]  # fmt: skip
    source.write_bytes(b"\n".join(lines) + b"\n")
    local, ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"

    local_run, (rc, stderr) = both(source, local, ray, "--ray", "--ray-workers", "1",
                                   env=environment(**{MARKER: marker}))  # fmt: skip

    assert local_run[0] == 0, local_run[1]
    assert rc == 0, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == f"wrote 3 lines to {ray}"
    assert [stable(json.loads(line)) for line in ray.read_text().splitlines()] == [
        stable(json.loads(line)) for line in local.read_text().splitlines()
    ]
    assert_all_gone(marker)


def test_ray_batch_equals_the_local_batch_line_for_line(
    cluster: str, batch_folder: tuple[Path, dict[int, str]]
) -> None:
    folder, expected_codes = batch_folder
    source = folder / "in.jsonl"
    env = environment(AAU_MAX_BATCH_LINE_BYTES=str(LINE_BYTES), AAU_MAX_TEXT_CHARS=str(TEXT_CHARS))

    local_run, ray_run = both(source, folder / "local.jsonl", folder / "ray.jsonl", "--ray",
                              cluster, "--concurrency", "4", env=env)  # fmt: skip

    assert local_run[0] == 0, local_run[1]
    assert ray_run[0] == 0, ray_run[1]
    assert "Traceback" not in ray_run[1]
    assert ray_run[1].strip().splitlines()[-1] == f"wrote 200 lines to {folder / 'ray.jsonl'}"
    local = [json.loads(line) for line in (folder / "local.jsonl").read_text().splitlines()]
    ray = [json.loads(line) for line in (folder / "ray.jsonl").read_text().splitlines()]
    assert len(local) == len(ray) == 200
    for number, (mine, theirs) in enumerate(zip(ray, local, strict=True), 1):
        assert stable(mine) == stable(theirs), f"line {number} differs"
    # the bad lines are coded, as the local batch codes them, and the rest are answered
    for index, line in enumerate(ray):
        codes = {(unit["error"] or {}).get("code") for unit in line["units"].values()}
        if index in expected_codes:
            assert codes == {expected_codes[index]}, f"line {index + 1}: {codes}"
        else:
            assert codes == {None}, f"line {index + 1}: {codes}"
    answered = [line for line in ray if any(u["output"] for u in line["units"].values())]
    assert len(answered) > 150
