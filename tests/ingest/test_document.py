"""The document model: offsets, pages, quality over spans, and locating spans on pages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from aau.errors import InputError
from aau.ingest import PAGE_SEPARATOR, Document, align_value, aload_document, load_document


def test_from_text_is_one_native_page_with_quality_one() -> None:
    text = "Total due:  EUR 1,250.00\r\nInvoice date: 14 March 2024"
    doc = Document.from_text(text)
    assert doc.text == text  # kept byte for byte, so callers' offsets stay valid
    assert len(doc.pages) == 1
    page = doc.pages[0]
    assert (page.number, page.char_offset, page.is_ocr, page.width) == (1, 0, False, None)
    assert [w.text for w in doc.words] == text.split()
    assert doc.quality == 1.0
    assert doc.ocr_quality(0, len(text)) == 1.0
    assert doc.locate(0, 5) == []  # plain text has no geometry


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_from_text_rejects_text_without_characters(text: str) -> None:
    with pytest.raises(InputError) as caught:
        Document.from_text(text)
    assert caught.value.code == "empty_document"


def test_words_point_into_text_for_every_kind_of_page(
    mixed_doc: Document, invoice_doc: Document
) -> None:
    for doc in (mixed_doc, invoice_doc, Document.from_text("a bc  def")):
        assert doc.words, doc
        for word in doc.words:
            assert doc.text[word.start : word.end] == word.text
            page = doc.pages[word.page - 1]
            assert page.char_offset <= word.start < word.end <= page.char_end


def test_pages_are_joined_by_the_page_separator(mixed_doc: Document) -> None:
    assert mixed_doc.text.split(PAGE_SEPARATOR) == [page.text for page in mixed_doc.pages]
    for page in mixed_doc.pages:
        assert mixed_doc.text[page.char_offset : page.char_end] == page.text
        assert PAGE_SEPARATOR not in page.text


def test_ocr_quality_is_the_mean_of_the_words_a_span_touches(invoice_doc: Document) -> None:
    words = invoice_doc.words
    low = min(words, key=lambda w: w.confidence)
    high = max(words, key=lambda w: w.confidence)
    assert low.confidence < high.confidence  # a noisy scan has uneven confidence
    assert invoice_doc.ocr_quality(low.start, low.end) == pytest.approx(low.confidence)
    # One character inside a word counts the whole word.
    assert invoice_doc.ocr_quality(high.start + 1, high.start + 2) == pytest.approx(high.confidence)
    first, second = words[3], words[4]
    assert invoice_doc.ocr_quality(first.start, second.end) == pytest.approx(
        (first.confidence + second.confidence) / 2
    )


def test_ocr_quality_of_a_span_without_words_is_the_document_quality(
    invoice_doc: Document,
) -> None:
    gap = invoice_doc.words[0].end  # the space after the first word
    assert invoice_doc.ocr_quality(gap, gap + 1) == pytest.approx(invoice_doc.quality)
    assert invoice_doc.ocr_quality(10, 10) == pytest.approx(invoice_doc.quality)
    mean = sum(w.confidence for w in invoice_doc.words) / len(invoice_doc.words)
    assert invoice_doc.quality == pytest.approx(mean)
    assert 0.5 < invoice_doc.quality < 1.0


@pytest.mark.parametrize(("start", "end"), [(-1, 2), (5, 4), (0, 10**6)])
def test_span_outside_the_text_is_a_programming_error(start: int, end: int) -> None:
    doc = Document.from_text("some text here")
    with pytest.raises(ValueError, match="not inside the document text"):
        doc.ocr_quality(start, end)


def test_locate_encloses_the_words_of_a_span_on_their_page(mixed_doc: Document) -> None:
    span = align_value(mixed_doc.text, "Total due: EUR 1,250.00")
    assert span is not None
    [(page, box)] = mixed_doc.locate(*span)
    assert page == 1
    words = mixed_doc.words_in(*span)
    assert [w.text for w in words] == ["Total", "due:", "EUR", "1,250.00"]
    assert box == (
        min(w.bbox[0] for w in words if w.bbox),
        min(w.bbox[1] for w in words if w.bbox),
        max(w.bbox[2] for w in words if w.bbox),
        max(w.bbox[3] for w in words if w.bbox),
    )


def test_locate_splits_a_span_across_pages(mixed_doc: Document) -> None:
    first_page, last_page = mixed_doc.pages[0], mixed_doc.pages[2]
    located = mixed_doc.locate(first_page.char_offset, last_page.char_end)
    assert [page for page, _ in located] == [1, 2, 3]


def test_load_document_reads_utf8_text_files(write: Callable[[str, bytes], Path]) -> None:
    path = write("note.txt", "Zahlbar bis 14.03.2024: 1.250,00 €\n".encode())
    doc = load_document(path)
    assert doc.source == str(path)
    assert doc.text.startswith("Zahlbar")
    span = align_value(doc.text, 1250)
    assert span is not None
    assert doc.text[span[0] : span[1]] == "1.250,00"


def test_from_bytes_decides_by_content_not_name(text_pdf: Callable[..., bytes]) -> None:
    data = text_pdf([["Clause 7: penalty EUR 500"]])
    doc = Document.from_bytes(data, filename="upload.bin")
    assert doc.text == "Clause 7: penalty EUR 500"
    assert doc.pages[0].is_ocr is False
    assert Document.from_bytes(data).source is None


async def test_aload_document_reads_documents_concurrently(
    text_pdf: Callable[..., bytes], write: Callable[[str, bytes], Path]
) -> None:
    paths = [write(f"doc{n}.pdf", text_pdf([[f"Document number {n}"]] * 3)) for n in range(4)]
    docs = await asyncio.gather(*(aload_document(path) for path in paths))
    assert [doc.pages[0].text for doc in docs] == [f"Document number {n}" for n in range(4)]
