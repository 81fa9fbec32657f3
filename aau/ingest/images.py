"""Opening image documents safely: size limits before decoding, one page per frame.

An image document is a scan or a photo of pages. Each frame (a multi-page TIFF has several) is
one page, read by OCR. The pixel limit is Pillow's own ``PIL.Image.MAX_IMAGE_PIXELS``, checked
before any pixel is decoded, so that one knob governs both Pillow and us; the frame count is
checked against ``Limits.document_pages`` before the first frame is read. Whatever Pillow raises
on a malformed file (its parsers raise many kinds) is the document's coded error, not a crash.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from aau.ingest.content import input_error
from aau.ingest.ocr import OcrImage
from aau.limits import LIMITS

__all__ = ["IMAGE_SUFFIXES", "open_image", "image_pages"]

IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp", ".pbm", ".pgm", ".ppm"}
)
"""File name endings read as images (the content decides in the end; see ``loader``)."""


def open_image(data: bytes, source: str | Path | None) -> Image.Image:
    """Open image bytes lazily, refusing non-images and decompression bombs.

    Args:
        data: the file's bytes.
        source: the document's name, for error messages.

    Returns:
        The opened (not yet decoded) image.

    Raises:
        InputError: ``not_an_image`` or ``image_too_large``.
    """
    try:
        with warnings.catch_warnings():
            # Pillow only warns between 1x and 2x its limit; a warning would let a bomb through.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _too_large(source, str(exc)) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        # Pillow's parsers raise SyntaxError for some malformed headers.
        raise input_error(source, f"not an image Pillow can read ({exc})", "not_an_image") from exc
    except Exception as exc:  # struct.error, IndexError…: other parsers' malformed headers
        raise input_error(
            source, f"not an image Pillow can read ({type(exc).__name__}: {exc})", "not_an_image"
        ) from exc
    return image


def image_pages(
    image: Image.Image, source: str | Path | None, *, max_pages: int | None = None
) -> Iterator[OcrImage]:
    """Yield each frame of an opened image as a page to OCR, decoding it only then.

    Args:
        image: an image from ``open_image``.
        source: the document's name, for error messages.
        max_pages: the most frames read (default ``LIMITS.document_pages``).

    Yields:
        One ``OcrImage`` per frame, upright (EXIF orientation applied), in pixel units.

    Raises:
        InputError: ``too_many_pages`` (more frames than ``max_pages``, before any is read),
            ``image_too_large`` (a frame over the pixel limit) or ``not_an_image`` (pixel data
            that cannot be decoded, e.g. a truncated file).
    """
    limit = Image.MAX_IMAGE_PIXELS
    pages = LIMITS.document_pages if max_pages is None else max_pages
    try:
        frames = int(getattr(image, "n_frames", 1))
    except Exception as exc:  # counting seeks through every frame's header
        raise _undecodable(source, exc) from exc
    if frames > pages:
        raise input_error(
            source,
            f"the image has {frames:,} pages (frames), over the limit of {pages:,} "
            "(AAU_MAX_DOCUMENT_PAGES); split the document",
            "too_many_pages",
        )
    for number, frame in enumerate(_frames(image, source), start=1):
        if number > pages:  # a count that lied
            raise input_error(
                source,
                f"the image has more than {pages:,} pages (frames), over the limit "
                "(AAU_MAX_DOCUMENT_PAGES); split the document",
                "too_many_pages",
            )
        width, height = frame.size
        if limit is not None and width * height > limit:
            raise _too_large(
                source,
                f"image is {width} x {height} = {width * height:,} pixels, over the limit of "
                f"{limit:,}",
            )
        try:
            frame.load()
            upright = ImageOps.exif_transpose(frame)
            dpi = frame.info.get("dpi")
            # Pillow reports a missing resolution as (0, 0) or leaves it out; tesseract guesses.
            resolution = float(dpi[0]) if isinstance(dpi, tuple) and dpi and dpi[0] > 1 else None
            page = OcrImage(image=upright.copy(), dpi=resolution, unit_scale=1.0)
        except Image.DecompressionBombError as exc:
            raise _too_large(source, str(exc)) from exc
        except Exception as exc:  # OSError, ValueError, SyntaxError…: bad pixels
            raise _undecodable(source, exc) from exc
        yield page


def _frames(image: Image.Image, source: str | Path | None) -> Iterator[Image.Image]:
    """The image's frames; a frame header that cannot be read is ``not_an_image``."""
    frames = ImageSequence.Iterator(image)
    while True:
        try:
            frame = next(frames)
        except StopIteration:
            return
        except Exception as exc:  # seeking to a malformed frame
            raise _undecodable(source, exc) from exc
        yield frame


def _undecodable(source: str | Path | None, exc: Exception) -> Exception:
    return input_error(source, f"the image data cannot be decoded ({exc})", "not_an_image")


def _too_large(source: str | Path | None, detail: str) -> Exception:
    error = input_error(
        source,
        f"refusing a possible decompression bomb: {detail}; downscale the image, or raise "
        "PIL.Image.MAX_IMAGE_PIXELS if the file is trusted",
        "image_too_large",
    )
    return error
