"""Bounds on untrusted input: how much of anything AAU reads, parses, renders or matches.

Unit files, term dictionaries, batch lines, documents and (soon) HTTP bodies may come from an
attacker. Every reader checks its input against one of these bounds and refuses what exceeds it
with a located error or a coded result, instead of running for minutes or growing without
limit. The defaults suit the shipped units and documents with a wide margin; each can be set in
the environment (``AAU_MAX_UNIT_BYTES=2000000``…) or passed as a ``Limits`` where a reader takes
one.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """One set of bounds; ``Limits.from_env()`` reads overrides from ``AAU_MAX_*`` variables."""

    unit_bytes: int = 1 * 2**20
    """Size of one unit file."""
    dictionary_bytes: int = 64 * 2**20
    """Size of one term dictionary file."""
    batch_line_bytes: int = 2 * 2**20
    """Size of one batch input line (its text included)."""
    document_bytes: int = 64 * 2**20
    """Size of one document file (text, PDF or image)."""
    document_pages: int = 200
    """Pages read from one PDF or multi-page image."""
    text_chars: int = 1_000_000
    """Characters of one input text analysed by the units."""
    yaml_depth: int = 50
    """Nesting of mappings and sequences in a YAML document."""
    yaml_nodes: int = 200_000
    """Nodes of a YAML document once its aliases are expanded (alias bombs)."""
    json_depth: int = 50
    """Nesting of a JSON batch line, and of a unit's output schema."""
    template_output_chars: int = 200_000
    """Characters one rendered prompt template may produce."""
    template_loop_items: int = 10_000
    """Items a template loop (or ``range``) may produce."""
    regex_timeout_s: float = 1.0
    """Time one heuristic pattern that needs backtracking may spend on one text."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """The defaults with every ``AAU_MAX_<FIELD>`` set in ``env`` (default ``os.environ``)."""
        env = os.environ if env is None else env
        values: dict[str, int | float] = {}
        for field in dataclasses.fields(cls):
            raw = env.get(f"AAU_MAX_{field.name.upper()}")
            if raw is None:
                continue
            kind = float if field.type in {"float", float} else int
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"AAU_MAX_{field.name.upper()}={raw!r} is not a number") from None
            if not value > 0:
                raise ValueError(f"AAU_MAX_{field.name.upper()}={raw!r} must be positive")
            values[field.name] = value
        return cls(**values)  # type: ignore[arg-type]  # each value has its field's type


LIMITS = Limits.from_env()
"""The process's bounds (defaults and environment), read once at import."""
