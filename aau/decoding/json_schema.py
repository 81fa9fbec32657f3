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

__all__ = ["ENFORCED_KEYWORDS", "bound_schema", "unsupported_keywords"]

ENFORCED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "enum", "const", "anyOf", "oneOf", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
})  # fmt: skip
"""Keywords that constrain generation."""

ANNOTATION_KEYWORDS = frozenset({"title", "description", "default", "examples", "$comment"})
"""Keywords that carry no constraint, so there is nothing to enforce."""

_NUMBER_LIMIT = (
    1e15  # bounds digit count: an unbounded number lets a weak model emit digits forever
)


def unsupported_keywords(schema: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """Yield ``(json_path, keyword)`` for every keyword the decoder would not enforce."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key not in ENFORCED_KEYWORDS | ANNOTATION_KEYWORDS:
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


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def bound_schema(schema: dict[str, Any], *, max_string_length: int) -> dict[str, Any]:
    """A copy of ``schema`` in which every string and number has a bounded length.

    Strings without ``maxLength`` (and without ``enum``/``const``/``pattern``: xgrammar cannot
    combine a pattern with a length, so a pattern must bound itself) get
    ``max_string_length``; numbers without limits get ±1e15; objects without
    ``additionalProperties`` get ``false``. The unit's own limits are never loosened.
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
        if "object" in kinds or "properties" in node:
            node.setdefault("additionalProperties", False)
        for sub in node.get("properties", {}).values():
            visit(sub)
        for key in ("anyOf", "oneOf"):
            for sub in node.get(key, []):
                visit(sub)
        visit(node.get("items"))

    visit(bounded)
    return bounded
