"""What each reader (text layer, OCR) hands over for one page, before pages become a Document.

Readers work page by page and know nothing of the other pages, so offsets here are local to the
page's text. ``Document`` shifts them to document offsets when it joins the pages. Geometry is in
the page's own units with the origin at the top left and y growing downwards: PDF points for PDF
pages (OCR'd ones included), pixels for images.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike

from aau.errors import InputError

__all__ = ["BBox", "PageContent", "PageWord", "input_error"]

BBox = tuple[float, float, float, float]
"""A box as ``(x0, y0, x1, y1)``: left, top, right, bottom."""


@dataclass(frozen=True, slots=True)
class PageWord:
    """A word as a reader found it.

    Attributes:
        text: the word, as it appears in the page text.
        start: offset of the word's first character in the page text.
        end: offset just past its last character.
        bbox: where the word is on the page, or None when the source has no geometry.
        confidence: the reader's confidence in [0, 1]; 1.0 for a native text layer.
    """

    text: str
    start: int
    end: int
    bbox: BBox | None
    confidence: float


@dataclass(frozen=True, slots=True)
class PageContent:
    """One page's text and words, with page-local offsets.

    Attributes:
        text: the page's text.
        words: the page's words in reading order, their offsets pointing into ``text``.
        width: the page's width in its units, or None without geometry (plain text).
        height: the page's height in its units, or None without geometry.
        is_ocr: whether the text came from OCR rather than from a text layer.
    """

    text: str
    words: tuple[PageWord, ...]
    width: float | None
    height: float | None
    is_ocr: bool


def input_error(source: str | PathLike[str] | None, message: str, code: str) -> InputError:
    """Build an ``InputError`` whose message starts with the document's name.

    Args:
        source: the file name (or None for in-memory input without a name).
        message: what is wrong, starting lower case, e.g. ``"the PDF is encrypted"``.
        code: the stable error code.

    Returns:
        The error, ready to raise.
    """
    name = str(source) if source is not None else "<document>"
    return InputError(f"{name}: {message}", code=code)
