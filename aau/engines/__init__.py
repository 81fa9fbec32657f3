"""Generation backends behind one small protocol."""

from aau.engines.base import Engine, EngineCapabilities, Generation, GenerationRequest, Timings
from aau.engines.registry import (
    ENGINES,
    EngineConfig,
    RemoteSettings,
    available_engines,
    build_engine,
    engine_configs,
)
from aau.engines.resilience import BreakerSettings, RetryPolicy

__all__ = [
    "ENGINES",
    "BreakerSettings",
    "Engine",
    "EngineCapabilities",
    "EngineConfig",
    "Generation",
    "GenerationRequest",
    "RemoteSettings",
    "RetryPolicy",
    "Timings",
    "available_engines",
    "build_engine",
    "engine_configs",
]
