"""Term dictionary files: the three formats, and a located, coded error for each bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from aau.errors import TermDictionaryError
from aau.terms import dictionary as dictionary_module
from aau.terms import load_dictionary, parse_dictionary

TSV = """\
# name: treasury
# lang: en
# source: written for these tests
# license: Apache-2.0
term\tcanonical\tcategory\taliases\tlang
cross-currency swap\tcross-currency swap\tinstrument\tCCS|currency swap\t
force majeure clause\tforce majeure\tclause\t\t
欧元\tEUR\tcurrency\t\tzh
"""

CSV = """\
# name: treasury
term,canonical,category,aliases,lang
cross-currency swap,cross-currency swap,instrument,CCS|currency swap,en
force majeure clause,force majeure,clause,,en
欧元,EUR,currency,,zh
"""

YAML = """\
name: treasury
lang: en
terms:
  - {term: cross-currency swap, canonical: cross-currency swap, category: instrument,
     aliases: [CCS, currency swap]}
  - {term: force majeure clause, canonical: force majeure, category: clause}
  - {term: 欧元, canonical: EUR, category: currency, lang: zh}
"""


@pytest.mark.parametrize(("suffix", "content"), [("tsv", TSV), ("csv", CSV), ("yaml", YAML)])
def test_the_three_formats_read_the_same_terms(tmp_path: Path, suffix: str, content: str) -> None:
    path = tmp_path / f"t.{suffix}"
    path.write_text(content, encoding="utf-8")
    dictionary = load_dictionary(path)
    assert dictionary.name == "treasury"
    assert [t.term for t in dictionary.terms] == [
        "cross-currency swap", "force majeure clause", "欧元"
    ]  # fmt: skip
    assert dictionary.terms[0].aliases == ("CCS", "currency swap")
    assert dictionary.terms[1].canonical == "force majeure"
    assert [t.lang for t in dictionary.terms] == ["en", "en", "zh"]
    assert len(dict(dictionary.surfaces())) == 5


def test_metadata_is_kept() -> None:
    dictionary = parse_dictionary(TSV, file="t.tsv")
    assert (dictionary.source, dictionary.license, dictionary.lang) == (
        "written for these tests", "Apache-2.0", "en"
    )  # fmt: skip
    assert len(dictionary.sha256) == 64


def rows(*lines: str) -> str:
    return "term\tcanonical\tcategory\n" + "".join(line + "\n" for line in lines)


def error_of(content: str | bytes, file: str = "bad.tsv") -> TermDictionaryError:
    with pytest.raises(TermDictionaryError) as info:
        parse_dictionary(content, file=file)
    return info.value


@pytest.mark.parametrize(
    ("content", "code", "line", "field", "words"),
    [
        (rows("swap\tswap\tinstrument", "loan\tloan\tinstrument", "Swap\tswap\tinstrument"),
         "T011", 4, "term", "first on line 2"),
        (rows("swap\tswap\tinstrument", "swap\tforward\tinstrument"),
         "T012", 3, "term", "'forward' here but 'swap' on line 2"),
        (rows("x\tx\tletter"), "T008", 2, "term", "too short"),
        (rows("the supplier shall pay all fees within thirty days of receipt\tfee\tclause"),
         "T009", 2, "term", "sentence"),
        (rows("the supplier shall pay.\tfee\tclause"), "T009", 2, "term", "like a sentence"),
        (rows("<|im_start|>\tstart\tmarkup"), "T014", 2, "term", "special token"),
        (rows("[CLS]\tcls\tmarkup"), "T014", 2, "term", "special token"),
        (rows("loan\t\tinstrument"), "T007", 2, "canonical", "empty"),
        (rows("loan\tloan\tFinance Term"), "T007", 2, "category", "snake_case"),
        ("term\tcanonical\n" + "loan\tloan\n", "T006", 1, "header", "missing column(s) category"),
        (rows("loan\tloan\tinstrument\textra"), "T006", 2, None, "4 fields"),
        (rows(), "T003", None, None, "no terms"),
        ("", "T003", None, None, "no header"),
        ("term\tcanonical\tcategory\taliases\nloan\tloan\tinstrument\tcredit|x\n",
         "T008", 2, "aliases", "'x' is too short"),
    ],
)  # fmt: skip
def test_bad_rows_are_refused_with_file_line_field_and_code(
    content: str, code: str, line: int | None, field: str | None, words: str
) -> None:
    error = error_of(content)
    assert (error.term_code, error.line, error.field) == (code, line, field)
    assert error.file == "bad.tsv"
    assert words in error.message
    assert str(error).startswith("bad.tsv:")
    assert error.code == "invalid_term_dictionary"


def test_non_utf8_names_the_line_and_byte() -> None:
    data = rows("loan\tloan\tinstrument").encode() + b"caf\xe9\tcafe\tplace\n"
    error = error_of(data)
    assert (error.term_code, error.line) == ("T002", 3)
    assert "byte 0xe9" in error.message


def test_an_oversized_file_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dictionary_module, "MAX_DICTIONARY_BYTES", 100)
    path = tmp_path / "huge.tsv"
    path.write_text(rows(*[f"term number {i}\tt{i}\tthing" for i in range(20)]))
    with pytest.raises(TermDictionaryError) as info:
        load_dictionary(path)
    assert info.value.term_code == "T004"


def test_unsupported_and_missing_files(tmp_path: Path) -> None:
    assert error_of("x", file="terms.docx").term_code == "T005"
    with pytest.raises(TermDictionaryError) as info:
        load_dictionary(tmp_path / "absent.tsv")
    assert info.value.term_code == "T001"


def test_yaml_structure_errors_are_located() -> None:
    error = error_of("name: t\nterms:\n  - just a string\n", file="t.yaml")
    assert (error.term_code, error.line, error.field) == ("T006", 3, "terms[0]")
    error = error_of("name: t\nterms:\n  - {term: loan, canonical: loan, category: x, kind: y}\n",
                     file="t.yaml")  # fmt: skip
    assert "unknown key(s) kind" in error.message
    assert error_of("terms: [\n", file="t.yaml").term_code == "T006"


def test_a_bad_language_tag_is_refused() -> None:
    error = error_of("term\tcanonical\tcategory\tlang\nloan\tloan\tinstrument\tenglish!\n")
    assert (error.term_code, error.field) == ("T015", "lang")


def test_yaml_values_of_the_wrong_type_are_located_errors() -> None:
    error = error_of("terms:\n  - {term: ab, canonical: x, category: c, aliases: 5}\n", "t.yaml")
    assert (error.term_code, error.field) == ("T006", "terms[0].aliases")
    error = error_of("terms:\n  - {term: [ab, cd], canonical: x, category: c}\n", "t.yaml")
    assert (error.term_code, error.field) == ("T006", "terms[0].term")
    ok = parse_dictionary("terms:\n  - {term: abc, canonical: x, category: c, aliases: 'd e|fg'}\n",
                          file="t.yaml")  # fmt: skip
    assert ok.terms[0].aliases == ("d e", "fg")  # one text splits at '|', as in a TSV cell


def test_a_repeated_column_is_refused() -> None:
    error = error_of("term\tterm\tcanonical\tcategory\nab\tcd\tx\tc\n")
    assert (error.term_code, error.line, error.field) == ("T006", 1, "header")


def test_a_utf16_file_is_named_as_such() -> None:
    error = error_of("term\tcanonical\tcategory\nswap\tswap\tx\n".encode("utf-16"))
    assert (error.term_code, error.line) == ("T002", 1)
    assert "UTF-16" in error.message
