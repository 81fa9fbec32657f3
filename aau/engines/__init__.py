"""Generation backends behind one small protocol."""

from aau.engines.base import Engine, EngineCapabilities, Generation, GenerationRequest, Timings
from aau.engines.registry import ENGINES, EngineConfig, available_engines, build_engine

__all__ = [
    "ENGINES",
    "Engine",
    "EngineCapabilities",
    "EngineConfig",
    "Generation",
    "GenerationRequest",
    "Timings",
    "available_engines",
    "build_engine",
]
