"""Router accuracy on held-out requests, with and without term hits, side by side.

    python benchmarks/routing.py [--units units] [--fit] [--all]

``benchmarks/routing_requests.jsonl`` holds requests and document excerpts written for the
shipped units (lines ``{"text", "units", "source"}``), never used to fit: the router learns
only from the units' own data (``Router.fit``). The requests are split by a stable hash of the
text into dev (a third) and test (the rest); figures are on test only. A request's expected
set is the listed units that are present in ``--units`` (units named there but not written yet
are left out, so the file serves whatever units exist).

What "applies" means in the file: a question applies to the units that answer what it asks; a
document excerpt to each unit that has something to find in it: ``extract_price`` a price,
fee, charge or total (not a deductible, penalty or revenue figure), ``extract_date`` and
``validate_date_format`` a written calendar date, ``extract_quantity`` a count or measure of
goods or work, ``detect_complaint`` any e-mail or customer message (it says whether it is a
complaint), the others their clause or figure; chit-chat applies to none.

Printed per model (terms / no terms): exact-set accuracy (the request's set of applying units
exactly right), per-decision accuracy (each request x unit), precision and recall of
"applies"; first with the artifact's threshold (chosen when fitting, from the units' data
only), then with the threshold that maximizes exact-set accuracy on the dev part. The last line
is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from aau.routing import Router, RouterArtifactError, default_router_path
from aau.spec.model import UnitSpec

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = ROOT / "benchmarks" / "routing_requests.jsonl"


def split_of(text: str) -> str:
    """``dev`` for a third of the requests (stable hash of the text), ``test`` for the rest."""
    return "dev" if hashlib.sha256(text.encode()).digest()[0] % 3 == 0 else "test"


def unit_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.yaml") if "." not in p.stem)


def scores(probabilities: np.ndarray, expected: np.ndarray, threshold: float) -> dict[str, float]:
    decided = probabilities >= threshold
    tp = float((decided & expected).sum())
    return {
        "exact_set": round(float((decided == expected).all(axis=1).mean()), 4),
        "per_decision": round(float((decided == expected).mean()), 4),
        "precision": round(tp / max(float(decided.sum()), 1.0), 4),
        "recall": round(tp / max(float(expected.sum()), 1.0), 4),
        "threshold": round(threshold, 3),
    }


def dev_threshold(probabilities: np.ndarray, expected: np.ndarray) -> float:
    grid = np.round(np.arange(0.05, 0.96, 0.025), 3)
    accuracy = [float(((probabilities >= t) == expected).all(axis=1).mean()) for t in grid]
    return float(grid[int(np.argmax(accuracy))])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", default=str(ROOT / "units"), help="the units folder")
    parser.add_argument("--requests", default=str(REQUESTS))
    parser.add_argument("--router", default=str(default_router_path()), help="the artifact")
    parser.add_argument("--fit", action="store_true", help="refit the router (and save it)")
    parser.add_argument("--all", action="store_true", help="also print every test miss")
    args = parser.parse_args()

    units = [UnitSpec.from_file(p) for p in unit_files(Path(args.units))]
    names = [u.name for u in units]
    started = time.perf_counter()
    if args.fit:
        router = Router.fit(units)
        router.save(args.router)
        print(f"fitted on {len(units)} units in {time.perf_counter() - started:.1f} s: "
              f"{router.report}", file=sys.stderr)  # fmt: skip
    else:
        try:
            router = Router.load(args.router, units=units)
        except RouterArtifactError as exc:
            print(f"error: {exc} (run with --fit)", file=sys.stderr)
            return 2
    rows = [json.loads(line) for line in Path(args.requests).read_text().splitlines() if line]
    print(f"units: {', '.join(router.units)}")
    order = router.units
    figures: dict[str, dict[str, dict[str, float]]] = {}
    misses: list[str] = []
    for key, use_terms in (("terms", True), ("no_terms", False)):
        probs: dict[str, list[list[float]]] = {"dev": [], "test": []}
        wanted: dict[str, list[list[bool]]] = {"dev": [], "test": []}
        for row in rows:
            decision = router.route(row["text"], use_terms=use_terms)
            p = {u.unit: u.probability for u in decision.units}
            part = split_of(row["text"])
            probs[part].append([p[n] for n in order])
            expected = set(row["units"]) & set(names)
            wanted[part].append([n in expected for n in order])
            if part == "test" and use_terms and set(decision.applies) != expected:
                misses.append(f"  want {sorted(expected)} got {sorted(decision.applies)}: "
                              f"{row['text'][:90]!r}")  # fmt: skip
        dev_p, dev_y = np.array(probs["dev"]), np.array(wanted["dev"])
        test_p, test_y = np.array(probs["test"]), np.array(wanted["test"])
        threshold = router.models[key].threshold
        figures[key] = {
            "fitted_threshold": scores(test_p, test_y, threshold),
            "dev_threshold": scores(test_p, test_y, dev_threshold(dev_p, dev_y)),
        }
    n_test = sum(split_of(r["text"]) == "test" for r in rows)
    print(f"requests: {len(rows)} ({n_test} test, {len(rows) - n_test} dev); figures on test")
    print(f"{'':28} {'with terms':>12} {'no terms':>12}")
    for how in ("fitted_threshold", "dev_threshold"):
        for metric in ("exact_set", "per_decision", "precision", "recall", "threshold"):
            a, b = figures["terms"][how][metric], figures["no_terms"][how][metric]
            print(f"{how + ' ' + metric:28} {a:12.3f} {b:12.3f}")
    if args.all:
        print("test misses (with terms, fitted threshold):")
        print("\n".join(misses))
    print(json.dumps({"units": len(order), "test": n_test, **figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
