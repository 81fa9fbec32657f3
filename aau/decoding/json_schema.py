"""Which JSON-Schema keywords the decoder enforces, and bounding a schema for decoding.

The allow-list below was measured, not assumed: for each keyword, xgrammar's JSON-schema grammar
rejects a string that violates it (``tests/decoding/test_json_schema.py`` keeps that true). A
unit whose schema uses any other keyword is refused at load, because a keyword the decoder
ignores would be a promise the primary path silently breaks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

__all__ = ["ENFORCED_FORMATS", "ENFORCED_KEYWORDS", "bound_schema", "json_path_to_loc",
           "unsupported_keywords"]  # fmt: skip

ENFORCED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "enum", "const", "anyOf", "oneOf", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
})  # fmt: skip
"""Keywords that constrain generation."""

ENFORCED_FORMATS = frozenset({
    "date", "time", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
    "uri-reference", "uuid",
})  # fmt: skip
"""``format`` values xgrammar enforces (``regex``, for one, it accepts without checking)."""

ANNOTATION_KEYWORDS = frozenset({"title", "description", "default", "examples", "$comment"})
"""Keywords that carry no constraint, so there is nothing to enforce."""

_NUMBER_LIMIT = (
    1e15  # bounds digit count: an unbounded number lets a weak model emit digits forever
)


def _dropped_form(schema: dict[str, Any], key: str, value: Any) -> bool:
    """Whether an allowed keyword is used in a form xgrammar silently ignores (measured)."""
    if key == "multipleOf":
        return _types(schema) != {"integer"}
    if key in {"minLength", "maxLength"}:
        return "pattern" in schema  # xgrammar drops lengths beside a pattern
    if key == "format":
        return value not in ENFORCED_FORMATS
    if key == "oneOf":  # enforced as anyOf: only alternatives of disjoint types keep its meaning
        kinds = [_types(alt) if isinstance(alt, dict) else set() for alt in value or []]
        if any(not k for k in kinds):
            return True
        flat = [t for k in kinds for t in (k | {"integer"} if "number" in k else k)]
        return len(flat) != len(set(flat))
    return False


def unsupported_keywords(schema: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """Yield ``(json_path, keyword)`` for every keyword the decoder would not enforce.

    That is a keyword outside the allow-list, or an allowed one in a form the decoder ignores
    (``multipleOf`` on non-integers, lengths beside a ``pattern``, an unchecked ``format``,
    ``oneOf`` with overlapping alternatives).
    """
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key not in ENFORCED_KEYWORDS | ANNOTATION_KEYWORDS or _dropped_form(schema, key, value):
            yield path, key
            continue
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from unsupported_keywords(sub, f"{path}.{name}")
        elif key == "items":
            yield from unsupported_keywords(value, f"{path}[]")
        elif key in {"anyOf", "oneOf"} and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from unsupported_keywords(sub, f"{path}.{key}[{index}]")
        elif key == "additionalProperties" and isinstance(value, dict):
            yield from unsupported_keywords(value, f"{path}.*")


def json_path_to_loc(path: str) -> tuple[str | int, ...]:
    """The location in a unit file of a JSON path from ``unsupported_keywords``.

    ``$.amount.anyOf[1]`` -> ``("properties", "amount", "anyOf", 1)``; ``$.tags[]`` -> the
    array's ``items``; ``$.*`` -> ``additionalProperties``.
    """
    import re

    loc: list[str | int] = []
    for token in re.findall(r"\.([^.\[\]]+)|\[(\d*)\]", path[1:]):
        name, index = token
        if name == "*":
            loc.append("additionalProperties")
        elif name in {"anyOf", "oneOf"}:
            loc.append(name)
        elif name:
            loc += ["properties", name]
        elif index == "":
            loc.append("items")
        else:
            loc.append(int(index))
    return tuple(loc)


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def bound_schema(schema: dict[str, Any], *, max_string_length: int) -> dict[str, Any]:
    """A copy of ``schema`` in which every string and number has a bounded length.

    Strings without ``maxLength`` (and without ``enum``/``const``/``pattern``: xgrammar cannot
    combine a pattern with a length, so a pattern must bound itself) get
    ``max_string_length``; numbers without limits get ±1e15; objects that declare
    ``properties`` but not ``additionalProperties`` get ``false``. The unit's own limits are
    never loosened.
    """
    bounded = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if not isinstance(node, dict):
            return
        kinds = _types(node)
        if "string" in kinds and not {"maxLength", "enum", "const", "pattern"} & node.keys():
            node["maxLength"] = max_string_length
        if kinds & {"number", "integer"}:
            node.setdefault("minimum", -_NUMBER_LIMIT)
            node.setdefault("maximum", _NUMBER_LIMIT)
        if "properties" in node:  # a free-form object ({"type": "object"}) stays free
            node.setdefault("additionalProperties", False)
        for sub in node.get("properties", {}).values():
            visit(sub)
        for key in ("anyOf", "oneOf"):
            for sub in node.get(key, []):
                visit(sub)
        visit(node.get("items"))

    visit(bounded)
    return bounded
