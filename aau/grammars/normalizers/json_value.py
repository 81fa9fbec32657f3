"""JSON text to the Python value ``json.loads`` would give (dict, list, str, int, float...).

Strings and numbers are decoded by :func:`json.loads` on their single token, so escapes and
number forms follow the standard library exactly; the structure comes from the parse tree. As
with ``json.loads``, a repeated object key keeps its last value.
"""

from __future__ import annotations

import json
from typing import Any

from aau._generated.json.jsonParser import jsonParser
from aau._generated.json.jsonVisitor import jsonVisitor
from aau.grammars.normalizers import ValueVisitor

__all__ = ["JsonNormalizer"]

_CONSTANTS = {jsonParser.TRUE: True, jsonParser.FALSE: False, jsonParser.NULL: None}


class JsonNormalizer(ValueVisitor, jsonVisitor):
    """Builds the Python value of a ``json`` parse tree."""

    def visitJson_value(self, ctx: jsonParser.Json_valueContext) -> Any:
        """The value of the whole document."""
        return self.visit(ctx.value())

    def visitValue(self, ctx: jsonParser.ValueContext) -> Any:
        """A dict, list, str, int, float, bool or None."""
        if ctx.object_() is not None:
            return self.visit(ctx.object_())
        if ctx.array() is not None:
            return self.visit(ctx.array())
        token = ctx.start
        if token.type in _CONSTANTS:
            return _CONSTANTS[token.type]
        return json.loads(token.text)  # a STRING or NUMBER token

    def visitObject(self, ctx: jsonParser.ObjectContext) -> dict[str, Any]:
        """A dict; a repeated key keeps its last value."""
        return {
            json.loads(pair.STRING().getText()): self.visit(pair.value()) for pair in ctx.pair()
        }

    def visitArray(self, ctx: jsonParser.ArrayContext) -> list[Any]:
        """A list."""
        return [self.visit(value) for value in ctx.value()]
