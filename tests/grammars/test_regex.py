"""The regexes derived from the grammars' ATNs, and the regex tree that renders them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from aau.grammars import available_grammars, load_grammar
from aau.grammars.regex import EMPTY, Chars, alt, chars, render, repeat, seq

GOLDEN = Path(__file__).parent / "golden"
REGULAR = ["clause_number", "currency_code", "date", "iso_date", "money_amount", "percentage"]


def lit(text: str):
    return seq([chars([(ord(c), ord(c))]) for c in text])


def test_every_grammar_but_json_is_regular() -> None:
    assert [
        name for name in available_grammars() if load_grammar(name).regex is not None
    ] == REGULAR


@pytest.mark.parametrize("name", REGULAR)
def test_regex_matches_golden_file(name: str) -> None:
    """Golden files show what a grammar change does to the regex; AAU_UPDATE_GOLDEN=1 rewrites."""
    regex = load_grammar(name).regex
    path = GOLDEN / f"{name}.regex"
    if os.environ.get("AAU_UPDATE_GOLDEN") == "1":
        path.write_text(f"{regex}\n", encoding="utf-8")
    assert path.read_text(encoding="utf-8") == f"{regex}\n"


@pytest.mark.parametrize("name", REGULAR)
def test_regex_uses_only_the_portable_subset(name: str) -> None:
    regex = load_grammar(name).regex
    assert regex is not None
    re.compile(regex)
    assert "(?" not in regex  # no lookaround, no non-capturing or named groups
    outside_classes = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", regex.replace("\\\\", ""))
    assert not re.search(r"(?<!\\)[\^$]", outside_classes), "anchors"
    assert not re.search(r"\\[1-9bBAZ]", regex), "backreferences or anchors"


@pytest.mark.parametrize("name", REGULAR)
def test_xgrammar_compiles_the_regex(name: str) -> None:
    xgrammar = pytest.importorskip("xgrammar")
    assert xgrammar.Grammar.from_regex(load_grammar(name).regex) is not None


def test_xgrammar_matches_like_python_re() -> None:
    pytest.importorskip("xgrammar")
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string as accepts  # a test helper of xgrammar

    grammar = load_grammar("money_amount")
    compiled = xgrammar.Grammar.from_regex(grammar.regex)
    for value in ["1\u00a0250,50\u00a0€", "−5 €", "CHF 1'250.00", "1,2,3", "EUR1.2.3,4"]:
        assert accepts(compiled, value) == bool(re.fullmatch(grammar.regex, value))


def test_seq_counts_runs_of_the_same_class() -> None:
    digit = chars([(48, 57)])
    assert render(seq([digit, digit, digit, digit])) == "[0-9]{4}"
    assert render(seq([digit, repeat(digit, 0, 1), repeat(digit, 0, 1)])) == "[0-9]{1,3}"
    assert render(seq([digit, repeat(digit, 0, None)])) == "[0-9]+"


def test_seq_keeps_literal_text_readable() -> None:
    assert render(lit("BBD")) == "BBD"


def test_alt_left_factors_and_merges_single_characters() -> None:
    assert render(alt([lit("JAN"), lit("JUN"), lit("JUL")])) == "J(AN|U[LN])"
    assert render(alt([lit("a"), lit("c"), lit("b")])) == "[a-c]"


def test_alt_with_empty_option_is_optional() -> None:
    assert render(alt([lit("ab"), EMPTY])) == "(ab)?"
    assert render(alt([EMPTY])) == ""


def test_render_escapes_specials_and_invisible_characters() -> None:
    assert render(lit("$1.0(")) == "\\$1\\.0\\("
    assert render(chars([(0xA0, 0xA0)])) == "\\u00a0"
    assert render(chars([(ord("-"), ord("-")), (ord("]"), ord("]"))])) == "[\\-\\]]"
    assert render(chars([(0, 0x10FFFF)])) == "[\\s\\S]"


def test_render_negates_large_classes() -> None:
    not_quote = chars([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
    assert render(not_quote) == '[^\\u0000-\\u001f"\\\\]'
    assert re.fullmatch(render(not_quote), "é")


def test_nested_repeats_fold() -> None:
    x = lit("x")
    assert repeat(repeat(x, 0, None), 0, 1) == repeat(x, 0, None)
    assert render(repeat(repeat(x, 1, None), 0, None)) == "x*"
    assert render(repeat(repeat(x, 2, 2), 3, 3)) == "x{6}"


def test_chars_merges_adjacent_ranges() -> None:
    assert chars([(50, 60), (40, 49), (61, 61)]) == Chars(((40, 61),))


@pytest.mark.parametrize("value", ["7(art)", "7(cl)", "7(sec)", "7(para)", "Art. 7(art)"])
def test_keywords_spelled_inside_a_label_are_letters(value: str) -> None:
    grammar = load_grammar("clause_number")
    assert grammar.parse(value).ok
    assert re.fullmatch(grammar.regex, value)
