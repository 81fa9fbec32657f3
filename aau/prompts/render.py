"""Prompt rendering: a unit's system text, few-shot turns and input, as chat messages.

Templates are Jinja2 with ``StrictUndefined`` (a typo fails loudly). The default layout puts
everything that is static for a unit (system text, few-shot turns) first and the document last,
so that the static part is a shared token prefix across all requests of the unit. Few-shot
answers are rendered exactly as the decoder will produce them (compact JSON), so the examples
teach the model the format it is held to.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

import jinja2

from aau.spec.model import UnitSpec

__all__ = ["DOCUMENT_REFERENCE", "Layout", "Message", "compact_json", "render_messages"]

Message = dict[str, str]

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)  # noqa: S701


def compact_json(value: Any) -> str:
    """JSON as the constrained decoder writes it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@cache
def _template(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def _render(source: str, unit: UnitSpec, text: str) -> str:
    return _template(source).render(text=text, unit=unit)


Layout = Literal["unit_first", "document_first"]
DOCUMENT_REFERENCE = "(the document above)"


def render_messages(unit: UnitSpec, text: str, layout: Layout = "unit_first") -> list[Message]:
    """The chat messages for one input.

    ``unit_first`` (the default): system text, few-shot turns, then the input — the unit's
    static part is a shared prefix across all inputs of the unit. ``document_first``: the
    document opens the system message, so the many units run over one document share it as a
    prefix; the final turn then refers to it. ``benchmarks/RESULTS.md`` measures both.
    """
    system = _render(unit.prompt.system, unit, "")
    if layout == "document_first":
        system = f"Document:\n{text}\n\n{system}"
        text = DOCUMENT_REFERENCE
    messages: list[Message] = [{"role": "system", "content": system}]
    for example in unit.prompt.examples:
        messages.append(
            {"role": "user", "content": _render(unit.prompt.template, unit, example.input)}
        )
        messages.append({"role": "assistant", "content": compact_json(example.output)})
    messages.append({"role": "user", "content": _render(unit.prompt.template, unit, text)})
    return messages
