"""The document model every unit reads: text, pages, words, OCR quality and source geometry.

A ``Document`` is what ingest hands to the rest of AAU. Its ``text`` is the one string that
units analyse and that every offset (``Word.start``, grounded spans) points into. Pages are
joined by ``PAGE_SEPARATOR`` (newline, form feed, newline), so a page break is also a paragraph
break for anything that splits on blank lines. Pages read from PDFs or images never contain a
form feed themselves; plain text is kept exactly as given.

Each word carries a confidence: tesseract's word confidence for OCR'd pages, 1.0 for native
text. ``ocr_quality(start, end)`` turns them into a quality for any span (a unit's extracted
value, once grounded with ``aau.ingest.alignment.align_value``), and ``locate`` gives the
span's boxes on the page images for review tools.

Reading is bounded by ``aau.limits`` (``Limits.document_bytes``, ``document_pages``,
``text_chars``): a file over a bound, or one that is not a regular file, is refused with a coded
``InputError`` before it is read further.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from os import PathLike

from aau.ingest.content import BBox, PageContent, input_error
from aau.ingest.loader import read_file, read_pages, text_page
from aau.ingest.ocr import OcrOptions
from aau.limits import Limits

__all__ = ["PAGE_SEPARATOR", "Document", "Page", "Word", "aload_document", "load_document"]

PAGE_SEPARATOR = "\n\f\n"
"""What joins two pages in ``Document.text``."""


@dataclass(frozen=True, slots=True)
class Word:
    """A word of the document, with where it is in the text and on the page.

    Attributes:
        text: the word; equal to ``document.text[start:end]``.
        start: offset of its first character in ``Document.text``.
        end: offset just past its last character.
        page: the 1-based number of its page.
        bbox: ``(x0, y0, x1, y1)`` on the page, origin top left, in the page's units (PDF
            points for PDF pages, pixels for images); None for plain text.
        confidence: OCR confidence in [0, 1]; 1.0 for native text.
    """

    text: str
    start: int
    end: int
    page: int
    bbox: BBox | None
    confidence: float


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the document.

    Attributes:
        number: 1-based page number.
        text: the page's text.
        char_offset: where the page's text starts in ``Document.text``.
        width: the page's width in its units (PDF points or pixels); None for plain text.
        height: the page's height in the same units; None for plain text.
        is_ocr: whether the text came from OCR.
    """

    number: int
    text: str
    char_offset: int
    width: float | None
    height: float | None
    is_ocr: bool

    @property
    def char_end(self) -> int:
        """Offset just past the page's text in ``Document.text``."""
        return self.char_offset + len(self.text)


@dataclass(frozen=True, slots=True, repr=False)
class Document:
    """A document's text with per-word confidence and geometry.

    Build one with ``from_text``, ``from_path`` (or ``load_document``) or ``from_bytes``.

    Attributes:
        text: the full text, pages joined by ``PAGE_SEPARATOR``.
        pages: the pages, in order.
        words: every word, in text order.
        source: the file it was read from, if any.
    """

    text: str
    pages: tuple[Page, ...]
    words: tuple[Word, ...]
    source: str | None = None
    _ends: tuple[int, ...] = field(init=False, compare=False)
    _quality: float = field(init=False, compare=False)

    def __post_init__(self) -> None:
        """Index the words for span look-ups and compute the document's quality."""
        # Words are disjoint and in text order, so their ends are sorted too: spans are found
        # by bisection instead of a scan over every word.
        object.__setattr__(self, "_ends", tuple(word.end for word in self.words))
        quality = _mean(word.confidence for word in self.words)
        object.__setattr__(self, "_quality", 1.0 if quality is None else quality)

    def __repr__(self) -> str:
        """Summarise instead of printing the whole text."""
        return (
            f"Document(source={self.source!r}, pages={len(self.pages)}, "
            f"words={len(self.words)}, quality={self.quality:.3f})"
        )

    @classmethod
    def from_text(cls, text: str) -> Document:
        """Make a one-page document of native text (quality 1.0), kept exactly as given.

        Raises:
            InputError: ``empty_document`` when the text has no visible characters.
        """
        return cls.from_pages([text_page(text)])

    @classmethod
    def from_path(
        cls,
        path: str | PathLike[str],
        *,
        languages: str = "eng",
        password: str | None = None,
        ocr: OcrOptions | None = None,
        limits: Limits | None = None,
    ) -> Document:
        """Read a PDF, an image, or a UTF-8 text file.

        PDF pages with a text layer are read from it (confidence 1.0); pages without one are
        rendered at ``ocr.dpi`` and OCR'd, as are images (one page per frame).

        Args:
            path: the file.
            languages: tesseract languages, e.g. ``"eng"`` or ``"eng+deu"``.
            password: the user password of an encrypted PDF.
            ocr: OCR rendering and threading options.
            limits: the bounds on bytes, pages and characters (default ``aau.limits.LIMITS``).

        Raises:
            InputError: with code ``file_not_found`` (also a directory, FIFO, device or socket:
                only regular files are read), ``invalid_path`` (a NUL byte, too long),
                ``input_too_large`` (over ``document_bytes``, or text over ``text_chars``),
                ``too_many_pages`` (over ``document_pages``), ``unsupported_format``,
                ``pdf_corrupt`` (also one page that cannot be loaded or rendered),
                ``pdf_encrypted``, ``not_an_image``, ``image_too_large``, ``empty_document``
                (no text at all), ``ocr_unavailable`` (tesseract missing, only when OCR is
                needed), ``ocr_language_missing``, ``ocr_timeout`` or ``ocr_failed``.
        """
        data = read_file(path, limits=limits)
        return cls.from_bytes(
            data,
            filename=str(path),
            languages=languages,
            password=password,
            ocr=ocr,
            limits=limits,
        )

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        *,
        filename: str | None = None,
        languages: str = "eng",
        password: str | None = None,
        ocr: OcrOptions | None = None,
        limits: Limits | None = None,
    ) -> Document:
        """Read a document held in memory; like ``from_path``, with ``filename`` for messages.

        The content decides the format; the file name's suffix only settles ties.
        """
        pages = read_pages(
            data,
            filename,
            languages=languages,
            options=ocr or OcrOptions(),
            password=password,
            limits=limits,
        )
        return cls.from_pages(pages, source=filename)

    @classmethod
    def from_pages(cls, pages: Sequence[PageContent], *, source: str | None = None) -> Document:
        """Join pages read separately into one document, shifting offsets to document offsets.

        Raises:
            InputError: ``empty_document`` when no page has any text.
        """
        # A speck on a blank scan can come back as "_" or "|"; only letters or digits count.
        if not any(_has_text(word.text) for page in pages for word in page.words):
            what = (
                "the text is empty" if source is None else f"no text found in {len(pages)} page(s)"
            )
            raise input_error(
                source,
                f"{what}; a blank or unreadable document cannot be analysed",
                "empty_document",
            )
        texts: list[str] = []
        built_pages: list[Page] = []
        words: list[Word] = []
        offset = 0
        for number, page in enumerate(pages, start=1):
            if number > 1:
                texts.append(PAGE_SEPARATOR)
                offset += len(PAGE_SEPARATOR)
            texts.append(page.text)
            built_pages.append(
                Page(number, page.text, offset, page.width, page.height, page.is_ocr)
            )
            words.extend(
                Word(w.text, offset + w.start, offset + w.end, number, w.bbox, w.confidence)
                for w in page.words
            )
            offset += len(page.text)
        return cls("".join(texts), tuple(built_pages), tuple(words), source)

    @property
    def quality(self) -> float:
        """Mean word confidence over the whole document (1.0 for native text)."""
        return self._quality

    def words_in(self, start: int, end: int) -> tuple[Word, ...]:
        """Return the words overlapping the span ``[start, end)``, in text order."""
        self._check_span(start, end)
        if start == end:
            return ()
        first = bisect_right(self._ends, start)
        found: list[Word] = []
        for word in self.words[first:]:
            if word.start >= end:
                break
            found.append(word)
        return tuple(found)

    def ocr_quality(self, start: int, end: int) -> float:
        """Mean confidence of the words overlapping ``[start, end)``.

        1.0 over native text. An empty span, or one that touches no word (whitespace only),
        gets the whole document's quality.
        """
        quality = _mean(word.confidence for word in self.words_in(start, end))
        return self.quality if quality is None else quality

    def locate(self, start: int, end: int) -> list[tuple[int, BBox]]:
        """Where the span ``[start, end)`` is on the pages: one ``(page, bbox)`` per page.

        Each box encloses the whole words the span touches, in the page's units with the origin
        at the top left. Words without geometry (plain text) are left out, so the list is empty
        for a plain-text document.
        """
        boxes: dict[int, BBox] = {}
        for word in self.words_in(start, end):
            if word.bbox is None:
                continue
            known = boxes.get(word.page)
            boxes[word.page] = word.bbox if known is None else _enclose(known, word.bbox)
        return sorted(boxes.items())

    def _check_span(self, start: int, end: int) -> None:
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(
                f"span [{start}, {end}) is not inside the document text (length {len(self.text)})"
            )


def load_document(
    path: str | PathLike[str],
    *,
    languages: str = "eng",
    password: str | None = None,
    ocr: OcrOptions | None = None,
    limits: Limits | None = None,
) -> Document:
    """Read a document file; the same as ``Document.from_path``."""
    return Document.from_path(path, languages=languages, password=password, ocr=ocr, limits=limits)


async def aload_document(
    path: str | PathLike[str],
    *,
    languages: str = "eng",
    password: str | None = None,
    ocr: OcrOptions | None = None,
    limits: Limits | None = None,
) -> Document:
    """Read a document file without blocking the event loop (in a worker thread).

    Reading, PDF rendering and OCR are CPU and subprocess work, all done in the thread; several
    documents may be read concurrently this way.
    """
    return await asyncio.to_thread(
        Document.from_path, path, languages=languages, password=password, ocr=ocr, limits=limits
    )


def _mean(values: Iterable[float]) -> float | None:
    total = 0.0
    count = 0
    for value in values:
        total += value
        count += 1
    return total / count if count else None


def _has_text(word: str) -> bool:
    return any(char.isalnum() for char in word)


def _enclose(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
