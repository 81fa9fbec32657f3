"""Reading PDFs: the text layer with word boxes where a page has one, OCR where it has none.

We use pypdfium2 (PDFium, the PDF engine of Chromium, with its binary in the wheel): it both
extracts text with per-character boxes and renders pages to images, so text pages and scanned
pages go through one well-kept library. pypdf reads text but cannot render a scanned page for
OCR.

A page is OCR'd when it has no text layer, and also when it is a scan carrying only a little
text (a stamp, a Bates number) or only invisible text (another program's OCR layer, whose quality
we cannot know): a page-sized image with such text is read again by tesseract.

PDFium is not thread-safe, even across documents, so every call into it holds one process-wide
lock; tesseract runs outside it, in parallel.

A PDF of more than ``Limits.document_pages`` pages is refused before any page is read
(``too_many_pages``), text layers over ``Limits.text_chars`` characters in all stop the reading
(``input_too_large``), and a page PDFium cannot load, read or render is the document's
``pdf_corrupt`` error naming the page.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from PIL import Image

try:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError('reading PDFs in aau.ingest needs pypdfium2: pip install "aau[ocr]"') from exc

from aau.errors import InputError
from aau.ingest.content import BBox, PageContent, PageWord, input_error
from aau.ingest.ocr import OcrImage, OcrOptions, ocr_images
from aau.limits import LIMITS, Limits

__all__ = ["is_pdf", "read_pdf"]

# The PDF reference lets a header start anywhere in the first 1024 bytes, and Acrobat looks for
# the end-of-file marker in the last 1024.
_HEADER_WINDOW = 1024
_EOF_WINDOW = 1024
_PDFIUM = threading.RLock()
# A page-sized image with fewer visible characters than this is a scan with a stamp on it.
_FEW_CHARS = 50
_SCAN_COVERAGE = 0.5
_LOAD_ERRORS = {
    pdfium_c.FPDF_ERR_FILE: "file not found or could not be opened",
    pdfium_c.FPDF_ERR_FORMAT: "not a PDF or corrupted",
    pdfium_c.FPDF_ERR_PAGE: "page not found or content error",
    pdfium_c.FPDF_ERR_UNKNOWN: "unknown error",
}


def is_pdf(data: bytes) -> bool:
    """Tell whether bytes start like a PDF file."""
    return b"%PDF-" in data[:_HEADER_WINDOW]


def read_pdf(
    data: bytes,
    source: str | Path | None,
    *,
    languages: str,
    options: OcrOptions,
    password: str | None = None,
    limits: Limits | None = None,
) -> list[PageContent]:
    """Read every page of a PDF: the text layer if the page has one, else OCR of the render.

    Args:
        data: the PDF file's bytes.
        source: the document's name, for error messages.
        languages: tesseract languages for pages without a text layer.
        options: OCR rendering and threading options.
        password: the user password of an encrypted PDF, if known.
        limits: the bounds on pages and text (default ``aau.limits.LIMITS``).

    Returns:
        One ``PageContent`` per page, in order; geometry in PDF points, top-left origin.

    Raises:
        InputError: ``pdf_corrupt`` (also a page that cannot be loaded, read or rendered),
            ``pdf_encrypted``, ``empty_document``, ``too_many_pages``, ``input_too_large``, or
            an OCR error code when a page needs OCR.
    """
    limits = limits or LIMITS
    with _PDFIUM:
        pdf = _open(data, source, password, limits.document_pages)
    try:
        contents: list[PageContent | None] = []
        scanned: list[int] = []
        chars = 0
        with _PDFIUM:
            for index in range(len(pdf)):
                content = _read_page(pdf, index, source)
                if content is None:
                    scanned.append(index)
                else:
                    chars += len(content.text)
                    _check_chars(chars, limits.text_chars, source)
                contents.append(content)
        if scanned:
            read = ocr_images(
                _render(pdf, scanned, options, source),
                languages=languages,
                options=options,
                source=source,
            )
            for index, content in zip(scanned, read, strict=True):
                contents[index] = content
    finally:
        with _PDFIUM:
            pdf.close()
    return [content for content in contents if content is not None]


def _read_page(
    pdf: pdfium.PdfDocument, index: int, source: str | Path | None
) -> PageContent | None:
    """One page's text layer (None: it needs OCR); a page PDFium cannot read is ``pdf_corrupt``."""
    try:
        page = pdf[index]
    except pdfium.PdfiumError as exc:
        raise _bad_page(source, index, "loaded", exc) from exc
    try:
        return _text_layer(page)
    except pdfium.PdfiumError as exc:
        raise _bad_page(source, index, "read", exc) from exc
    finally:
        page.close()


def _bad_page(source: str | Path | None, index: int, what: str, exc: Exception) -> InputError:
    return input_error(source, f"page {index + 1} cannot be {what} ({exc})", "pdf_corrupt")


def _check_chars(chars: int, limit: int, source: str | Path | None) -> None:
    if chars > limit:
        raise input_error(
            source,
            f"the PDF's text is over the limit of {limit:,} characters (AAU_MAX_TEXT_CHARS); "
            "split the document",
            "input_too_large",
        )


def _open(
    data: bytes, source: str | Path | None, password: str | None, max_pages: int
) -> pdfium.PdfDocument:
    if b"%%EOF" not in data[-_EOF_WINDOW:]:
        # PDFium would rebuild a truncated file and return whatever pages survived; half a
        # contract analysed as if whole is worse than a clear refusal.
        raise input_error(
            source,
            f"the PDF is truncated or damaged (no %%EOF marker in its last {_EOF_WINDOW} "
            "bytes); get a complete copy of the file",
            "pdf_corrupt",
        )
    # Opened through the raw API: pypdfium2's constructor reports a zero-page file with PDFium's
    # stale last error (often "incorrect password") and leaks the handle.
    secret = password.encode("utf-8") if password is not None else None
    raw = pdfium_c.FPDF_LoadMemDocument64(data, len(data), secret)
    if not raw:
        code = pdfium_c.FPDF_GetLastError()
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            what = "a wrong password was given" if password else "no password was given"
            raise input_error(
                source,
                f"the PDF is encrypted and {what}; pass password=... or supply a decrypted copy",
                "pdf_encrypted",
            )
        reason = _LOAD_ERRORS.get(code, f"PDFium error {code}")
        raise input_error(source, f"the PDF cannot be parsed ({reason})", "pdf_corrupt")
    pages = pdfium_c.FPDF_GetPageCount(raw)
    if pages < 1:
        pdfium_c.FPDF_CloseDocument(raw)
        raise input_error(source, "the PDF has no pages", "empty_document")
    if pages > max_pages:
        pdfium_c.FPDF_CloseDocument(raw)
        raise input_error(
            source,
            f"the PDF has {pages:,} pages, over the limit of {max_pages:,} "
            "(AAU_MAX_DOCUMENT_PAGES); split the document",
            "too_many_pages",
        )
    # PDFium reads from ``data`` without copying it; read_pdf keeps it alive until close.
    return pdfium.PdfDocument(raw)


def _text_layer(page: pdfium.PdfPage) -> PageContent | None:
    """Extract a page's text layer with word boxes, or None when the page needs OCR."""
    left, bottom, right, top = page.get_bbox()
    rotation = page.get_rotation() % 360
    width, height = page.get_size()
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        chars: list[str] = []
        boxes: list[BBox | None] = []
        for index in range(count):
            char = _char(textpage, index, count)
            if char is None:
                continue
            chars.append(char)
            boxes.append(None if char.isspace() else _char_box(textpage, index))
    finally:
        textpage.close()
    text = "".join(chars).rstrip()
    if _needs_ocr(page, text):
        return None
    page_box = (left, bottom, right, top)
    words: list[PageWord] = []
    start: int | None = None
    for position in range(len(text) + 1):
        is_space = position == len(text) or text[position].isspace()
        if start is None and not is_space:
            start = position
        elif start is not None and is_space:
            bbox = _union(boxes[start:position], page_box, rotation)
            words.append(PageWord(text[start:position], start, position, bbox, 1.0))
            start = None
    return PageContent(text=text, words=tuple(words), width=width, height=height, is_ocr=False)


def _needs_ocr(page: pdfium.PdfPage, text: str) -> bool:
    visible = sum(not char.isspace() for char in text)
    if visible == 0:
        return True
    left, bottom, right, top = page.get_bbox()
    page_area = max((right - left) * (top - bottom), 1.0)
    is_scan = False
    all_invisible = True
    for obj in page.get_objects(
        filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=2
    ):
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            x0, y0, x1, y1 = obj.get_bounds()
            is_scan = is_scan or (x1 - x0) * (y1 - y0) >= _SCAN_COVERAGE * page_area
        elif (
            pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw)
            != pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
        ):
            all_invisible = False
    return is_scan and (all_invisible or visible < _FEW_CHARS)


def _char(textpage: pdfium.PdfTextPage, index: int, count: int) -> str | None:
    code = pdfium_c.FPDFText_GetUnicode(textpage, index)
    if code == 0x0D:
        # PDFium ends lines with a generated "\r\n"; keep the "\n" only.
        if index + 1 < count and pdfium_c.FPDFText_GetUnicode(textpage, index + 1) == 0x0A:
            return None
        return "\n"
    if code in (0x0A, 0x09):
        return chr(code)
    if code in (0xFFFE, 0xFFFF) or code > 0x10FFFF:
        return None
    char = chr(code)
    # Other control characters (PDFium marks some line-end hyphens with one) would break the
    # page separator and word splitting; they carry no text.
    if unicodedata.category(char) == "Cc":
        return None
    return char


def _char_box(textpage: pdfium.PdfTextPage, index: int) -> BBox | None:
    if pdfium_c.FPDFText_IsGenerated(textpage, index) == 1:
        return None
    try:
        left, bottom, right, top = textpage.get_charbox(index)
    except pdfium.PdfiumError:
        return None
    return (left, bottom, right, top)


def _union(boxes: list[BBox | None], page_box: BBox, rotation: int) -> BBox | None:
    real = [box for box in boxes if box is not None]
    if not real:
        return None
    box = (
        min(b[0] for b in real),
        min(b[1] for b in real),
        max(b[2] for b in real),
        max(b[3] for b in real),
    )
    return _to_view(box, page_box, rotation)


def _to_view(box: BBox, page_box: BBox, rotation: int) -> BBox:
    """Turn a box in PDF space (origin bottom left) into the displayed page's top-left space."""
    x0, y0, x1, y1 = box
    left, bottom, right, top = page_box
    # /Rotate turns the displayed page clockwise; char boxes stay in unrotated page space.
    if rotation == 90:
        return (y0 - bottom, x0 - left, y1 - bottom, x1 - left)
    if rotation == 180:
        return (right - x1, y0 - bottom, right - x0, y1 - bottom)
    if rotation == 270:
        return (top - y1, right - x1, top - y0, right - x0)
    return (x0 - left, top - y1, x1 - left, top - y0)


def _render(
    pdf: pdfium.PdfDocument, indices: list[int], options: OcrOptions, source: str | Path | None
) -> Iterator[OcrImage]:
    """Render pages lazily for OCR, at the configured dpi or less for oversized pages."""
    limit = Image.MAX_IMAGE_PIXELS
    for index in indices:
        # The lock is released before each yield, so tesseract's threads never wait on it long.
        with _PDFIUM:
            try:
                page = pdf[index]
            except pdfium.PdfiumError as exc:
                raise _bad_page(source, index, "loaded", exc) from exc
            try:
                width, height = page.get_size()
                scale = options.dpi / 72.0
                if limit is not None and width * height * scale * scale > limit:
                    # A poster-sized page would be a decompression bomb at full resolution;
                    # read it at the highest resolution under the pixel limit instead.
                    scale = (limit / (width * height)) ** 0.5
                # Straight into an 8-bit grey bitmap, without PDFium's grayscale mode: 30-40 ms
                # instead of ~100 ms for an A4 page at 300 dpi, with the same pixels on grey
                # scans and vector text, and at most 2 levels apart on colour images.
                bitmap = page.render(scale=scale, force_bitmap_format=pdfium_c.FPDFBitmap_Gray)
                # to_pil() shares the bitmap's buffer; copy before the bitmap is freed.
                image = bitmap.to_pil().copy()
                bitmap.close()
            except pdfium.PdfiumError as exc:
                raise input_error(
                    source, f"page {index + 1} cannot be rendered ({exc})", "pdf_corrupt"
                ) from exc
            finally:
                page.close()
        yield OcrImage(image=image, dpi=scale * 72.0, unit_scale=1.0 / scale)
