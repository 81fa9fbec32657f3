"""Ingest throughput: OCR pages/s under both threading strategies, and text-PDF pages/s.

    python benchmarks/ingest.py [--pages 4] [--pdf-pages 50]

The OCR figure reads a scanned PDF (image-only A4 pages at 300 dpi, dense contract text with
light scanner noise) end to end: PDFium renders each page at the OCR resolution
(``OcrOptions.dpi``, 300 by default), tesseract reads it. Word accuracy against the text that was
printed is reported beside the speed, for the default resolution and for 225 dpi. Both
strategies of ``OcrOptions`` run on the same file, side by side. CPU seconds per page are split
into tesseract's and this process's (rendering, handing the page over, parsing). The text-PDF
figure reads a text PDF's layer with word boxes. The last line printed is one JSON object; its
``load_average_before`` is the 1-minute load when the run started, the other work it shared
the cores with.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import random
import resource
import time
from collections.abc import Callable
from functools import partial

from fpdf import FPDF

from aau.ingest import Document, OcrOptions, OcrStrategy
from aau.ingest.ocr import usable_cores
from aau.ingest.samples import A4_300DPI, add_scan_noise, render_page

VOCABULARY = (
    "the supplier shall deliver goods services invoice payment within days of receipt "
    "penalty clause agreement party customer amount total due EUR order quantity boxes "
    "delivery date contract term termination notice liability insurance warranty period "
    "March April 2024 2025 shall not exceed per week written consent governing law"
).split()


def contract_lines(seed: int, count: int = 44, words: int = 11) -> list[str]:
    """Make ``count`` lines of contract-like words, a dense A4 page at 10 pt."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCABULARY) for _ in range(words)) for _ in range(count)]


def scanned_pdf(pages: int) -> bytes:
    """An image-only PDF of ``pages`` noisy A4 scans at 300 dpi."""
    images = [
        add_scan_noise(render_page(contract_lines(seed), size=A4_300DPI), level=0.15, seed=seed)
        for seed in range(pages)
    ]
    buffer = io.BytesIO()
    images[0].save(buffer, format="PDF", save_all=True, append_images=images[1:], resolution=300)
    return buffer.getvalue()


def text_pdf(pages: int) -> bytes:
    """A text PDF of ``pages`` dense A4 pages."""
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=10)
    for seed in range(pages):
        pdf.add_page()
        for number, line in enumerate(contract_lines(seed)):
            pdf.set_xy(20, 20 + 5.8 * number)
            pdf.cell(text=line)
    return bytes(pdf.output())


def timed(read: Callable[[], Document]) -> tuple[Document, float, float, float]:
    """Run ``read`` once; return its document, the wall seconds, and the CPU seconds it took.

    CPU seconds count this process and the tesseract processes it waited for, so that the
    figure still means something on a machine whose cores other work is sharing. They come
    back twice: in all, and tesseract's share alone (the rest is rendering, handing pages over
    and parsing, in this process).
    """
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time()
    start = time.perf_counter()
    doc = read()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = time.process_time() - cpu
    tesseract = after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
    return doc, wall, own + tesseract, tesseract


def word_accuracy(truth: list[list[str]], doc: Document) -> float:
    """Share of the printed words read right, page by page (difflib's matching ratio)."""
    ratios = [
        difflib.SequenceMatcher(a=words, b=page.text.split(), autojunk=False).ratio()
        for words, page in zip(truth, doc.pages, strict=True)
    ]
    return sum(ratios) / len(ratios)


def main() -> None:
    """Measure and print the figures; the last line is JSON."""
    parser = argparse.ArgumentParser(description="AAU ingest throughput")
    parser.add_argument("--pages", type=int, default=4, help="scanned A4 pages to OCR")
    parser.add_argument("--pdf-pages", type=int, default=50, help="text PDF pages to read")
    args = parser.parse_args()

    cores = usable_cores()
    load_before = os.getloadavg()[0]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    omp = os.environ.get("OMP_THREAD_LIMIT")
    print(f"cores: {cores}; load average: {load}; OMP_THREAD_LIMIT in environment: {omp}")
    scan = scanned_pdf(args.pages)
    ocr_rates: dict[str, float] = {}
    texts: dict[str, str] = {}
    cpu_per_page: dict[str, float] = {}
    tesseract_cpu_per_page: dict[str, float] = {}
    accuracy: dict[str, float] = {}
    truth = [" ".join(contract_lines(seed)).split() for seed in range(args.pages)]
    strategies: tuple[OcrStrategy, ...] = ("parallel_pages", "tesseract_threads")
    for strategy in strategies:
        read = partial(
            Document.from_bytes, scan, filename="scan.pdf", ocr=OcrOptions(strategy=strategy)
        )
        doc, seconds, cpu, tesseract_cpu = timed(read)
        ocr_rates[strategy] = args.pages / seconds
        cpu_per_page[strategy] = cpu / args.pages
        tesseract_cpu_per_page[strategy] = tesseract_cpu / args.pages
        texts[strategy] = doc.text
        accuracy[strategy] = word_accuracy(truth, doc)
        print(
            f"OCR {strategy:18s} {args.pages} A4 pages (300-dpi scans read at "
            f"{OcrOptions().dpi} dpi) in {seconds:6.2f} s: {ocr_rates[strategy]:.2f} pages/s; "
            f"{cpu_per_page[strategy]:.2f} CPU s/page ({tesseract_cpu_per_page[strategy]:.2f} "
            f"in tesseract); quality {doc.quality:.3f}, {len(doc.words)} words, "
            f"word accuracy {accuracy[strategy]:.4f}"
        )
    at_225, seconds_225, _, _ = timed(
        partial(Document.from_bytes, scan, filename="scan.pdf", ocr=OcrOptions(dpi=225))
    )
    accuracy_225 = word_accuracy(truth, at_225)
    print(
        f"OCR parallel_pages read at 225 dpi instead: {args.pages / seconds_225:.2f} pages/s, "
        f"word accuracy {accuracy_225:.4f}"
    )
    ratio = ocr_rates["parallel_pages"] / ocr_rates["tesseract_threads"]
    print(f"parallel_pages / tesseract_threads: {ratio:.2f}x")
    # What the cores could do if nothing else ran on them: the figure under shared CPUs is lower.
    idle_rate = cores / cpu_per_page["parallel_pages"]
    print(
        f"parallel_pages on {cores} otherwise idle core(s), from CPU time: {idle_rate:.2f} pages/s"
    )
    if texts["parallel_pages"] != texts["tesseract_threads"]:
        print("note: the two strategies read different text")

    data = text_pdf(args.pdf_pages)
    doc, seconds, _, _ = timed(lambda: Document.from_bytes(data, filename="text.pdf"))
    pdf_rate = args.pdf_pages / seconds
    print(
        f"text PDF: {args.pdf_pages} pages in {seconds:.2f} s: {pdf_rate:.1f} pages/s, "
        f"{len(doc.words)} words with boxes"
    )
    print(
        json.dumps(
            {
                "ocr_pages_s": round(ocr_rates["parallel_pages"], 3),
                "ocr_pages_s_tesseract_threads": round(ocr_rates["tesseract_threads"], 3),
                "ocr_pages_s_idle_cores": round(idle_rate, 3),
                "ocr_cpu_s_per_page": round(cpu_per_page["parallel_pages"], 3),
                "ocr_tesseract_cpu_s_per_page": round(tesseract_cpu_per_page["parallel_pages"], 3),
                "ocr_word_accuracy": round(accuracy["parallel_pages"], 4),
                "ocr_word_accuracy_225dpi": round(accuracy_225, 4),
                "pdf_pages_s": round(pdf_rate, 2),
                "cores": cores,
                # Before this run started: the other work the cores were shared with.
                "load_average_before": round(load_before, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
