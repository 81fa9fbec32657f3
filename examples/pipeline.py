"""The example pipeline: the three shipped units over every document in examples/docs/
(plain-text e-mails and invoices, and a scanned invoice read through tesseract OCR).

Runs on the embedded default model (SmolLM2-135M-Instruct, CPU), prints a table, then the JSON
results, one line per document (the same lines ``aau batch`` writes).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import aau
from aau.cli.render import print_table

ROOT = Path(__file__).resolve().parent.parent
UNITS = sorted(p for p in (ROOT / "units").glob("*.yaml") if "." not in p.stem)
DOCS = sorted(p for p in (ROOT / "examples" / "docs").iterdir() if p.suffix in {".txt", ".png"})


def main() -> int:
    started = time.perf_counter()
    pipeline = aau.Pipeline([aau.load_unit(p) for p in UNITS])
    results = []
    for doc in DOCS:
        results.append(pipeline.run(aau.Document.from_path(doc), id=doc.name))
        print(f"analysed {doc.name}", file=sys.stderr)
    print_table(results)
    for result in results:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    print(f"{len(DOCS)} documents x {len(UNITS)} units in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
