"""Remote engine settings from files, the environment and flags; named engines; one shared load."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from aau import EngineConfig, build_engine
from aau.engines.local import TransformersEngine
from aau.engines.registry import engine_configs
from aau.engines.remote import OpenAIEngine
from aau.errors import EngineUnavailable, SpecError


def test_remote_settings_merge_file_environment_and_flags(tmp_path: Path) -> None:
    file = tmp_path / "engine.yaml"
    file.write_text(
        "backend: openai\nremote:\n  base_urls: [http://10.0.0.5:8000/v1]\n"
        "  dialect: sglang\n  max_in_flight: 4\n",
        encoding="utf-8",
    )
    env = {"AAU_SERVED_MODEL": "glm-5"}

    config = EngineConfig.from_sources(
        file, env=env, remote={"base_urls": ["http://a:1", "http://b:2/"]}
    )

    assert config.backend == "openai"
    assert config.remote.base_urls == ("http://a:1", "http://b:2")  # the flag over the file
    assert config.remote.served_model == "glm-5"  # environment
    assert (config.remote.dialect, config.remote.max_in_flight) == ("sglang", 4)  # file kept
    assert EngineConfig.from_sources(file, env={}).remote.base_urls == ("http://10.0.0.5:8000",)


def test_base_urls_from_the_environment_are_comma_separated() -> None:
    config = EngineConfig.from_sources(env={"AAU_ENGINE": "openai",
                                            "AAU_BASE_URLS": "http://a:1, http://b:2"})  # fmt: skip
    assert config.remote.base_urls == ("http://a:1", "http://b:2")


@pytest.mark.parametrize(("yaml", "field"), [
    ("remote:\n  base_urls: [ftp://x]\n", "remote.base_urls"),
    ("remote:\n  dialect: tgi\n", "remote.dialect"),
    ("remote:\n  retry: {attempts: 0}\n", "remote.retry.attempts"),
    ("remote: 3\n", "remote"),
])  # fmt: skip
def test_bad_remote_settings_are_located(tmp_path: Path, yaml: str, field: str) -> None:
    file = tmp_path / "engine.yaml"
    file.write_text("backend: openai\n" + yaml, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        EngineConfig.from_sources(file, env={})
    assert caught.value.field == field
    assert caught.value.line is not None


def test_the_openai_engine_needs_a_server() -> None:
    with pytest.raises(EngineUnavailable, match="remote.base_urls"):
        build_engine(EngineConfig(backend="openai"))


def test_the_api_key_comes_from_the_environment_and_is_not_in_the_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GLM_KEY", "sk-secret")
    remote = {"base_urls": ["http://a:1"], "api_key_env": "GLM_KEY"}
    config = EngineConfig(backend="openai", remote=remote)
    engine = build_engine(config)
    assert isinstance(engine, OpenAIEngine)
    assert engine._headers() == {"Authorization": "Bearer sk-secret"}
    assert "sk-secret" not in config.model_dump_json()
    assert "sk-secret" not in repr(engine.__dict__.get("config"))


def test_named_engines_come_from_a_yaml_mapping(tmp_path: Path) -> None:
    file = tmp_path / "engines.yaml"
    file.write_text(
        "glm5:\n  backend: openai\n  remote: {base_urls: ['http://glm:8000']}\nlocal: {}\n",
        encoding="utf-8",
    )
    configs = engine_configs(file)
    assert configs["glm5"].remote.base_urls == ("http://glm:8000",)
    assert configs["local"] == EngineConfig()


@pytest.mark.parametrize(("yaml", "line"), [
    ("- glm5\n", 1),
    ("glm5:\n  backend: openai\n  remote: {dialect: x}\n", 3),
    ("'GLM 5': {}\n", 1),
])  # fmt: skip
def test_a_bad_engines_file_is_located(tmp_path: Path, yaml: str, line: int) -> None:
    file = tmp_path / "engines.yaml"
    file.write_text(yaml, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        engine_configs(file)
    assert caught.value.line == line


def test_runs_waiting_for_the_model_share_one_load(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = TransformersEngine(EngineConfig())
    loads, threads = [], set()
    release = threading.Event()

    def load() -> None:  # a stand-in for the weights (this test is about the waiting)
        loads.append(1)
        threads.add(threading.current_thread().name)
        release.wait(5)
        engine.model = object()

    monkeypatch.setattr(engine, "load", load)

    async def scenario() -> None:
        waiting = [asyncio.ensure_future(engine.ready()) for _ in range(24)]
        await asyncio.sleep(0.2)
        release.set()
        await asyncio.gather(*waiting)

    asyncio.run(scenario())
    assert loads == [1]
    assert threads == {"aau-engine-load"}
