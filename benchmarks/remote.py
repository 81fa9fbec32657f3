"""The remote engine against a bare client of the same vLLM server, and the in-process engine.

    python benchmarks/remote.py [--rounds 3] [--base-url URL]

The same 16 concurrent unit requests over 3 schemas (``extract_price``, ``extract_date``,
``extract_quantity``; the units' rendered prompts, bounded schemas and token budgets, greedy),
run three ways, alternating in each round, each mode over fresh texts of the same templates (so
that no mode finds another's prompts in vLLM's prefix cache; the units' instructions are cached
for all):

(a) ``remote``: AAU unit runs (``Pipeline.arun``: prompt, engine, validation, grounding and the
    fallbacks where the model's answer is refused) on vLLM through ``OpenAIEngine``;
(b) ``bare``: the official ``openai`` client sending the same messages and schemas to the same
    server, nothing else;
(c) ``local``: the same AAU unit runs on the in-process engine (default model and settings).

The calibrator is off in (a) and (c): its sentence embeddings are the same work on either
engine and are measured in ``benchmarks/engine.py``. vLLM serves the same weights (the
embedded GGUF, dequantised by ``.ci/vllm-setup``) in bfloat16; the local engine runs its default
float32. Without ``--base-url`` the script starts vLLM on loopback itself (tests/remote).

Prints units/s and p50/p95 latency of each, per round and as medians; the last line is one JSON
object: ``remote_units_s``, ``bare_units_s``, ``local_units_s``, ``remote_over_bare`` (target
>= 0.95: the framework costs at most 5%), ``local_over_vllm`` (local over bare).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.remote holds the vLLM launcher the tests use

import aau  # noqa: E402
from aau.prompts import render_messages  # noqa: E402
from aau.runner import UnitRunner  # noqa: E402
from benchmarks._stats import percentile  # noqa: E402

UNIT_NAMES = ("extract_price", "extract_date", "extract_quantity")
TEXTS = [
    "Invoice {i}: {q} boxes delivered on {d} March 2024, total due EUR {a},50.",
    "Please ship {q} kg of copper by June {d}, 2025; the agreed price is USD {a},000.",
    "Rechnung {i} vom {d}.04.2023 über {q} Stück, Gesamtbetrag {a}9,90 €.",
    "Order {i}: {q} pallets, delivery on 2024-05-{d}, amount payable GBP {a}.00.",
]
COUNT = 16


def work(offset: int) -> list[tuple[str, str]]:
    """16 (unit, text) pairs, fresh for each offset: the same in every mode of a round."""
    pairs = []
    for i in range(offset, offset + COUNT):
        text = TEXTS[i % len(TEXTS)].format(i=1000 + i, q=3 + i % 17, d=1 + i % 27, a=100 + i)
        pairs.append((UNIT_NAMES[i % len(UNIT_NAMES)], text))
    return pairs


async def aau_round(pipelines: dict[str, aau.Pipeline], pairs: list[tuple[str, str]]) -> dict:
    async def one(unit: str, text: str) -> tuple[float, bool]:
        started = time.perf_counter()
        result = await pipelines[unit].arun(text)
        return (time.perf_counter() - started) * 1000, result.units[unit].error is None

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(u, t) for u, t in pairs))
    wall = time.perf_counter() - started
    return summary(wall, [ms for ms, _ in outcomes], sum(ok for _, ok in outcomes))


async def bare_round(client: Any, model: str, runners: dict[str, UnitRunner],
                     pairs: list[tuple[str, str]]) -> dict:  # fmt: skip
    async def one(unit: str, text: str) -> tuple[float, bool]:
        runner = runners[unit]
        started = time.perf_counter()
        response = await client.chat.completions.create(
            model=model,
            messages=render_messages(runner.spec, text),
            max_tokens=runner.spec.policy.max_new_tokens,
            temperature=0.0,
            logprobs=True,
            top_logprobs=5,
            response_format={"type": "json_schema", "json_schema": {
                "name": unit, "schema": runner.schema, "strict": True}},
        )  # fmt: skip
        ok = bool(response.choices and response.choices[0].message.content)
        return (time.perf_counter() - started) * 1000, ok

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(u, t) for u, t in pairs))
    wall = time.perf_counter() - started
    return summary(wall, [ms for ms, _ in outcomes], sum(ok for _, ok in outcomes))


def summary(wall_s: float, latencies: list[float], answered: int) -> dict[str, float]:
    return {
        "units_s": round(COUNT / wall_s, 3),
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "answered": answered,
    }


@contextlib.contextmanager
def server(base_url: str | None) -> Iterator[str]:
    if base_url:
        yield base_url
        return
    from tests.remote.vllm_server import VllmServer

    with VllmServer() as started:
        yield started.url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base-url", help="a running vLLM server (default: start one)")
    parser.add_argument("--served-model", default=None)
    args = parser.parse_args()

    import openai

    units = [aau.load_unit(ROOT / "units" / f"{n}.yaml") for n in UNIT_NAMES]
    with server(args.base_url) as url:
        remote = aau.build_engine(aau.EngineConfig(
            backend="openai", remote={"base_urls": [url], "served_model": args.served_model}))  # fmt: skip
        local = aau.build_engine(aau.EngineConfig())
        modes = {
            "remote": {u.name: aau.Pipeline([u], engine=remote, calibrator=False, terms=False)
                       for u in units},
            "local": {u.name: aau.Pipeline([u], engine=local, calibrator=False, terms=False)
                      for u in units},
        }  # fmt: skip
        runners = {u.name: modes["remote"][u.name].runners[0] for u in units}
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)

        async def measure() -> dict[str, list[dict]]:
            await remote.ready()
            model = remote.served_model  # type: ignore[attr-defined]
            # Warm-up: weights loaded, schemas compiled and unit prefixes cached on both sides.
            warm = work(10_000)
            await aau_round(modes["remote"], warm)
            await bare_round(client, model, runners, warm)
            await aau_round(modes["local"], warm)
            rows: dict[str, list[dict]] = {"remote": [], "bare": [], "local": []}
            for round_index in range(args.rounds):
                order = ["remote", "bare", "local"]
                # Alternate who goes first: a server warming up must not favour one side.
                order = order[round_index % 3 :] + order[: round_index % 3]
                for mode in order:
                    # Each mode its own fresh texts (same templates, other numbers): a mode that
                    # sent the same prompts second would find them whole in vLLM's prefix cache.
                    pairs = work(
                        (round_index * 3 + ["remote", "bare", "local"].index(mode)) * COUNT
                    )
                    if mode == "bare":
                        row = await bare_round(client, model, runners, pairs)
                    else:
                        row = await aau_round(modes[mode], pairs)
                    rows[mode].append(row)
                    print(f"round {round_index + 1} {mode:6s} {json.dumps(row)}", flush=True)
            return rows

        rows = asyncio.run(measure())
        local.close()
    medians = {m: statistics.median(r["units_s"] for r in rs) for m, rs in rows.items()}
    for mode, rs in rows.items():
        print(f"{mode:6s} units/s {medians[mode]:.2f}  p50 "
              f"{statistics.median(r['p50_ms'] for r in rs):.0f} ms  p95 "
              f"{statistics.median(r['p95_ms'] for r in rs):.0f} ms")  # fmt: skip
    print(json.dumps({
        "remote_units_s": round(medians["remote"], 3),
        "bare_units_s": round(medians["bare"], 3),
        "local_units_s": round(medians["local"], 3),
        "remote_over_bare": round(medians["remote"] / medians["bare"], 3),
        "local_over_vllm": round(medians["local"] / medians["bare"], 3),
        "rounds": args.rounds,
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
