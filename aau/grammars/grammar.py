"""A loaded grammar: parse a whole value, normalize it, and expose the regex derived from it.

A :class:`Grammar` wraps one generated parser package. Parsing reuses one lexer and one parser
per thread (creating them costs more than parsing a short value) and predicts in two stages, as
ANTLR recommends: the fast SLL mode first, full LL only when SLL reports an error. The first
syntax error aborts the parse, so a rejected value costs no error recovery and reports the
position where it went wrong.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from antlr4 import CommonTokenStream, InputStream, Token
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.error.ErrorListener import ErrorListener
from antlr4.tree.Tree import ParseTree

from aau.grammars.atn import derive_regex
from aau.grammars.errors import InvalidValue
from aau.grammars.normalizers import Normalizer

__all__ = ["Grammar", "ParseResult"]


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Whether a value parses; if not, why and where.

    Attributes:
        ok: True when the whole value matches the grammar.
        error: the parser's message for the first problem, or None.
        position: 0-based character index of that problem, or None.
    """

    ok: bool
    error: str | None = None
    position: int | None = None


class _SyntaxError(Exception):
    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position, self.message = position, message


class _RaisingListener(ErrorListener):
    """Turns the first lexer or parser error into an exception, with a character position."""

    def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):  # noqa: D102  # ANTLR's signature
        if offendingSymbol is None:  # a lexer error: the token that failed started here
            position = recognizer._tokenStartCharIndex
        else:
            position = offendingSymbol.start
        raise _SyntaxError(position, msg)


_LISTENER = _RaisingListener()


class Grammar:
    """One field-format grammar, loaded by :func:`aau.grammars.load_grammar`.

    Attributes:
        name: the grammar's name, e.g. ``money_amount``.
        start_rule: the parser rule a whole value must match.
        source: the folder of the generated parser package.
    """

    def __init__(
        self,
        name: str,
        lexer_cls: type,
        parser_cls: type,
        start_rule: str,
        source: Path,
        normalizer: Normalizer | None,
    ) -> None:
        self.name, self.start_rule, self.source = name, start_rule, source
        self._lexer_cls, self._parser_cls, self._normalizer = lexer_cls, parser_cls, normalizer
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"<Grammar {self.name!r} from {self.source}>"

    @cached_property
    def _regex_and_reason(self) -> tuple[str | None, str | None]:
        return derive_regex(self._parser_cls, self._lexer_cls, self.start_rule)

    @property
    def regex(self) -> str | None:
        """A regex for the whole value, derived from the grammar's ATN; None if not regular.

        It admits every value the parser accepts (use it as a JSON-Schema ``pattern`` for
        constrained decoding); a value it admits is still validated by :meth:`parse`.
        """
        return self._regex_and_reason[0]

    @property
    def regex_reason(self) -> str | None:
        """Why :attr:`regex` is None (e.g. ``rule 'value' is recursive ...``), else None."""
        return self._regex_and_reason[1]

    @property
    def options(self) -> frozenset[str]:
        """The keyword options :meth:`normalize` accepts, e.g. ``{"date_order"}``."""
        return self._normalizer.options if self._normalizer else frozenset()

    def parse(self, text: str) -> ParseResult:
        """Check that the whole of ``text`` matches the grammar; never raises for bad input."""
        try:
            self._tree(text)
        except _SyntaxError as exc:
            return ParseResult(False, exc.message, exc.position)
        return ParseResult(True)

    def normalize(self, text: str, **options: Any) -> Any:
        """Return the canonical value of ``text`` (its type depends on the grammar).

        Grammars without a normalizer (those from ``search_dirs``) return ``text`` unchanged
        once it parses.

        Raises:
            InvalidValue: the value does not parse, or names something that does not exist
                (the message gives the character position).
            AmbiguousValue: the value reads two ways and no option picks one.
            TypeError: an option this grammar does not know.
        """
        unknown = sorted(set(options) - self.options)
        if unknown:
            accepted = ", ".join(sorted(self.options)) or "none"
            raise TypeError(
                f"{self.name}.normalize() got unknown option(s) {', '.join(unknown)}; "
                f"accepted: {accepted}"
            )
        try:
            tree = self._tree(text)
        except _SyntaxError as exc:
            raise InvalidValue(self.name, text, exc.position, exc.message) from None
        if self._normalizer is None:
            return text
        return self._normalizer(self.name, text, tree, options)

    def _tree(self, text: str) -> ParseTree:
        if not isinstance(text, str):
            raise TypeError(f"{self.name}: expected a str value, got {type(text).__name__}")
        lexer, parser = self._recognizers()
        try:
            try:
                return self._parse_with(lexer, parser, text, PredictionMode.SLL)
            except _SyntaxError:  # SLL may fail on valid input; full LL decides
                return self._parse_with(lexer, parser, text, PredictionMode.LL)
        except RecursionError:  # a deeply nested value (json) exhausts Python's stack
            raise _SyntaxError(0, "the value is nested too deeply to parse") from None

    def _parse_with(self, lexer: Any, parser: Any, text: str, mode: PredictionMode) -> ParseTree:
        lexer.inputStream = InputStream(text)
        parser.setTokenStream(CommonTokenStream(lexer))
        parser._interp.predictionMode = mode
        tree = getattr(parser, self.start_rule)()
        extra = parser.getCurrentToken()
        if extra.type != Token.EOF:  # the start rule of a user grammar may lack EOF
            raise _SyntaxError(extra.start, f"extraneous input {extra.text!r} after the value")
        return tree

    def _recognizers(self) -> tuple[Any, Any]:
        pair = getattr(self._local, "pair", None)
        if pair is None:
            lexer = self._lexer_cls(InputStream(""))
            parser = self._parser_cls(CommonTokenStream(lexer))
            for recognizer in (lexer, parser):
                recognizer.removeErrorListeners()
                recognizer.addErrorListener(_LISTENER)
            pair = self._local.pair = (lexer, parser)
        return pair
