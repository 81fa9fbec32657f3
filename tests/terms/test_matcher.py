"""The Aho-Corasick matcher: folding, longest-leftmost, word boundaries, CJK, offsets."""

from __future__ import annotations

import pytest

from aau.terms import TermMatcher, parse_dictionary, shipped_dictionaries
from aau.terms.dictionary import fold_surface


def matcher(*rows: str, name: str = "d") -> TermMatcher:
    text = "term\tcanonical\tcategory\n" + "".join(r + "\n" for r in rows)
    return TermMatcher([parse_dictionary(text, file=f"{name}.tsv")])


FINANCE = matcher(
    "interest\tinterest\tconcept",
    "interest rate\tinterest rate\tconcept",
    "interest rate swap\tIRS\tinstrument",
    "rate swap\trate swap\tinstrument",
    "swap\tswap\tinstrument",
    "cap\tcap\tinstrument",
    "force majeure clause\tforce majeure\tclause",
    "USD/GBP cross-currency swap\tUSDGBP CCS\tinstrument",
)


def found(m: TermMatcher, text: str) -> list[tuple[str, str]]:
    hits = m.find(text)
    for hit in hits:
        assert text[hit.start : hit.end] == hit.text  # offsets point into the original
    return [(h.text, h.canonical) for h in hits]


def test_longest_leftmost_wins_among_overlapping_terms() -> None:
    assert found(FINANCE, "An interest rate swap, then a rate swap.") == [
        ("interest rate swap", "IRS"), ("rate swap", "rate swap")
    ]  # fmt: skip


def test_case_is_folded_and_line_breaks_match_spaces() -> None:
    assert found(FINANCE, "FORCE MAJEURE\nClause 7 applies") == [
        ("FORCE MAJEURE\nClause", "force majeure")
    ]  # fmt: skip
    assert found(FINANCE, "a USD/GBP Cross-Currency Swap") == [
        ("USD/GBP Cross-Currency Swap", "USDGBP CCS")
    ]  # fmt: skip


def test_terms_do_not_match_inside_words() -> None:
    assert found(FINANCE, "capital, swaps, escape, recap") == []
    assert found(FINANCE, "cap.") == [("cap", "cap")]


def test_a_shorter_term_is_found_when_the_longest_would_cut_a_word() -> None:
    # "interest rate" is followed by "s": the longest candidate cuts a word, "interest" fits.
    assert found(FINANCE, "interest rates swap") == [("interest", "interest"), ("swap", "swap")]
    # and a term that starts inside the rejected span is still found
    assert found(FINANCE, "interest rateswap swap") == [("interest", "interest"), ("swap", "swap")]


def test_offsets_survive_characters_whose_lower_case_is_longer() -> None:
    text = "İstanbul desk: interest rate swap"  # "İ".lower() is two characters
    hits = FINANCE.find(text)
    assert [(h.start, h.end) for h in hits] == [(15, 33)]
    assert text[15:33] == "interest rate swap"


CJK = matcher("欧元\tEUR\tcurrency", "人民币\tCNY\tcurrency", "不可抗力\tforce majeure\tclause",
              "ユーロ\tEUR\tcurrency", "損害賠償\tdamages\tclause")  # fmt: skip


def test_chinese_and_japanese_terms_match_without_word_boundaries() -> None:
    assert found(CJK, "合同金额为100欧元，因不可抗力免责；另付人民币500元。") == [
        ("欧元", "EUR"), ("不可抗力", "force majeure"), ("人民币", "CNY")
    ]  # fmt: skip
    assert found(CJK, "違約金は500ユーロ、損害賠償を含む。") == [
        ("ユーロ", "EUR"), ("損害賠償", "damages")
    ]  # fmt: skip
    hit = CJK.find("为100欧元")[0]
    assert (hit.start, hit.end) == (4, 6)


def test_a_later_dictionary_wins_a_shared_surface_form() -> None:
    shipped = parse_dictionary("term\tcanonical\tcategory\nswap\tswap\tinstrument\n", file="a.tsv")
    tenant = parse_dictionary("term\tcanonical\tcategory\nswap\tSWP\tproduct\n", file="b.tsv")
    assert TermMatcher([shipped, tenant]).find("a swap")[0].canonical == "SWP"
    assert TermMatcher([tenant, shipped]).find("a swap")[0].canonical == "swap"


def test_the_fingerprint_follows_content_and_order() -> None:
    a = parse_dictionary("term\tcanonical\tcategory\nswap\tswap\tinstrument\n", file="a.tsv")
    b = parse_dictionary("term\tcanonical\tcategory\nloan\tloan\tinstrument\n", file="b.tsv")
    assert TermMatcher([a, b]).fingerprint == TermMatcher([a, b]).fingerprint
    assert TermMatcher([a, b]).fingerprint != TermMatcher([b, a]).fingerprint
    assert TermMatcher([a]).fingerprint != TermMatcher([a, b]).fingerprint


def test_an_empty_matcher_finds_nothing() -> None:
    assert TermMatcher([]).find("anything") == []


@pytest.fixture(scope="module")
def shipped() -> list:
    return shipped_dictionaries()


def test_shipped_dictionaries_hold_over_a_thousand_licensed_terms(shipped: list) -> None:
    domains = {d.file.split("/")[-2] for d in shipped}
    assert {"finance", "legal", "insurance"} <= domains
    assert sum(len(d) for d in shipped) >= 1000
    for dictionary in shipped:
        assert dictionary.source, dictionary.file
        assert dictionary.license, dictionary.file


def test_shipped_dictionaries_never_give_one_surface_two_meanings(shipped: list) -> None:
    meaning: dict[str, str] = {}
    for dictionary in shipped:
        for surface, term in dictionary.surfaces():
            key = fold_surface(surface)
            assert meaning.setdefault(key, term.canonical) == term.canonical, surface


def test_a_shorter_term_ending_where_a_longer_one_fails_is_found() -> None:
    # pyahocorasick's iter_long misses these (its issue 133); the matcher must not.
    fees = matcher("late payment fee\tlate payment fee\tfee", "payment\tpayment\tconcept")
    assert found(fees, "Reason: late payment") == [("payment", "payment")]
    assert found(fees, "late payment\n") == [("payment", "payment")]
    stocks = matcher("new york stock exchange\tNYSE\tmarket", "york stock market\tx\tmarket",
                     "stock\tstock\tinstrument")  # fmt: skip
    assert found(stocks, "the new york stock, and more") == [("stock", "stock")]
    ip = matcher("知识产权\tIP\tright", "国家知识产权局\tCNIPA\tauthority")
    assert found(ip, "国家知识产权") == [("知识产权", "IP")]


def test_combining_marks_belong_to_their_word() -> None:
    hindi = matcher("कम\tless\tword")
    assert found(hindi, "कमी") == []  # the vowel sign continues the word
    assert found(hindi, "यह कम है") == [("कम", "less")]


def test_unusual_whitespace_and_letters_still_match() -> None:
    wide = matcher("force majeure\tforce majeure\tclause", "ΟΔΟΣ\tstreet\tplace",
                   "İstanbul\tIST\tplace")  # fmt: skip
    assert found(wide, "a force\u3000majeure event") == [("force\u3000majeure", "force majeure")]
    assert found(wide, "İ ΟΔΟΣ 5") == [("ΟΔΟΣ", "street")]
    assert found(wide, "our İstanbul office") == [("İstanbul", "IST")]


def test_a_lone_surrogate_in_the_text_is_just_a_character() -> None:
    assert found(FINANCE, "swap \udcff cap") == [("swap", "swap"), ("cap", "cap")]
