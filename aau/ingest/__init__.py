"""Ingest: documents in (plain text, PDF, scanned images), text out with OCR quality per span.

``Document.from_path`` reads a PDF's text layer where a page has one and OCRs (tesseract) the
pages and images that have none; every word keeps its page, box and confidence. ``align_value``
grounds an extracted value in the text, so that ``Document.ocr_quality`` and ``Document.locate``
can say how trustworthy and where that value is.

    >>> doc = Document.from_text("Total due: EUR 1,250.00")
    >>> span = align_value(doc.text, 1250)
    >>> doc.text[span[0]:span[1]], doc.ocr_quality(*span)
    ('1,250.00', 1.0)
"""

from aau.ingest.alignment import align_value
from aau.ingest.document import (
    PAGE_SEPARATOR,
    Document,
    Page,
    Word,
    aload_document,
    load_document,
)
from aau.ingest.ocr import OcrOptions, OcrStrategy

__all__ = [
    "Document",
    "OcrOptions",
    "OcrStrategy",
    "PAGE_SEPARATOR",
    "Page",
    "Word",
    "align_value",
    "aload_document",
    "load_document",
]
