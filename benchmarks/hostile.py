"""Hostile corpus: every case of ``tests/hostile/cases.yaml`` through the real ``aau`` CLI.

    python benchmarks/hostile.py [--jobs N] [--keep DIR] [--only PREFIX...]

Run from the repository root (``.venv/bin/python benchmarks/hostile.py``). It runs what
``tests/hostile/test_corpus.py`` runs, with the same manifest, recipes and harness
(``tests/hostile/corpus.py``): ``aau validate`` over the unit files (and ``aau run``,
``aau train`` and a prompt render where a case asks), ``aau batch --no-model`` over every
hostile line and document between good lines, ``aau termdict check`` and ``aau termdict add``
over the dictionaries; each child with a wall-clock timeout (``AAU_HOSTILE_TIMEOUT_S``, 60 s),
an address-space limit and its peak RSS measured. It prints a table per kind, then each failing
case with its evidence, and as its last line one JSON object:

- ``cases``: cases run;
- ``failed``: cases whose outcome is not the expected one, for any reason;
- ``crashes``: cases with a Traceback or an exit code other than the expected;
- ``hangs``: cases with a child killed at the timeout;
- ``lost_lines``: input lines of the shared batch without their output line;
- ``code_executed``: marker files that hostile input created;
- ``max_rss_mb``: the peak RSS of any child.

Exit status 1 when any case failed. ``--keep DIR`` leaves the materialized corpus, inputs,
outputs and every child's stdout/stderr there (default: a temporary folder, removed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile.corpus import JOBS, KINDS, load_cases, run_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=JOBS, help=f"children at once ({JOBS})")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR and keep it")
    parser.add_argument("--only", nargs="+", metavar="PREFIX", help="cases whose id starts so")
    args = parser.parse_args()

    cases = load_cases()
    if args.only:
        cases = [case for case in cases if case.id.startswith(tuple(args.only))]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="aau-hostile-"))
    try:
        report = run_corpus(cases, root, jobs=args.jobs)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    table = report.by_kind()
    columns = ("cases", "passed", "failed", "crashes", "hangs", "code_executed", "max_rss_mb")
    print(f"{'kind':<12}" + "".join(f"{c:>15}" for c in columns))
    for kind in KINDS:
        if kind in table:
            print(f"{kind:<12}" + "".join(f"{table[kind][c]:>15g}" for c in columns))
    by_step: dict[str, list[float]] = {}
    for run in report.runs:
        by_step.setdefault(run.label.split(" ")[0], []).append(run.wall_s)
    print(
        f"\n{len(report.runs)} children in {report.wall_s:.0f} s ("
        + ", ".join(f"{step} {len(w)} x {sum(w) / len(w):.1f} s" for step, w in by_step.items())
        + ")"
    )
    failed = [verdict for verdict in report.verdicts.values() if not verdict.ok]
    if report.good_line_problems:
        print("\ngood lines:", *report.good_line_problems[:20], sep="\n  ")
    for verdict in failed:
        print("\n" + verdict.describe())
    print(json.dumps(report.summary()))
    return 1 if failed or report.good_line_problems or report.lost_lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
