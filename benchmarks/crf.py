"""CRF path: inference latency per document and held-out quality, for the shipped units.

    python benchmarks/crf.py [--repeat 3]

For each shipped unit that has a CRF model (``extract_price``, ``extract_date``,
``extract_quantity``) it rebuilds the deterministic held-out split of the unit's annotated
examples, loads the shipped model once, then times ``CrfPath.extract`` on every held-out text
(tokenize, features, tagging, marginals, normalization); the best of ``--repeat`` passes counts
per text. ``crf_ms`` is the median over the held-out texts of all three units. It then retrains
each unit on its train split without writing anything and prints the held-out per-label F1
(span-level, exact match), and checks the CRF against each unit's hand-written few-shot
examples, which no template produced. The last line printed is one JSON object: ``crf_ms`` and
``primary_over_crf`` (how many times slower the primary LLM path is on the same inputs,
measured by :func:`measure_primary_latency` on the default model).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

import aau.fallbacks.crf  # noqa: E402, F401  # registers the "crf" kind
from aau.answers import PathContext  # noqa: E402
from aau.fallbacks.annotated import load_annotated  # noqa: E402
from aau.fallbacks.crf import CrfPath  # noqa: E402
from aau.fallbacks.crf_training import crf_spec_of, split_held_out, train_unit  # noqa: E402
from aau.spec.loader import read_yaml  # noqa: E402
from aau.spec.model import UnitSpec  # noqa: E402

UNITS = ("extract_price", "extract_date", "extract_quantity")


def _crf_blocks() -> dict[str, dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(
        "make_annotated", ROOT / "units/make_annotated.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CRF_BLOCKS


def load_unit_with_crf(name: str) -> UnitSpec:
    """The shipped unit; when its file declares no crf fallback, the generator's block is used."""
    source = ROOT / "units" / f"{name}.yaml"
    data, lines = read_yaml(source.read_text(encoding="utf-8"), source=str(source))
    fallbacks = data.get("fallbacks", [])
    if not any(f.get("kind") == "crf" for f in fallbacks):
        data["fallbacks"] = [_crf_blocks()[name], *fallbacks]
    return UnitSpec.from_dict(data, source=source, lines=lines)


def measure_primary_latency(units: list[UnitSpec], per_unit: int = 8) -> float | None:
    """Median primary-path (model) latency per document in ms, on held-out texts of ``units``.

    Each request runs alone on the shared engine (default model, warm, unit prefix cached), as
    one unit run's primary path would when nothing else is queued.
    """
    import asyncio

    import aau
    from aau.decoding import bound_schema
    from aau.engines.base import GenerationRequest
    from aau.engines.local import TransformersEngine
    from aau.prompts import render_messages

    engine = TransformersEngine(aau.EngineConfig())
    engine.load()
    times: list[float] = []
    try:
        for unit in units:
            spec = crf_spec_of(unit)
            _, held = split_held_out(load_annotated(spec.examples_path(unit), spec.labels),
                                     spec.training)  # fmt: skip
            schema = bound_schema(unit.output, max_string_length=unit.policy.max_string_length)
            for index, example in enumerate(held[: per_unit + 1]):
                request = GenerationRequest(
                    messages=render_messages(unit, example.text), schema=schema,
                    max_new_tokens=unit.policy.max_new_tokens, key=unit.key,
                )  # fmt: skip
                began = time.perf_counter()
                asyncio.run(engine.generate([request]))
                if index:  # the first fills the unit's prefix cache
                    times.append((time.perf_counter() - began) * 1000)
    finally:
        engine.close()
    return statistics.median(times)


def measure_crf_latency(units: list[UnitSpec], repeat: int) -> tuple[float, dict[str, float]]:
    """Median ``extract`` time in ms over the held-out texts of ``units``, overall and per unit."""
    every: list[float] = []
    per_unit: dict[str, float] = {}
    for unit in units:
        spec = crf_spec_of(unit)
        _, held = split_held_out(load_annotated(spec.examples_path(unit), spec.labels),
                                 spec.training)  # fmt: skip
        path = CrfPath(spec, unit)
        context = PathContext(unit_name=unit.name, output_schema=unit.output)
        path.extract(held[0].text, context)  # loads and checks the model once
        times = []
        for example in held:
            best = float("inf")
            for _ in range(repeat):
                began = time.perf_counter()
                path.extract(example.text, context)
                best = min(best, time.perf_counter() - began)
            times.append(best * 1000)
        per_unit[unit.name] = statistics.median(times)
        every += times
    return statistics.median(every), per_unit


def few_shot_accuracy(unit: UnitSpec) -> tuple[int, int]:
    """How many of the unit's own few-shot examples the CRF answers exactly."""
    path = CrfPath(crf_spec_of(unit), unit)
    context = PathContext(unit_name=unit.name, output_schema=unit.output)
    right = sum(path.extract(e.input, context).output == e.output for e in unit.prompt.examples)
    return right, len(unit.prompt.examples)


def main(argv: list[str] | None = None) -> None:
    """Print per-unit figures, then the JSON summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per text")
    args = parser.parse_args(argv)
    units = [load_unit_with_crf(name) for name in UNITS]
    crf_ms, per_unit = measure_crf_latency(units, args.repeat)
    for name, ms in per_unit.items():
        print(f"{name}: median CRF latency {ms:.2f} ms per held-out document")
    for unit in units:
        report = train_unit(unit, write=False)
        scores = ", ".join(f"{s.label} {s.f1:.3f}" for s in report.span_scores)
        fields = ", ".join(f"{k} {v:.3f}" for k, v in report.field_accuracy.items())
        right, total = few_shot_accuracy(unit)
        print(f"{unit.name}: held-out span F1 ({report.n_held_out} texts): {scores}; "
              f"fields right: {fields}; few-shot examples right: {right}/{total}")  # fmt: skip
    primary = measure_primary_latency(units)
    ratio = round(primary / crf_ms, 2) if primary is not None else None
    if primary is not None:
        print(f"primary path (default model, alone, prefix cached): median {primary:.0f} ms per "
              f"document; CRF {crf_ms:.3f} ms: the primary path is {ratio}x slower")  # fmt: skip
    print(json.dumps({"crf_ms": round(crf_ms, 3), "primary_over_crf": ratio}))


if __name__ == "__main__":
    main()
