"""The clause-number normalizer: keyword, spaces and leading zeros dropped; letter case kept."""

from __future__ import annotations

import pytest

from aau.grammars import load_grammar


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Section 07.2 (a)(iii)", "7.2(a)(iii)"),
        ("SECTION 7.2(A)", "7.2(A)"),
        ("Clause 14.3.1.", "14.3.1"),
        ("§ 12a", "12a"),
        ("Art. 5(01)", "5(1)"),
        ("para 3(b)", "3(b)"),
        ("Sect. 9", "9"),
    ],
)
def test_clause_id_is_canonical(value: str, expected: str) -> None:
    assert load_grammar("clause_number").normalize(value) == expected


def test_keyword_only_is_invalid_at_its_end() -> None:
    result = load_grammar("clause_number").parse("Section ")
    assert not result.ok
    assert result.position == 8
