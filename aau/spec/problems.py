"""Every problem of a unit file at once, and "did you mean" hints for unknown keys.

Loading a unit raises one ``SpecError``; when the file has several problems it is a
``UnitProblems``: the first problem's message and location (so every caller that reads one error
keeps working), the rest as notes, and all of them in ``problems`` for ``aau validate``, which
prints each located ``file:line: field: message [check]``.

``did_you_mean`` finds, for a key the model refuses (``fallback:``), the closest field name the
model has at that level of the file (``fallbacks``), through nested models, lists, mappings and
the fallback kinds' discriminated union.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from aau.errors import SpecError

__all__ = ["UnitProblems", "did_you_mean", "field_names_at"]


class UnitProblems(SpecError):
    """A unit file's problems: the first is this error (message, location), all are ``problems``.

    The other problems are notes too, ``file:line: field: message`` each, for callers that print
    one error and its notes.
    """

    def __init__(self, problems: Sequence[SpecError]) -> None:
        first = problems[0]
        super().__init__(first.message, file=first.file, line=first.line, field=first.field,
                         check=first.check)  # fmt: skip
        self.problems: tuple[SpecError, ...] = tuple(problems)
        for other in problems[1:]:
            where = f"{other.file}:{other.line}" if other.line else f"{other.file}"
            self.add_note(f"{where}: {other.field}: {other.message}")


def every_problem(error: SpecError) -> list[SpecError]:
    """The problems ``error`` stands for: its ``problems`` when it has several, else itself."""
    return list(error.problems) if isinstance(error, UnitProblems) else [error]


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation holds (``list[X]``, ``X | None``, ``Annotated[X, …]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        if isinstance(arg, type | types.UnionType) or typing.get_args(arg):
            yield from _models_in(arg)


def field_names_at(
    root: type[BaseModel], loc: Sequence[str | int], tags: Callable[[str], type[BaseModel] | None]
) -> list[str]:
    """The field names the models at ``loc`` (a pydantic error's location, less its last part) have.

    ``tags`` maps a discriminated union's tag (a fallback kind) to its model; list indexes and
    mapping keys keep the element type.
    """
    current: list[Any] = [root]
    for part in loc:
        tagged = tags(part) if isinstance(part, str) else None
        if tagged is not None:
            current = [tagged]
            continue
        fields = [
            model.model_fields[part].annotation
            for annotation in current
            for model in _models_in(annotation)
            if isinstance(part, str) and part in model.model_fields
        ]
        if fields:
            current = fields
    names = {
        name
        for annotation in current
        for model in _models_in(annotation)
        for name, field in model.model_fields.items()
        if not field.exclude
    }
    return sorted(names)


def did_you_mean(
    root: type[BaseModel], loc: Sequence[str | int], tags: Mapping[str, type[BaseModel]]
) -> str | None:
    """``"did you mean 'fallbacks'?"`` for an unknown key at ``loc``, or None when none is close."""
    if not loc or not isinstance(loc[-1], str):
        return None
    names = field_names_at(root, loc[:-1], tags.get)
    close = difflib.get_close_matches(loc[-1], names, n=1, cutoff=0.7)
    return f"did you mean {close[0]!r}?" if close else None
