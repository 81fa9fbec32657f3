"""The labelled-example format a classifier is trained on (and measured with): reading, checking.

One JSON object per line, the text and the unit's whole answer for it::

    {"text": "My parcel never arrived.", "output": {"is_complaint": true, "topic": "delivery"}}

The file may come from anyone who can edit the unit, so it is read within bounds (its size, its
line count, each line's length and each text's) and every line is checked before training
reads it: a JSON object with exactly ``text`` (a string) and ``output`` (valid against the
unit's output schema, every class field present). Every problem is located by file, line and
field, as unit files are: the file missing or unreadable S071, a bad line S072, a bound passed
S073. Blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from aau.errors import SpecError
from aau.fallbacks.annotated import raise_first_problem
from aau.limits import LIMITS

__all__ = [
    "LABELLED_BAD_LINE",
    "LABELLED_MISSING",
    "LABELLED_TOO_LARGE",
    "MAX_LABELLED_BYTES",
    "MAX_LABELLED_LINES",
    "LabelledExample",
    "check_labelled",
    "load_labelled",
]

LABELLED_MISSING = "S071"
LABELLED_BAD_LINE = "S072"
LABELLED_TOO_LARGE = "S073"
MAX_LABELLED_BYTES = 32 * 2**20
"""Size of one labelled-examples file."""
MAX_LABELLED_LINES = 100_000
"""Lines of one labelled-examples file."""


@dataclass(frozen=True, slots=True)
class LabelledExample:
    """One text and the answer it should get.

    Attributes:
        text: the example text.
        output: the unit's answer for it (valid against the output schema).
        line: the JSONL line it was read from, for messages.
    """

    text: str
    output: Mapping[str, Any]
    line: int


def _parse_line(
    raw: str,
    line: int,
    where: str,
    validator: jsonschema.protocols.Validator,
    fields: Iterable[str],
    max_chars: int,
) -> LabelledExample | SpecError:
    def error(message: str, field: str | None, code: str = LABELLED_BAD_LINE) -> SpecError:
        return SpecError(message, file=where, line=line, field=field, check=code)

    if len(raw) > LIMITS.batch_line_bytes:
        return error(f"line has {len(raw)} characters, over {LIMITS.batch_line_bytes}", None,
                     LABELLED_TOO_LARGE)  # fmt: skip
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        return error(f"not JSON: {exc.msg} (column {exc.colno})", None)
    except RecursionError:
        return error("not JSON this reader accepts: nested too deeply", None)
    if not isinstance(data, dict):
        return error(f"expected a JSON object, got {type(data).__name__}", None)
    if set(data) != {"text", "output"}:
        return error(f"expected exactly the keys text and output, got {sorted(data)}", None)
    text, output = data["text"], data["output"]
    if not isinstance(text, str):
        return error(f"must be a string, got {type(text).__name__}", "text")
    if len(text) > max_chars:
        return error(f"text has {len(text)} characters, over the path's max_chars ({max_chars})",
                     "text", LABELLED_TOO_LARGE)  # fmt: skip
    if not isinstance(output, dict):
        return error(f"must be an object (the unit's answer), got {type(output).__name__}",
                     "output")  # fmt: skip
    missing = [name for name in fields if name not in output]
    if missing:
        return error(f"lacks the class field(s) {', '.join(missing)}", "output")
    problem = jsonschema.exceptions.best_match(validator.iter_errors(output))
    if problem is not None:
        at = "".join(f".{p}" for p in problem.path)
        return error(f"violates the output schema: {problem.message}", f"output{at}")
    return LabelledExample(text, output, line)


def _read(
    path: Path, schema: Mapping[str, Any], fields: Iterable[str], max_chars: int
) -> tuple[list[LabelledExample], list[SpecError]]:
    where = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_LABELLED_BYTES + 1)
    except FileNotFoundError:
        return [], [SpecError("labelled examples file not found", file=where,
                              check=LABELLED_MISSING)]  # fmt: skip
    except OSError as exc:
        return [], [SpecError(f"cannot read labelled examples: {exc}", file=where,
                              check=LABELLED_MISSING)]  # fmt: skip
    if len(data) > MAX_LABELLED_BYTES:
        return [], [SpecError(f"labelled examples file is over {MAX_LABELLED_BYTES} bytes",
                              file=where, check=LABELLED_TOO_LARGE)]  # fmt: skip
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], [SpecError(f"labelled examples are not UTF-8: {exc}", file=where,
                              check=LABELLED_BAD_LINE)]  # fmt: skip
    lines = content.splitlines()
    if len(lines) > MAX_LABELLED_LINES:
        return [], [SpecError(f"labelled examples file has {len(lines)} lines, over "
                              f"{MAX_LABELLED_LINES}", file=where,
                              check=LABELLED_TOO_LARGE)]  # fmt: skip
    validator = jsonschema.Draft202012Validator(schema)
    names = list(fields)
    examples: list[LabelledExample] = []
    errors: list[SpecError] = []
    for line, raw in enumerate(lines, start=1):
        if raw.strip():
            parsed = _parse_line(raw, line, where, validator, names, max_chars)
            (errors if isinstance(parsed, SpecError) else examples).append(parsed)  # type: ignore[arg-type]
    if not examples and not errors:
        errors.append(SpecError("no labelled examples (the file is empty)", file=where,
                                check=LABELLED_BAD_LINE))  # fmt: skip
    return examples, errors


def load_labelled(
    path: str | Path, schema: Mapping[str, Any], fields: Iterable[str], max_chars: int
) -> list[LabelledExample]:
    """Read a labelled-examples JSONL file.

    Args:
        path: the JSONL file.
        schema: the unit's output schema every ``output`` must be valid against.
        fields: the fields every ``output`` must hold.
        max_chars: the longest text accepted.

    Returns:
        The examples in file order.

    Raises:
        SpecError: the first problem, located by file, line and field; the count of further
            problems is added as a note.
    """
    examples, errors = _read(Path(path), schema, fields, max_chars)
    raise_first_problem(errors, path)
    return examples


def check_labelled(
    path: str | Path, schema: Mapping[str, Any], fields: Iterable[str], max_chars: int
) -> list[SpecError]:
    """Every problem of a labelled-examples file (an empty list when it is fine)."""
    return _read(Path(path), schema, fields, max_chars)[1]
