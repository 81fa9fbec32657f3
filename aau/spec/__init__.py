"""Unit specs: the pydantic model of unit YAML, its safe loader and its JSON Schema."""

from aau.spec.model import UnitSpec

__all__ = ["UnitSpec"]
