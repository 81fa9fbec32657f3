"""Does merging dictionary terms into single tokens make the model extract better?

    python benchmarks/term_merging.py [--per-unit 60]

For each shipped unit, its labelled examples (``units/*.annotated.jsonl``) whose text holds at
least one term of the shipped dictionaries are run through the unit's model path alone (no
fallbacks, no calibrator, threshold 0: what the model answers is what is scored), once on an
engine that reads terms as merged tokens and once on one that does not — same model, same
prompts, same examples. An answer is right when it equals the gold output the CRF trainer
derives from the labelled spans. The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from aau.engines import EngineConfig
from aau.engines.local import TransformersEngine
from aau.fallbacks.annotated import load_annotated
from aau.fallbacks.crf import CrfFallback
from aau.fallbacks.crf_training import gold_output
from aau.pipeline import Pipeline, load_unit
from aau.terms import TermStore

ROOT = Path(__file__).resolve().parent.parent
UNITS = ("extract_price", "extract_date", "extract_quantity")


def examples_with_terms(per_unit: int, store: TermStore) -> dict[str, list[tuple[str, Any]]]:
    """Up to ``per_unit`` (text, gold) pairs per unit whose text holds a dictionary term."""
    term_set = store.term_set(None)
    chosen: dict[str, list[tuple[str, Any]]] = {}
    for name in UNITS:
        unit = load_unit(ROOT / "units" / f"{name}.yaml")
        crf = next(f for f in unit.fallbacks if isinstance(f, CrfFallback))
        examples = load_annotated(crf.examples_path(unit), crf.labels)
        with_terms = [e for e in examples if term_set.find(e.text)]
        chosen[name] = [(e.text, gold_output(e, crf)) for e in with_terms[:per_unit]]
    return chosen


def model_only(name: str) -> Any:
    unit = load_unit(ROOT / "units" / f"{name}.yaml")
    # No deadline: a slow (shared) machine must not turn answers into timeouts.
    policy = unit.policy.model_copy(update={"threshold": 0.0, "timeout_s": 3600})
    return unit.model_copy(update={"fallbacks": [], "policy": policy})


async def accuracy(
    engine: TransformersEngine, store: TermStore, chosen: dict[str, list[tuple[str, Any]]]
) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {}
    for name, pairs in chosen.items():
        pipeline = Pipeline([model_only(name)], engine=engine, calibrator=False, terms=store)
        results = await asyncio.gather(*(pipeline.arun(text) for text, _ in pairs))
        right = sum(r[name].output == gold for r, (_, gold) in zip(results, pairs, strict=True))
        prompt = sum(r[name].tokens.get("prompt", 0) for r in results)
        errors = sum(r[name].error is not None for r in results)
        figures[name] = {"n": len(pairs), "accuracy": right / len(pairs), "errors": errors,
                         "prompt_tokens": prompt / len(pairs)}  # fmt: skip
    return figures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-unit", type=int, default=60)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    store = TermStore(ROOT / ".benchmarks" / "no-tenants")
    chosen = examples_with_terms(args.per_unit, store)
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for merging in (False, True):
        engine = TransformersEngine(EngineConfig(term_merging=merging, threads=args.threads))
        engine.load()
        started = time.perf_counter()
        rows["merged" if merging else "plain"] = asyncio.run(accuracy(engine, store, chosen))
        print(f"{'merged' if merging else 'plain'}: {time.perf_counter() - started:.0f} s")
        engine.close()
    print(f"{'unit':<18} {'texts':>5} {'plain':>7} {'merged':>7} {'prompt tokens':>20} "
          f"{'errors':>9}")  # fmt: skip
    total = {"plain": 0.0, "merged": 0.0}
    count = 0
    for name in UNITS:
        plain, merged = rows["plain"][name], rows["merged"][name]
        print(f"{name:<18} {plain['n']:>5.0f} {plain['accuracy']:>7.3f} {merged['accuracy']:>7.3f} "
              f"{plain['prompt_tokens']:>9.0f} -> {merged['prompt_tokens']:>6.0f} "
              f"{plain['errors']:>4.0f} {merged['errors']:>4.0f}")  # fmt: skip
        for key in total:
            total[key] += rows[key][name]["accuracy"] * plain["n"]
        count += int(plain["n"])
    result = {
        "texts": count,
        "accuracy_plain": round(total["plain"] / count, 3),
        "accuracy_merged": round(total["merged"] / count, 3),
    }
    print(f"{'overall':<18} {count:>5} {result['accuracy_plain']:>7.3f} "
          f"{result['accuracy_merged']:>7.3f}")  # fmt: skip
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
