"""Images through tesseract: quality that tracks noise, and every bad image refused by code."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytesseract
import pytest
from PIL import Image

from aau.errors import InputError
from aau.ingest import Document, OcrOptions, align_value
from aau.ingest.samples import add_scan_noise, render_page

LINES = [
    "The supplier shall deliver 12 boxes of archive paper",
    "to the customer within 30 days of the order date.",
    "A penalty of EUR 250.00 applies to each late week.",
    "Payment is due on 14 March 2024 by bank transfer.",
] * 2


@pytest.fixture(scope="module")
def clean_page() -> Image.Image:
    """Eight lines of contract text on a 2480 x 900 px strip (A4 width at 300 dpi)."""
    return render_page(LINES, size=(2480, 900))


@pytest.mark.parametrize("seed", [1, 2])
def test_ocr_quality_falls_as_noise_rises(
    seed: int, clean_page: Image.Image, tmp_path: Path
) -> None:
    levels = [0.0, 0.3, 0.55, 0.8]
    frames = [add_scan_noise(clean_page, level=level, seed=seed) for level in levels]
    path = tmp_path / "noise.tiff"
    frames[0].save(path, save_all=True, append_images=frames[1:], compression="tiff_lzw")
    doc = Document.from_path(path)
    assert len(doc.pages) == len(levels)  # one page per TIFF frame
    qualities = [doc.ocr_quality(page.char_offset, page.char_end) for page in doc.pages]
    assert "archive paper" in doc.pages[0].text
    for cleaner, noisier in zip(qualities, qualities[1:], strict=False):
        assert noisier <= cleaner + 0.02, qualities
    assert qualities[-1] < qualities[0] - 0.15, qualities
    assert qualities[0] > 0.9, qualities


def test_the_example_invoice_scan_grounds_its_values(invoice_doc: Document) -> None:
    page = invoice_doc.pages[0]
    assert page.is_ocr
    assert (page.width, page.height) == (2480, 1600)
    quantity = invoice_doc.text.index("Quantity")
    expected = {1250: "1,250.00", "2024-03-14": "14 March 2024", 12: "12"}
    for value, shown in expected.items():
        span = align_value(invoice_doc.text, value, start_hint=quantity if value == 12 else None)
        assert span is not None, value
        assert invoice_doc.text[span[0] : span[1]] == shown
        assert 0.5 < invoice_doc.ocr_quality(*span) <= 1.0
        [(number, (x0, y0, x1, y1))] = invoice_doc.locate(*span)
        assert number == 1
        assert 0 <= x0 < x1 <= 2480
        assert 0 <= y0 < y1 <= 1600
    # The quantity is the one after "Quantity:", not the street number on line 2.
    span = align_value(invoice_doc.text, 12, start_hint=quantity)
    assert span is not None
    assert span[0] > quantity


def test_both_threading_strategies_read_the_same_text(
    clean_page: Image.Image, png_bytes: Callable[[Image.Image], bytes]
) -> None:
    data = png_bytes(clean_page.crop((0, 0, 2480, 450)))
    parallel = Document.from_bytes(data, filename="a.png", ocr=OcrOptions(workers=2))
    threads = Document.from_bytes(
        data, filename="a.png", ocr=OcrOptions(strategy="tesseract_threads")
    )
    assert parallel.text == threads.text
    assert "archive paper" in parallel.text


def test_an_image_with_transparency_is_read_on_white(png_bytes: Callable[..., bytes]) -> None:
    page = render_page(["Transparent background text"], size=(1400, 300), margin=60)
    # Black text on a fully transparent background: flattened onto black it would vanish.
    rgba = Image.new("RGBA", page.size, (0, 0, 0, 0))
    rgba.putalpha(page.point(lambda v: 255 - v))
    doc = Document.from_bytes(png_bytes(rgba), filename="logo.png")
    assert "Transparent" in doc.text


@pytest.mark.parametrize(
    "image",
    [
        Image.new("L", (1240, 1754), 255),
        add_scan_noise(Image.new("L", (1240, 1754), 255), level=0.5),
    ],
    ids=["white", "noisy-blank"],
)
def test_a_blank_page_is_an_empty_document(
    image: Image.Image, png_bytes: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    path = write("blank.png", png_bytes(image))
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "empty_document"
    assert str(caught.value).startswith(f"{path}: no text found")


@pytest.mark.parametrize(
    ("width", "height"), [(40_000, 40_000), (10_000, 10_000)], ids=["over-2x", "over-1x"]
)
def test_a_decompression_bomb_is_refused_before_decoding(
    width: int,
    height: int,
    png_header_only: Callable[[int, int], bytes],
    write: Callable[[str, bytes], Path],
) -> None:
    # Pillow errors above twice its limit and only warns between one and two times it.
    path = write("bomb.png", png_header_only(width, height))
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "image_too_large"
    assert str(path) in str(caught.value)
    assert "MAX_IMAGE_PIXELS" in str(caught.value)


def test_pixel_limit_applies_to_every_frame(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Pillow checks the first frame when it opens a file; a later, bigger frame is ours to catch.
    small, big = Image.new("L", (100, 100), 255), Image.new("L", (300, 200), 255)
    path = tmp_path / "frames.tiff"
    small.save(path, save_all=True, append_images=[big])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 300 * 200 - 1)
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "image_too_large"
    assert "300 x 200 = 60,000 pixels, over the limit of 59,999" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("scan.png", b"definitely not a PNG", "not_an_image"),
        ("scan.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 20, "not_an_image"),
        ("contract.docx", b"PK\x03\x04" + b"\x00" * 40, "unsupported_format"),
        ("upload", b"\x00\x01\x02 random bytes", "unsupported_format"),
        ("latin1.txt", "Préavis".encode("latin-1"), "unsupported_format"),
        ("empty.png", b"", "empty_document"),
    ],
)
def test_bad_files_are_refused_with_a_stable_code(
    name: str, data: bytes, code: str, write: Callable[[str, bytes], Path]
) -> None:
    path = write(name, data)
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == code
    assert str(caught.value).startswith(f"{path}: ")


def test_a_truncated_image_is_not_an_image(
    clean_page: Image.Image, write: Callable[[str, bytes], Path]
) -> None:
    buffer = io.BytesIO()
    clean_page.save(buffer, format="PNG")
    path = write("cut.png", buffer.getvalue()[:5000])
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "not_an_image"
    assert "cannot be decoded" in str(caught.value)


def test_a_missing_file_is_reported(tmp_path: Path) -> None:
    for path in (tmp_path / "nope.pdf", tmp_path):
        with pytest.raises(InputError) as caught:
            Document.from_path(path)
        assert caught.value.code == "file_not_found"
        assert str(caught.value).startswith(f"{path}: ")


def test_without_tesseract_images_fail_but_text_and_text_pdfs_work(
    monkeypatch: pytest.MonkeyPatch,
    png_bytes: Callable[..., bytes],
    text_pdf: Callable[..., bytes],
    write: Callable[[str, bytes], Path],
) -> None:
    # Fault injection: point pytesseract's setting at a program that does not exist.
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/bin/tesseract")
    image = write("scan.png", png_bytes(render_page(["Hello"], size=(400, 200), margin=20)))
    with pytest.raises(InputError) as caught:
        Document.from_path(image)
    assert caught.value.code == "ocr_unavailable"
    message = str(caught.value)
    assert message.startswith(f"{image}: OCR needs the tesseract program")
    assert "'/nonexistent/bin/tesseract' cannot be run" in message
    assert "apt-get install tesseract-ocr" in message
    assert Document.from_text("plain text").text == "plain text"
    pdf = write("text.pdf", text_pdf([["A text layer needs no OCR"]]))
    assert Document.from_path(pdf).text == "A text layer needs no OCR"


def test_a_missing_ocr_language_is_named_with_its_package(
    png_bytes: Callable[..., bytes],
) -> None:
    data = png_bytes(render_page(["Hello"], size=(400, 200), margin=20))
    with pytest.raises(InputError) as caught:
        Document.from_bytes(data, filename="scan.png", languages="eng+zzz")
    assert caught.value.code == "ocr_language_missing"
    assert "zzz" in str(caught.value)
    assert "apt-get install tesseract-ocr-zzz" in str(caught.value)
    with pytest.raises(InputError) as caught:
        Document.from_bytes(data, filename="scan.png", languages="eng; rm -rf /")
    assert caught.value.code == "ocr_language_missing"
    assert "expected tesseract codes joined by '+'" in str(caught.value)


def test_a_page_over_the_ocr_time_limit_is_given_up(
    clean_page: Image.Image, png_bytes: Callable[..., bytes]
) -> None:
    with pytest.raises(InputError) as caught:
        Document.from_bytes(
            png_bytes(clean_page), filename="slow.png", ocr=OcrOptions(timeout_s=0.05)
        )
    assert caught.value.code == "ocr_timeout"
    assert "longer than 0.05 s" in str(caught.value)


@pytest.mark.skipif(os.name != "posix", reason="the stand-in tesseract is a shell script")
def test_page_images_for_tesseract_are_private_and_removed_even_on_failure(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    clean_page: Image.Image,
    png_bytes: Callable[..., bytes],
) -> None:
    # Scans are often confidential: the page file tesseract reads must be readable by this user
    # only and must not outlive the call, whether tesseract succeeds, fails or runs too long.
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    seen = tmp_path / "seen"
    fake = tmp_path / "tesseract"
    fake.write_text(f'#!/bin/sh\nstat -c "%a %s" "$1" > {seen}\necho "broken" >&2\nexit 3\n')
    fake.chmod(0o755)
    page = png_bytes(render_page(["Hello"], size=(400, 200), margin=20))
    with monkeypatch.context() as patched:
        patched.setattr(pytesseract.pytesseract, "tesseract_cmd", str(fake))
        with pytest.raises(InputError) as caught:
            Document.from_bytes(page, filename="scan.png")
    assert caught.value.code == "ocr_failed"
    assert "exit status 3: broken" in str(caught.value)
    mode, size = seen.read_text().split()
    assert mode == "600"
    assert int(size) > 400 * 200  # the whole page, uncompressed
    assert list(temp.iterdir()) == []
    with pytest.raises(InputError) as caught:
        Document.from_bytes(
            png_bytes(clean_page), filename="slow.png", ocr=OcrOptions(timeout_s=0.05)
        )
    assert caught.value.code == "ocr_timeout"
    assert Document.from_bytes(page, filename="scan.png").text == "Hello"
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"strategy": "gpu"}, "unknown OCR strategy 'gpu'"),
        ({"dpi": 10}, "dpi must be at least 50"),
        ({"workers": 0}, "workers must be at least 1"),
        ({"timeout_s": 0}, "timeout_s must be positive"),
    ],
)
def test_impossible_ocr_options_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OcrOptions(**settings)  # type: ignore[arg-type]  # deliberately wrong settings
