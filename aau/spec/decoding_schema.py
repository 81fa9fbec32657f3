"""The JSON Schema a unit's answer is decoded against: one function for ``aau validate`` and runs.

The output schema the unit declares is not quite what the constrained decoder enforces: each
field that names a regular grammar gets the grammar's regex as its ``pattern``, and strings that
declare no ``maxLength`` get the policy's, so a weak model cannot ramble. The load-time check
compiles exactly this schema, so a unit that validates is a unit whose schema decodes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from aau.decoding.json_schema import bound_schema
from aau.grammars import Grammar, load_grammar
from aau.spec.sections import FieldSpec

__all__ = ["decoding_schema", "field_grammars"]


def field_grammars(fields: Mapping[str, FieldSpec]) -> dict[str, Grammar]:
    """Output field -> the grammar its value must follow (``GrammarNotFound`` if one is missing)."""
    return {name: load_grammar(field.grammar) for name, field in fields.items()}


def decoding_schema(
    output: Mapping[str, Any], grammars: Mapping[str, Grammar], max_string_length: int
) -> dict[str, Any]:
    """A unit's bounded output schema, each regular grammar's regex as its field's ``pattern``.

    Args:
        output: the unit's ``output`` schema.
        grammars: its field grammars (``field_grammars(unit.fields)``).
        max_string_length: its ``policy.max_string_length``.
    """
    patched = copy.deepcopy(dict(output))
    properties = patched.get("properties", {})
    for name, grammar in grammars.items():
        if grammar.regex is not None and isinstance(properties.get(name), dict):
            properties[name]["pattern"] = f"^({grammar.regex})$"
    return bound_schema(patched, max_string_length=max_string_length)
