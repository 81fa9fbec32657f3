"""Constrained decoding: JSON Schema -> compiled constraint -> per-step logits mask."""

from aau.decoding.base import CONSTRAINT_BACKENDS, ConstraintBackend
from aau.decoding.constraints import (
    CompiledConstraint,
    ConstraintCompiler,
    TokenMask,
    schema_compile_problem,
)
from aau.decoding.json_schema import ENFORCED_KEYWORDS, bound_schema, unsupported_keywords

__all__ = [
    "CONSTRAINT_BACKENDS",
    "ENFORCED_KEYWORDS",
    "CompiledConstraint",
    "ConstraintBackend",
    "ConstraintCompiler",
    "TokenMask",
    "bound_schema",
    "schema_compile_problem",
    "unsupported_keywords",
]
