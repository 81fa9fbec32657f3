"""PDFs: text layers with word boxes, scanned pages OCR'd, and broken files refused by code."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from fpdf.enums import TextMode
from PIL import Image, ImageOps

from aau.errors import InputError
from aau.ingest import Document, align_value
from aau.ingest.samples import render_page

MM = 72 / 25.4
A4_POINTS = (595.28, 841.89)


def test_text_pages_keep_native_words_with_their_boxes(mixed_doc: Document) -> None:
    page = mixed_doc.pages[0]
    assert page.is_ocr is False
    assert (page.width, page.height) == pytest.approx(A4_POINTS, abs=0.01)
    assert page.text == "Total due: EUR 1,250.00\nInvoice date: 2 April 2024"
    words = [w for w in mixed_doc.words if w.page == 1]
    assert all(w.confidence == 1.0 for w in words)
    total = words[0]
    assert total.text == "Total"
    assert total.bbox is not None
    x0, y0, x1, y1 = total.bbox
    # fpdf2 put the line's cell at x = 20 mm, y = 50 mm (top-left origin), 12 pt Helvetica,
    # and starts the text after the cell's 1 mm padding.
    assert x0 == pytest.approx(21 * MM, abs=1.5)
    assert 50 * MM <= y0 < y1 <= 50 * MM + 14
    assert x1 - x0 == pytest.approx(29, abs=4)  # "Total" is ~29 pt wide at 12 pt
    date = next(w for w in words if w.text == "April")
    assert date.bbox is not None
    assert date.bbox[1] == pytest.approx(y0 + 10 * MM, abs=1.5)


def test_a_scanned_page_inside_a_pdf_is_ocrd(
    mixed_doc: Document, scanned_lines: tuple[str, ...]
) -> None:
    assert [p.is_ocr for p in mixed_doc.pages] == [False, True, False]
    scanned = mixed_doc.pages[1]
    # Boxes of OCR'd PDF pages are converted back to points, like the text pages.
    assert (scanned.width, scanned.height) == pytest.approx(A4_POINTS, abs=0.5)
    for line in scanned_lines:
        assert line.split()[0] in scanned.text
    quality = mixed_doc.ocr_quality(scanned.char_offset, scanned.char_end)
    assert 0.5 < quality < 1.0
    assert mixed_doc.ocr_quality(0, mixed_doc.pages[0].char_end) == 1.0


def test_locate_finds_a_grounded_value_on_the_scanned_page(mixed_doc: Document) -> None:
    span = align_value(mixed_doc.text, "2024-03-14")
    assert span is not None
    assert mixed_doc.text[span[0] : span[1]] == "14 March 2024"
    [(page, (x0, y0, x1, y1))] = mixed_doc.locate(*span)
    assert page == 2
    # render_page drew line 3 at x = 200 px, y = 200 + 2 * 42 * 1.6 px, at 300 dpi.
    to_points = 72 / 300
    assert y0 == pytest.approx((200 + 2 * 42 * 1.6) * to_points, abs=6)
    assert x0 > 200 * to_points  # after "Delivery date: "
    assert y1 - y0 == pytest.approx(42 * to_points, abs=5)
    assert x1 < A4_POINTS[0] / 2


def test_a_pillow_made_scanner_pdf_is_ocrd_page_by_page(tmp_path: Path) -> None:
    pages = [
        render_page(["Page one says hello"], size=(1240, 600), font_size=40, margin=80),
        render_page(["Page two says goodbye"], size=(1240, 600), font_size=40, margin=80),
    ]
    path = tmp_path / "scanner.pdf"
    pages[0].save(path, save_all=True, append_images=pages[1:], resolution=150)
    doc = Document.from_path(path)
    assert [p.is_ocr for p in doc.pages] == [True, True]
    assert "hello" in doc.pages[0].text
    assert "goodbye" in doc.pages[1].text
    # 1240 px at 150 dpi is 595.2 pt wide.
    assert doc.pages[0].width == pytest.approx(1240 * 72 / 150, abs=0.5)


def test_a_blank_page_between_text_pages_is_kept_empty(
    text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    data = text_pdf([["first page"], [], ["third page"]], blank_pages=(1,))
    doc = Document.from_path(write("gap.pdf", data))
    assert [p.text for p in doc.pages] == ["first page", "", "third page"]
    assert doc.pages[1].is_ocr is True  # no text layer, so it was (quickly) OCR'd
    assert doc.quality == 1.0


def test_rotated_page_boxes_follow_the_displayed_page(
    tmp_path: Path,
) -> None:
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.set_xy(20, 50)
    pdf.cell(text="Rotated clause")
    # fpdf2 cannot set /Rotate; PDFium can, and saves the page with it.
    rotated = pdfium.PdfDocument(bytes(pdf.output()))
    rotated[0].set_rotation(90)
    path = tmp_path / "rotated.pdf"
    rotated.save(path)
    rotated.close()
    doc = Document.from_path(path)
    page = doc.pages[0]
    # Turned a quarter clockwise, the page is displayed landscape.
    assert (page.width, page.height) == pytest.approx(A4_POINTS[::-1], abs=0.01)
    x0, y0, x1, y1 = doc.words[0].bbox or (0, 0, 0, 0)
    assert 0 <= x0 < x1 <= page.width
    assert 0 <= y0 < y1 <= page.height
    # The line ran along the top-left of the portrait page; displayed, it runs downwards
    # along the right edge, 50 mm from it.
    assert y1 - y0 > x1 - x0
    assert page.width - x1 == pytest.approx(50 * MM, abs=6)
    assert y0 == pytest.approx(21 * MM, abs=1.5)


def test_an_encrypted_pdf_needs_its_password(tmp_path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="Confidential settlement: EUR 90,000")
    pdf.set_encryption(owner_password="owner", user_password="reader")
    path = tmp_path / "locked.pdf"
    pdf.output(str(path))
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "pdf_encrypted"
    assert str(caught.value).startswith(f"{path}: the PDF is encrypted and no password")
    with pytest.raises(InputError, match="a wrong password was given") as caught:
        Document.from_path(path, password="guess")
    assert caught.value.code == "pdf_encrypted"
    doc = Document.from_path(path, password="reader")
    assert doc.text == "Confidential settlement: EUR 90,000"


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.9])
def test_a_truncated_pdf_is_corrupt(
    keep: float, text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    data = text_pdf([["one"], ["two"], ["three"]])
    path = write("cut.pdf", data[: int(len(data) * keep)])
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "pdf_corrupt"
    assert str(path) in str(caught.value)
    assert "truncated" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("garbage.pdf", b"%PDF-1.7\n" + b"\x00\xff junk " * 100 + b"\n%%EOF\n"),
        ("no-header.pdf", b"this is not a pdf at all"),
    ],
)
def test_a_pdf_that_cannot_be_parsed_is_corrupt(
    name: str, data: bytes, write: Callable[[str, bytes], Path]
) -> None:
    path = write(name, data)
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "pdf_corrupt"
    assert str(caught.value).startswith(f"{path}: ")


def test_a_pdf_without_pages_is_empty(
    zero_page_pdf: bytes, write: Callable[[str, bytes], Path]
) -> None:
    path = write("nothing.pdf", zero_page_pdf)
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "empty_document"
    assert str(caught.value) == f"{path}: the PDF has no pages"


def test_a_pdf_whose_only_page_is_blank_is_empty(
    text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    path = write("blank.pdf", text_pdf([[]], blank_pages=(0,)))
    with pytest.raises(InputError) as caught:
        Document.from_path(path)
    assert caught.value.code == "empty_document"
    assert "no text found in 1 page(s)" in str(caught.value)


def test_an_oversized_pdf_page_is_rendered_under_the_pixel_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = render_page(["Poster headline text"], size=(1800, 400), font_size=90, margin=60)
    buffer = io.BytesIO()
    page.save(buffer, format="PDF", resolution=100)
    # Fault injection: a tiny pixel limit stands in for a poster-sized page.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1800 * 400)
    doc = Document.from_bytes(buffer.getvalue(), filename="poster.pdf")
    assert "Poster" in doc.text


def test_a_colour_scan_is_read_through_its_grey_rendering() -> None:
    # Pages are rendered straight into a grey bitmap; colour ink on tinted paper must survive.
    page = render_page(["Colour copy: total EUR 480.00"], size=(2480, 400), margin=100)
    colour = ImageOps.colorize(page, black=(20, 40, 150), white=(250, 240, 190))
    buffer = io.BytesIO()
    colour.save(buffer, format="PDF", resolution=300)
    doc = Document.from_bytes(buffer.getvalue(), filename="colour.pdf")
    assert doc.pages[0].is_ocr is True
    assert doc.text == "Colour copy: total EUR 480.00"


def _scan_with_text(text: str, *, invisible: bool) -> bytes:
    """A page-sized scan plus a line of real text: a stamp, or another program's OCR layer."""
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    page = render_page(
        ["Scanned clause: the tenant pays EUR 800 monthly."], size=(2480, 3508), font_size=50
    )
    pdf.image(page, x=0, y=0, w=pdf.w, h=pdf.h)
    pdf.text_mode = TextMode.INVISIBLE if invisible else TextMode.FILL
    pdf.set_auto_page_break(False)
    pdf.set_xy(20, 250)
    pdf.multi_cell(w=170, text=text)
    return bytes(pdf.output())


def test_a_scan_with_only_a_stamp_of_text_is_ocrd(write: Callable[[str, bytes], Path]) -> None:
    doc = Document.from_path(write("stamped.pdf", _scan_with_text("Page 2 of 9", invisible=False)))
    assert doc.pages[0].is_ocr is True
    assert "tenant pays EUR 800" in doc.text
    assert doc.quality < 1.0


def test_a_scan_with_an_invisible_ocr_layer_is_read_again(
    write: Callable[[str, bytes], Path],
) -> None:
    layer = "Scanned clause: the tenant pays EUR 800 monthly. " * 3
    doc = Document.from_path(write("searchable.pdf", _scan_with_text(layer, invisible=True)))
    assert doc.pages[0].is_ocr is True  # so its words get real confidences
    assert doc.text.count("tenant") == 1


def test_a_text_page_with_a_picture_keeps_its_text_layer(
    write: Callable[[str, bytes], Path],
) -> None:
    long_text = "This visible text layer is long enough to be the real content of the page."
    doc = Document.from_path(write("letter.pdf", _scan_with_text(long_text, invisible=False)))
    assert doc.pages[0].is_ocr is False
    assert doc.text == long_text


def test_an_image_named_pdf_is_read_as_an_image(
    png_bytes: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    image = render_page(["Misnamed upload"], size=(900, 200), margin=40)
    doc = Document.from_path(write("upload.pdf", png_bytes(image)))
    assert "Misnamed" in doc.text
    assert doc.pages[0].width == 900
