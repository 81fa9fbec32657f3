"""`aau batch` over 200 lines, some of them bad: every line answered, in order, per contract.

Writes the input to a temp folder, runs the real CLI on the default model, and checks: one output
line per input line, ids in input order, every unit result with the contract keys, every
non-null output valid against its unit's schema, bad lines carrying an error code. Prints the
figures; the last line is one JSON object.

    python benchmarks/batch.py [--lines 200] [--cold]

``--cold`` runs the batch in a fresh process with an empty cache folder (``AAU_CACHE_DIR``: the
GGUF converted, the schemas compiled anew): its first unit runs wait for the model to load, a
wait reported as ``ready_ms`` and not charged to their ``policy.timeout_s``; ``engine_timeouts``
counts the runs that timed out all the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
UNITS = sorted(p for p in (ROOT / "units").glob("*.yaml") if "." not in p.stem)
CONTRACT = {"output", "confidence", "path", "error", "timings", "trace"}

GOOD = [
    "Invoice {n}: total due EUR {a:,.2f}, issued on {d} March 2024 for {q} boxes.",
    "Please ship {q} kg of copper wire; the agreed price is USD {a:,.0f}. "
    "Deadline: 2025-0{m}-1{m}.",
    "Rechnung vom {d}.0{m}.2023: Gesamtbetrag {a:.2f} € für {q} Stück.",
    "Meeting notes: we discussed the roadmap and the hiring plan; nothing to order today.",
    "Le contrat signé le {d}/0{m}/2022 prévoit une pénalité de {a:.0f} euros.",
]
BAD = [
    b"this is not json",
    b'{"text": "no id here"}',
    b'{"id": "no-text"}',
    b'{"id": "num", "text": 42}',
    b'{"id": "bad-utf8", "text": "caf\xe9"}',
    b'{"id": "empty", "text": "   "}',
    b'{"id": "binary", "text": "\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006"}',
    b"[1, 2, 3]",
]


def make_input(lines: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    for i in range(lines):
        if i % 10 == 9:
            out.append(BAD[(i // 10) % len(BAD)])
            continue
        text = rng.choice(GOOD).format(
            n=1000 + i, a=rng.uniform(10, 90000), d=rng.randint(10, 28), m=rng.randint(1, 9),
            q=rng.randint(2, 900),
        )  # fmt: skip
        out.append(json.dumps({"id": f"doc-{i}", "text": text}).encode())
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--cold", action="store_true", help="an empty cache folder")
    args = parser.parse_args()
    schemas = {p.stem: __import__("aau").load_unit(p).output for p in UNITS}
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        lines = make_input(args.lines)
        source.write_bytes(b"\n".join(lines) + b"\n")
        started = time.perf_counter()
        cmd = [sys.executable, "-m", "aau.cli.main", "batch", *map(str, UNITS),
               "--input", str(source), "--output", str(target)]  # fmt: skip
        env = {**os.environ, "AAU_CACHE_DIR": str(Path(tmp) / "cache")} if args.cold else None
        subprocess.run(cmd, check=True, env=env)
        seconds = time.perf_counter() - started
        results = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(results) == len(lines), f"{len(results)} output lines for {len(lines)} inputs"
    errors, valid, paths, codes, ready_ms = 0, 0, {}, {}, 0.0
    for number, (raw, result) in enumerate(zip(lines, results, strict=True), start=1):
        try:  # the id is recovered even from a line that is not UTF-8
            record = json.loads(raw.decode("utf-8", "replace"))
            expected_id = record.get("id") if isinstance(record, dict) else None
        except ValueError:
            expected_id = None
        got = result["id"]
        assert got == expected_id, f"line {number}: id {got!r}, expected {expected_id!r}"
        for name, unit in result["units"].items():
            missing = CONTRACT - unit.keys()
            assert not missing, f"line {number} {name}: missing {missing}"
            if unit["output"] is not None:
                jsonschema.validate(unit["output"], schemas[name])
                valid += 1
            else:
                assert unit["error"], f"line {number} {name}: null output without an error"
                assert unit["error"]["code"], f"line {number} {name}: no error code"
                errors += 1
            paths[unit["path"]] = paths.get(unit["path"], 0) + 1
            for attempt in unit.get("attempts") or []:
                if attempt.get("error"):
                    code = attempt["error"]["code"]
                    codes[code] = codes.get(code, 0) + 1
            ready_ms = max(ready_ms, (unit.get("timings") or {}).get("ready_ms", 0.0))
    figures = {
        "lines_in": len(lines), "lines_out": len(results), "unit_results": valid + errors,
        "valid_outputs": valid, "coded_errors": errors, "paths": paths,
        "seconds": round(seconds, 1), "lines_per_s": round(len(lines) / seconds, 3),
        "cold": args.cold, "engine_timeouts": codes.get("engine_timeout", 0),
        "attempt_errors": codes, "max_ready_ms": round(ready_ms, 1),
    }  # fmt: skip
    print(f"{len(results)}/{len(lines)} lines, in order; {valid} schema-valid outputs, "
          f"{errors} coded errors; paths {paths}; {seconds:.0f} s")  # fmt: skip
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
