"""Answer quality on text nobody here wrote: the external benchmark of benchmarks/external/.

Runs each shipped unit's whole chain (model, fallbacks, calibrator: the public ``Pipeline``) over
one part of the cases converted from Microsoft Recognizers-Text (see benchmarks/external/README.md)
and scores the answers:

- a text whose spec lists one value (``single``) is right when the whole output equals it;
- a text with several values (``multi``) is right when the output equals one of them, and is
  reported apart (it is not in ``<unit>_exact``);
- a text with no value (``none``) is right when the answer has no value; an answer with a value
  there is a false positive.

Equality is exact but for the obvious: numbers compare as floats (relative 1e-6), strings as
written (case-sensitive), and a null output, an error and an all-null output all mean "no value".
Prints per unit and per language: exact accuracy (all texts), exact on single-value texts, any-of
on multi-value texts, false-positive rate on texts without a value, coverage (answered without an
error), mean confidence and ECE (10 equal-width bins, confidence against exact correctness).
The last line is one JSON object.

    python benchmarks/quality.py [--part dev|test] [--limit N] [--units price,date]
                                 [--no-model] [--concurrency 8] [--answers out.jsonl]
                                 [--cases benchmarks/external/duckling_prices.dev.jsonl]

``--limit N`` keeps at most N cases per unit, the same ones every time (lowest sha256 of the id).
Choices are made on the dev part; the test part is for the figure only. ``--cases`` runs another
dev file in the same format instead (another source's cases, never the test part's).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "benchmarks" / "external"
UNITS = {"price": "extract_price", "date": "extract_date", "quantity": "extract_quantity"}
MIN_LANGUAGE_CASES = 30
"""``date_min_language_exact`` counts the languages with at least this many single-value texts."""
BINS = 10


def load_cases(
    part: str, units: list[str], limit: int | None, path: Path | None = None
) -> list[dict[str, Any]]:
    path = path or CASES / f"cases.{part}.jsonl"
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if any(c.get("part") != part for c in cases):
        raise SystemExit(f"{path} holds cases of another part than {part!r}")
    chosen: list[dict[str, Any]] = []
    for unit in units:
        mine = [c for c in cases if c["unit"] == unit]
        if limit is not None:
            mine = sorted(mine, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest())[:limit]
        chosen.extend(mine)
    return chosen


# -- equality ------------------------------------------------------------------------------------


def has_value(output: dict[str, Any] | None) -> bool:
    """Whether an answer states anything (a null output or all-null fields state nothing)."""
    return isinstance(output, dict) and any(v is not None for v in output.values())


def same_value(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=0.0)
    return type(a) is type(b) and a == b


def same_output(answer: dict[str, Any] | None, expected: dict[str, Any]) -> bool:
    if not has_value(expected):
        return not has_value(answer)
    if not isinstance(answer, dict):
        return False
    keys = set(answer) | set(expected)
    return all(same_value(answer.get(k), expected.get(k)) for k in keys)


def correct(case: dict[str, Any], answer: dict[str, Any] | None) -> bool:
    if case["kind"] == "multi":
        return any(same_output(answer, e) for e in case["expected"])
    return same_output(answer, case["expected"])


# -- running -------------------------------------------------------------------------------------


@dataclass
class Scored:
    case: dict[str, Any]
    output: dict[str, Any] | None
    confidence: float
    path: str | None
    error: str | None
    right: bool
    ms: float

    def record(self) -> dict[str, Any]:
        return {
            "id": self.case["id"], "kind": self.case["kind"], "expected": self.case["expected"],
            "output": self.output, "confidence": self.confidence, "path": self.path,
            "error": self.error, "right": self.right, "ms": round(self.ms, 1),
        }  # fmt: skip


async def run_all(
    cases: list[dict[str, Any]], units: list[str], model: bool, concurrency: int
) -> list[Scored]:
    from aau import Pipeline, build_engine

    engine = build_engine() if model else False
    try:
        pipelines = {u: Pipeline([ROOT / "units" / f"{u}.yaml"], engine=engine) for u in units}
        if model:
            await asyncio.gather(*(p.warmup() for p in pipelines.values()))
        gate = asyncio.Semaphore(concurrency)
        done = 0
        started = time.perf_counter()

        async def one(case: dict[str, Any]) -> Scored:
            nonlocal done
            async with gate:
                t0 = time.perf_counter()
                result = await pipelines[case["unit"]].arun(case["text"], id=case["id"])
                unit = result.units[case["unit"]]
                ms = (time.perf_counter() - t0) * 1000
            done += 1
            if done % 100 == 0:
                rate = done / (time.perf_counter() - started)
                print(f"  {done}/{len(cases)} cases ({rate:.1f}/s)", file=sys.stderr)
            error = None if unit.error is None else unit.error.code
            return Scored(case, unit.output, float(unit.confidence), unit.path, error,
                          correct(case, unit.output), ms)  # fmt: skip

        return list(await asyncio.gather(*(one(c) for c in cases)))
    finally:
        if engine is not False:
            engine.close()


# -- figures -------------------------------------------------------------------------------------


def ratio(hits: int, n: int) -> float | None:
    return hits / n if n else None


def ece(rows: list[Scored]) -> float | None:
    """Expected calibration error, 10 equal-width confidence bins, against exact correctness."""
    if not rows:
        return None
    bins: list[list[Scored]] = [[] for _ in range(BINS)]
    for row in rows:
        bins[min(int(max(row.confidence, 0.0) * BINS), BINS - 1)].append(row)
    total = 0.0
    for group in bins:
        if group:
            conf = sum(r.confidence for r in group) / len(group)
            acc = sum(r.right for r in group) / len(group)
            total += len(group) / len(rows) * abs(conf - acc)
    return total


def figures(rows: list[Scored]) -> dict[str, Any]:
    single = [r for r in rows if r.case["kind"] == "single"]
    multi = [r for r in rows if r.case["kind"] == "multi"]
    none = [r for r in rows if r.case["kind"] == "none"]
    empty = [r for r in rows if r.error is None and not has_value(r.output)]
    return {
        "n": len(rows),
        "exact": ratio(sum(r.right for r in rows), len(rows)),
        "n_single": len(single),
        "exact_single": ratio(sum(r.right for r in single), len(single)),
        "n_multi": len(multi),
        "any_of_multi": ratio(sum(r.right for r in multi), len(multi)),
        "n_none": len(none),
        "fp": ratio(sum(has_value(r.output) for r in none), len(none)),
        "coverage": ratio(sum(r.error is None for r in rows), len(rows)),
        "mean_conf": sum(r.confidence for r in rows) / len(rows) if rows else None,
        "ece": ece(rows),
        "n_nothing": len(empty),
        "nothing_conf": sum(r.confidence for r in empty) / len(empty) if empty else None,
        "nothing_acc": ratio(sum(r.right for r in empty), len(empty)),
    }  # fmt: skip


def fmt(value: Any) -> str:
    if value is None:
        return "    -"
    return f"{value:5.3f}" if isinstance(value, float) else f"{value:5d}"


COLUMNS = [
    ("n", "n"), ("exact", "exact"), ("n_single", "n1"), ("exact_single", "exact1"),
    ("n_multi", "nM"), ("any_of_multi", "anyM"), ("n_none", "n0"), ("fp", "fp"),
    ("coverage", "cover"), ("mean_conf", "conf"), ("ece", "ece"),
]  # fmt: skip


def print_table(title: str, rows: dict[str, dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"  {'':22}" + " ".join(f"{label:>6}" for _, label in COLUMNS))
    for name, figs in rows.items():
        print(f"  {name:22}" + " ".join(f"{fmt(figs[k]):>6}" for k, _ in COLUMNS))


def summary(scored: list[Scored], units: list[str]) -> dict[str, Any]:
    by_unit = {u: [r for r in scored if r.case["unit"] == u] for u in units}
    out: dict[str, Any] = {}
    for short, unit in UNITS.items():
        figs = figures(by_unit[unit]) if unit in by_unit else None
        out[f"{short}_exact"] = figs["exact_single"] if figs else None
        if short == "price":
            out["price_fp"] = figs["fp"] if figs else None
        if short == "date":
            languages = collections.defaultdict(list)
            for r in by_unit.get(unit, []):
                if r.case["kind"] == "single":
                    languages[r.case["language"]].append(r.right)
            mins = [sum(v) / len(v) for v in languages.values() if len(v) >= MIN_LANGUAGE_CASES]
            out["date_min_language_exact"] = min(mins) if mins else None
        out[f"{short}_ece"] = figs["ece"] if figs else None
    gaps = []
    for rows in by_unit.values():
        figs = figures(rows)
        if figs["n_nothing"]:
            gaps.append(abs(figs["nothing_conf"] - figs["nothing_acc"]))
    out["null_conf_gap"] = max(gaps) if gaps else None
    out["cases"] = len(scored)
    order = ["price_exact", "price_fp", "price_ece", "date_exact", "date_min_language_exact",
             "date_ece", "quantity_exact", "quantity_ece", "null_conf_gap", "cases"]  # fmt: skip
    return {k: (round(out[k], 4) if isinstance(out[k], float) else out[k]) for k in order}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["dev", "test"], default="test")
    parser.add_argument("--limit", type=int, default=None, help="at most N cases per unit")
    parser.add_argument("--units", default=",".join(UNITS),
                        help="comma-separated: price,date,quantity (or extract_* names)")  # fmt: skip
    parser.add_argument(
        "--no-model", action="store_true", help="fallback paths only (engine=False)"
    )
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--answers", type=Path, default=None, help="write each case's answer here")
    parser.add_argument("--cases", type=Path, default=None,
                        help="another dev file of cases in the same format "
                             "(benchmarks/external/duckling_prices.dev.jsonl)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.cases is not None and args.part != "dev":
        parser.error("--cases takes dev files only: the test part is cases.test.jsonl")

    units = []
    for name in (n.strip() for n in args.units.split(",") if n.strip()):
        unit = UNITS.get(name, name)
        if unit not in UNITS.values():
            parser.error(f"unknown unit {name!r}; choose from {', '.join(UNITS)}")
        units.append(unit)
    cases = load_cases(args.part, units, args.limit, args.cases)
    model = not args.no_model
    print(f"{len(cases)} cases of the {args.part} part, units {', '.join(units)}, "
          f"{'default model' if model else 'no model (fallbacks only)'}", file=sys.stderr)  # fmt: skip
    started = time.perf_counter()
    scored = asyncio.run(run_all(cases, units, model, max(1, args.concurrency)))
    elapsed = time.perf_counter() - started

    if args.answers:
        args.answers.write_text(
            "".join(json.dumps(s.record(), ensure_ascii=False) + "\n" for s in scored),
            encoding="utf-8",
        )
    print(f"external benchmark, part {args.part}: {len(scored)} cases in {elapsed:.1f} s "
          f"({'default model' if model else 'no model'})")  # fmt: skip
    print_table("per unit", {u: figures([r for r in scored if r.case["unit"] == u])
                             for u in units})  # fmt: skip
    for unit in units:
        rows = [r for r in scored if r.case["unit"] == unit]
        languages = sorted({r.case["language"] for r in rows})
        print_table(f"{unit} per language", {
            lang: figures([r for r in rows if r.case["language"] == lang]) for lang in languages
        })  # fmt: skip
    print('\n"nothing found" answers: mean confidence against how often there was nothing')
    for unit in units:
        figs = figures([r for r in scored if r.case["unit"] == unit])
        print(f"  {unit:22} n {figs['n_nothing']:5d}  conf {fmt(figs['nothing_conf'])}  "
              f"right {fmt(figs['nothing_acc'])}")  # fmt: skip
    paths = collections.Counter((r.case["unit"], r.path or r.error or "-") for r in scored)
    print("\npaths: " + ", ".join(f"{u.removeprefix('extract_')}/{p} {n}"
                                  for (u, p), n in sorted(paths.items())))  # fmt: skip
    print(json.dumps(summary(scored, units)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
