"""Schema compile time per constraint backend, measured side by side on the shipped units.

    python benchmarks/constraints.py

Both backends come through outlines' backend layer (``aau.decoding.ConstraintCompiler``); the
last line is one JSON object: median compile ms per backend and their ratio.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import aau
from aau.decoding import ConstraintCompiler, bound_schema
from aau.engines.local import TransformersEngine

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    engine = TransformersEngine(aau.EngineConfig())
    engine.load()
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    units = [aau.load_unit(p) for p in sorted((ROOT / "units").glob("*.yaml")) if "." not in p.stem]
    schemas = [bound_schema(u.output, max_string_length=u.policy.max_string_length) for u in units]
    figures: dict[str, float] = {}
    for backend in ("xgrammar", "outlines_core"):
        times = []
        for _ in range(3):  # a fresh compiler each round: no cache hit is timed
            compiler = ConstraintCompiler(
                engine.tokenizer, vocab, model=engine.model, backend=backend
            )
            compiler.compile({"type": "object", "properties": {}})  # builds the vocabulary once
            for schema in schemas:
                times.append(compiler.compile(schema).compile_ms)
        figures[f"{backend}_ms"] = statistics.median(times)
        print(
            f"{backend}: median {figures[f'{backend}_ms']:.1f} ms per unit schema "
            f"(min {min(times):.1f}, max {max(times):.1f})"
        )
    engine.close()
    figures["outlines_core_over_xgrammar"] = figures["outlines_core_ms"] / figures["xgrammar_ms"]
    print(json.dumps({k: round(v, 2) for k, v in figures.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
