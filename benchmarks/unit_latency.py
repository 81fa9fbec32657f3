"""Engine load time (first start converts the GGUF, later starts read the cache) and the median
latency of one unit run on the default model, measured in one run.

    python benchmarks/unit_latency.py [--runs 15]

The last printed line is one JSON object: ``cold_load_s``, ``warm_load_s``, ``median_unit_ms``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import aau
from aau.engines.local import TransformersEngine

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "Invoice 2024-117: total due EUR {n},250.00 by 30 April.",
    "Please deliver {n}0 boxes of paper to Berlin by 3 May 2024.",
    "The licence fee is ${n},000 per year.",
    "Rechnung vom 1{n}.03.2024, Betrag 4{n}9,90 €.",
    "No amounts in this note {n}; see you next week.",
]


def load_seconds(cache_dir: str) -> float:
    engine = TransformersEngine(aau.EngineConfig(cache_dir=cache_dir))
    started = time.perf_counter()
    engine.load()
    seconds = time.perf_counter() - started
    engine.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cold = load_seconds(cache)  # converts and caches the GGUF weights
        warm = load_seconds(cache)  # reads the converted weights
        engine = TransformersEngine(aau.EngineConfig(cache_dir=cache))
        pipeline = aau.Pipeline([ROOT / "units" / "extract_price.yaml"], engine=engine)
        pipeline.run("warm-up: total EUR 5.")
        latencies = []
        for i in range(args.runs):
            text = TEXTS[i % len(TEXTS)].format(n=i % 9 + 1)
            started = time.perf_counter()
            pipeline.run(text)
            latencies.append((time.perf_counter() - started) * 1000)
    median = statistics.median(latencies)
    print(f"engine load: first start {cold:.1f} s (GGUF conversion), later starts {warm:.1f} s")
    print(f"one unit run (extract_price, default model): median {median:.0f} ms over {args.runs}")
    print(json.dumps({"cold_load_s": round(cold, 2), "warm_load_s": round(warm, 2),
                      "median_unit_ms": round(median, 1)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
