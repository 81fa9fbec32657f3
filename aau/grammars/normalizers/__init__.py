"""Normalizers: parse-tree visitors that turn a valid value into its canonical form.

Each module here subclasses the generated visitor of one shipped grammar (and ``ValueVisitor``),
naming the keyword options it reads (``accepts = frozenset({"date_order"})``). They are declared
in the ``aau.grammar_normalizers`` entry-point group under their grammar's name, in AAU's
``pyproject.toml``, as a package shipping its own generated grammar declares its normalizer:
``GRAMMAR_NORMALIZERS`` reads the group on first use, so no parser is imported before a grammar
is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from antlr4 import ParserRuleContext
from antlr4.tree.Tree import ParseTree, TerminalNode

from aau.grammars.errors import AmbiguousValue, InvalidValue
from aau.registry import Registry

__all__ = ["GRAMMAR_NORMALIZERS", "Normalizer", "ValueVisitor", "get_normalizer"]


class ValueVisitor:
    """Mixin for normalizing visitors: the value, the options, and located errors.

    Attributes:
        grammar: the grammar's name, for messages.
        text: the whole value being normalized.
        options: the caller's keyword options (already checked against the registered names).
    """

    accepts: ClassVar[frozenset[str]] = frozenset()
    """Names of the keyword options it reads (from the unit's locale: ``date_order``…)."""

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


GRAMMAR_NORMALIZERS: Registry[type[ValueVisitor]] = Registry(
    "grammar normalizer", "aau.grammar_normalizers"
)
"""Normalizing visitor classes by the name of the grammar they normalize."""


def get_normalizer(name: str) -> Normalizer | None:
    """The normalizer registered for grammar ``name``, or None."""
    visitor = GRAMMAR_NORMALIZERS.find(name)
    return None if visitor is None else Normalizer(visitor, visitor.accepts)
