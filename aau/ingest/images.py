"""Opening image documents safely: size limits before decoding, one page per frame.

An image document is a scan or a photo of pages. Each frame (a multi-page TIFF has several) is
one page, read by OCR. The pixel limit is Pillow's own ``PIL.Image.MAX_IMAGE_PIXELS``, checked
before any pixel is decoded, so that one knob governs both Pillow and us.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from aau.ingest.content import input_error
from aau.ingest.ocr import OcrImage

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
    return image


def image_pages(image: Image.Image, source: str | Path | None) -> Iterator[OcrImage]:
    """Yield each frame of an opened image as a page to OCR, decoding it only then.

    Args:
        image: an image from ``open_image``.
        source: the document's name, for error messages.

    Yields:
        One ``OcrImage`` per frame, upright (EXIF orientation applied), in pixel units.

    Raises:
        InputError: ``image_too_large`` (a frame over the pixel limit) or ``not_an_image``
            (pixel data that cannot be decoded, e.g. a truncated file).
    """
    limit = Image.MAX_IMAGE_PIXELS
    for frame in ImageSequence.Iterator(image):
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
        except (OSError, ValueError, SyntaxError) as exc:
            raise input_error(
                source, f"the image data cannot be decoded ({exc})", "not_an_image"
            ) from exc
        dpi = frame.info.get("dpi")
        # Pillow reports a missing resolution as (0, 0) or leaves it out; tesseract then guesses.
        resolution = float(dpi[0]) if isinstance(dpi, tuple) and dpi and dpi[0] > 1 else None
        yield OcrImage(image=upright.copy(), dpi=resolution, unit_scale=1.0)


def _too_large(source: str | Path | None, detail: str) -> Exception:
    error = input_error(
        source,
        f"refusing a possible decompression bomb: {detail}; downscale the image, or raise "
        "PIL.Image.MAX_IMAGE_PIXELS if the file is trusted",
        "image_too_large",
    )
    return error
