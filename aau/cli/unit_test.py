"""``aau test UNIT... [--record | --replay]``: run the units' golden cases, print their figures.

Each unit's cases are ``<name>.golden.yaml`` beside it (``aau.fitting.golden``). With
``--record`` the real model answers and its generations are kept in
``<name>.golden.recorded.jsonl``; with ``--replay`` they are answered from that file (a request it
lacks fails the case with ``not_recorded``); with neither, a current recording is replayed and
otherwise the model runs. Replayed runs are said to be so. Exit 0 when every case passes, 1 when
one fails, 2 when a unit or golden file is wrong or no unit has golden cases.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from aau.cli.paths import unit_paths
from aau.engines.base import Engine
from aau.engines.registry import EngineConfig, build_engine
from aau.errors import SpecError
from aau.fitting.golden import (
    UnitReport,
    choose_mode,
    golden_path,
    load_cases,
    recording_path,
    run_golden,
)
from aau.spec.model import UnitSpec
from aau.spec.problems import every_problem

__all__ = ["add_test_parser", "cmd_test", "format_report"]

_MODE_WORDS = {"replay": "replayed", "record": "recorded", "model": "model"}


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_report(report: UnitReport, key: str) -> str:
    """The unit's figures on one line, then one line per failing case."""
    lines = [
        f"{key} ({_MODE_WORDS[report.mode]}): {report.passed}/{report.total} passed, "
        f"accuracy {report.accuracy:.3f}, mean confidence {report.mean_confidence:.3f}, "
        f"ECE {report.ece:.3f}, Brier {report.brier:.3f}"
        + (f" ({report.known_failures} known failures)" if report.known_failures else "")
    ]
    for outcome in report.outcomes:
        result = outcome.result
        known = outcome.case.known_failure
        if not outcome.passed:
            label = "known failure" if known is not None else "FAIL"
            lines.append(f"  {label} case {outcome.index} {_short(outcome.case.input)!r}: "
                         f"{outcome.explain()} (path {result.path}, confidence "
                         f"{result.confidence:.3f})")  # fmt: skip
        elif known is not None:
            lines.append(f"  fixed case {outcome.index} {_short(outcome.case.input)!r}: it "
                         "passes now; remove its known_failure")  # fmt: skip
    return "\n".join(lines)


def _engine(config_file: str | None) -> Engine:
    return build_engine(EngineConfig.from_sources(config_file))


def cmd_test(args: argparse.Namespace) -> int:
    """Run the golden cases of each unit; exit 1 when one fails, 2 on a wrong file."""
    engine = functools.cache(functools.partial(_engine, args.engine_config))
    wrong = failed = tested = 0
    summaries: list[dict[str, Any]] = []
    try:
        for path in unit_paths(args.units):
            try:
                spec = UnitSpec.from_file(path)
                if not golden_path(spec).is_file():
                    print(f"skip: {path}: no golden cases ({golden_path(spec).name})",
                          file=sys.stderr)  # fmt: skip
                    continue
                cases = load_cases(spec)
                mode, why = choose_mode(spec, cases, record=args.record, replay=args.replay)
                if why:
                    print(f"note: {spec.name}: {why}", file=sys.stderr)
                report = run_golden(spec, cases, mode, engine=engine)
            except SpecError as exc:
                wrong += 1
                for problem in every_problem(exc):
                    print(f"error: {problem}", file=sys.stderr)
                continue
            tested += 1
            failed += report.unexpected_failures > 0
            print(format_report(report, spec.key))
            if mode == "record":
                print(f"  recorded {recording_path(spec)}")
            summaries.append(report.to_dict())
    finally:
        if engine.cache_info().currsize:
            engine().close()
    if args.json:
        print(json.dumps(summaries, ensure_ascii=False))
    if not tested and not wrong:
        print("no unit with golden cases found", file=sys.stderr)
        return 2
    return 2 if wrong else 1 if failed else 0


def add_test_parser(subparsers: Any) -> None:
    """Add ``aau test`` to the ``aau`` command's subparsers."""
    p = subparsers.add_parser("test", help="run the units' golden cases")
    p.add_argument("units", nargs="+", help="unit files or folders")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--record", action="store_true",
        help="run the real model and record its generations beside each unit",
    )  # fmt: skip
    mode.add_argument(
        "--replay", action="store_true",
        help="answer from the recordings only (default when one is current)",
    )  # fmt: skip
    p.add_argument("--engine-config", metavar="FILE", help="engine settings (YAML)")
    p.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    p.set_defaults(func=cmd_test)
