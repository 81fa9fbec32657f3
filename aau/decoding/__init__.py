"""Constrained decoding: JSON Schema -> compiled constraint -> per-step logits mask."""

from aau.decoding.constraints import CompiledConstraint, ConstraintCompiler
from aau.decoding.json_schema import ENFORCED_KEYWORDS, bound_schema, unsupported_keywords

__all__ = [
    "ENFORCED_KEYWORDS",
    "CompiledConstraint",
    "ConstraintCompiler",
    "bound_schema",
    "unsupported_keywords",
]
