"""Real documents for the ingest tests, generated on the fly: text PDFs, scans, broken files.

Text PDFs come from fpdf2, image-only ("scanned") pages from Pillow, and page images from
``aau.ingest.samples``, so every expected word and position is known. Documents that need OCR
are read once per session, since tesseract takes about a second per page.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image

from aau.ingest import Document
from aau.ingest.samples import add_scan_noise, render_page

SCANNED_LINES = (
    "Delivery note for order 7731",
    "Quantity: 12 boxes",
    "Delivery date: 14 March 2024",
    "Received in good condition.",
)
"""The text on the scanned page of ``mixed_pdf``."""


def _text_pdf(pages: list[list[str]], *, blank_pages: tuple[int, ...] = ()) -> bytes:
    """Write a text PDF: A4 pages, Helvetica 12 pt, each line at x = 20 mm from y = 50 mm.

    Args:
        pages: lines per page.
        blank_pages: 0-based page positions to leave empty.

    Returns:
        The PDF's bytes.
    """
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    for index, lines in enumerate(pages):
        pdf.add_page()
        if index in blank_pages:
            continue
        for number, line in enumerate(lines):
            pdf.set_xy(20, 50 + 10 * number)
            pdf.cell(text=line)
    return bytes(pdf.output())


def _scanned_page() -> Image.Image:
    """Render ``SCANNED_LINES`` as a lightly noisy A4 scan at 300 dpi."""
    return add_scan_noise(render_page(SCANNED_LINES), level=0.2, seed=11)


def _zero_page_pdf() -> bytes:
    """Write a well-formed PDF whose page tree is empty."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _png_header_only(width: int, height: int) -> bytes:
    """Write a PNG that declares ``width`` x ``height`` 1-bit pixels (a decompression bomb).

    The image data is a few compressed rows only: a reader that checks the declared size first
    refuses the file before it would inflate gigabytes.
    """

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (width // 8 + 2) * 4)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="session")
def mixed_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-page PDF: text, a scanned image-only page, text."""
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.set_xy(20, 50)
    pdf.cell(text="Total due: EUR 1,250.00")
    pdf.set_xy(20, 60)
    pdf.cell(text="Invoice date: 2 April 2024")
    pdf.add_page()
    # The whole page is one picture, as a scanner writes it: no text layer at all.
    pdf.image(_scanned_page(), x=0, y=0, w=pdf.w, h=pdf.h)
    pdf.add_page()
    pdf.set_xy(20, 50)
    pdf.cell(text="Penalty: EUR 250.00 per week of delay")
    path = tmp_path_factory.mktemp("pdf") / "mixed.pdf"
    pdf.output(str(path))
    return path


@pytest.fixture(scope="session")
def mixed_doc(mixed_pdf: Path) -> Document:
    """``mixed_pdf`` read once."""
    return Document.from_path(mixed_pdf)


@pytest.fixture(scope="session")
def invoice_scan() -> Path:
    """The shipped example scan."""
    path = Path(__file__).resolve().parents[2] / "examples" / "docs" / "invoice_scan.png"
    assert path.is_file(), f"{path} is missing; regenerate: python -m aau.ingest.samples {path}"
    return path


@pytest.fixture(scope="session")
def invoice_doc(invoice_scan: Path) -> Document:
    """The example scan, OCR'd once."""
    return Document.from_path(invoice_scan)


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, bytes], Path]:
    """Write bytes to a named file in a fresh folder and return its path."""

    def _write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return _write


def _png_bytes(image: Image.Image) -> bytes:
    """Encode an image as PNG."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def text_pdf() -> Callable[..., bytes]:
    """Factory: ``text_pdf([[lines of page 1], ...], blank_pages=(...))`` -> PDF bytes."""
    return _text_pdf


@pytest.fixture
def zero_page_pdf() -> bytes:
    """A well-formed PDF with no pages."""
    return _zero_page_pdf()


@pytest.fixture
def png_header_only() -> Callable[[int, int], bytes]:
    """Factory: ``png_header_only(width, height)`` -> a decompression-bomb PNG."""
    return _png_header_only


@pytest.fixture
def png_bytes() -> Callable[[Image.Image], bytes]:
    """Factory: ``png_bytes(image)`` -> the image encoded as PNG."""
    return _png_bytes


@pytest.fixture
def scanned_lines() -> tuple[str, ...]:
    """The lines on the scanned page of ``mixed_pdf``."""
    return SCANNED_LINES
