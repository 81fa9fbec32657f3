"""``aau new UNIT --kind extract|classify|records|derived [--dir units/]``: scaffold a unit.

Writes ``<name>.yaml`` (a valid unit whose comments say what to fill in), ``<name>.golden.yaml``
(placeholder golden cases) and the data files the kind's fallbacks read: an annotated JSONL
stub for the CRF (extract) or the records tagger (records), labelled examples for the
classifier (classify); a derived unit reads no data. The templates are the package's
``aau/cli/scaffolds/<kind>.*`` files, ``{name}`` standing for the unit's name. Nothing is
overwritten: when any of the files exists, nothing is written.

A path whose model ``aau validate`` requires (the classifier, the records tagger) is trained on
the placeholder examples, so the scaffold validates at once; retraining after the examples are
replaced is the author's next step, and ``aau validate`` says when the model is stale. The
scaffold is validated before the command ends.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from aau.cli.validate import validate_units
from aau.errors import SpecError
from aau.spec.model import NAME_PATTERN, UnitSpec

__all__ = ["KINDS", "add_new_parser", "cmd_new", "scaffold"]

KINDS = ("extract", "classify", "records", "derived")


def _templates(kind: str) -> list[Traversable]:
    folder = resources.files("aau.cli").joinpath("scaffolds")
    found = [t for t in folder.iterdir() if t.name.split(".", 1)[0] == kind]
    return sorted(found, key=lambda t: t.name)


def scaffold(name: str, kind: str, folder: Path) -> list[Path]:
    """Write the scaffold of unit ``name`` of ``kind`` into ``folder``; the files written.

    Raises:
        ValueError: the name is not a unit name, the kind is unknown, or a file exists.
    """
    if not re.fullmatch(NAME_PATTERN, name):
        raise ValueError(f"{name!r} is not a unit name: lower case letters, digits and _, "
                         "starting with a letter, at most 64 characters")  # fmt: skip
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}. Available: {', '.join(KINDS)}")
    planned = [(t, folder / (name + t.name[len(kind) :])) for t in _templates(kind)]
    existing = [str(path) for _, path in planned if path.exists()]
    if existing:
        raise ValueError(f"refusing to overwrite {', '.join(existing)}")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for template, path in planned:
        with path.open("x", encoding="utf-8") as out:
            out.write(template.read_text(encoding="utf-8").replace("{name}", name))
        written.append(path)
    return written


def _train_placeholders(unit_file: Path) -> None:
    """Train the paths whose model validation requires, on the placeholder examples."""
    spec = UnitSpec.from_file(unit_file)
    for fallback in spec.fallbacks:
        report = fallback.train(spec)
        if report is not None:
            print(f"trained the {fallback.kind} path on the placeholder examples; replace them "
                  f"and run `aau train {unit_file}`", file=sys.stderr)  # fmt: skip


def cmd_new(args: argparse.Namespace) -> int:
    """Scaffold a unit, then validate it; exit 2 when a file exists or it does not validate."""
    folder = Path(args.dir)
    try:
        written = scaffold(args.unit, args.kind, folder)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    unit_file = folder / f"{args.unit}.yaml"
    try:
        _train_placeholders(unit_file)
    except SpecError as exc:  # it does not load: validate below says every problem
        print(f"note: not trained: {exc}", file=sys.stderr)
    return validate_units([unit_file])


def add_new_parser(subparsers: Any) -> None:
    """Add ``aau new`` to the ``aau`` command's subparsers."""
    p = subparsers.add_parser("new", help="scaffold a unit with its golden cases and data files")
    p.add_argument("unit", help="the unit's name (lower case, digits, _)")
    p.add_argument("--kind", choices=KINDS, default="extract", help="what the unit answers")
    p.add_argument("--dir", default="units", help="the folder to write into (default: units)")
    p.set_defaults(func=cmd_new)
