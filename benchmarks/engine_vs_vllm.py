"""The in-process engine against vLLM, both behind AAU, side by side in one run.

    python benchmarks/engine_vs_vllm.py [--rounds 3] [--dtype float32|bfloat16]

The same 16 concurrent texts (a fixed list of short business sentences, each with a price, a
date and a quantity) through one ``Pipeline`` of the 3 shipped units (``extract_price``,
``extract_date``, ``extract_quantity``): ``Pipeline.arun`` gathered over the 16 texts, 48 unit
runs at once, on

(a) ``local``: AAU's in-process engine (``backend: transformers``, the embedded default model,
    SmolLM2, default settings);
(b) ``vllm``: a vLLM CPU server on loopback (``tests/remote/vllm_server.py``, the same weights:
    the embedded GGUF dequantised by ``.ci/vllm-setup``) through AAU's remote engine
    (``backend: openai``).

Dtypes: both sides run ``--dtype`` (default float32, the in-process engine's default;
``bfloat16`` runs both in bfloat16, vLLM's own choice on CPU). ``--vllm-dtype`` sets vLLM's
apart (a comparison across dtypes; the output then says they differ).

Settings: the in-process engine's defaults but the dtype; vLLM as ``VllmServer`` starts it
(its OpenMP thread bound to one core by its own ``auto`` binding, the API server on the other).

``--warmup`` rounds on each engine first (default 2; weights, compiled schemas, prefix caches),
not counted; then ``--rounds`` rounds of each, alternating (local, vllm, local, vllm, ...). Two,
because with the vLLM server's memory taken the in-process engine's first rounds run at a
fraction of its speed while its own memory is first touched (measured: 1.4, 6.7, 10.8, 12.8
units/s over four rounds with the server up, against 4.4, 14.4, 14.2, 14.6 without it); vLLM
touches its memory at start, allocating its KV cache whole. The texts are the
same in every round, so both engines' prefix caches may hold whole prompts from earlier rounds.
The calibrator and the term layer are off on both (their work does not depend on the engine).

Per engine: units/s (48 unit runs over the round's wall time, median over rounds), p95 unit
latency (``timings["total_ms"]``) and time to first token. vLLM's TTFT is the mean of its own
``vllm:time_to_first_token_seconds`` histogram over the round (``/metrics``); the in-process
engine does not stream, so its TTFT is a proxy: the mean of each unit result's
``timings["queue_ms"] + timings["prefill_ms"]`` (the output names the source of each). The last
line is one JSON object: ``local_over_vllm`` (local units/s over vLLM's; target >= 1.0),
``local_units_s``, ``vllm_units_s``, ``ttft_ratio`` (local TTFT over vLLM's), ``rounds``,
``local_dtype``, ``vllm_dtype``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.remote holds the vLLM launcher the tests use

import aau  # noqa: E402
from benchmarks._stats import percentile  # noqa: E402

UNIT_NAMES = ("extract_price", "extract_date", "extract_quantity")
TEXTS = [
    "Invoice 4411: 12 boxes of printer paper delivered on 3 March 2024, total EUR 149.50.",
    "Please ship 250 kg of copper wire by June 14, 2025; the agreed price is USD 3,200.",
    "Order 7781 for 40 office chairs, delivery on 2024-05-21, amount payable GBP 5,960.00.",
    "We received 6 pallets of cement on 11/02/2023 and paid CHF 1,250 on arrival.",
    "The quote dated 28 January 2025 covers 300 units of LED panels at EUR 18.90 each.",
    "On April 2, 2024 the client ordered 15 laptops for a total of USD 17,985.",
    "Contract signed 9 September 2023: 1,000 litres of diesel at EUR 1.62 per litre.",
    "Shipment of 75 cartons arrived on 30 Oct 2024; freight charges came to USD 410.",
    "Please invoice 8 hours of consulting at EUR 120 per hour, work done on 5 July 2024.",
    "Purchase order 5520: 2 forklifts, delivered 17.08.2023, net price EUR 48,000.",
    "The supplier will deliver 500 sheets of plywood on 2025-01-09 for CAD 11,250.",
    "Refund of AUD 89.99 issued on 12 December 2024 for 3 returned headsets.",
    "By 1 March 2025 we need 20 tonnes of steel rebar; budget is EUR 15,400.",
    "Receipt 0093: 4 cases of wine bought on 22 May 2024 for GBP 312.",
    "The lease starts on 1 August 2024 and covers 3 vans at USD 1,150 per month.",
    "Order of 60 safety helmets placed 19 Feb 2024, invoice total SEK 7,800.",
]
UNIT_RUNS = len(TEXTS) * len(UNIT_NAMES)
TTFT_METRIC = re.compile(r"^vllm:time_to_first_token_seconds_(sum|count)\{[^}]*\}\s+(\S+)$", re.M)


def vllm_ttft_totals(url: str) -> tuple[float, float] | None:
    """vLLM's TTFT histogram so far: (sum of seconds, count); None when it has none."""
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    totals = {"sum": 0.0, "count": 0.0}
    found = False
    for kind, value in TTFT_METRIC.findall(text):
        totals[kind] += float(value)
        found = True
    return (totals["sum"], totals["count"]) if found else None


async def one_round(pipeline: aau.Pipeline, metrics_url: str | None = None) -> dict:
    before = vllm_ttft_totals(metrics_url) if metrics_url else None
    started = time.perf_counter()
    results = await asyncio.gather(*(pipeline.arun(text) for text in TEXTS))
    wall = time.perf_counter() - started
    units = [r.units[name] for r in results for name in UNIT_NAMES]
    totals = [u.timings["total_ms"] for u in units]
    proxy = [u.timings.get("queue_ms", 0.0) + u.timings.get("prefill_ms", 0.0) for u in units]
    row = {
        "units_s": round(UNIT_RUNS / wall, 3),
        "p95_ms": round(percentile(totals, 0.95), 1),
        "ttft_ms": round(statistics.fmean(proxy), 1),
        "ttft_source": "queue_ms+prefill_ms",
        "errors": sum(u.error is not None for u in units),
    }
    after = vllm_ttft_totals(metrics_url) if metrics_url else None
    if before is not None and after is not None and after[1] > before[1]:
        row["ttft_ms"] = round((after[0] - before[0]) / (after[1] - before[1]) * 1000, 1)
        row["ttft_source"] = "vllm:time_to_first_token_seconds"
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2, help="uncounted rounds on each first")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--vllm-dtype", choices=["bfloat16", "float32"],
                        help="vLLM's dtype when it should differ from --dtype")  # fmt: skip
    args = parser.parse_args()
    args.vllm_dtype = args.vllm_dtype or args.dtype

    from tests.remote.vllm_server import VllmServer

    units = [aau.load_unit(ROOT / "units" / f"{n}.yaml") for n in UNIT_NAMES]
    local_config = aau.EngineConfig(dtype=args.dtype)
    local_dtype = local_config.dtype
    extra = [] if args.vllm_dtype == "bfloat16" else ["--dtype", args.vllm_dtype]
    rows: dict[str, list[dict]] = {"local": [], "vllm": []}
    local = aau.build_engine(local_config)
    try:
        # The context manager stops the server (its whole process group) however this ends.
        with VllmServer(log_requests=False, extra_args=extra) as server:
            remote = aau.build_engine(aau.EngineConfig(
                backend="openai", remote={"base_urls": [server.url], "served_model": None}))  # fmt: skip
            pipelines = {
                "local": aau.Pipeline(units, engine=local, calibrator=False, terms=False),
                "vllm": aau.Pipeline(units, engine=remote, calibrator=False, terms=False),
            }
            metrics = {"local": None, "vllm": server.url}

            async def measure() -> None:
                await remote.ready()
                for _ in range(args.warmup):  # not counted
                    for mode in ("local", "vllm"):
                        row = await one_round(pipelines[mode], metrics[mode])
                        print(f"warm-up {mode:5s} {json.dumps(row)}", flush=True)
                for round_index in range(args.rounds):
                    for mode in ("local", "vllm"):
                        row = await one_round(pipelines[mode], metrics[mode])
                        rows[mode].append(row)
                        print(f"round {round_index + 1} {mode:5s} {json.dumps(row)}", flush=True)

            asyncio.run(measure())
    finally:
        local.close()

    medians = {}
    for mode, rs in rows.items():
        medians[mode] = {
            "units_s": statistics.median(r["units_s"] for r in rs),
            "p95_ms": statistics.median(r["p95_ms"] for r in rs),
            "ttft_ms": statistics.median(r["ttft_ms"] for r in rs),
            "ttft_source": "/".join(sorted({r["ttft_source"] for r in rs})),
        }
        m = medians[mode]
        print(f"{mode:5s} units/s {m['units_s']:.2f}  p95 {m['p95_ms']:.0f} ms  "
              f"TTFT {m['ttft_ms']:.0f} ms ({m['ttft_source']})")  # fmt: skip
    if local_dtype != args.vllm_dtype:
        print(f"dtypes differ: local {local_dtype}, vllm {args.vllm_dtype}")
    print(json.dumps({
        "local_over_vllm": round(medians["local"]["units_s"] / medians["vllm"]["units_s"], 3),
        "local_units_s": round(medians["local"]["units_s"], 3),
        "vllm_units_s": round(medians["vllm"]["units_s"], 3),
        "ttft_ratio": round(medians["local"]["ttft_ms"] / medians["vllm"]["ttft_ms"], 3),
        "local_ttft_source": medians["local"]["ttft_source"],
        "vllm_ttft_source": medians["vllm"]["ttft_source"],
        "rounds": args.rounds,
        "warmup_rounds": args.warmup,
        "local_dtype": local_dtype,
        "vllm_dtype": args.vllm_dtype,
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
