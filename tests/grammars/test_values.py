"""Every shipped grammar against a table of accepted and rejected values.

An accepted value must parse, fully match the grammar's derived regex, and normalize to the
expected canonical value. A rejected value here is lexically invalid (wrong characters or shape):
it must fail to parse with a position inside the value, fail to normalize with that position in
the message, and must not match the regex. Semantic rejections (31 April, an ambiguous
03/04/2024) are in the per-grammar modules. Last, regex and parser must agree on thousands of
seeded random mutations of the accepted values.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from aau.errors import ValidationFailed
from aau.grammars import InvalidValue, load_grammar

ACCEPTED: dict[str, dict[str, Any]] = {
    "date": {
        "2024-03-04": "2024-03-04",
        "2024/3/4": "2024-03-04",
        "2024.03.04": "2024-03-04",
        "25/03/2024": "2024-03-25",
        "03/25/2024": "2024-03-25",
        "25.3.2024": "2024-03-25",
        "25-03-2024": "2024-03-25",
        "04/04/2024": "2024-04-04",
        "March 4, 2024": "2024-03-04",
        "March 4 2024": "2024-03-04",
        "Mar. 4th, 2024": "2024-03-04",
        "march 04,2024": "2024-03-04",
        "4 March 2024": "2024-03-04",
        "4 Mar 2024": "2024-03-04",
        "4th of March 2024": "2024-03-04",
        "4 March, 2024": "2024-03-04",
        "04-Mar-2024": "2024-03-04",
        "1 Sept 2023": "2023-09-01",
        "22nd December 1999": "1999-12-22",
        "Monday, 4 March 2024": "2024-03-04",
        "Mon 4 March 2024": "2024-03-04",
        "29 February 2024": "2024-02-29",
    },
    "iso_date": {
        "2024-03-04": "2024-03-04",
        "2000-02-29": "2000-02-29",
        "0001-01-01": "0001-01-01",
    },
    "money_amount": {
        "$1,250.00": {"amount": "1250.00", "currency": "USD"},
        "1.250,00 €": {"amount": "1250.00", "currency": "EUR"},
        "€1.250,00": {"amount": "1250.00", "currency": "EUR"},
        "EUR 1 250,50": {"amount": "1250.50", "currency": "EUR"},
        "1'250.00 CHF": {"amount": "1250.00", "currency": "CHF"},
        "1’250.00 CHF": {"amount": "1250.00", "currency": "CHF"},
        "CHF 1'250'000": {"amount": "1250000", "currency": "CHF"},
        "1\u00a0250,50\u00a0€": {"amount": "1250.50", "currency": "EUR"},
        "1\u202f250,50 €": {"amount": "1250.50", "currency": "EUR"},
        "USD1250": {"amount": "1250", "currency": "USD"},
        "1,250.00USD": {"amount": "1250.00", "currency": "USD"},
        "12,500,000": {"amount": "12500000", "currency": None},
        "1.250.000": {"amount": "1250000", "currency": None},
        "1250": {"amount": "1250", "currency": None},
        "0,50 €": {"amount": "0.50", "currency": "EUR"},
        "1,25 €": {"amount": "1.25", "currency": "EUR"},
        "1234,567 KWD": {"amount": "1234.567", "currency": "KWD"},
        "-$5": {"amount": "-5", "currency": "USD"},
        "$-5.10": {"amount": "-5.10", "currency": "USD"},
        "EUR -1 250,50": {"amount": "-1250.50", "currency": "EUR"},
        "−12 €": {"amount": "-12", "currency": "EUR"},
        "US$ 12": {"amount": "12", "currency": "USD"},
        "£12": {"amount": "12", "currency": "GBP"},
        "¥1,250": {"amount": "1250", "currency": "JPY"},
        "CN¥12.50": {"amount": "12.50", "currency": "CNY"},
        "12 zł": {"amount": "12", "currency": "PLN"},
    },
    "percentage": {
        "12.5%": "12.5",
        "12,5 %": "12.5",
        "12,5\u00a0%": "12.5",
        "12,5\u202f%": "12.5",
        "-3%": "-3",
        "+012.50 %": "12.5",
        "100%": "100",
        "0.25%": "0.25",
        "-0,0%": "0",
        "7 percent": "7",
        "7 Per Cent": "7",
        "3.5 pct": "3.5",
    },
    "clause_number": {
        "7": "7",
        "7.2": "7.2",
        "7.2.1": "7.2.1",
        "7.2.": "7.2",
        "7a": "7a",
        "7.2(a)": "7.2(a)",
        "7.2 (a)(iii)": "7.2(a)(iii)",
        "12(1)(b)": "12(1)(b)",
        "12(1)(a)(A)": "12(1)(a)(A)",
        "07.02": "7.2",
        "Section 7.2(a)(iii)": "7.2(a)(iii)",
        "section 7": "7",
        "Sec. 4": "4",
        "Clause 9": "9",
        "Art. 12": "12",
        "Article 12(3)": "12(3)",
        "Paragraph 3": "3",
        "§ 4": "4",
        "§4": "4",
    },
    "currency_code": {"EUR": "EUR", "USD": "USD", "CHF": "CHF", "XAU": "XAU", "JPY": "JPY"},
    "json": {
        "{}": {},
        "[]": [],
        '{"a": [1, 2.5, -3e2, "x\\u00e9\\n", true, false, null]}': {
            "a": [1, 2.5, -300.0, "xé\n", True, False, None]
        },
        ' { "nested" : { "k" : [ [ ] ] } } ': {"nested": {"k": [[]]}},
        '"text"': "text",
        "0": 0,
        "-0.5E+3": -500.0,
    },
}

REJECTED: dict[str, list[str]] = {
    "date": [
        "",
        "2024-03/04",
        "2024-13-04",
        "2024-03-32",
        "32/01/2024",
        "04/03/24",
        "March 2024",
        "4 Marc 2024",
        "Mar 4 2024 ",
        " 4 March 2024",
        "2024-3-4-5",
        "4th Mars 2024",
        "0/1/2024",
        "3024-01-01",
    ],
    "iso_date": [
        "2024-3-04",
        "2024-03-4",
        "24-03-04",
        "2024/03/04",
        "2024-00-10",
        "2024-12-00",
        "2024-03-04T10:00",
        "2024-03-40",
    ],
    "money_amount": [
        "",
        "$",
        "EUR",
        "1,2,3",
        "1,25,000.00",
        "12,50.00",
        "1.250,00.00",
        "$$5",
        "5 $ $",
        "1 250.000,00",
        "EUR1.2.3,4",
        "usd 5",
        "XYZ 5",
        "€ 5 €",
        "--5",
        "5-",
        "1.250,00  €",
        "(1,250.00)",
        "12.",
        ".5",
    ],
    "percentage": [
        "",
        "%",
        "12.5",
        "12.5 %%",
        "1,250.5%",
        "12. %",
        "12,5  %",
        "twelve %",
        "12.5percent",
    ],
    "clause_number": [
        "",
        "(a)",
        "7.2()",
        "7.2(abcdefg)",
        "7..2",
        "Section",
        "Section7",
        "§",
        "7.2 a",
        "7.2(a",
        "Chapter 7",
        "7-2",
    ],
    "currency_code": ["", "usd", "Eur", "XYZ", "EURO", "EU", "EUR "],
    "json": [
        "",
        "{",
        "[1,2",
        "{'a': 1}",
        '{"a": 1,}',
        "[01]",
        '"unterminated',
        "tru",
        "NaN",
        '{"a" 1}',
        "1 2",
        '"\t"',
    ],
}

ACCEPTED_CASES = [
    (name, value, expected) for name, table in ACCEPTED.items() for value, expected in table.items()
]
REJECTED_CASES = [(name, value) for name, values in REJECTED.items() for value in values]


def _ids(case: tuple[Any, ...]) -> str:
    return f"{case[0]}:{case[1]!r}"


@pytest.mark.parametrize("case", ACCEPTED_CASES, ids=_ids)
def test_accepted_value_parses_matches_regex_and_normalizes(case: tuple[str, str, Any]) -> None:
    name, value, expected = case
    grammar = load_grammar(name)
    result = grammar.parse(value)
    assert result.ok, result.error
    assert (result.error, result.position) == (None, None)
    if grammar.regex is not None:
        assert re.fullmatch(grammar.regex, value), f"{value!r} does not match {name}'s regex"
    options = {"date_order": "DMY"} if name == "date" and value == "04/04/2024" else {}
    assert grammar.normalize(value, **options) == expected


@pytest.mark.parametrize("case", REJECTED_CASES, ids=_ids)
def test_rejected_value_reports_its_position_and_does_not_match_regex(
    case: tuple[str, str],
) -> None:
    name, value = case
    grammar = load_grammar(name)
    result = grammar.parse(value)
    assert not result.ok
    assert result.error
    assert result.position is not None
    assert 0 <= result.position <= len(value)
    with pytest.raises(InvalidValue) as caught:
        grammar.normalize(value)
    assert isinstance(caught.value, ValidationFailed)
    assert caught.value.position == result.position
    assert f"at position {result.position}: " in str(caught.value)
    if grammar.regex is not None:
        assert re.fullmatch(grammar.regex, value) is None, f"{value!r} matches {name}'s regex"


def test_every_shipped_grammar_has_cases() -> None:
    from aau.grammars import available_grammars

    assert set(ACCEPTED) == set(REJECTED) == set(available_grammars())


def _mutations(rng: random.Random, seeds: list[str], count: int) -> list[str]:
    alphabet = sorted(set("".join(seeds)) | set("0123456789 .,-/'()"))
    out = []
    for _ in range(count):
        letters = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(letters))
            roll = rng.random()
            if roll < 0.4 or not letters:
                letters.insert(at, rng.choice(alphabet))
            elif roll < 0.7:
                letters.pop(min(at, len(letters) - 1))
            else:
                letters[min(at, len(letters) - 1)] = rng.choice(alphabet)
        out.append("".join(letters))
    return out


@pytest.mark.parametrize("name", [n for n in ACCEPTED if n != "json"])
def test_regex_and_parser_agree_on_mutated_values(name: str) -> None:
    """The regex is derived, not written: on near-miss values it must say what the parser says."""
    grammar = load_grammar(name)
    pattern = re.compile(grammar.regex)
    seeds = list(ACCEPTED[name])
    disagreements = [
        value
        for value in _mutations(random.Random(name), seeds, 2000)
        if grammar.parse(value).ok != (pattern.fullmatch(value) is not None)
    ]
    assert disagreements == []
