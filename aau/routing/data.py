"""What the router learns a unit from: its own texts, read within bounds, and their digest.

Every unit brings its description, its few-shot inputs, its ``routing.requests``, the texts of
its fallbacks' labelled or annotated example files and the inputs of its golden cases
(``<name>.golden.yaml``). A text is a *positive* of its unit when the unit finds something in
it (spans, or an output with a value); an example whose output is all null (``"spans": []``) is
an *own negative*: a text the unit was shown to find nothing in, as are its ``routing.not_for``
requests. Files are confined to the unit's folder, capped in size, lines and characters; a
malformed line is skipped, not trusted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aau.errors import SpecError
from aau.spec.loader import read_yaml_file
from aau.spec.model import UnitSpec

__all__ = [
    "MAX_DATA_BYTES",
    "MAX_TEXT_CHARS",
    "UnitTexts",
    "has_value",
    "stable_hash",
    "unit_texts",
    "unit_digest",
    "units_digest",
]

MAX_DATA_BYTES = 16 * 2**20
"""Size of one example file the router reads."""
MAX_LINES = 20_000
"""Lines read from one example file."""
MAX_TEXT_CHARS = 2_000
"""Characters kept of one training text (the embedding model reads about 256 tokens)."""
MAX_DATA_POSITIVES = 150
MAX_DATA_NEGATIVES = 40
"""Texts taken from a unit's example files (a stable-hash sample): enough to learn from,
bounded fitting time whatever the files hold."""


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (``hash`` is salted)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def has_value(output: Any) -> bool:
    """Whether an example output claims something (not every value null or empty)."""
    if isinstance(output, dict):
        return any(has_value(v) for v in output.values())
    if isinstance(output, list):
        return any(has_value(v) for v in output)
    return output is not None and output != ""


@dataclass(frozen=True, slots=True)
class UnitTexts:
    """One unit's routing data.

    Attributes:
        name: the unit.
        description: its description.
        keywords: its ``routing.keywords``, folded.
        requests: its ``routing.requests``.
        positives: texts it applies to, with where each came from (``example``, ``data``…).
        negatives: its own negatives.
        needs: the units a derived unit computes from (it applies where they all do).
    """

    name: str
    description: str
    keywords: tuple[str, ...]
    requests: tuple[str, ...]
    positives: tuple[tuple[str, str], ...]
    negatives: tuple[tuple[str, str], ...]
    needs: tuple[str, ...] = ()


def _routing(unit: UnitSpec) -> tuple[list[str], list[str], list[str]]:
    routing = getattr(unit, "routing", None)
    keywords = list(getattr(routing, "keywords", None) or [])
    requests = list(getattr(routing, "requests", None) or [])
    not_for = list(getattr(routing, "not_for", None) or [])
    return (
        [str(k).casefold() for k in keywords],
        [str(r) for r in requests],
        [str(r) for r in not_for],
    )


def _example_files(unit: UnitSpec) -> list[Path]:
    """The example files the unit's fallbacks declare (confined by each kind: S061)."""
    paths = []
    for fallback in unit.fallbacks:
        locate = getattr(fallback, "examples_path", None)
        if callable(locate) and isinstance(getattr(fallback, "examples", None), str):
            paths.append(Path(locate(unit)))
    return list(dict.fromkeys(paths))


def _golden_file(unit: UnitSpec) -> Path | None:
    if unit.source is None:
        return None
    path = unit.base_dir / f"{unit.name}.golden.yaml"
    return path if path.is_file() else None


def _read_lines(path: Path) -> Iterator[tuple[str, bool]]:
    """``(text, has a value)`` of each well-formed line of a JSONL example file."""
    if not path.is_file():
        return
    if path.stat().st_size > MAX_DATA_BYTES:
        raise SpecError(
            f"{path.stat().st_size:,} bytes is over the router's limit of {MAX_DATA_BYTES:,}",
            file=str(path), check="S009",
        )  # fmt: skip
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle):
            if number >= MAX_LINES:
                break
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                continue
            if isinstance(record.get("spans"), list):
                yield record["text"], bool(record["spans"])
            elif "output" in record:
                yield record["text"], has_value(record["output"])


def _golden_inputs(path: Path) -> Iterator[tuple[str, bool]]:
    data, _, _ = read_yaml_file(path)  # bounded, safe loader
    cases = data.get("cases") if isinstance(data, dict) else None
    for case in cases if isinstance(cases, list) else []:
        if isinstance(case, dict) and isinstance(case.get("input"), str):
            yield case["input"], has_value(case.get("expected"))


def _sample(texts: Sequence[tuple[str, str]], cap: int) -> list[tuple[str, str]]:
    unique = list(dict.fromkeys(texts))
    return sorted(unique, key=lambda item: stable_hash(item[0]))[:cap]


def unit_texts(unit: UnitSpec) -> UnitTexts:
    """Gather ``unit``'s routing data from the unit and the files beside it."""
    keywords, requests, not_for = _routing(unit)
    positives: list[tuple[str, str]] = []
    negatives: list[tuple[str, str]] = [(r[:MAX_TEXT_CHARS], "not_for") for r in not_for]
    prompt = getattr(unit, "prompt", None)
    for example in getattr(prompt, "examples", None) or []:
        target = positives if has_value(example.output) else negatives
        target.append((example.input[:MAX_TEXT_CHARS], "example"))
    golden = _golden_file(unit)
    if golden is not None:
        for text, positive in _golden_inputs(golden):
            (positives if positive else negatives).append((text[:MAX_TEXT_CHARS], "golden"))
    data_pos: list[tuple[str, str]] = []
    data_neg: list[tuple[str, str]] = []
    for path in _example_files(unit):
        for text, positive in _read_lines(path):
            if text.strip():
                (data_pos if positive else data_neg).append((text[:MAX_TEXT_CHARS], "data"))
    positives += _sample(data_pos, MAX_DATA_POSITIVES)
    negatives += _sample(data_neg, MAX_DATA_NEGATIVES)
    return UnitTexts(
        name=unit.name,
        description=unit.description.strip(),
        keywords=tuple(dict.fromkeys(keywords)),
        requests=tuple(dict.fromkeys(r for r in requests if r.strip())),
        positives=tuple(dict.fromkeys(p for p in positives if p[0].strip())),
        negatives=tuple(dict.fromkeys(n for n in negatives if n[0].strip())),
        needs=tuple(getattr(unit, "needs", None) or ()),
    )


def unit_digest(unit: UnitSpec) -> str:
    """A digest of what a fitted router learned from ``unit``: it and its data files.

    A changed description, example, request or data file makes a fitted router stale.
    """
    keywords, requests, not_for = _routing(unit)
    prompt = getattr(unit, "prompt", None)
    examples = [(e.input, e.output) for e in getattr(prompt, "examples", None) or []]
    head = [unit.name, unit.description, keywords, requests, not_for, examples]
    digest = hashlib.sha256(json.dumps(head, sort_keys=True, default=str).encode())
    golden = _golden_file(unit)
    for path in [*_example_files(unit), *([golden] if golden else [])]:
        digest.update(path.name.encode())
        if path.is_file() and path.stat().st_size <= MAX_DATA_BYTES:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def units_digest(digests: dict[str, str], feature_version: str) -> str:
    """One digest of the units' digests (by name) and the feature version."""
    body = json.dumps([feature_version, sorted(digests.items())])
    return hashlib.sha256(body.encode()).hexdigest()
