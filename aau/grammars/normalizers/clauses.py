"""Clause numbers to a canonical id: ``Section 07.2 (a)(iii)`` gives ``"7.2(a)(iii)"``.

The keyword (Section, Clause, Article, Paragraph, their abbreviations, ``§``), spaces and a
trailing dot are dropped, and numbers lose leading zeros. Letters keep their case, since
drafting styles give ``(A)`` and ``(a)`` different levels (``12(1)(a)(A)``).
"""

from __future__ import annotations

from aau._generated.clause_number.clause_numberParser import clause_numberParser
from aau._generated.clause_number.clause_numberVisitor import clause_numberVisitor
from aau.grammars.normalizers import ValueVisitor

__all__ = ["ClauseNormalizer"]


class ClauseNormalizer(ValueVisitor, clause_numberVisitor):
    """Normalizes ``clause_number`` values to ids such as ``7.2(a)(iii)``."""

    def visitClause_value(self, ctx: clause_numberParser.Clause_valueContext) -> str:
        """The canonical id of the whole value (the keyword is dropped)."""
        return self.visit(ctx.clause_id())

    def visitClause_id(self, ctx: clause_numberParser.Clause_idContext) -> str:
        """Numbers joined by dots, then the letter suffix and the parenthesized items."""
        path = ".".join(str(int(number.getText())) for number in ctx.NUMBER())
        letter = ctx.LETTER()
        items = "".join(self.visit(item) for item in ctx.sub_item())
        return path + (letter.getText() if letter is not None else "") + items

    def visitSub_item(self, ctx: clause_numberParser.Sub_itemContext) -> str:
        """One ``(a)`` or ``(1)`` item, spaces dropped."""
        number = ctx.NUMBER()
        return f"({int(number.getText())})" if number is not None else f"({ctx.label().getText()})"
