"""Engine configuration and the registry of named backends.

``ENGINES`` holds the backends by name: each is declared in the ``aau.engines`` entry-point
group (the shipped ``transformers`` engine in AAU's own ``pyproject.toml``), so configuration
names one and nothing here imports it. The engine is configuration, not code: the same
``EngineConfig`` comes from a YAML file, environment variables (``AAU_ENGINE``, ``AAU_MODEL``,
``AAU_DEVICE``, ``AAU_DTYPE``, ``AAU_THREADS``, ``AAU_MAX_BATCH_SIZE``, ``AAU_PREFIX_CACHE_MB``,
``AAU_CACHE_DIR``, ``AAU_TERM_MERGING``…) or CLI flags.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aau.decoding.base import CONSTRAINT_BACKENDS
from aau.engines.base import Engine
from aau.errors import EngineUnavailable, SpecError
from aau.registry import Registry, UnknownName
from aau.spec.loader import line_of, read_yaml_file

__all__ = ["ENGINES", "EngineConfig", "available_engines", "build_engine"]

ENGINES: Registry[Callable[[EngineConfig], Engine]] = Registry("engine", "aau.engines")
"""Engine factories (an engine class, or a function of the config) by backend name."""


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
    threads: int | None = None
    """CPU threads for torch; None keeps torch's default."""
    constraint_backend: str = "xgrammar"
    """A registered constraint backend (``aau.decoding.CONSTRAINT_BACKENDS``): ``xgrammar``
    (fastest to compile) or ``outlines_core``."""
    cache_dir: str | None = None
    """Where converted weights and compiled schemas are cached; default ``~/.cache/aau``."""
    max_batch_size: int = Field(16, ge=1, le=512)
    """Rows decoded together; 1 runs requests one at a time."""
    prefix_cache_mb: int = Field(1024, ge=0)
    """Memory cap of the prompt-prefix KV cache; 0 turns it off."""
    term_merging: bool = False
    """Read each tenant's dictionary terms as single merged tokens (in-process engine only).
    Off by default: on the shipped units it did not make extraction more accurate
    (``benchmarks/RESULTS.md``, "Term layer"); terms still annotate prompts and features."""

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
                    "max_batch_size", "prefix_cache_mb", "cache_dir", "term_merging"):  # fmt: skip
            name = "AAU_ENGINE" if key == "backend" else f"AAU_{key.upper()}"
            if env.get(name):
                values[key] = env[name]
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            raise SpecError(
                err["msg"],
                file=str(file) if file else "<engine config>",
                line=line_of(lines, tuple(err["loc"])),
                field=".".join(map(str, err["loc"])),
                check="S060",
            ) from None


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
