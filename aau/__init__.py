"""AAU: atomic analysis units.

Declare a unit in YAML (output schema, prompt, fallbacks, policy), load it, and run it over
text on a shared engine::

    import aau
    pipeline = aau.Pipeline([aau.load_unit("units/extract_price.yaml")])
    result = pipeline.run("Total due: EUR 1,250.00")
    result["extract_price"].output   # {"amount": 1250.0, "currency": "EUR"}
"""

from aau.engines import Engine, EngineConfig, RemoteSettings, build_engine, engine_configs
from aau.errors import (
    AAUError,
    CalibrationError,
    EngineError,
    EngineOverloaded,
    EngineTimeout,
    EngineUnavailable,
    FallbacksExhausted,
    InputError,
    SpecError,
    TermDictionaryError,
    UnitRunError,
    UnknownTenant,
    ValidationFailed,
)
from aau.ingest import Document, load_document
from aau.pipeline import Pipeline, PipelineResult, UnitResult, load_unit, run
from aau.spec.model import UnitSpec
from aau.terms import TermDictionary, TermHit, TermSet, TermStore, load_dictionary

__all__ = [
    "AAUError",
    "CalibrationError",
    "Document",
    "Engine",
    "EngineConfig",
    "EngineError",
    "EngineOverloaded",
    "EngineTimeout",
    "EngineUnavailable",
    "FallbacksExhausted",
    "InputError",
    "Pipeline",
    "PipelineResult",
    "RemoteSettings",
    "SpecError",
    "TermDictionary",
    "TermDictionaryError",
    "TermHit",
    "TermSet",
    "TermStore",
    "UnitResult",
    "UnitRunError",
    "UnitSpec",
    "UnknownTenant",
    "ValidationFailed",
    "build_engine",
    "engine_configs",
    "load_dictionary",
    "load_document",
    "load_unit",
    "run",
]
