"""The annotated-example format a CRF path is trained on: reading it and checking it.

One JSON object per line::

    {"text": "Total due: EUR 1,250.00", "spans": [
        {"start": 11, "end": 14, "label": "CURRENCY", "value": "EUR"},
        {"start": 15, "end": 23, "label": "AMOUNT", "value": "1,250.00"}]}

``start``/``end`` are character offsets (end exclusive) into ``text``; ``value``, optional, repeats
the surface text so that a hand edit that shifts the text is caught; a text whose value is absent
has ``"spans": []``. Blank lines are skipped. Every problem is reported with the file, the JSONL
line and the field, as unit files are (codes S050–S056).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aau.errors import SpecError

__all__ = ["AnnotatedExample", "LabelledSpan", "check_annotated", "load_annotated"]


@dataclass(frozen=True, slots=True)
class LabelledSpan:
    """One labelled piece of an example's text.

    Attributes:
        start: offset of the first character.
        end: offset just past the last character.
        label: one of the CRF path's labels (``AMOUNT``…).
    """

    start: int
    end: int
    label: str


@dataclass(frozen=True, slots=True)
class AnnotatedExample:
    """One training text with its labelled spans, sorted by offset.

    Attributes:
        text: the example text.
        spans: labelled spans; empty when the text states no value.
        line: the JSONL line it was read from, for messages.
    """

    text: str
    spans: tuple[LabelledSpan, ...]
    line: int


def _parse_line(
    raw: str, line: int, where: str, labels: frozenset[str]
) -> tuple[AnnotatedExample | None, list[SpecError]]:
    def error(message: str, field: str | None, code: str) -> SpecError:
        return SpecError(message, file=where, line=line, field=field, check=code)

    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, [error(f"not JSON: {exc.msg} (column {exc.colno})", None, "S051")]
    if not isinstance(data, dict):
        return None, [error(f"expected a JSON object, got {type(data).__name__}", None, "S051")]
    unknown = sorted(set(data) - {"text", "spans"})
    if unknown:
        return None, [error(f"unknown keys {unknown}; expected text and spans", None, "S051")]
    text, spans = data.get("text"), data.get("spans")
    if not isinstance(text, str):
        return None, [error("must be a string", "text", "S051")]
    if not isinstance(spans, list):
        return None, [error("must be a list (use [] when the text has no value)", "spans", "S051")]
    errors: list[SpecError] = []
    found: list[LabelledSpan] = []
    for index, span in enumerate(spans):
        field = f"spans[{index}]"
        if not isinstance(span, dict) or not {"start", "end", "label"} <= set(span):
            errors.append(error("must be an object with start, end and label", field, "S051"))
            continue
        extra = sorted(set(span) - {"start", "end", "label", "value"})
        start, end, label = span["start"], span["end"], span["label"]
        if extra:
            errors.append(error(f"unknown keys {extra}", field, "S051"))
        elif not all(type(v) is int for v in (start, end)):  # bool is an int subclass
            errors.append(error(f"start and end must be integers, got {start!r}, {end!r}", field,
                                "S051"))  # fmt: skip
        elif not 0 <= start < end <= len(text):
            errors.append(error(
                f"span {start}..{end} is outside the text (0..{len(text)}) or empty", field, "S052"
            ))  # fmt: skip
        elif label not in labels:
            errors.append(error(
                f"unknown label {label!r}. Available: {', '.join(sorted(labels))}",
                f"{field}.label", "S054",
            ))  # fmt: skip
        elif "value" in span and span["value"] != text[start:end]:
            errors.append(error(
                f"value {span['value']!r} differs from the text at {start}..{end}: "
                f"{text[start:end]!r}", f"{field}.value", "S055",
            ))  # fmt: skip
        else:
            found.append(LabelledSpan(start, end, label))
    found.sort(key=lambda s: (s.start, s.end))
    for before, after in zip(found, found[1:], strict=False):
        if after.start < before.end:
            errors.append(error(
                f"spans {before.start}..{before.end} ({before.label}) and "
                f"{after.start}..{after.end} ({after.label}) overlap", "spans", "S053",
            ))  # fmt: skip
    if errors:
        return None, errors
    return AnnotatedExample(text, tuple(found), line), []


def _read(path: Path, labels: Iterable[str]) -> tuple[list[AnnotatedExample], list[SpecError]]:
    where = str(path)
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [SpecError("annotated examples file not found", file=where, check="S050")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [SpecError(f"cannot read annotated examples: {exc}", file=where, check="S050")]
    label_set = frozenset(labels)
    examples: list[AnnotatedExample] = []
    errors: list[SpecError] = []
    for line, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        example, problems = _parse_line(raw, line, where, label_set)
        errors += problems
        if example is not None:
            examples.append(example)
    if not examples and not errors:
        errors.append(SpecError("no annotated examples (the file is empty)", file=where,
                                check="S056"))  # fmt: skip
    return examples, errors


def load_annotated(path: str | Path, labels: Iterable[str]) -> list[AnnotatedExample]:
    """Read an annotated-examples JSONL file.

    Args:
        path: the JSONL file.
        labels: the label set every span must use.

    Returns:
        The examples in file order.

    Raises:
        SpecError: the first problem, located by file, line and field; the count of further
            problems is added as a note.
    """
    examples, errors = _read(Path(path), labels)
    raise_first_problem(errors, path)
    return examples


def raise_first_problem(errors: Sequence[SpecError], path: str | Path) -> None:
    """Raise the first of a data file's ``errors``, noting how many more there are; none: return."""
    if errors:
        first = errors[0]
        if len(errors) > 1:
            first.add_note(f"{len(errors) - 1} more problem(s) in {path}; `aau validate` lists all")
        raise first


def check_annotated(path: str | Path, labels: Iterable[str]) -> list[SpecError]:
    """Every problem of an annotated-examples file (an empty list when it is fine)."""
    return _read(Path(path), labels)[1]
