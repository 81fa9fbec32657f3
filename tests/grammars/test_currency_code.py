"""The ISO 4217 list in grammars/iso4217.g4 against the reference data installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aau.grammars import load_grammar


def _grammar_codes(repo_root: Path) -> set[str]:
    text = (repo_root / "grammars" / "iso4217.g4").read_text(encoding="utf-8")
    return set(re.findall(r"'([A-Z]{3})'", text))


def test_grammar_lists_exactly_pycountrys_codes(repo_root: Path) -> None:
    pycountry = pytest.importorskip("pycountry")
    assert _grammar_codes(repo_root) == {currency.alpha_3 for currency in pycountry.currencies}


def test_grammar_lists_every_active_legal_tender_known_to_babel(repo_root: Path) -> None:
    babel_core = pytest.importorskip("babel.core")
    from babel.numbers import list_currencies

    active = {
        code
        for entries in babel_core.get_global("territory_currencies").values()
        for code, _start, end, tender in entries
        if end is None and tender
    }
    codes = _grammar_codes(repo_root)
    assert active <= codes
    assert codes <= set(list_currencies())


def test_every_listed_code_is_accepted_by_both_grammars(repo_root: Path) -> None:
    currency, money = load_grammar("currency_code"), load_grammar("money_amount")
    for code in sorted(_grammar_codes(repo_root)):
        assert currency.normalize(code) == code
        assert money.normalize(f"{code} 5")["currency"] == code
