"""Grounding the model's answer: every value it returns must be found in the analysed text.

A small model given few-shot examples often copies an example's value when the document has
none; a schema cannot catch that, the text can. Each non-null scalar field (top-level, or of
each record in a list of objects) is aligned back to the text: first as written or in a common
writing (``aau.ingest.alignment``), then through the values layer, where any rendering of the
value counts (``aau.values``): "three" for 3, "12 500" for 12500, "75 million" for 75000000,
"Kč" or "korun" for CZK, "14. März 2024" for 2024-03-14, "Stunden" for h. The spans found
become the answer's grounding offsets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from aau import values
from aau.errors import UngroundedOutput
from aau.ingest.alignment import align_value

__all__ = ["ground_output"]

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_CODE = re.compile(r"^[A-Z]{3}$")


def _nearest(spans: Iterator[tuple[int, int]], near: int | None) -> tuple[int, int] | None:
    """The first span, or the one starting nearest ``near``."""
    found = list(spans)
    if not found:
        return None
    if near is None:
        return min(found)
    return min(found, key=lambda span: (abs(span[0] - near), span[0]))


def _number_spans(text: str, value: float) -> Iterator[tuple[int, int]]:
    for number in values.find_numbers(text):
        if math.isclose(float(number.value), value, rel_tol=1e-9, abs_tol=1e-12):
            yield number.start, number.end


def _bounded(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is not the inside of a longer Latin word or number."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    first, last = text[start], text[end - 1]
    return not (
        (first.isascii() and first.isalnum() and before.isascii() and before.isalnum())
        or (last.isascii() and last.isalnum() and after.isascii() and after.isalnum())
    )


def _marker_spans(text: str, code: str) -> Iterator[tuple[int, int]]:
    """Where a symbol, code or name of the currency ``code`` is written ("Kč", "euros")."""
    folded = text.casefold()
    for marker in values.currency_renderings(code):
        needle = marker.casefold() if len(marker) > 1 else marker
        haystack = folded if len(marker) > 1 else text
        position = haystack.find(needle)
        while position >= 0:
            end = position + len(needle)
            if _bounded(text, position, end):
                yield position, end
            position = haystack.find(needle, position + 1)


def _rendered(text: str, value: Any, near: int | None) -> tuple[int, int] | None:
    """Where the values layer reads ``value`` in ``text``, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        return _nearest(_number_spans(text, float(value)), near)
    if not isinstance(value, str) or not value.strip():
        return None
    if _ISO_DATE.match(value):
        dates = values.find_dates(text)
        return _nearest(((d.start, d.end) for d in dates if d.value == value), near)
    if _ISO_CODE.match(value) and values.currency_codes(value):
        return _nearest(_marker_spans(text, value), near)
    if value in values.CANONICAL_UNITS:
        quantities = values.find_quantities(text)
        return _nearest(((q.start, q.end) for q in quantities if q.unit == value), near)
    return None


def _find(text: str, value: Any, near: int | None) -> tuple[int, int] | None:
    span = align_value(text, value, start_hint=near)
    return span if span is not None else _rendered(text, value, near)


def _after(text: str, value: Any, offset: int) -> tuple[int, int] | None:
    """The first place of ``value`` at or after ``offset``, else the one nearest it."""
    later = _find(text[offset:], value, None)
    if later is not None:
        return later[0] + offset, later[1] + offset
    return _find(text, value, offset)


def ground_output(
    unit: str, text: str, output: dict[str, Any], *, max_distance: int | None = None
) -> dict[str, tuple[int, int]]:
    """Spans of every non-null scalar leaf; ``UngroundedOutput`` for the first not found.

    Top-level fields are keyed by name (``amount``); the fields of each object in an array of
    objects (a records unit's list) by their path (``clauses[0].amount``), each object grounded on
    its own: its fields are looked for nearest its first one, and its first one after the
    previous object's first one when it occurs there, so that two records saying the same
    ("EUR 500" twice) keep to their own places in the text. Arrays of scalars
    and deeper nesting are left ungrounded.

    With ``max_distance``, each field after the first (of the output, or of one object) is looked
    for nearest the first one, and fields farther apart than that (e.g. a quantity's number taken
    from the price line) fail.
    """
    spans = _ground_fields(unit, text, output, "", max_distance, None)
    previous: int | None = None
    for name, value in output.items():
        if not isinstance(value, list):
            continue
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            found = _ground_fields(unit, text, item, f"{name}[{index}].", max_distance, previous)
            if found:
                previous = next(iter(found.values()))[1]
            spans.update(found)
    return spans


def _ground_fields(
    unit: str,
    text: str,
    fields: dict[str, Any],
    prefix: str,
    max_distance: int | None,
    near: int | None,
) -> dict[str, tuple[int, int]]:
    """Spans of the non-null scalar ``fields`` of one object, keyed ``prefix + name``.

    The first is looked for after ``near`` first, then nearest it (the first occurrence when
    None); the others nearest the first.
    """
    spans: dict[str, tuple[int, int]] = {}
    for field, value in fields.items():
        if value is None or isinstance(value, bool | dict | list):
            continue
        key = prefix + field
        anchor = next(iter(spans.values()))[0] if spans else None
        span = _find(text, value, anchor) if spans or near is None else _after(text, value, near)
        if span is None:
            raise UngroundedOutput(
                f"{unit}: $.{key} = {value!r} does not occur in the text (copied from an "
                "example, or invented)",
                json_path=f"$.{key}",
            )
        if anchor is not None and max_distance is not None:
            first = next(iter(spans.items()))
            gap = max(span[0] - first[1][1], first[1][0] - span[1])
            if gap > max_distance:
                raise UngroundedOutput(
                    f"{unit}: $.{key} = {value!r} is {gap} characters away from $.{first[0]} "
                    f"(policy.max_field_distance is {max_distance}); the fields do not come from "
                    "one place in the text",
                    json_path=f"$.{key}",
                )
        spans[key] = span
    return spans
