"""``aau calibrate --engine``: labelled runs and a calibrator per engine kind.

The runs of an engine other than the in-process one are cached apart (``runs/<engine>/``) with a
fingerprint that holds what identifies the engine (never a key), and its calibrator is
``calibrator-<engine>.pt`` with ``metadata["engine"]`` saying the kind of its log-probabilities.
The default run is today's: the shipped runs stay current, the artifact stays ``calibrator.pt``.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

import aau.fitting.runs as runs_module
from aau.calibration.calibrator import load_calibrator
from aau.engines.base import EngineCapabilities, Generation, GenerationRequest
from aau.engines.registry import EngineConfig
from aau.errors import EngineError
from aau.fitting.calibrate import calibrate as calibrate_fn
from aau.fitting.runs import (
    EngineKind,
    engine_kind,
    is_current,
    load_config,
    load_unit,
    runs_fingerprint,
    runs_folder,
)
from tests.conftest import UNITS_DIR
from tests.fitting.conftest import small_settings
from tests.fitting.test_calibrate import SHIPPED_DATA, calibrate, synthetic_data

SERVER = {"base_urls": ["http://127.0.0.1:9"], "served_model": "smollm2"}
"""A server's settings; nothing is sent to it (the served model is given, the runs cached)."""
ENGINE_VARIABLES = ("AAU_ENGINE", "AAU_MODEL", "AAU_BASE_URLS", "AAU_SERVED_MODEL", "AAU_DIALECT")


@pytest.fixture(autouse=True)
def no_engine_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine options alone say which engine (``from_sources`` reads ``AAU_*`` too)."""
    for name in ENGINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def server(**remote: Any) -> EngineKind:
    settings = {**SERVER, **remote}
    return EngineKind(EngineConfig(backend="openai", remote=settings), logprobs_after_mask=True)


DEFAULT = EngineKind(EngineConfig())


def fingerprint(engine: EngineKind | None, unit: str = "extract_price") -> str:
    config = load_config(SHIPPED_DATA / "config.yaml")
    return runs_fingerprint(load_unit(UNITS_DIR, unit), config, engine)


# -- the runs' fingerprint and folder --------------------------------------------------------------


def test_the_shipped_runs_are_current_for_the_default_engine() -> None:
    """The default run reads the cache: a unit field or trigger that changes no run (the
    engine chain, ``engine_overloaded``) must not make the shipped runs stale."""
    config = load_config(SHIPPED_DATA / "config.yaml")
    for name in config["runs"]["units"]:
        unit = load_unit(UNITS_DIR, name)
        assert is_current(unit, config, SHIPPED_DATA / "runs"), name
        assert is_current(unit, config, SHIPPED_DATA / "runs", DEFAULT), name


def test_what_changes_no_run_leaves_the_fingerprint_alone() -> None:
    config = load_config(SHIPPED_DATA / "config.yaml")
    unit = load_unit(UNITS_DIR, "extract_price")
    base = runs_fingerprint(unit, config)

    def changed(**policy: Any) -> str:
        return runs_fingerprint(
            unit.model_copy(update={"policy": unit.policy.model_copy(update=policy)}), config
        )

    assert runs_fingerprint(unit.model_copy(update={"engines": ["glm5", "local"]}), config) == base
    assert changed(threshold=0.5) == base
    assert changed(fallback_on=["invalid_output"]) != base  # a unit's own list is its own
    # a setting added since the shipped runs: left out at its default only
    default_reserve = type(unit.policy).model_fields["fallback_reserve_s"].default
    assert changed(fallback_reserve_s=default_reserve) == base
    assert changed(fallback_reserve_s=default_reserve + 2.0) != base
    assert changed(timeout_s=unit.policy.timeout_s + 1) != base  # known then: always in


def test_the_default_engine_adds_nothing_to_the_fingerprint() -> None:
    assert fingerprint(DEFAULT) == fingerprint(None)


def test_the_fingerprint_differs_per_engine_kind() -> None:
    prints = {
        "default": fingerprint(None),
        "server": fingerprint(server()),
        "another served model": fingerprint(server(served_model="qwen3")),
        "another dialect": fingerprint(server(dialect="sglang")),
        "another in-process model": fingerprint(EngineKind(EngineConfig(model="/models/other"))),
    }
    assert len(set(prints.values())) == len(prints), prints


def test_where_the_servers_are_and_their_key_leave_the_fingerprint_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AAU_API_KEY", "sk-first-key")
    monkeypatch.setenv("OTHER_KEY", "sk-second-key")
    first = fingerprint(server())
    monkeypatch.setenv("AAU_API_KEY", "sk-changed-key")
    assert fingerprint(server()) == first
    assert fingerprint(server(api_key_env="OTHER_KEY")) == first
    assert fingerprint(server(base_urls=["http://10.0.0.5:8000", "http://10.0.0.6:8000"])) == first
    assert fingerprint(server(request_timeout_s=5.0)) == first
    identity = json.dumps(server().identity())
    assert "sk-" not in identity
    assert "KEY" not in identity
    assert "127.0.0.1" not in identity


def test_the_identity_of_an_engine() -> None:
    assert server().identity() == {"backend": "openai", "model": None, "served_model": "smollm2",
                                   "dialect": "vllm"}  # fmt: skip
    assert DEFAULT.identity() == {"backend": "transformers", "model": None}


def test_another_engines_runs_are_cached_apart(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert runs_folder(runs) == runs
    assert runs_folder(runs, DEFAULT) == runs
    assert runs_folder(runs, server()) == runs / "openai"


# -- what an engine is ---------------------------------------------------------------------------


def test_the_engine_kind_of_a_server_and_of_the_in_process_engine() -> None:
    remote = engine_kind(EngineConfig(backend="openai", remote=SERVER))  # nothing is sent
    assert remote.logprobs_after_mask is True
    assert remote.metadata() == {"name": "openai", "logprobs_after_mask": True,
                                 "served_model": "smollm2"}  # fmt: skip
    local = engine_kind(None)  # built to be looked at: no weights load
    assert local.default
    assert local.in_process
    assert local.metadata() == {"name": "transformers", "logprobs_after_mask": False,
                                "served_model": None}  # fmt: skip


class ServerEngineDouble:
    """A test double of a server's engine: it learns its served model on ``ready`` and answers
    every request with a null quantity (log-probabilities taken after the mask, as vLLM's)."""

    name = "server_double"
    built: list[ServerEngineDouble] = []

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.capabilities = EngineCapabilities(token_logprobs=True, logprobs_after_mask=True)
        self.served_model = config.remote.served_model
        self.requests = 0
        self.closed = False
        ServerEngineDouble.built.append(self)

    async def ready(self) -> None:
        if self.served_model is None:
            self.served_model = "double-model"

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        await self.ready()

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        self.requests += len(requests)
        text = '{"value": null, "unit": null}'
        return [Generation(text, "stop", token_logprobs=(-0.2,) * 8, token_entropies=(0.3,) * 8,
                           forced=(False,) * 8) for _ in requests]  # fmt: skip

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def server_double(monkeypatch: pytest.MonkeyPatch) -> type[ServerEngineDouble]:
    real = runs_module.build_engine

    def build(config: EngineConfig | None = None) -> Any:
        if config is not None and config.backend == ServerEngineDouble.name:
            return ServerEngineDouble(config)
        return real(config)

    monkeypatch.setattr(runs_module, "build_engine", build)
    ServerEngineDouble.built = []
    return ServerEngineDouble


def test_a_server_without_a_served_model_is_asked_for_it(
    server_double: type[ServerEngineDouble],
) -> None:
    kind = engine_kind(EngineConfig(backend="server_double", remote={"base_urls": ["http://x"]}))
    assert kind.served_model == "double-model"
    assert kind.identity()["served_model"] == "double-model"
    assert [e.closed for e in server_double.built] == [True]


# -- aau calibrate --engine ----------------------------------------------------------------------


@pytest.mark.usefixtures("torch_threads")
def test_another_engine_fits_its_own_artifact(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path, engine=server())
    code, printed, err = calibrate(
        "--data", str(data), "--units", str(UNITS_DIR), "--report", "--json",
        "--engine", "openai", "--base-url", "http://127.0.0.1:9", "--served-model", "smollm2",
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert f"extract_quantity: cached runs are current ({data / 'runs' / 'openai'}" in err
    artifact = data / "calibrator-openai.pt"
    assert f"-> {artifact}; validation" in printed
    calibrator = load_calibrator(artifact)
    assert calibrator.metadata["engine"] == {"name": "openai", "logprobs_after_mask": True,
                                             "served_model": "smollm2"}  # fmt: skip
    assert calibrator.logprobs_after_mask is True
    summary = json.loads((data / "calibrator-openai.json").read_text(encoding="utf-8"))
    assert summary["metadata"]["engine"] == calibrator.metadata["engine"]
    assert not (data / "calibrator.pt").exists()  # the default artifact is another engine's
    assert not (data / "calibrator.json").exists()
    assert not (data / "reliability.png").exists()
    written = re.search(r"^reliability diagram: (.+)$", printed, re.MULTILINE)
    if written:  # matplotlib installed
        assert Path(written.group(1)) == data / "reliability-openai.png"


@pytest.mark.usefixtures("torch_threads")
def test_the_engine_can_come_from_a_settings_file(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path, engine=server(dialect="sglang"))
    settings = tmp_path / "engine.yaml"
    settings.write_text(yaml.safe_dump({"backend": "openai", "remote": {**SERVER,
                                        "dialect": "sglang"}}), encoding="utf-8")  # fmt: skip
    code, _, err = calibrate("--data", str(data), "--units", str(UNITS_DIR),
                             "--engine-config", str(settings), capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert load_calibrator(data / "calibrator-openai.pt").logprobs_after_mask is True


@pytest.mark.usefixtures("torch_threads")
def test_the_default_engines_runs_do_not_pass_for_another_engines(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path)  # the default engine's runs only
    (data / "runs" / "openai").mkdir()
    shutil.copy(data / "runs" / "extract_quantity.jsonl.gz", data / "runs" / "openai")
    config = load_config(data / "config.yaml")
    unit = load_unit(UNITS_DIR, "extract_quantity")
    assert is_current(unit, config, data / "runs")
    assert not is_current(unit, config, data / "runs" / "openai", server())


@pytest.mark.usefixtures("torch_threads")
def test_the_default_artifact_records_its_engine(
    elsewhere: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path)
    code, _, err = calibrate("--data", str(data), "--units", str(UNITS_DIR), capsys=capsys)
    assert code == 0, err
    calibrator = load_calibrator(data / "calibrator.pt")
    assert calibrator.metadata["engine"] == {"name": "transformers", "logprobs_after_mask": False,
                                             "served_model": None}  # fmt: skip
    assert calibrator.logprobs_after_mask is False


def test_a_server_address_for_the_in_process_engine_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = calibrate("--base-url", "http://127.0.0.1:9", capsys=capsys)
    assert code == 2
    assert out == ""
    assert "--base-url and --served-model name a server" in err
    assert "--engine openai" in err


def test_an_unknown_engine_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = synthetic_data(tmp_path)
    code, _, err = calibrate("--data", str(data), "--units", str(UNITS_DIR), "--engine",
                             "no_such_engine", capsys=capsys)  # fmt: skip
    assert code == 2
    assert "Unknown engine 'no_such_engine'" in err
    assert "Traceback" not in err


# -- runs built with another engine --------------------------------------------------------------


def small_units(root: Path, texts: int = 40) -> Path:
    """``extract_quantity`` with its first ``texts`` annotated texts, in a folder of its own."""
    units = root / "units"
    units.mkdir()
    shutil.copy(UNITS_DIR / "extract_quantity.yaml", units)
    lines = (UNITS_DIR / "extract_quantity.annotated.jsonl").read_text(encoding="utf-8")
    kept = lines.splitlines()[:texts]
    (units / "extract_quantity.annotated.jsonl").write_text("\n".join(kept) + "\n", "utf-8")
    return units


def small_data_folder(root: Path) -> Path:
    data = root / "data"
    data.mkdir()
    settings = small_settings(version=3, chunk=8, epochs=20, patience=5)
    (data / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    return data


@pytest.mark.usefixtures("torch_threads")
def test_runs_made_with_another_engine_are_cached_apart_with_its_identity(
    tmp_path: Path, server_double: type[ServerEngineDouble], capsys: pytest.CaptureFixture[str]
) -> None:
    units, data = small_units(tmp_path), small_data_folder(tmp_path)
    engine = EngineConfig(backend="server_double", remote={"base_urls": ["http://double"]})
    lines: list[str] = []
    calibrate_fn(data, units=units, engine=engine, print_fn=lines.append)
    err = capsys.readouterr().err
    cached = data / "runs" / "server_double" / "extract_quantity.jsonl.gz"
    assert "extract_quantity: 40 texts in" in err
    assert str(cached) in err
    assert not (data / "runs" / "extract_quantity.jsonl.gz").exists()
    with gzip.open(cached, "rt", encoding="utf-8") as records:
        header = json.loads(next(records))
        first = json.loads(next(records))
    assert header["engine"] == {"backend": "server_double", "model": None,
                                "served_model": "double-model", "dialect": "vllm"}  # fmt: skip
    primary = next(r for r in first["rows"] if r["path"] == "primary")
    assert primary["generation"]["logprobs"] == [-0.2] * 8
    assert {r["path"] for r in first["rows"]} >= {"primary", "heuristic"}
    runner_engines = [e for e in server_double.built if e.requests]
    assert [e.requests for e in runner_engines] == [40]
    assert runner_engines[0].closed
    calibrator = load_calibrator(data / "calibrator-server_double.pt")
    assert calibrator.metadata["engine"] == {"name": "server_double", "logprobs_after_mask": True,
                                             "served_model": "double-model"}  # fmt: skip

    calibrate_fn(data, units=units, engine=engine, print_fn=lines.append)  # from the cache now
    assert "extract_quantity: cached runs are current" in capsys.readouterr().err
    assert sum(e.requests for e in server_double.built) == 40
