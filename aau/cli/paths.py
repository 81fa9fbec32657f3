"""Which files of the command line are unit files: the files named, and the units under folders.

A folder is walked recursively. Only ``*.yaml`` files whose stem has no dot are units (the
files beside a unit are ``<name>.<what>.<ext>``: ``extract_price.golden.yaml``), and a
``pipelines/`` folder holds pipeline files, not units, so it is skipped. Hidden folders are
skipped too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["PIPELINES_FOLDER", "unit_paths"]

PIPELINES_FOLDER = "pipelines"
"""The folder name under a units folder that holds pipeline files."""


def _walk(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            if path.name != PIPELINES_FOLDER and not path.is_symlink():
                yield from _walk(path)
        elif path.suffix == ".yaml" and "." not in path.stem:
            yield path


def unit_paths(items: Sequence[str | Path]) -> list[Path]:
    """The unit files ``items`` name: files as given, folders walked (see the module docstring)."""
    paths: list[Path] = []
    for item in items:
        path = Path(item)
        paths.extend(_walk(path) if path.is_dir() else [path])
    return paths
