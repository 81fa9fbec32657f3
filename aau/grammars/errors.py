"""Errors of the grammars part, placed in the AAU hierarchy by whose fault they are.

```
SpecError
├── GrammarNotFound     a unit or caller names a grammar that is not there
└── GrammarBuildError   a .g4 file does not compile (the ANTLR tool's messages, file:line:col)
ValidationFailed
├── InvalidValue        the value does not parse (or names a day that does not exist); .position
└── AmbiguousValue      the value parses but reads two ways (03/04/2024, 1,250); .readings
```
"""

from __future__ import annotations

from collections.abc import Sequence

from aau.errors import SpecError, ValidationFailed

__all__ = ["AmbiguousValue", "GrammarBuildError", "GrammarNotFound", "InvalidValue"]


class GrammarNotFound(SpecError):
    """No generated parser for the requested grammar name in any search directory."""

    code = "grammar_not_found"

    def __init__(self, name: str, available: Sequence[str]) -> None:
        super().__init__(
            f"Unknown grammar {name!r}. Available: {', '.join(available) or '(none)'}.",
            field="grammar",
            check="S301",
        )
        self.name, self.available = name, tuple(available)


class GrammarBuildError(SpecError):
    """The ANTLR tool rejected one or more grammars; ``messages`` are ``file:line:col: ...``."""

    code = "grammar_build_error"

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = tuple(messages)
        super().__init__(
            "ANTLR could not build the grammars:\n" + "\n".join(self.messages), check="S302"
        )


class InvalidValue(ValidationFailed):
    """A value that the grammar rejects, with the 0-based character position of the problem.

    Attributes:
        grammar: the grammar's name.
        value: the rejected text.
        position: 0-based index into ``value`` where the problem was found.
        reason: what is wrong there, e.g. the parser's ``mismatched input``.
    """

    def __init__(self, grammar: str, value: str, position: int, reason: str) -> None:
        super().__init__(f"{grammar}: invalid value {value!r} at position {position}: {reason}")
        self.grammar, self.value, self.position, self.reason = grammar, value, position, reason
        if "\n" not in value and len(value) <= 120:
            self.add_note(f"  {value}\n  {' ' * position}^")


class AmbiguousValue(ValidationFailed):
    """A value with more than one reading; the message names the option that picks one.

    Attributes:
        grammar: the grammar's name.
        value: the ambiguous text.
        readings: the normalized values it could mean, in a stable order.
    """

    code = "ambiguous_value"

    def __init__(self, grammar: str, value: str, readings: Sequence[object], hint: str) -> None:
        shown = " or ".join(repr(reading) for reading in readings)
        super().__init__(f"{grammar}: {value!r} is ambiguous: it reads as {shown}; {hint}")
        self.grammar, self.value, self.readings = grammar, value, tuple(readings)
