"""Tesseract OCR of page images: word boxes, word confidences and the page text built from them.

Tesseract runs as a program, one process per page. We call it ourselves rather than through
``pytesseract.image_to_data`` because the fast strategy below needs ``OMP_THREAD_LIMIT=1`` in the
environment of the tesseract process only, and pytesseract always hands the whole process
environment over. We still honour ``pytesseract.pytesseract.tesseract_cmd``, the setting users
of pytesseract already know, to find the program.

Threading (measured by ``benchmarks/ingest.py``, A4 pages at 300 dpi, two cores): tesseract's own
OpenMP threads speed one page up little and spin badly when the cores are shared, while one
single-threaded tesseract per core, pages in parallel, uses the cores fully. So the default
strategy is ``"parallel_pages"``; ``"tesseract_threads"`` (pages one after another, OpenMP as
configured) stays available for comparison.

How the page reaches tesseract (tesseract 5.3, leptonica 1.82, the benchmark's noisy A4 scans at
300 dpi, CPU seconds per page of one single-threaded tesseract): a binary PGM through stdin took
2.04 s, the same page as an uncompressed BMP file 1.70 s, with byte-identical TSV. Tesseract
reads stdin one character at a time into a buffer, and leptonica reads PGM pixels one ``fread``
at a time; together that was a sixth of the page. BMP files are read with one ``fread``, and
beat uncompressed TIFF (1.78 s) and fast PNG (1.88 s, plus ~0.2 s to encode it here). The rest
is tesseract's own work: its LSTM about 55 %, layout analysis about 15 %, and the PNG encoding
of every text line it hands to the LSTM about 8 %. Config variables do not buy much back:
``tessedit_do_invert=0`` and ``--oem 1`` saved nothing measurable here, skipping table detection
under 2 %, and ``--psm 6`` 4 % at a loss of word accuracy; binarizing the page ourselves saved
17 % but lost 2 points of word accuracy, since tesseract's LSTM reads the grey image.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PIL import Image

from aau.ingest.content import PageContent, PageWord, input_error

__all__ = ["OcrImage", "OcrOptions", "OcrStrategy", "ocr_images", "parse_tsv"]

OcrStrategy = Literal["parallel_pages", "tesseract_threads"]

_LANGUAGES = re.compile(r"[A-Za-z0-9_]+(?:\+[A-Za-z0-9_]+)*")
_FAILED_LANGUAGE = re.compile(r"Failed loading language '([^']+)'")
_INSTALL_HINT = "apt-get install tesseract-ocr"


@dataclass(frozen=True, slots=True)
class OcrOptions:
    """How scanned pages are rendered and read.

    Attributes:
        dpi: resolution at which image-only PDF pages are rendered for OCR. 225 read dense
            10-pt scans faster and with more words right, but misread punctuation on a noisier
            page (``benchmarks/RESULTS.md``), so 300 stays the default.
        strategy: ``"parallel_pages"`` runs one single-threaded tesseract per worker, pages in
            parallel; ``"tesseract_threads"`` runs pages one after another and lets tesseract
            use its OpenMP threads.
        workers: parallel tesseract processes for ``"parallel_pages"``; None means one per
            usable CPU core.
        timeout_s: the longest one page may take before it is given up.
    """

    dpi: int = 300
    strategy: OcrStrategy = "parallel_pages"
    workers: int | None = None
    timeout_s: float = 120.0

    def __post_init__(self) -> None:
        """Refuse settings that cannot work, when they are made rather than mid-document."""
        if self.strategy not in ("parallel_pages", "tesseract_threads"):
            raise ValueError(
                f"unknown OCR strategy {self.strategy!r}; "
                "expected 'parallel_pages' or 'tesseract_threads'"
            )
        if self.dpi < 50:
            raise ValueError(f"OCR dpi must be at least 50, got {self.dpi}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"OCR workers must be at least 1, got {self.workers}")
        if self.timeout_s <= 0:
            raise ValueError(f"OCR timeout_s must be positive, got {self.timeout_s}")


@dataclass(frozen=True, slots=True)
class OcrImage:
    """One page image to read, and how its pixels map to page units.

    Attributes:
        image: the page, any Pillow mode; alpha is flattened onto white.
        dpi: the image's resolution if known, passed to tesseract so it need not guess.
        unit_scale: page units per pixel (72 / dpi for a rendered PDF page, 1.0 for images).
    """

    image: Image.Image
    dpi: float | None = None
    unit_scale: float = 1.0


def usable_cores() -> int:
    """Return how many CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def ocr_images(
    pages: Iterable[OcrImage],
    *,
    languages: str,
    options: OcrOptions,
    source: str | Path | None,
) -> list[PageContent]:
    """OCR page images, in order, with the configured threading strategy.

    ``pages`` is consumed lazily, so a caller that renders pages one by one (PDFium must not be
    called from several threads) overlaps rendering with OCR of earlier pages.

    Args:
        pages: the page images in document order.
        languages: tesseract languages, e.g. ``"eng"`` or ``"eng+deu"``.
        options: rendering and threading options.
        source: the document's name, for error messages.

    Returns:
        One ``PageContent`` per image, in order.

    Raises:
        InputError: ``ocr_unavailable`` (no tesseract program), ``ocr_language_missing``,
            ``ocr_timeout`` or ``ocr_failed``.
    """
    if not _LANGUAGES.fullmatch(languages):
        raise input_error(
            source,
            f"invalid OCR languages {languages!r}; expected tesseract codes joined by '+', "
            "e.g. 'eng' or 'eng+deu'",
            "ocr_language_missing",
        )
    if options.strategy == "tesseract_threads":
        return [_ocr_one(page, languages, options, source, single_thread=False) for page in pages]
    workers = options.workers or usable_cores()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="aau-ocr") as pool:
        return list(_ordered(pool, pages, workers, languages, options, source))


def _ordered(
    pool: ThreadPoolExecutor,
    pages: Iterable[OcrImage],
    workers: int,
    languages: str,
    options: OcrOptions,
    source: str | Path | None,
) -> Iterator[PageContent]:
    # At most two pages per worker wait in memory (an A4 page at 300 dpi is ~9 MB), so a long
    # scanned PDF streams instead of being rendered whole up front.
    pending: deque[Future[PageContent]] = deque()
    try:
        for page in pages:
            job = pool.submit(_ocr_one, page, languages, options, source, single_thread=True)
            pending.append(job)
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        # After a failed page, pages not started yet are not worth reading.
        for job in pending:
            job.cancel()


def _ocr_one(
    page: OcrImage,
    languages: str,
    options: OcrOptions,
    source: str | Path | None,
    *,
    single_thread: bool,
) -> PageContent:
    gray = _to_gray(page.image)
    width, height = gray.size
    extrema = gray.getextrema()
    if extrema[0] == extrema[1]:
        # A uniform page has no text; skipping tesseract saves a second per blank page.
        tsv = ""
    else:
        tsv = _run_tesseract(gray, languages, page.dpi, options, source, single_thread)
    text, words = parse_tsv(tsv, unit_scale=page.unit_scale)
    return PageContent(
        text=text,
        words=words,
        width=width * page.unit_scale,
        height=height * page.unit_scale,
        is_ocr=True,
    )


def _to_gray(image: Image.Image) -> Image.Image:
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("L")
    return image if image.mode == "L" else image.convert("L")


def _tesseract_program() -> str:
    """The tesseract program pytesseract's ``tesseract_cmd`` names, read when a page is OCR'd.

    Imported here, not with the module: pytesseract imports pandas when it is installed
    (0.4 s), which every ``import aau`` would pay for documents that need no OCR.
    """
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError('OCR in aau.ingest needs pytesseract: pip install "aau[ocr]"') from exc
    return str(pytesseract.pytesseract.tesseract_cmd)


def _run_tesseract(
    gray: Image.Image,
    languages: str,
    dpi: float | None,
    options: OcrOptions,
    source: str | Path | None,
    single_thread: bool,
) -> str:
    program = _tesseract_program()
    # The page goes to tesseract as an uncompressed BMP file (see the module docstring for why
    # not stdin or PGM). mkstemp makes it readable by this user only, and it is deleted as soon
    # as tesseract is done.
    descriptor, image_path = tempfile.mkstemp(prefix="aau-ocr-", suffix=".bmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            # Resolution 0 in the header, as a PGM had: tesseract takes --dpi, or estimates the
            # resolution from the text, rather than believing Pillow's default of 96 dpi.
            gray.save(file, format="BMP", dpi=(0, 0))
        command = [program, image_path, "stdout", "-l", languages]
        if dpi:
            command += ["--dpi", str(round(dpi))]
        command.append("tsv")
        done = _run_program(command, options, source, single_thread)
    finally:
        os.unlink(image_path)
    stderr = done.stderr.decode("utf-8", "replace")
    # Tesseract carries on with the languages it could load and still exits 0; reading a page
    # with fewer languages than asked would silently lower quality, so refuse.
    missing = _FAILED_LANGUAGE.findall(stderr)
    if missing:
        packages = " ".join(f"tesseract-ocr-{code}" for code in missing)
        raise input_error(
            source,
            f"tesseract has no data for OCR language(s) {', '.join(missing)} (asked for "
            f"{languages!r}); install them, e.g. apt-get install {packages}",
            "ocr_language_missing",
        )
    if done.returncode != 0:
        tail = stderr.strip().splitlines()[-3:]
        raise input_error(
            source,
            f"tesseract failed with exit status {done.returncode}: {' / '.join(tail)}",
            "ocr_failed",
        )
    return done.stdout.decode("utf-8", "replace")


def _run_program(
    command: list[str], options: OcrOptions, source: str | Path | None, single_thread: bool
) -> subprocess.CompletedProcess[bytes]:
    """Run tesseract; a program that cannot be run, or a page that takes too long, is refused."""
    program = command[0]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"} if single_thread else None
    try:
        return subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=options.timeout_s,
            env=env,
            check=False,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        error = input_error(
            source,
            f"OCR needs the tesseract program, and {program!r} cannot be run ({exc.strerror}); "
            f"install it with: {_INSTALL_HINT} (or point "
            "pytesseract.pytesseract.tesseract_cmd at it)",
            "ocr_unavailable",
        )
        raise error from exc
    except subprocess.TimeoutExpired as exc:
        raise input_error(
            source,
            f"OCR of a page took longer than {options.timeout_s:g} s and was stopped; "
            "raise OcrOptions.timeout_s or lower OcrOptions.dpi",
            "ocr_timeout",
        ) from exc


def parse_tsv(tsv: str, *, unit_scale: float = 1.0) -> tuple[str, tuple[PageWord, ...]]:
    """Build a page's text and words from tesseract's TSV output.

    Words of a line are joined by one space, lines by a newline, and paragraphs or blocks by a
    blank line, like tesseract's own text output, so offsets and text agree by construction.

    Args:
        tsv: tesseract's TSV (header line first).
        unit_scale: page units per pixel, applied to the word boxes.

    Returns:
        The page text and its words, with offsets into that text.
    """
    parts: list[str] = []
    words: list[PageWord] = []
    offset = 0
    previous: tuple[str, str, str] | None = None
    for row in tsv.splitlines()[1:]:
        fields = row.split("\t", 11)
        if len(fields) < 12 or fields[0] != "5":
            continue
        text = fields[11].strip()
        if not text:
            continue
        line_key = (fields[2], fields[3], fields[4])  # block, paragraph, line
        if previous is not None:
            if line_key == previous:
                separator = " "
            elif line_key[:2] == previous[:2]:
                separator = "\n"
            else:
                separator = "\n\n"
            parts.append(separator)
            offset += len(separator)
        previous = line_key
        left, top, width, height = (float(value) for value in fields[6:10])
        bbox = (
            left * unit_scale,
            top * unit_scale,
            (left + width) * unit_scale,
            (top + height) * unit_scale,
        )
        confidence = min(1.0, max(0.0, float(fields[10]) / 100.0))
        words.append(PageWord(text, offset, offset + len(text), bbox, confidence))
        parts.append(text)
        offset += len(text)
    return "".join(parts), tuple(words)
