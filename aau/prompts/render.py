"""Prompt rendering: a unit's system text, few-shot turns and input, as chat messages.

Templates are Jinja2 with ``StrictUndefined`` (a typo fails loudly), compiled and rendered in
the sandbox of ``aau.spec.templates``: a unit file cannot run code through them, and a render
stops with a ``SecurityError`` once its loops or its output pass ``LIMITS`` (the runner then
falls back). Their variables: ``text`` (the input), ``unit`` (the spec) and ``terms`` (the
tenant's dictionary terms found in that input: dicts with ``text``, ``canonical``,
``category``, ``start``, ``end``, ``dictionary``); the one function is a bounded ``range``.

The default layout puts everything that is static for a unit (system text, few-shot turns)
first and the document last, so that the static part is a shared token prefix across all
requests of the unit. Few-shot answers are rendered exactly as the decoder will produce them
(compact JSON), so the examples teach the model the format it is held to.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from aau.spec.model import UnitSpec
from aau.spec.templates import compiled_template, render_template

if TYPE_CHECKING:
    from aau.terms import TermHit, TermSet

__all__ = ["DOCUMENT_REFERENCE", "Layout", "Message", "compact_json", "render_messages"]

Message = dict[str, str]


def compact_json(value: Any) -> str:
    """JSON as the constrained decoder writes it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _render(source: str, unit: UnitSpec, text: str, terms: Sequence[TermHit] = ()) -> str:
    """One template rendered in the sandbox (``SecurityError`` past a limit)."""
    return render_template(
        compiled_template(source), text=text, unit=unit, terms=[h.as_dict() for h in terms]
    )


Layout = Literal["unit_first", "document_first"]
DOCUMENT_REFERENCE = "(the document above)"


def render_messages(
    unit: UnitSpec, text: str, layout: Layout = "unit_first", *, terms: TermSet | None = None,
    term_hits: Sequence[TermHit] = (),
) -> list[Message]:  # fmt: skip
    """The chat messages for one input.

    ``term_hits`` are the tenant's terms in ``text``; ``terms`` (the tenant's term set) finds
    those of the few-shot inputs, so that examples show what the input will look like.

    ``unit_first`` (the default): system text, few-shot turns, then the input — the unit's
    static part is a shared prefix across all inputs of the unit. ``document_first``: the
    document opens the system message, so the many units run over one document share it as a
    prefix; the final turn then refers to it. ``benchmarks/RESULTS.md`` measures both.
    """
    prompt = unit.prompt
    if prompt is None:
        raise ValueError(f"{unit.name} is a {unit.kind} unit: it has no prompt to render")
    template = prompt.template
    reads_terms = terms is not None and "terms" in template
    system, turns = _static_part(unit, terms if reads_terms else None)
    if layout == "document_first":
        system = f"Document:\n{text}\n\n{system}"
        text = DOCUMENT_REFERENCE
    return [
        {"role": "system", "content": system},
        *(dict(turn) for turn in turns),
        {"role": "user", "content": _render(template, unit, text, term_hits)},
    ]


# The static part of recent units' prompts (system text, few-shot turns), by the unit object:
# rendering it again for every input was most of the rendering. The unit is kept with its
# entry, so an id is not reused while cached; a tenant's terms (read by the template) bypass it.
_STATIC: OrderedDict[int, tuple[UnitSpec, str, tuple[Message, ...]]] = OrderedDict()
_STATIC_ENTRIES = 256
_STATIC_LOCK = threading.Lock()


def _static_part(unit: UnitSpec, terms: TermSet | None) -> tuple[str, tuple[Message, ...]]:
    """The rendered system text and few-shot turns of ``unit`` (``terms``: the tenant's)."""
    if terms is None:
        with _STATIC_LOCK:
            hit = _STATIC.get(id(unit))
            if hit is not None and hit[0] is unit:
                _STATIC.move_to_end(id(unit))
                return hit[1], hit[2]
    prompt = unit.prompt
    assert prompt is not None
    system = _render(prompt.system, unit, "")
    turns: list[Message] = []
    for example in prompt.examples:
        example_hits = terms.find(example.input) if terms is not None else ()
        turns.append(
            {"role": "user", "content": _render(prompt.template, unit, example.input, example_hits)}
        )
        turns.append({"role": "assistant", "content": compact_json(example.output)})
    if terms is None:
        with _STATIC_LOCK:
            _STATIC[id(unit)] = (unit, system, tuple(turns))
            if len(_STATIC) > _STATIC_ENTRIES:
                _STATIC.popitem(last=False)
    return system, tuple(turns)
