"""Synthetic scanned pages: text rendered to an image, with seeded scanner noise.

Tests, the OCR benchmark and the shipped example scan (``examples/docs/invoice_scan.png``) all
need page images whose text is known. Rendering them here, from a seed, makes them reproducible:

    python -m aau.ingest.samples examples/docs/invoice_scan.png

Noise imitates a cheap office scan: a slight skew, blur, grey paper with grain, and dust specks.
One ``level`` in [0, 1] scales all of them together, so that OCR quality falls as it rises.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

__all__ = [
    "A4_300DPI",
    "INVOICE_LINES",
    "add_scan_noise",
    "find_font",
    "render_invoice_scan",
    "render_page",
]

A4_300DPI = (2480, 3508)
"""An A4 page at 300 dpi, in pixels."""

INVOICE_LINES = (
    "ACME Office Supplies Ltd.",
    "12 Harbour Road, Bristol BS1 4DJ",
    "",
    "INVOICE No. 2024-0317",
    "Invoice date: 14 March 2024",
    "Customer: Northwind Trading GmbH",
    "",
    "Item: Archive boxes, recycled cardboard",
    "Quantity: 12 boxes",
    "Unit price: EUR 104.17",
    "",
    "Total due: EUR 1,250.00",
    "Payment within 30 days to IBAN DE89 3704 0044 0532 0130 00.",
)
"""The text of the example invoice scan."""

_THRESHOLD = 150

_FONT_CANDIDATES = (
    # Debian's fonts-dejavu-core; the shipped example was rendered with it.
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:/Windows/Fonts/arial.ttf",
)


def find_font(size: int) -> ImageFont.FreeTypeFont:
    """Return a TrueType font of ``size`` pixels: DejaVu Sans if installed, else Pillow's own.

    Args:
        size: the font size in pixels.

    Returns:
        The font.
    """
    for candidate in _FONT_CANDIDATES:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size)
    # Pillow >= 10.1 ships a TrueType default font, so rendering never depends on the system.
    font = ImageFont.load_default(size)
    assert isinstance(font, ImageFont.FreeTypeFont), "Pillow was built without FreeType"
    return font


def render_page(
    lines: Sequence[str],
    *,
    size: tuple[int, int] = A4_300DPI,
    font_size: int = 42,
    margin: int = 200,
    line_height: float = 1.6,
) -> Image.Image:
    """Render lines of text, black on white, from the top left of a greyscale page.

    Args:
        lines: the lines; an empty string leaves a blank line.
        size: the page size in pixels.
        font_size: the font size in pixels (42 px is 10 pt at 300 dpi).
        margin: the left and top margin in pixels.
        line_height: line pitch as a multiple of ``font_size``.

    Returns:
        The page, mode ``"L"``.
    """
    page = Image.new("L", size, 255)
    draw = ImageDraw.Draw(page)
    font = find_font(font_size)
    y = float(margin)
    for line in lines:
        if line:
            draw.text((margin, y), line, font=font, fill=0)
        y += font_size * line_height
    return page


def add_scan_noise(page: Image.Image, *, level: float, seed: int = 0) -> Image.Image:
    """Degrade a clean page like a poor scan; the same seed gives the same result.

    Args:
        page: a greyscale page.
        level: 0 leaves the page unchanged; about 0.8 is the worst tesseract still reads, and
            at 1 its layout analysis usually finds no text at all.
        seed: seeds the noise.

    Returns:
        The degraded page, mode ``"L"``.
    """
    if not 0.0 <= level <= 1.0:
        raise ValueError(f"noise level must be in [0, 1], got {level}")
    if level == 0.0:
        return page.copy()
    rng = np.random.default_rng(seed)
    skewed = page.rotate(
        float(rng.uniform(-1.0, 1.0)) * 1.5 * level,
        resample=Image.Resampling.BICUBIC,
        fillcolor=255,
    )
    blurred = skewed.filter(ImageFilter.GaussianBlur(radius=0.4 + 2.4 * level))
    pixels = np.asarray(blurred, dtype=np.float32)
    # Grey paper with fading contrast: ink lightens and paper darkens as the level rises.
    pixels = 40.0 * level + pixels * (1.0 - 0.55 * level)
    # Paper texture varies slowly across the page; sensor grain varies pixel to pixel.
    height, width = pixels.shape
    texture = rng.normal(0.0, 10.0 * level, size=(height // 16 + 2, width // 16 + 2))
    texture_image = Image.fromarray(texture.astype(np.float32), mode="F")
    smooth = texture_image.resize((width + 32, height + 32), Image.Resampling.BILINEAR)
    pixels += np.asarray(smooth, dtype=np.float32)[:height, :width]
    pixels += rng.normal(0.0, 25.0 * level, size=pixels.shape)
    specks = rng.random(size=pixels.shape) < 0.04 * level
    pixels[specks] = rng.choice(np.array([0.0, 255.0]), size=int(specks.sum()))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="L")


def render_invoice_scan(*, level: float = 0.4, seed: int = 2024) -> Image.Image:
    """Render the example invoice as a noisy black-and-white 300 dpi scan of the top of A4.

    Args:
        level: the noise level (see ``add_scan_noise``), applied before thresholding.
        seed: seeds the noise.

    Returns:
        The scan, mode ``"1"``.
    """
    # The invoice fills the top half of the page; cropping the blank half keeps the file small
    # without changing what OCR sees of the text.
    page = render_page(INVOICE_LINES, size=(A4_300DPI[0], 1600), font_size=46)
    noisy = add_scan_noise(page, level=level, seed=seed)
    # Office scanners send documents as 1-bit black and white: grain turns into specks, edges
    # turn ragged, and the PNG stays under 100 kB (greyscale grain would take ~2 MB).
    return noisy.point(lambda value: 255 if value > _THRESHOLD else 0).convert(
        "1", dither=Image.Dither.NONE
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Write the example invoice scan: ``python -m aau.ingest.samples OUT.png``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("output", type=Path, help="where to write the PNG")
    parser.add_argument("--level", type=float, default=0.4, help="noise level in [0, 1]")
    parser.add_argument("--seed", type=int, default=2024, help="noise seed")
    args = parser.parse_args(argv)
    scan = render_invoice_scan(level=args.level, seed=args.seed)
    scan.save(args.output, dpi=(300, 300), optimize=True)
    print(f"wrote {args.output} ({scan.width} x {scan.height} px)")


if __name__ == "__main__":
    main()
