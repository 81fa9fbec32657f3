"""What every fallback kind checks alike about its ``fields``: the schema, normalizers, enums.

A kind's fields each fill one output field through a named normalizer. At load, each kind
reports, with its own check codes, a field that is not in the output schema and a normalizer
that is neither one of the unit's tables nor a registered one; then, with codes shared by every
kind, an enum value of the output field that the normalizer can never produce (S043): the path
could never give that answer, however the text reads. The unit's tables are checked once for
all kinds (``check_tables``): a name that shadows a registered normalizer (S041), a base that is
not a registered normalizer (S042); ``aau validate`` notes a table no field names
(``unused_table_notes``).

A table produces exactly the values it maps words to (and, with ``unknown: keep``, whatever its
base keeps). A function normalizer canonicalises, so the values it produces are its fixed
points: an enum value ``v`` is reachable when the normalizer reads ``v``'s own text as ``v``.
Values compare as the schema's ``enum`` does: numbers by value (``1`` is ``1.0``), booleans
apart from numbers, texts exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from aau.errors import SpecError
from aau.fallbacks.normalize import NORMALIZERS, TableNormalizer, normalizer_for
from aau.registry import UnknownName
from aau.spec.loader import LineMap, line_of, read_yaml_file
from aau.spec.model import Issue, UnitSpec

__all__ = [
    "ENUM_UNREACHABLE",
    "TABLE_BAD_BASE",
    "TABLE_SHADOWS",
    "FieldCodes",
    "FieldUse",
    "check_fields",
    "check_tables",
    "enum_members",
    "field_normalizers",
    "unused_table_notes",
]

TABLE_SHADOWS = "S041"
"""A normalizer table named like a registered normalizer."""
TABLE_BAD_BASE = "S042"
"""A normalizer table whose ``base`` is not a registered normalizer."""
ENUM_UNREACHABLE = "S043"
"""An enum value of an output field that the field's normalizer can never produce."""

_MAX_MEMBERS = 1000
"""Enum values checked per field (each costs a normalizer call)."""


class FieldCodes(NamedTuple):
    """The check codes one kind reports for its fields (kept from before they were shared)."""

    not_in_schema: str
    """The field is not a property of the output schema (heuristic S032, crf S057)."""
    unknown_normalizer: str
    """The normalizer is no table of the unit and no registered one (heuristic S034, crf S059)."""


class FieldUse(NamedTuple):
    """How a kind fills one field: through which normalizer, and whether from the text."""

    normalize: str
    """The normalizer's name."""
    reads_text: bool = True
    """Whether the normalizer is applied to matched text (a heuristic field without a group
    is a constant and is not)."""
    constant: Any = None
    """A value the field takes without the normalizer (a heuristic field's ``value``)."""


def field_normalizers(fields: Mapping[str, Any], unit: UnitSpec | None) -> dict[str, Any]:
    """Output field -> the function of its ``normalize`` name in ``unit`` (resolved once)."""
    return {field: normalizer_for(mapping.normalize, unit) for field, mapping in fields.items()}


def check_tables(unit: UnitSpec) -> Iterator[Issue]:
    """Problems of the unit's normalizer tables, located from the unit's root (S041, S042)."""
    for name, table in unit.normalizers.items():
        loc: tuple[str | int, ...] = ("normalizers", name)
        if name in NORMALIZERS:
            yield (
                loc,
                f"normalizer table {name!r} shadows the registered normalizer {name!r}; "
                "rename the table (fields name tables and registered normalizers alike)",
                TABLE_SHADOWS,
            )
        if table.base in unit.normalizers:
            yield (
                (*loc, "base"),
                f"base {table.base!r} is a table of this unit; a table's base must be a "
                f"registered normalizer. Available: {', '.join(NORMALIZERS.names())}",
                TABLE_BAD_BASE,
            )
        elif table.base not in NORMALIZERS:
            yield (
                (*loc, "base"),
                f"unknown base normalizer {table.base!r}. "
                f"Available: {', '.join(NORMALIZERS.names())}",
                TABLE_BAD_BASE,
            )


def unused_table_notes(unit: UnitSpec) -> list[str]:
    """``aau validate`` notes: each table no fallback field names (it changes nothing).

    Each is ``<file>:<line>: normalizers.<name>: …`` (``<unit>`` and no line for a unit
    without a file).
    """
    named = {
        getattr(mapping, "normalize", None)
        for fallback in unit.fallbacks
        for mapping in getattr(fallback, "fields", {}).values()
    }
    unused = [name for name in unit.normalizers if name not in named]
    if not unused:
        return []
    lines: LineMap = {}
    if unit.source is not None:
        try:
            lines = read_yaml_file(unit.source)[1]
        except SpecError:  # the file changed or went away since loading: no line numbers
            lines = {}
    where = str(unit.source) if unit.source else "<unit>"
    notes = []
    for name in unused:
        line = line_of(lines, ("normalizers", name))
        head = f"{where}:{line}" if line else where
        notes.append(f"{head}: normalizers.{name}: no fallback field names this table, so it "
                     "changes nothing")  # fmt: skip
    return notes


def check_fields(
    unit: UnitSpec,
    fields: Mapping[str, FieldUse],
    codes: FieldCodes,
    own: Callable[[str], Iterable[Issue]] | None = None,
) -> Iterator[Issue]:
    """Problems of a kind's ``fields``, located relative to its declaration.

    Args:
        unit: the unit the declaration is in.
        fields: output field -> how the kind fills it.
        codes: the kind's codes for a field not in the schema and an unknown normalizer.
        own: the kind's own checks of one field (a heuristic's group, a CRF's label), run
            after the schema check.
    """
    properties = unit.output.get("properties", {})
    for field, use in fields.items():
        loc: tuple[str | int, ...] = ("fields", field)
        if field not in properties:
            yield (
                loc,
                f"field {field!r} is not in the output schema. Available: {', '.join(properties)}",
                codes.not_in_schema,
            )
        if own is not None:
            yield from own(field)
        table = unit.normalizers.get(use.normalize)
        if table is not None and table.base not in NORMALIZERS:
            continue  # a table with a broken base: check_tables reports it (S042)
        try:
            normalizer = normalizer_for(use.normalize, unit)
        except UnknownName:
            tables = ", ".join(unit.normalizers)
            yield (
                (*loc, "normalize"),
                f"unknown normalizer {use.normalize!r}. "
                f"Available: {', '.join(NORMALIZERS.names())}"
                + (f"; this unit's tables: {tables}" if tables else ""),
                codes.unknown_normalizer,
            )
            continue
        if use.reads_text and isinstance(properties.get(field), dict):
            for message in _unreachable(field, use, normalizer, properties[field]):
                yield (*loc, "normalize"), message, ENUM_UNREACHABLE


def enum_members(schema: Mapping[str, Any]) -> list[Any] | None:
    """The values an output field's schema enumerates; None when it enumerates none.

    ``enum`` and ``const``, also inside ``anyOf`` and ``oneOf`` branches.
    """
    found: list[Any] = []
    enumerated = False
    pending: list[tuple[Any, int]] = [(schema, 0)]
    while pending:
        node, depth = pending.pop()
        if not isinstance(node, Mapping) or depth > 8:
            continue
        if isinstance(node.get("enum"), list):
            enumerated = True
            found.extend(node["enum"])
        if "const" in node:
            enumerated = True
            found.append(node["const"])
        for keyword in ("anyOf", "oneOf"):
            branches = node.get(keyword)
            if isinstance(branches, list):
                pending.extend((branch, depth + 1) for branch in reversed(branches))
    return found if enumerated else None


def _same(a: Any, b: Any) -> bool:
    """Equal as a JSON Schema ``enum`` compares: numbers by value, booleans apart, texts exactly."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def _renderings(member: Any) -> list[str]:
    """The texts an enum value is written as (its own text first)."""
    if isinstance(member, str):
        return [member]
    texts = [json.dumps(member), str(member)]
    if isinstance(member, float) and member.is_integer():
        texts.append(str(int(member)))
    return list(dict.fromkeys(texts))


def _shown(value: Any) -> str:
    return "nothing" if value is None else repr(value)


def _unreachable(
    field: str, use: FieldUse, normalizer: Callable[[str], Any], schema: Mapping[str, Any]
) -> Iterator[str]:
    members = enum_members(schema)
    if not members:
        return
    scalars = [m for m in members if m is not None and isinstance(m, str | int | float | bool)]
    seen: list[Any] = []
    for member in scalars[:_MAX_MEMBERS]:
        if any(_same(member, other) for other in seen):
            continue
        seen.append(member)
        if use.constant is not None and _same(use.constant, member):
            continue
        where = f"enum value {member!r} of $.{field}"
        if isinstance(normalizer, TableNormalizer):
            if any(_same(member, value) for value in normalizer.values):
                continue
            if normalizer.keeps_unknown:
                got = _apply(normalizer, _renderings(member)[0])
                if _same(got, member):
                    continue
            kept = f", and its base {normalizer.table.base!r} does not keep it"
            yield (
                f"{where} can never be produced by normalizer table {normalizer.name!r} (no "
                f"word maps to it{kept if normalizer.keeps_unknown else ''}); add a word for it "
                "to the table"
            )
            continue
        readings = [(text, _apply(normalizer, text)) for text in _renderings(member)]
        if any(_same(got, member) for _, got in readings):
            continue
        text, got = readings[0]
        reads = (
            f"it fails on {text!r}: {got.error!r}"
            if isinstance(got, _Failure)
            else f"it reads {text!r} as {_shown(got)}"
        )
        yield (
            f"{where} can never be produced by normalizer {use.normalize!r} ({reads}); map it "
            "with a normalizers table"
        )


class _Failure(NamedTuple):
    error: Exception


def _apply(normalizer: Callable[[str], Any], text: str) -> Any:
    try:
        return normalizer(text)
    except Exception as exc:  # a third-party normalizer may raise: the value is then unreachable
        return _Failure(exc)
