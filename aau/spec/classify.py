"""What a classification answer may hold: booleans, string enums and arrays of string enums.

A classify unit (``kind: classify``) answers with classes only, so that every non-model path can
answer it from a fixed list of values: a linear classifier predicts one of them per field (or a
set of them for an array), keyword rules name them. ``class_fields`` reads those fields out of
the unit's output schema, with the problems of any property that is none of the three (S070).
Its problems are ``(location, message, code)`` as ``aau.spec.model.check_unit`` yields them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CLASS_FIELD", "MAX_CLASSES", "ClassField", "class_fields"]

CLASS_FIELD = "S070"
"""An output property of a classify unit that is no boolean, string enum or array of them."""
MAX_CLASSES = 256
"""Values one class field may take (an enum's members, an array's item members)."""

Problem = tuple[tuple[str | int, ...], str, str]


@dataclass(frozen=True, slots=True)
class ClassField:
    """One output field a classifier predicts.

    Attributes:
        name: the output property.
        kind: ``choice`` (one value: a boolean or an enum member) or ``labels`` (an array of
            enum members, each present or not: multi-label).
        values: the values it may take, in schema order (``(False, True)`` for a boolean;
            ``None`` among them when the schema allows null).
    """

    name: str
    kind: Literal["choice", "labels"]
    values: tuple[Any, ...]


def _types(schema: Mapping[str, Any]) -> set[str]:
    kinds = schema.get("type", [])
    return {kinds} if isinstance(kinds, str) else set(kinds) if isinstance(kinds, list) else set()


def _enum_of(schema: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The members of a string enum (null allowed), or None when ``schema`` is none."""
    members = schema.get("enum")
    if not isinstance(members, list) or not members:
        return None
    if not all(m is None or isinstance(m, str) for m in members):
        return None
    if not _types(schema) <= {"string", "null"}:
        return None
    return tuple(dict.fromkeys(members))


def _field(name: str, schema: Any) -> ClassField | str:
    """The class field ``schema`` declares, or why it declares none."""
    if not isinstance(schema, Mapping):
        return "must be a schema object"
    types = _types(schema)
    if "boolean" in types and types <= {"boolean", "null"} and "enum" not in schema:
        return ClassField(name, "choice", (False, True) + ((None,) if "null" in types else ()))
    members = _enum_of(schema)
    if members is not None:
        return ClassField(name, "choice", members)
    if types == {"array"} and isinstance(schema.get("items"), Mapping):
        items = _enum_of(schema["items"])
        if items is not None:
            return ClassField(name, "labels", items)
    return "is no boolean, string enum or array of string enums (type: array, items: {enum: …})"


def class_fields(output: Mapping[str, Any]) -> tuple[dict[str, ClassField], list[Problem]]:
    """The class fields of an output schema, and the problems of the properties that are none.

    Args:
        output: the unit's output JSON Schema (an object with properties).

    Returns:
        The class fields by name, in schema order, and one located problem (S070) per property
        that is not one, or that has more than ``MAX_CLASSES`` values.
    """
    fields: dict[str, ClassField] = {}
    problems: list[Problem] = []
    properties = output.get("properties")
    if not isinstance(properties, Mapping):
        return fields, problems  # the schema checks report it (S012)
    for name, schema in properties.items():
        found = _field(name, schema)
        loc: tuple[str | int, ...] = ("output", "properties", name)
        if isinstance(found, str):
            problems.append((loc, f"field {name!r} {found}: a classify answer holds classes only",
                             CLASS_FIELD))  # fmt: skip
        elif len(found.values) > MAX_CLASSES:
            problems.append((loc, f"field {name!r} has {len(found.values)} values; at most "
                             f"{MAX_CLASSES} can be classified", CLASS_FIELD))  # fmt: skip
        else:
            fields[name] = found
    return fields, problems
