"""Engine configuration and the registry of named backends.

``ENGINES`` holds the backends by name: each is declared in the ``aau.engines`` entry-point
group (the shipped ``transformers`` engine in AAU's own ``pyproject.toml``), so configuration
names one and nothing here imports it. The engine is configuration, not code: the same
``EngineConfig`` comes from a YAML file, environment variables (``AAU_ENGINE``, ``AAU_MODEL``,
``AAU_DEVICE``, ``AAU_DTYPE``, ``AAU_THREADS``, ``AAU_MAX_BATCH_SIZE``, ``AAU_PREFIX_CACHE_MB``,
``AAU_PREFIX_DISK_MB``, ``AAU_CACHE_DIR``, ``AAU_TERM_MERGING``; for a remote engine
``AAU_BASE_URLS`` (comma-separated), ``AAU_SERVED_MODEL``, ``AAU_DIALECT``) or CLI flags.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aau.decoding.base import CONSTRAINT_BACKENDS
from aau.engines.base import Engine
from aau.engines.resilience import BreakerSettings, RetryPolicy
from aau.errors import EngineUnavailable, SpecError
from aau.registry import Registry, UnknownName
from aau.spec.loader import line_of, read_yaml_file
from aau.spec.model import NAME_PATTERN

__all__ = [
    "ENGINES",
    "EngineConfig",
    "RemoteSettings",
    "available_engines",
    "build_engine",
    "engine_configs",
]

ENGINES: Registry[Callable[[EngineConfig], Engine]] = Registry("engine", "aau.engines")
"""Engine factories (an engine class, or a function of the config) by backend name."""


class RemoteSettings(BaseModel):
    """Where an OpenAI-compatible server is and how to talk to it (``backend: openai``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_urls: tuple[str, ...] = ()
    """Replicas serving the same model, e.g. ``http://10.0.0.5:8000`` (the ``/v1`` is added)."""
    served_model: str | None = None
    """The model name the server knows; None asks the first replica (``GET /v1/models``)."""
    dialect: Literal["vllm", "sglang", "openai"] = "vllm"
    """What the server accepts beyond the OpenAI API: vLLM takes ``cache_salt`` (per-tenant
    prefix caches); SGLang and plain OpenAI servers get the common request only."""
    api_key_env: str = "AAU_API_KEY"
    """The environment variable holding the API key (never the key itself: configs get logged)."""
    max_in_flight: int = Field(32, ge=1, le=4096)
    """Requests sent to one replica at once; more wait in AAU's queue (their ``queue_ms``)."""
    request_timeout_s: float = Field(60.0, gt=0, le=3600)
    """The longest one HTTP attempt may take; the unit run's deadline bounds it too."""
    connect_timeout_s: float = Field(3.0, gt=0, le=600)
    top_logprobs: int = Field(5, ge=0, le=20)
    """Alternatives per token asked for; the token entropies are computed from them."""
    retry: RetryPolicy = RetryPolicy()
    breaker: BreakerSettings = BreakerSettings()

    @field_validator("base_urls", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return (
            tuple(u.strip() for u in value.split(",") if u.strip())
            if isinstance(value, str)
            else value
        )

    @field_validator("base_urls")
    @classmethod
    def _http_urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for url in value:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"base URL {url!r} must start with http:// or https://")
        return tuple(u.rstrip("/").removesuffix("/v1") for u in value)


class EngineConfig(BaseModel):
    """How to build the shared engine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = "transformers"
    """Registered engine name."""
    model: str | None = None
    """HF model folder or ``.gguf`` file; None means the embedded default model."""
    device: str = "cpu"
    """``cpu``, ``cuda``, ``cuda:1``… or ``auto``."""
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = "float32"
    """float32 by default: there a request's greedy answer does not depend on what else is in
    its batch. ``auto`` is the fastest the device computes natively (bfloat16 on CUDA or on a
    CPU with AVX512-BF16 or AMX, else float32: ``aau.engines.models.device_dtype``), at the
    cost of that guarantee (``benchmarks/RESULTS.md``, "Engine precision")."""
    threads: int | None = None
    """CPU threads for torch; None keeps torch's default."""
    constraint_backend: str = "xgrammar"
    """A registered constraint backend (``aau.decoding.CONSTRAINT_BACKENDS``): ``xgrammar``
    (fastest to compile) or ``outlines_core``."""
    cache_dir: str | None = None
    """Where converted weights and compiled schemas are cached; default ``~/.cache/aau``."""
    max_batch_size: int = Field(64, ge=1, le=512)
    """Rows decoded together; 1 runs requests one at a time."""
    max_batch_tokens: int = Field(32768, ge=1)
    """Positions the rows in flight may reserve together (each its prompt plus its token
    budget): what bounds the batch's KV memory (float32 SmolLM2: 45 KiB a position). A request
    that would pass it waits; one alone is admitted whatever its size."""
    prefill_chunk_tokens: int = Field(256, ge=0)
    """A new prompt part longer than this is prefilled this many tokens at a time, a decode
    step of the running rows after each chunk, so a long document does not stall them; 0
    prefills every prompt in one forward."""
    prefix_cache_mb: int = Field(1024, ge=0)
    """Memory cap of the prompt-prefix KV cache; 0 turns it off."""
    prefix_disk_mb: int = Field(256, ge=0)
    """Disk cap of units' static prompt prefixes kept under ``cache_dir/prefixes`` for the
    next process (``aau.engines.prefix_store``; 12 MiB a unit on the embedded model); 0, or
    the prefix cache off, keeps none."""
    jump_forward_positions: int = Field(16, ge=0)
    """Jump-forward: text a row's schema forces (``{"amount``, ``,"currency":"``) is queued
    without a step of the model's choice, and fed in one forward with the token before it while
    the batch's rows times that width stay within this many positions (on a CPU, a forward of so
    few costs about one position's; on a GPU far more fit); past it, a forced token a step. 0
    turns jump-forward off: every token is a step the model chooses."""
    term_merging: bool = False
    """Read each tenant's dictionary terms as single merged tokens (in-process engine only).
    Off by default: on the shipped units it did not make extraction more accurate
    (``benchmarks/RESULTS.md``, "Term layer"); terms still annotate prompts and features."""
    ready_timeout_s: float = Field(900.0, gt=0)
    """How long a unit run waits for the engine to be ready (weights loaded, a server healthy).
    That wait is reported apart (``ready_ms``) and not charged to the run's ``timeout_s``."""
    remote: RemoteSettings = RemoteSettings()
    """The servers of an OpenAI-compatible engine (``backend: openai``)."""

    @field_validator("constraint_backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in CONSTRAINT_BACKENDS:
            available = ", ".join(CONSTRAINT_BACKENDS.names())
            raise ValueError(f"unknown constraint backend {value!r}. Available: {available}")
        return value

    @classmethod
    def from_sources(
        cls,
        file: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> EngineConfig:
        """Merge a YAML file, then ``AAU_*`` environment variables, then explicit overrides."""
        values: dict[str, Any] = {}
        lines: dict[Any, int] = {}
        if file is not None:
            data, lines, _ = read_yaml_file(Path(file))
            values.update(data or {})
        env = os.environ if env is None else env
        for key in ("backend", "model", "device", "dtype", "threads", "constraint_backend",
                    "max_batch_size", "max_batch_tokens", "prefill_chunk_tokens", "prefix_cache_mb",
                    "prefix_disk_mb", "jump_forward_positions", "cache_dir",
                    "term_merging"):  # fmt: skip
            name = "AAU_ENGINE" if key == "backend" else f"AAU_{key.upper()}"
            if env.get(name):
                values[key] = env[name]
        remote = values.get("remote") or {}
        if isinstance(remote, dict):  # anything else is reported by validation below
            for key in ("base_urls", "served_model", "dialect"):
                if env.get(f"AAU_{key.upper()}"):
                    remote = {**remote, key: env[f"AAU_{key.upper()}"]}
            if remote:
                values["remote"] = remote
        for key, value in overrides.items():
            if value is None:
                continue
            if key == "remote" and isinstance(value, dict) and isinstance(values.get(key), dict):
                value = {**values[key], **value}  # a flag changes one remote setting, not all
            values[key] = value
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise _located(exc, str(file) if file else "<engine config>", lines) from None


def _located(
    exc: ValidationError, file: str, lines: dict[Any, int], within: tuple[str, ...] = ()
) -> SpecError:
    """The first problem of an engine config as a located error (``within``: its key path)."""
    err = exc.errors(include_url=False)[0]
    loc = (*within, *err["loc"])
    return SpecError(err["msg"], file=file, line=line_of(lines, loc),
                     field=".".join(map(str, loc)), check="S060")  # fmt: skip


_ENGINE_NAME = re.compile(NAME_PATTERN)


def engine_configs(file: str | Path) -> dict[str, EngineConfig]:
    """Named engines from a YAML mapping (``glm5: {backend: openai, remote: {...}}``).

    Units name them in their ``engines`` chain. ``AAU_*`` variables do not apply here: each
    entry says what it is.

    Raises:
        SpecError: the file is not such a mapping, or an entry is not a valid engine config.
    """
    data, lines, _ = read_yaml_file(Path(file))
    if not isinstance(data, dict) or not data:
        raise SpecError("an engines file maps engine names to engine settings",
                        file=str(file), line=1, check="S060")  # fmt: skip
    configs = {}
    for name, values in data.items():
        if not isinstance(name, str) or not _ENGINE_NAME.match(name):
            raise SpecError(f"engine name {name!r} must match {_ENGINE_NAME.pattern}",
                            file=str(file), line=line_of(lines, (name,)), check="S060")  # fmt: skip
        try:
            configs[name] = EngineConfig.model_validate(values or {})
        except ValidationError as exc:
            raise _located(exc, str(file), lines, (name,)) from None
    return configs


def available_engines() -> list[str]:
    """Names of every registered engine, sorted."""
    return ENGINES.names()


def build_engine(config: EngineConfig | None = None) -> Engine:
    """The engine ``config`` names (default: transformers with the embedded model)."""
    config = config or EngineConfig.from_sources()
    try:
        factory = ENGINES.get(config.backend)
    except UnknownName as exc:
        raise EngineUnavailable(
            f"Unknown engine {config.backend!r}. Available: {', '.join(exc.available)}."
        ) from None
    return factory(config)
