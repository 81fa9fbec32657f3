"""The values layer's finders on texts dense with one form, this checkout beside another.

    python benchmarks/dense_finders.py [--base PATH] [--chars N]

Hostile or merely long documents repeat one form thousands of times (a packing list of
"5 kg" lines, a table of temperatures). Each case times one finder over a text of ``--chars``
characters (default 100,000) made of one form, in a fresh process per case, so that no cache
of another case helps. With ``--base`` (the root of another checkout, e.g. a
``git worktree add /tmp/base <commit>``), each case runs there too, right after, and the ratio
base / this is printed. The last line is one JSON object: case -> seconds (and ratio).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = (
    ("find_money", "5 kg "),  # a unit symbol that is also some currency's symbol
    ("find_money", "1 GY$ "),  # a marker no window reads
    ("find_quantities", "5 "),
    ("find_quantities", "零下5度 "),  # a sign below zero before each number
    ("find_quantities", "삼만 원 "),  # Hangul numerals
    ("find_quantities", "five miles "),  # number words
    ("find_quantities", "一升"),  # CJK without spaces
    ("find_dates", "1/2/2020 "),
    ("find_numbers", "12 "),
)

_TIMER = """
import json, sys, time
from aau import values
values.find_money("5 kg"); values.find_quantities("5 kg"); values.find_dates("1 May 2020")
name, form, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = (form * (size // len(form) + 1))[:size]
started = time.perf_counter()
getattr(values, name)(text)
print(json.dumps(round(time.perf_counter() - started, 3)))
"""


def timed(root: Path, name: str, form: str, chars: int, timeout: float) -> float | None:
    """Seconds ``name`` takes on ``chars`` characters of ``form`` in the checkout at ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _TIMER, name, form, str(chars)],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=root, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, default=None, help="another checkout's root")
    parser.add_argument("--chars", type=int, default=100_000, help="characters per text")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    args = parser.parse_args()
    figures: dict[str, dict[str, float | None]] = {}
    for name, form in CASES:
        case = f"{name} {form!r}"
        now = timed(ROOT, name, form, args.chars, args.timeout)
        row: dict[str, float | None] = {"seconds": now}
        line = f"{case:34} {_shown(now):>9}"
        if args.base is not None:
            base = timed(args.base, name, form, args.chars, args.timeout)
            ratio = round(base / now, 2) if base is not None and now else None
            row |= {"base_seconds": base, "base_over_this": ratio}
            line += f"  base {_shown(base):>9}  {ratio if ratio is not None else '-'}x"
        print(line, flush=True)
        figures[case] = row
    print(json.dumps({"chars": args.chars, **figures}, ensure_ascii=False))
    return 0


def _shown(seconds: float | None) -> str:
    return "timeout" if seconds is None else f"{seconds:.2f} s"


if __name__ == "__main__":
    raise SystemExit(main())
