"""Turning a file's bytes into pages: which reader a document needs, decided by its content.

The content decides where it can: bytes that start like a PDF are a PDF and an image is whatever
Pillow recognises, whatever the name says. The file name only breaks ties (``.txt`` is text,
``.pdf`` without a PDF header is a broken PDF) and words the error when nothing fits.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path

from aau.errors import InputError
from aau.ingest.content import PageContent, PageWord, input_error
from aau.ingest.images import IMAGE_SUFFIXES, image_pages, open_image
from aau.ingest.ocr import OcrOptions, ocr_images
from aau.ingest.pdf import is_pdf, read_pdf

__all__ = ["TEXT_SUFFIXES", "read_file", "read_pages", "text_page"]

TEXT_SUFFIXES = frozenset({".txt", ".text", ".md"})
"""File name endings read as UTF-8 plain text."""

_WORD = re.compile(r"\S+")
_SUPPORTED = "PDF, PNG, JPEG, TIFF, BMP, GIF, WebP, PNM, or UTF-8 text (.txt, .md)"


def read_file(path: str | PathLike[str]) -> bytes:
    """Read a document file's bytes.

    Args:
        path: the file.

    Returns:
        The file's content.

    Raises:
        InputError: ``file_not_found`` when there is no readable file at ``path``.
    """
    file = Path(path)
    try:
        return file.read_bytes()
    except FileNotFoundError as exc:
        raise input_error(path, "no such file", "file_not_found") from exc
    except IsADirectoryError as exc:
        raise input_error(path, "is a directory, not a file", "file_not_found") from exc
    except PermissionError as exc:
        raise input_error(
            path, "the file cannot be read (permission denied)", "file_not_found"
        ) from exc


def read_pages(
    data: bytes,
    source: str | Path | None,
    *,
    languages: str,
    options: OcrOptions,
    password: str | None = None,
) -> list[PageContent]:
    """Read a document's pages with the reader its content needs.

    Args:
        data: the document's bytes.
        source: its file name (the suffix is a hint), or None.
        languages: tesseract languages for images and scanned pages.
        options: OCR options.
        password: the password of an encrypted PDF.

    Returns:
        The document's pages in order.

    Raises:
        InputError: see ``Document.from_path`` for the codes.
    """
    suffix = Path(str(source)).suffix.lower() if source is not None else ""
    if not data:
        raise input_error(source, "the file is empty (0 bytes)", "empty_document")
    if is_pdf(data):
        return read_pdf(data, source, languages=languages, options=options, password=password)
    if suffix in TEXT_SUFFIXES:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise input_error(
                source, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "unsupported_format"
            ) from exc
        return [text_page(text)]
    try:
        image = open_image(data, source)
    except InputError as exc:
        if exc.code == "not_an_image" and suffix == ".pdf":
            raise input_error(source, "not a PDF file (no %PDF- header)", "pdf_corrupt") from exc
        if exc.code == "not_an_image" and suffix not in IMAGE_SUFFIXES:
            raise input_error(
                source,
                f"unsupported document format{f' {suffix!r}' if suffix else ''}; "
                f"expected {_SUPPORTED}",
                "unsupported_format",
            ) from exc
        raise
    with image:
        return ocr_images(
            image_pages(image, source), languages=languages, options=options, source=source
        )


def text_page(text: str) -> PageContent:
    """Make the single page of a plain-text document: native text, confidence 1.0, no geometry.

    Args:
        text: the text, kept exactly as given so that callers' offsets stay valid.

    Returns:
        The page.
    """
    words = tuple(
        PageWord(match.group(), match.start(), match.end(), None, 1.0)
        for match in _WORD.finditer(text)
    )
    return PageContent(text=text, words=words, width=None, height=None, is_ocr=False)
