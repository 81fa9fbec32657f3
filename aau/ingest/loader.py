"""Reading a document file within bounds, and turning its bytes into pages by their content.

``read_file`` reads regular files only: a FIFO, a device (``/dev/zero``) or a socket is refused
from its ``stat`` before it is opened, so nothing blocks or streams without end, and at most
``Limits.document_bytes`` are read. The content decides the reader where it can: bytes that
start like a PDF are a PDF and an image is whatever Pillow recognises, whatever the name says.
The file name only breaks ties (``.txt`` is text, ``.pdf`` without a PDF header is a broken PDF)
and words the error when nothing fits. A PDF or image of more than ``Limits.document_pages``
pages, or a text over ``Limits.text_chars`` characters, is refused before it is read further.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from os import PathLike
from pathlib import Path

from aau.errors import InputError
from aau.ingest.content import PageContent, PageWord, input_error
from aau.ingest.images import IMAGE_SUFFIXES, image_pages, open_image
from aau.ingest.ocr import OcrOptions, ocr_images
from aau.ingest.pdf import is_pdf, read_pdf
from aau.limits import LIMITS, Limits

__all__ = ["TEXT_SUFFIXES", "read_file", "read_pages", "text_page"]

TEXT_SUFFIXES = frozenset({".txt", ".text", ".md"})
"""File name endings read as UTF-8 plain text."""

_WORD = re.compile(r"\S+")
_SUPPORTED = "PDF, PNG, JPEG, TIFF, BMP, GIF, WebP, PNM, or UTF-8 text (.txt, .md)"


def read_file(path: str | PathLike[str], *, limits: Limits | None = None) -> bytes:
    """Read a document file's bytes: a regular file of at most ``limits.document_bytes``.

    Args:
        path: the file.
        limits: the bounds (default ``aau.limits.LIMITS``).

    Returns:
        The file's content.

    Raises:
        InputError: ``file_not_found`` when there is no readable regular file at ``path`` (a
            directory, FIFO, device or socket is not one), ``invalid_path`` when ``path`` cannot
            name a file (a NUL byte, too long, not encodable), ``input_too_large`` over the
            size bound.
    """
    limit = (limits or LIMITS).document_bytes
    try:
        info = os.stat(path)
        _check_regular(path, info.st_mode)
        _check_size(path, info.st_size, limit)
        # O_NONBLOCK: should the file have been swapped for a FIFO since the stat, opening it
        # returns at once instead of waiting for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except InputError:
        raise
    except (ValueError, OSError) as exc:
        raise _open_error(path, exc) from exc
    with open(fd, "rb", closefd=True) as file:
        _check_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        data = file.read(limit + 1)  # a file growing while read is cut at the bound
    _check_size(path, len(data), limit)
    return data


def _check_regular(path: str | PathLike[str], mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise input_error(path, "is a directory, not a file", "file_not_found")
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    raise input_error(path, f"is {kind}, not a regular file", "file_not_found")


def _check_size(path: str | PathLike[str], size: int, limit: int) -> None:
    if size > limit:
        raise input_error(
            path,
            f"the file is over the limit of {limit:,} bytes (AAU_MAX_DOCUMENT_BYTES); split it",
            "input_too_large",
        )


def _open_error(path: str | PathLike[str], exc: ValueError | OSError) -> InputError:
    """The coded error of a file that cannot be stat'ed or opened."""
    if isinstance(exc, ValueError):  # a NUL byte, or a lone surrogate no file name can hold
        reason = "a NUL byte" if "null" in str(exc) else "characters no file name can hold"
        return input_error(repr(str(path)), f"is not a file name ({reason})", "invalid_path")
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return input_error(path, "no such file", "file_not_found")
    if isinstance(exc, PermissionError):
        return input_error(path, "the file cannot be read (permission denied)", "file_not_found")
    if exc.errno == errno.ENAMETOOLONG:
        return input_error(path, "is not a file name (too long)", "invalid_path")
    return input_error(path, f"the file cannot be read ({exc.strerror})", "file_not_found")


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_pages(
    data: bytes,
    source: str | Path | None,
    *,
    languages: str,
    options: OcrOptions,
    password: str | None = None,
    limits: Limits | None = None,
) -> list[PageContent]:
    """Read a document's pages with the reader its content needs.

    Args:
        data: the document's bytes.
        source: its file name (the suffix is a hint), or None.
        languages: tesseract languages for images and scanned pages.
        options: OCR options.
        password: the password of an encrypted PDF.
        limits: the bounds on pages and text (default ``aau.limits.LIMITS``).

    Returns:
        The document's pages in order.

    Raises:
        InputError: see ``Document.from_path`` for the codes.
    """
    limits = limits or LIMITS
    suffix = Path(str(source)).suffix.lower() if source is not None else ""
    if not data:
        raise input_error(source, "the file is empty (0 bytes)", "empty_document")
    if is_pdf(data):
        return read_pdf(
            data, source, languages=languages, options=options, password=password, limits=limits
        )
    if suffix in TEXT_SUFFIXES:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise input_error(
                source, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "unsupported_format"
            ) from exc
        if len(text) > limits.text_chars:
            raise input_error(
                source,
                f"the text has {len(text):,} characters, over the limit of "
                f"{limits.text_chars:,} (AAU_MAX_TEXT_CHARS); split the document",
                "input_too_large",
            )
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
            image_pages(image, source, max_pages=limits.document_pages),
            languages=languages,
            options=options,
            source=source,
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
