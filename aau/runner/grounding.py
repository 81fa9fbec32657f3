"""Grounding the model's answer: every value it returns must be found in the analysed text.

A small model given few-shot examples often copies an example's value when the document has
none; a schema cannot catch that, the text can. Each non-null scalar field is aligned back to
the text (numbers and dates in any common writing, see ``aau.ingest.alignment``); an ISO
currency code also counts as found when a symbol or word for it is in the text (``€`` for EUR).
The spans found become the answer's grounding offsets.
"""

from __future__ import annotations

from typing import Any

from aau.errors import UngroundedOutput
from aau.fallbacks.normalize import currency_markers
from aau.ingest.alignment import align_value

__all__ = ["ground_output"]


def _find(text: str, value: Any, near: int | None) -> tuple[int, int] | None:
    span = align_value(text, value, start_hint=near)
    if span is not None or not isinstance(value, str):
        return span
    for marker in currency_markers(value):
        span = align_value(text, marker, start_hint=near)
        if span is not None:
            return span
    return None


def ground_output(
    unit: str, text: str, output: dict[str, Any], *, max_distance: int | None = None
) -> dict[str, tuple[int, int]]:
    """Spans of every non-null scalar field; ``UngroundedOutput`` for the first not found.

    With ``max_distance``, each field after the first is looked for nearest the first one, and
    fields farther apart than that (e.g. a quantity's number taken from the price line) fail.
    """
    spans: dict[str, tuple[int, int]] = {}
    for field, value in output.items():
        if value is None or isinstance(value, bool | dict | list):
            continue
        anchor = next(iter(spans.values()))[0] if spans else None
        span = _find(text, value, anchor)
        if span is None:
            raise UngroundedOutput(
                f"{unit}: $.{field} = {value!r} does not occur in the text (copied from an "
                "example, or invented)",
                json_path=f"$.{field}",
            )
        if anchor is not None and max_distance is not None:
            first = next(iter(spans.items()))
            gap = max(span[0] - first[1][1], first[1][0] - span[1])
            if gap > max_distance:
                raise UngroundedOutput(
                    f"{unit}: $.{field} = {value!r} is {gap} characters away from $.{first[0]} "
                    f"(policy.max_field_distance is {max_distance}); the fields do not come from "
                    "one place in the text",
                    json_path=f"$.{field}",
                )
        spans[field] = span
    return spans
