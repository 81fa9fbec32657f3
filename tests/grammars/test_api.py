"""The public API of aau.grammars: loading, search folders, results and errors."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import aau.grammars
from aau.errors import SpecError, ValidationFailed
from aau.grammars import (
    AmbiguousValue,
    Grammar,
    GrammarNotFound,
    InvalidValue,
    ParseResult,
    available_grammars,
    load_grammar,
)
from aau.grammars.build import build_grammars

SHIPPED = [
    "clause_number",
    "currency_code",
    "date",
    "iso_date",
    "json",
    "money_amount",
    "percentage",
]
USER_GRAMMAR = """grammar sku;

sku_value : LETTERS DASH DIGITS EOF ;

LETTERS : [A-Z]+ ;
DIGITS : [0-9]+ ;
DASH : '-' ;
"""


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in dir(aau.grammars) if not name.startswith("_")}
    modules = {"atn", "build", "errors", "grammar", "loader", "normalizers", "regex"}
    assert aau.grammars.__all__ == sorted(aau.grammars.__all__)
    assert set(aau.grammars.__all__) == public - modules


def test_available_grammars_lists_the_shipped_ones() -> None:
    assert available_grammars() == SHIPPED


def test_load_grammar_is_cached() -> None:
    grammar = load_grammar("money_amount")
    assert isinstance(grammar, Grammar)
    assert load_grammar("money_amount") is grammar
    assert (grammar.name, grammar.start_rule) == ("money_amount", "money_value")
    assert grammar.options == {"decimal", "symbols"}


def test_unknown_grammar_lists_the_available_names() -> None:
    with pytest.raises(GrammarNotFound) as caught:
        load_grammar("mony_amount")
    assert isinstance(caught.value, SpecError)
    assert caught.value.message == (
        "Unknown grammar 'mony_amount'. Available: clause_number, currency_code, date, iso_date, "
        "json, money_amount, percentage."
    )


def test_g4_without_generated_parser_in_search_dir_gets_a_hint(tmp_path: Path) -> None:
    (tmp_path / "sku.g4").write_text(USER_GRAMMAR, encoding="utf-8")
    with pytest.raises(GrammarNotFound) as caught:
        load_grammar("sku", search_dirs=(tmp_path,))
    assert caught.value.__notes__ == [
        f"{tmp_path / 'sku.g4'} has no generated parser here; run: python -m aau.grammars.build "
        f"--src {tmp_path} --out {tmp_path}"
    ]


def test_search_dirs_add_user_grammars(antlr_tool, tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "sku.g4").write_text(USER_GRAMMAR, encoding="utf-8")
    build_grammars(src, out)
    assert available_grammars(search_dirs=(out,)) == sorted([*SHIPPED, "sku"])
    sku = load_grammar("sku", search_dirs=(out,))
    assert sku.parse("AB-12") == ParseResult(True)
    assert sku.normalize("AB-12") == "AB-12"  # no normalizer: validated text back
    assert sku.regex == "[A-Z]+-[0-9]+"
    assert sku.parse("ab-12") == ParseResult(False, "token recognition error at: 'a'", 0)
    assert load_grammar("date", search_dirs=(out,)).normalize("4 March 2024") == "2024-03-04"


def test_grammar_with_skipped_whitespace_gets_it_in_its_regex(antlr_tool, tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "pair.g4").write_text(
        "grammar pair;\npair_value : WORD ',' WORD EOF ;\n"
        "WORD : [a-z]+ ;\nWS : [ \\t]+ -> skip ;\n",
        encoding="utf-8",
    )
    build_grammars(src, out)
    pair = load_grammar("pair", search_dirs=(out,))
    assert pair.regex is not None
    for value in ["a,b", " a , b ", "\tabc,d\t"]:
        assert pair.parse(value).ok
        assert re.fullmatch(pair.regex, value)
    assert not re.fullmatch(pair.regex, "a;b")


@pytest.mark.parametrize(
    ("grammar", "reason"),
    [
        ("grammar lr;\nv : e EOF ;\ne : e '+' e | 'x' ;\n", "rule 'e' is left-recursive"),
        ("grammar pr;\nv : {True}? 'x' EOF ;\n", "the grammar uses semantic predicates"),
        (
            "grammar mo;\nv : B EOF ;\nA : '<' -> more ;\nB : '>' ;\n",
            "lexer rule 'A' changes modes or uses 'more'",
        ),
    ],
)
def test_non_regular_grammars_have_no_regex(
    antlr_tool, tmp_path: Path, grammar: str, reason: str
) -> None:
    name = grammar.split()[1].rstrip(";")
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / f"{name}.g4").write_text(grammar, encoding="utf-8")
    build_grammars(src, out)
    loaded = load_grammar(name, search_dirs=(out,))
    assert (loaded.regex, loaded.regex_reason) == (None, reason)


def test_start_rule_without_eof_still_rejects_trailing_input(antlr_tool, tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "word.g4").write_text(
        "grammar word;\nv : WORD ;\nWORD : [a-z]+ ;\nDOT : '.' ;\n", encoding="utf-8"
    )
    build_grammars(src, out)
    assert load_grammar("word", search_dirs=(out,)).parse("ab.") == ParseResult(
        False, "extraneous input '.' after the value", 2
    )


def test_parse_result_of_invalid_value() -> None:
    result = load_grammar("iso_date").parse("2024-13-01")
    assert result == ParseResult(False, result.error, 6)
    assert result.error is not None
    assert "mismatched input" in result.error


def test_unknown_option_is_a_type_error_listing_accepted_ones() -> None:
    with pytest.raises(TypeError) as caught:
        load_grammar("date").normalize("4 March 2024", decimal=",")
    assert (
        str(caught.value) == "date.normalize() got unknown option(s) decimal; accepted: date_order"
    )


def test_non_string_value_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="money_amount: expected a str value, got int"):
        load_grammar("money_amount").parse(1250)  # type: ignore[arg-type]  # the point of the test


def test_value_errors_are_validation_failures() -> None:
    assert issubclass(InvalidValue, ValidationFailed)
    assert issubclass(AmbiguousValue, ValidationFailed)
    assert InvalidValue("g", "v", 0, "r").code == "invalid_output"
    assert AmbiguousValue("g", "v", ["a", "b"], "hint").code == "ambiguous_value"


def test_parsing_from_many_threads_gives_each_its_own_answer() -> None:
    money = load_grammar("money_amount")
    values = [f"EUR {n:,}.{n % 100:02d}" for n in range(1000, 1400)]

    def work(value: str) -> str:
        return money.normalize(value)["amount"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, values))
    assert results == [value[4:].replace(",", "") for value in values]
