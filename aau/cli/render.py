"""Terminal rendering of results: a readable table (rich)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from aau.pipeline.results import PipelineResult

__all__ = ["print_table"]


def print_table(results: Sequence[PipelineResult], console: Console | None = None) -> None:
    """One row per (input, unit): output, confidence, path, error, total ms."""
    table = Table(show_lines=False)
    for column in ("input", "unit", "output", "conf.", "path", "error", "ms"):
        table.add_column(column, overflow="fold")
    for result in results:
        for name, unit in result.units.items():
            table.add_row(
                str(result.id or "-"),
                name,
                json.dumps(unit.output, ensure_ascii=False) if unit.output is not None else "null",
                f"{unit.confidence:.2f}",
                unit.path or "-",
                unit.error.code if unit.error else "",
                f"{unit.timings.get('total_ms', 0):.0f}",
            )
    # Piped output has no terminal width; 80 columns would fold every JSON value.
    (console or Console(width=None if Console().is_terminal else 140)).print(table)
