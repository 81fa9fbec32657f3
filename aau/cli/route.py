"""``aau route``: which units apply to a text or a document, each decision explained.

``aau route UNITS... --text T | --file F [--json] [--tenant T] [--no-terms]`` routes one input
with the fitted router (``calibration/router.json``, or ``--router PATH``), which must have been
fitted on exactly these units' data; ``aau route UNITS... --fit`` fits it from the units' own
data and writes it. Exit 2 with the reason when the router is missing or stale, or the input
cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aau.errors import InputError
from aau.ingest import Document
from aau.spec.model import UnitSpec
from aau.terms import TermStore

if TYPE_CHECKING:
    from aau.routing import RouteDecision

__all__ = ["add_route_parser", "cmd_route", "unit_files"]


def unit_files(items: Sequence[str]) -> list[Path]:
    """Unit files named or inside the folders named (``*.yaml`` whose stem has no dot)."""
    paths: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            paths.extend(p for p in sorted(path.glob("*.yaml")) if "." not in p.stem)
        else:
            paths.append(path)
    return list(dict.fromkeys(paths))


def _text(args: argparse.Namespace) -> str:
    if args.text is not None:
        return str(args.text)
    return Document.from_path(args.file, languages=args.lang).text


def _print_decision(decision: RouteDecision) -> None:
    applies = ", ".join(decision.applies) or "no unit"
    terms = "with" if decision.use_terms else "without"
    print(f"applies: {applies}  (threshold {decision.threshold:.2f}, {terms} term hits: "
          f"{decision.term_hits})")  # fmt: skip
    for route in decision.units:
        mark = "*" if route.applies else " "
        why = ", ".join(f"{c.feature} {c.contribution:+.2f}" for c in route.contributions[:3])
        print(f" {mark} {route.unit:32} {route.probability:6.3f}  {why}")
    if decision.nearest:
        print("nearest examples:")
        for near in decision.nearest:
            text = near.text.replace("\n", " ")
            text = text if len(text) <= 90 else text[:89] + "…"
            print(f"   {near.similarity:.2f} {near.unit}: {text}")


def cmd_route(args: argparse.Namespace) -> int:
    """Fit the router, or route one input and print the decision."""
    # Imported here: the router's features bring scikit-learn, which no other command needs.
    from aau.routing import Router

    paths = unit_files(args.units)
    if not paths:
        print("error: no unit files found", file=sys.stderr)
        return 2
    units = [UnitSpec.from_file(p) for p in paths]
    store = TermStore(args.terms_store)
    if args.fit:
        router = Router.fit(units, terms=store.term_set(None))
        out = router.save(args.router)
        report: dict[str, Any] = router.report
        print(f"fitted the router on {len(units)} units ({report.get('texts')} texts, "
              f"{report.get('pairs')} pairs); cross-validated F1 {report.get('cv_f1')}: "
              f"{out}")  # fmt: skip
        if args.text is None and args.file is None:
            return 0
    else:
        router = Router.load(args.router, units=units)
    if args.text is None and args.file is None:
        print("error: give --text or --file (or --fit)", file=sys.stderr)
        return 2
    try:
        text = _text(args)
        terms = None if args.no_terms else store.term_set(args.tenant)
        decision = router.route(text, terms=terms, use_terms=not args.no_terms)
    except InputError as exc:
        print(f"error: {exc} [{exc.code}]", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(decision.to_dict(), ensure_ascii=False))
    else:
        _print_decision(decision)
    return 0


def add_route_parser(sub: Any) -> None:
    """Add ``aau route`` to the ``aau`` subcommands."""
    p = sub.add_parser("route", help="which units apply to a text (the learned router)")
    p.add_argument("units", nargs="+", help="unit files or folders")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--text", help="a question or a document's text")
    source.add_argument("--file", help="a document: UTF-8 text, PDF, PNG, JPEG or TIFF")
    p.add_argument("--lang", default="eng", help="tesseract languages for scans (eng+deu…)")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.add_argument("--tenant", help="whose term dictionaries apply (default: the shipped)")
    p.add_argument("--terms-store", help="term store folder (default: AAU_TERMS_DIR)")
    p.add_argument("--no-terms", action="store_true", help="route without term hits")
    p.add_argument("--fit", action="store_true", help="fit the router from the units' data")
    p.add_argument(
        "--router", metavar="PATH", default=None,
        help="the router artifact (default: the shipped calibration/router.json)",
    )  # fmt: skip
    p.set_defaults(func=cmd_route)
