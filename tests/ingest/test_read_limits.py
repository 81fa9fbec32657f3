"""Reading hostile documents: only regular files, within the byte, page and text bounds, and a
broken page or image is the document's coded error, never a traceback or a hang."""

from __future__ import annotations

import dataclasses
import io
import os
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from PIL import Image, PngImagePlugin

from aau.errors import InputError
from aau.ingest import Document, aload_document
from aau.ingest.loader import read_file
from aau.limits import LIMITS

DEADLINE_S = 60.0
"""How long a read may take before the test calls it a hang (a guard, not a timing)."""


def within_deadline(call: Callable[[], Any]) -> Any:
    """``call()`` in a daemon thread; fails the test if it has not returned by the deadline."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"still running after {DEADLINE_S} s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def refused(call: Callable[[], Any]) -> InputError:
    with pytest.raises(InputError) as caught:
        within_deadline(call)
    return caught.value


def two_page_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in ("Total due: EUR 1.00", "Second page: EUR 2.00"):
        pdf.add_page()
        pdf.cell(text=text)
    return bytes(pdf.output())


def with_broken_second_page(data: bytes) -> bytes:
    """The PDF with page 2's object overwritten by a string of the same length.

    The cross-reference table stays right, so PDFium opens the file and counts both pages, and
    then cannot load page 2: a real corrupt page, not a fault injected into the reader.
    """
    start = data.index(b"5 0 obj\n") + len(b"5 0 obj\n")
    end = data.index(b"endobj", start)
    assert b"/Type /Page" in data[start:end]
    broken = data[:start] + b"(" + b"x" * (end - start - 3) + b")\n" + data[end:]
    assert len(broken) == len(data)
    return broken


# -- only regular files -----------------------------------------------------------------------


def test_dev_zero_is_refused_from_its_stat_without_being_read() -> None:
    error = refused(lambda: Document.from_path("/dev/zero"))

    assert error.code == "file_not_found"
    assert str(error) == "/dev/zero: is a character device, not a regular file"


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)

    error = refused(lambda: read_file(fifo))

    assert error.code == "file_not_found"
    assert str(error) == f"{fifo}: is a FIFO (named pipe), not a regular file"


def test_a_fifo_swapped_in_after_the_stat_does_not_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: stat answers "regular file" for a FIFO, as if the file had been swapped
    # between the stat and the open; the non-blocking open and the fstat still refuse it.
    fifo = tmp_path / "swapped.txt"
    os.mkfifo(fifo)
    real_stat = os.stat

    def regular_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        info = real_stat(path, *args, **kwargs)
        if str(path) != str(fifo):
            return info
        fields = list(info)
        fields[0] = 0o100644  # S_IFREG
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", regular_stat)

    error = refused(lambda: read_file(fifo))

    assert error.code == "file_not_found"
    assert "FIFO" in str(error)


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        ("a\x00b.pdf", "invalid_path", "'a\\x00b.pdf': is not a file name (a NUL byte)"),
        ("\ud800.pdf", "invalid_path", "'\\ud800.pdf': is not a file name (characters no file"),
        ("x" * 300 + ".pdf", "invalid_path", "is not a file name (too long)"),
    ],
    ids=["nul", "lone-surrogate", "name-too-long"],
)
def test_paths_no_file_can_have_are_coded(path: str, code: str, message: str) -> None:
    error = refused(lambda: read_file(path))

    assert error.code == code
    assert message in str(error)


def test_a_symlink_loop_is_coded(tmp_path: Path) -> None:
    loop = tmp_path / "loop.pdf"
    loop.symlink_to(loop)

    error = refused(lambda: read_file(loop))

    assert error.code == "file_not_found"
    assert "symbolic links" in str(error)


# -- byte, page and text bounds ---------------------------------------------------------------


def test_a_file_over_the_byte_bound_is_refused(write: Callable[[str, bytes], Path]) -> None:
    path = write("big.txt", b"Total 5 EUR. " * 100)
    small = dataclasses.replace(LIMITS, document_bytes=1000)

    error = refused(lambda: Document.from_path(path, limits=small))

    assert error.code == "input_too_large"
    assert "over the limit of 1,000 bytes (AAU_MAX_DOCUMENT_BYTES)" in str(error)
    assert Document.from_path(path).text.startswith("Total")  # within the default bound


def test_a_file_growing_past_the_bound_while_read_is_cut_at_the_bound(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: stat reports the file smaller than it is (it grew after the stat).
    path = write("growing.txt", b"x" * 5000)
    real_stat = os.stat

    def stale_stat(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        info = real_stat(target, *args, **kwargs)
        if str(target) != str(path):
            return info
        fields = list(info)
        fields[6] = 10  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", stale_stat)

    error = refused(lambda: read_file(path, limits=dataclasses.replace(LIMITS, document_bytes=100)))

    assert error.code == "input_too_large"


def test_a_pdf_over_the_page_bound_is_refused_before_any_page_is_read(
    text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    path = write("long.pdf", text_pdf([["page one"], ["page two"], ["page three"]]))

    error = refused(
        lambda: Document.from_path(path, limits=dataclasses.replace(LIMITS, document_pages=2))
    )

    assert error.code == "too_many_pages"
    assert "the PDF has 3 pages, over the limit of 2 (AAU_MAX_DOCUMENT_PAGES)" in str(error)
    assert len(Document.from_path(path).pages) == 3


def test_a_multi_page_tiff_over_the_page_bound_is_refused_before_any_ocr(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import aau.ingest.ocr as ocr

    def no_tesseract(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tesseract ran on a document that is refused")

    monkeypatch.setattr(ocr, "_run_tesseract", no_tesseract)
    frames = [Image.new("L", (200, 100), 255) for _ in range(3)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:])
    path = write("scan.tiff", buffer.getvalue())

    error = refused(
        lambda: Document.from_path(path, limits=dataclasses.replace(LIMITS, document_pages=2))
    )

    assert error.code == "too_many_pages"
    assert "the image has 3 pages (frames), over the limit of 2" in str(error)


def test_a_text_over_the_character_bound_is_refused(write: Callable[[str, bytes], Path]) -> None:
    path = write("long.txt", "Préavis ".encode() * 10)

    error = refused(
        lambda: Document.from_path(path, limits=dataclasses.replace(LIMITS, text_chars=79))
    )

    assert error.code == "input_too_large"
    assert "the text has 80 characters, over the limit of 79 (AAU_MAX_TEXT_CHARS)" in str(error)


def test_a_pdf_text_layer_over_the_character_bound_is_refused(
    text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    path = write("wordy.pdf", text_pdf([["a" * 60], ["b" * 60]]))

    error = refused(
        lambda: Document.from_path(path, limits=dataclasses.replace(LIMITS, text_chars=100))
    )

    assert error.code == "input_too_large"
    assert "the PDF's text is over the limit of 100 characters" in str(error)


# -- broken pages and images ------------------------------------------------------------------


def test_a_pdf_page_that_fails_to_load_is_the_documents_coded_error(
    write: Callable[[str, bytes], Path],
) -> None:
    good = two_page_pdf()
    assert Document.from_bytes(good).pages[1].text == "Second page: EUR 2.00"
    path = write("broken-page.pdf", with_broken_second_page(good))

    error = refused(lambda: Document.from_path(path))

    assert error.code == "pdf_corrupt"
    assert str(error) == f"{path}: page 2 cannot be loaded (Failed to load page.)"


def test_a_pdf_page_whose_text_layer_fails_is_coded(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: PDFium fails while reading page 1's text layer.
    def failing_textpage(self: pdfium.PdfPage) -> Any:
        raise pdfium.PdfiumError("Failed to load text page.")

    monkeypatch.setattr(pdfium.PdfPage, "get_textpage", failing_textpage)
    path = write("text.pdf", two_page_pdf())

    error = refused(lambda: Document.from_path(path))

    assert error.code == "pdf_corrupt"
    assert str(error) == f"{path}: page 1 cannot be read (Failed to load text page.)"


def test_a_pdf_page_that_fails_to_load_for_rendering_is_coded(
    text_pdf: Callable[..., bytes],
    write: Callable[[str, bytes], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fault injector: a blank page needs OCR; PDFium loads it once for its text layer, then
    # fails to load it again to render it.
    path = write("blank.pdf", text_pdf([["Total due: EUR 5.00"], []], blank_pages=(1,)))
    real_getitem = pdfium.PdfDocument.__getitem__
    loads: list[int] = []

    def second_load_fails(self: pdfium.PdfDocument, index: int) -> pdfium.PdfPage:
        loads.append(index)
        if loads.count(index) > 1:
            raise pdfium.PdfiumError("Failed to load page.")
        return real_getitem(self, index)

    monkeypatch.setattr(pdfium.PdfDocument, "__getitem__", second_load_fails)

    error = refused(lambda: Document.from_path(path))

    assert error.code == "pdf_corrupt"
    assert str(error) == f"{path}: page 2 cannot be loaded (Failed to load page.)"


def test_an_image_whose_decoder_raises_anything_is_not_an_image(
    png_bytes: Callable[[Image.Image], bytes],
    write: Callable[[str, bytes], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fault injector: Pillow's PNG decoder raises what its parsers raise on hostile data
    # besides OSError (struct.error here).
    def failing_load(self: Image.Image) -> Any:
        raise struct.error("unpack requires a buffer of 4 bytes")

    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", failing_load)
    path = write("scan.png", png_bytes(Image.new("L", (200, 100), 255)))

    error = refused(lambda: Document.from_path(path))

    assert error.code == "not_an_image"
    assert "cannot be decoded (unpack requires a buffer of 4 bytes)" in str(error)


def test_an_image_whose_header_parser_raises_anything_is_not_an_image(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injector: Image.open raises an IndexError, as some format parsers do.
    def failing_open(*args: Any, **kwargs: Any) -> Image.Image:
        raise IndexError("tuple index out of range")

    monkeypatch.setattr(Image, "open", failing_open)
    path = write("scan.gif", b"GIF89a" + b"\x00" * 40)

    error = refused(lambda: Document.from_path(path))

    assert error.code == "not_an_image"
    assert "IndexError: tuple index out of range" in str(error)


async def test_aload_document_reads_in_a_worker_thread(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real = Document.from_path

    def recording(path: Any, **kwargs: Any) -> Document:
        threads.append(threading.current_thread())
        return real(path, **kwargs)

    monkeypatch.setattr(Document, "from_path", recording)
    path = write("note.txt", b"Total due: EUR 5.00")

    doc = await aload_document(path)

    assert doc.text == "Total due: EUR 5.00"
    assert len(threads) == 1
    assert threads[0] is not threading.main_thread()
