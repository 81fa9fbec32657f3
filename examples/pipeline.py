"""The example pipeline: the routed ``document_review`` pipeline over every document in
examples/docs/ (e-mails, an invoice, a claim thread, a contract PDF, a financial report page and
a scanned invoice, the images read through tesseract OCR).

For each document the router picks the units that apply (``units/pipelines/document_review.yaml``
has ``route: true``), and only those run, on the embedded default model (SmolLM2-135M-Instruct,
CPU) with their fallbacks behind it. It prints what the router chose and why, a table of the
answers, where each value came from (the words it was read from, with page and OCR quality),
then the JSON results, one line per document (the lines ``aau batch`` writes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import aau
from aau.cli.render import print_table

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "units" / "pipelines" / "document_review.yaml"
DOCS = sorted(
    p for p in (ROOT / "examples" / "docs").iterdir() if p.suffix in {".txt", ".png", ".pdf"}
)
SHOWN_CHARACTERS = 48


def print_routes(results: list[aau.PipelineResult]) -> None:
    """Per document: the units that apply, and the most likely of those that do not."""
    print("Routing (the router's probability per unit; threshold in brackets)")
    for result in results:
        route = result.route or {}
        ranked = sorted(route.get("probabilities", {}).items(), key=lambda kv: -kv[1])
        chosen = [f"{name} {p:.2f}" for name, p in ranked if name in route.get("applies", [])]
        nearest_miss = next(((n, p) for n, p in ranked if n not in route.get("applies", [])), None)
        miss = f"; next: {nearest_miss[0]} {nearest_miss[1]:.2f}" if nearest_miss else ""
        print(f"  {result.id}: {', '.join(chosen) or 'no unit applies'}"
              f" [{route.get('threshold', 0):.2f}]{miss}")  # fmt: skip
    print()


def print_provenance(results: list[aau.PipelineResult], texts: dict[str, str]) -> None:
    """Where each value came from: the words it was read from, their page and OCR quality."""
    print("Where each value came from")
    for result in results:
        text = texts[str(result.id)]
        for name, unit in result.units.items():
            if unit.output is None:
                continue
            for field, source in sorted(unit.sources.items()):
                words = " ".join(text[source.start : source.end].split())[:SHOWN_CHARACTERS]
                page = f"page {source.page}" if source.page is not None else "text"
                print(f"  {result.id} {name}.{field}: {words!r} ({page}, OCR quality "
                      f"{source.ocr_quality:.2f}, path {unit.path})")  # fmt: skip
            if not unit.sources and unit.path == "derived":
                print(f"  {result.id} {name}: computed from {', '.join(result.graph[name])}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The routed example pipeline over examples/docs.")
    parser.add_argument("--no-model", action="store_true", help="fallback paths only")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pipeline = aau.Pipeline.from_file(PIPELINE, engine=False if args.no_model else None)
    results, texts = [], {}
    for doc in DOCS:
        document = aau.Document.from_path(doc)
        texts[doc.name] = document.text
        results.append(pipeline.run(document, id=doc.name))
        print(f"analysed {doc.name}", file=sys.stderr)
    print_routes(results)
    print_table(results)
    print_provenance(results, texts)
    for result in results:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    ran = sum(len(r.units) for r in results)
    print(f"{len(DOCS)} documents, {ran} unit runs of {len(DOCS) * len(pipeline.units)} possible, "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
