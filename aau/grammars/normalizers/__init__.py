"""Normalizers: parse-tree visitors that turn a valid value into its canonical form.

Each module here subclasses the generated visitor of one shipped grammar and registers it with
``@normalizer("date", options=("date_order",))``. :func:`get_normalizer` imports the modules of
this package the first time it is asked, so adding a normalizer is adding a module; nothing
else names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from antlr4 import ParserRuleContext
from antlr4.tree.Tree import ParseTree, TerminalNode

from aau.grammars.errors import AmbiguousValue, InvalidValue

__all__ = ["Normalizer", "ValueVisitor", "get_normalizer", "normalizer"]


class ValueVisitor:
    """Mixin for normalizing visitors: the value, the options, and located errors.

    Attributes:
        grammar: the grammar's name, for messages.
        text: the whole value being normalized.
        options: the caller's keyword options (already checked against the registered names).
    """

    def __init__(self, grammar: str, text: str, options: Mapping[str, Any]) -> None:
        self.grammar, self.text, self.options = grammar, text, options

    def invalid(self, where: ParseTree | int, reason: str) -> InvalidValue:
        """An :class:`InvalidValue` located at a tree node (its first character) or position."""
        return InvalidValue(self.grammar, self.text, position_of(where), reason)

    def ambiguous(self, readings: list[Any], hint: str) -> AmbiguousValue:
        """An :class:`AmbiguousValue` listing the readings and the option that picks one."""
        return AmbiguousValue(self.grammar, self.text, readings, hint)


def position_of(where: ParseTree | int) -> int:
    """0-based character index of a tree node's first character (or ``where`` itself)."""
    if isinstance(where, int):
        return where
    if isinstance(where, TerminalNode):
        return where.symbol.start
    assert isinstance(where, ParserRuleContext)
    return where.start.start


@dataclass(frozen=True, slots=True)
class Normalizer:
    """A registered normalizing visitor class and the options it accepts."""

    visitor: Callable[[str, str, Mapping[str, Any]], Any]
    options: frozenset[str]

    def __call__(self, grammar: str, text: str, tree: ParseTree, options: Mapping[str, Any]) -> Any:
        """Visit ``tree`` (the parse of ``text``) and return the canonical value."""
        return self.visitor(grammar, text, options).visit(tree)


_REGISTRY: dict[str, Normalizer] = {}
_LOADED = False


def normalizer(*names: str, options: tuple[str, ...] = ()) -> Callable[[type], type]:
    """Class decorator: register a visitor as the normalizer of the named shipped grammars."""

    def register(cls: type) -> type:
        for name in names:
            _REGISTRY[name] = Normalizer(cls, frozenset(options))
        return cls

    return register


def get_normalizer(name: str) -> Normalizer | None:
    """The normalizer registered for shipped grammar ``name``, or None."""
    global _LOADED
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _LOADED = True
    return _REGISTRY.get(name)
