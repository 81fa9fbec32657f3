"""Every case of the hostile corpus (``tests/hostile/cases.yaml``) through the real ``aau`` CLI.

One test per case, parametrized over the manifest. The children are run once per module by
``tests.hostile.corpus.run_corpus`` (shared runs where the CLI reports per file or per line,
failing cases again alone), each with a 60 s wall-clock timeout (a hang fails), a fresh working
folder, ``HOME`` and ``AAU_TERMS_DIR`` in the temporary folder, and a marker path in place of
every ``MARKER`` that must not exist afterwards.

Memory: ``RLIMIT_AS`` of 2 GB is set in ``preexec_fn`` for the children that do not load torch
(``aau validate``, ``aau termdict``, the render step: ~0.7 GB of address space, ~330 MB
resident). Children that load torch and the calibrator's sentence embedder (``aau batch``,
``aau run``, ``aau train``) reserve ~2.9 GB of address space for ~1 GB resident, and 2 GB of
``RLIMIT_AS`` aborts them at start ("cannot allocate memory for thread-local data"), so they get
6 GB as a backstop only; for every child the test is its peak RSS (``ru_maxrss`` from
``os.wait4``), which must stay under 2 GB.

The whole module takes about a minute and a half on 2 cores.
"""

from __future__ import annotations

import io

import pytest

from tests.hostile.corpus import (
    HERE,
    KINDS,
    MEMORY_BYTES,
    Case,
    CorpusReport,
    load_cases,
    make_pdf,
    manifest_problems,
    pdf_pages_fail,
    png_bomb,
    run_corpus,
)

CASES = load_cases()

NAMED = {
    # unit templates
    "unit-template-lipsum-globals", "unit-template-cycler-globals",
    "unit-template-joiner-globals", "unit-template-namespace-globals",
    "unit-template-unit-class-globals", "unit-template-subclasses", "unit-template-attr-filter",
    "unit-template-getitem-globals", "unit-template-nested-range", "unit-template-100mb",
    "unit-template-benign",
    # unit regexes
    "unit-regex-nested-quantifier", "unit-regex-xx-plus-y", "unit-regex-dotstar-a20",
    "unit-regex-lookbehind",
    # unit paths
    "unit-path-model-escape", "unit-path-examples-etc-passwd", "unit-path-symlink-outside",
    # unit YAML
    "unit-yaml-alias-bomb", "unit-yaml-brackets-100k", "unit-yaml-nested-mappings-100k",
    "unit-yaml-output-schema-200-deep", "unit-yaml-duplicate-keys",
    "unit-yaml-python-apply-os-system", "unit-yaml-python-object-new", "unit-yaml-python-name",
    "unit-yaml-nan-version", "unit-yaml-inf-timeout", "unit-yaml-50mb", "unit-yaml-fifo",
    "unit-yaml-dev-zero", "unit-yaml-not-utf8", "unit-yaml-bom", "unit-yaml-nul-bytes",
    # batch lines
    "batch-surrogate-text", "batch-surrogate-id", "batch-json-100k-deep", "batch-id-5000-digits",
    "batch-path-nul", "batch-path-dev-zero", "batch-path-fifo", "batch-path-absolute",
    "batch-path-dotdot", "batch-path-symlink-escape", "batch-line-10mb", "batch-not-json",
    "batch-not-utf8", "batch-json-array", "batch-json-string", "batch-json-null",
    "batch-text-number", "batch-empty-line", "batch-text-and-path", "batch-unknown-tenant",
    "batch-tenant-newline",
    # documents
    "document-pdf-pages-fail", "document-pdf-truncated", "document-pdf-10000-pages",
    "document-png-zero-bytes", "document-png-corrupt-idat", "document-png-decompression-bomb",
    "document-tiff-many-pages", "document-text-utf16",
    # dictionaries
    "dictionary-alias-bomb", "dictionary-duplicate-keys", "dictionary-fifo",
    "dictionary-dev-zero", "dictionary-tsv-100mb", "dictionary-tsv-nul",
    "dictionary-csv-1mb-field", "dictionary-special-tokens", "dictionary-bom",
    "dictionary-lone-surrogate-bytes", "dictionary-lone-surrogate-escape",
}  # fmt: skip
"""The cases the corpus must hold whatever else it grows to."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusReport:
    return run_corpus(CASES, tmp_path_factory.mktemp("hostile"))


def test_the_manifest_is_sound() -> None:
    assert manifest_problems(CASES) == []
    assert len(CASES) >= 70
    assert {case.kind for case in CASES} == set(KINDS)
    missing = NAMED - {case.id for case in CASES}
    assert not missing, f"named cases missing from cases.yaml: {sorted(missing)}"


def test_every_committed_case_file_is_in_the_manifest() -> None:
    listed = {case.file for case in CASES}
    committed = {
        str(path.relative_to(HERE))
        for folder in ("units", "batch", "documents", "dictionaries")
        for path in (HERE / folder).rglob("*")
        if path.is_file()
    }
    assert committed - listed == set(), "files no case names"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(corpus: CorpusReport, case: Case) -> None:
    verdict = corpus.verdicts[case.id]
    if not verdict.ok:
        pytest.fail(verdict.describe(), pytrace=False)


def test_the_good_lines_around_the_hostile_ones_are_analysed_in_order(
    corpus: CorpusReport,
) -> None:
    assert corpus.good_line_problems == []


def test_no_input_line_loses_its_output_line(corpus: CorpusReport) -> None:
    assert corpus.lost_lines == 0


def test_no_child_goes_past_the_memory_bound(corpus: CorpusReport) -> None:
    assert corpus.max_rss_mb * 2**20 < MEMORY_BYTES
    assert corpus.max_rss_mb > 50  # the measurement measures something


def test_the_page_failure_pdf_opens_but_pypdfium2_cannot_load_its_pages() -> None:
    import pypdfium2 as pdfium

    intact = pdfium.PdfDocument(make_pdf())
    assert "Total due" in intact[0].get_textpage().get_text_range()
    broken = pdfium.PdfDocument(pdf_pages_fail())
    assert len(broken) == 2
    for index in range(len(broken)):
        with pytest.raises(pdfium.PdfiumError, match="Failed to load page"):
            broken[index]


def test_the_bomb_png_is_a_decompression_bomb_for_pillow() -> None:
    from PIL import Image

    data = png_bomb()
    assert len(data) < 2000
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(data))
