"""Tokenizer offsets, per-token features and the BIO encoding of the CRF path."""

from __future__ import annotations

import pytest

from aau.fallbacks.crf_features import (
    FeatureConfig,
    bio_tags,
    sentence_features,
    spans_from_tags,
    tokenize,
)

TEXTS = [
    "Total due: EUR 1,250.00 by 30 April.",
    "Preis: 1.250,00 € inkl. MwSt., Versand 4,90€.",
    "Montant : 1 250,00 € (TVA 20 %), soit 1\u202f500,00\u00a0€.",
    "CHF 1'250.00 per day; call +49 30 1234567 or (555) 123-4567.",
    "Signed on 14.03.2024, 2024-03-14 and 14/03/2024; 5kg, $5, US$5.",
    "  leading spaces,\ttabs\nand l'été, m² 12_3",
]


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_keep_their_character_offsets(text: str) -> None:
    tokens = tokenize(text)
    assert tokens, "every sample has tokens"
    for token in tokens:
        assert text[token.start : token.end] == token.text
    # Tokens are ordered, do not overlap, and only whitespace lies between them.
    for before, after in zip(tokens, tokens[1:], strict=False):
        assert before.end <= after.start
        assert text[before.end : after.start].strip() == ""


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("total 1,250.00 EUR", "1,250.00"),
        ("total 1.250,00 EUR", "1.250,00"),
        ("total 1 250,00 EUR", "1 250,00"),
        ("total 1\u202f250,00 EUR", "1\u202f250,00"),
        ("total 1'250.00 CHF", "1'250.00"),
        ("dated 14.03.2024.", "14.03.2024"),
        ("dated 2024-03-14", "2024-03-14"),
    ],
)
def test_numbers_with_internal_separators_stay_one_token(text: str, number: str) -> None:
    assert number in [t.text for t in tokenize(text)]


def test_currency_symbols_and_units_are_separate_tokens() -> None:
    words = [t.text for t in tokenize("€5, 5€, $1,200 and 5kg or EUR5.")]
    assert words == ["€", "5", ",", "5", "€", ",", "$", "1,200", "and", "5", "kg", "or", "EUR",
                     "5", "."]  # fmt: skip


def test_space_grouping_needs_three_digit_groups() -> None:
    # "30 1234567" is two numbers (a phone number), "1 250" is one grouped number.
    assert [t.text for t in tokenize("+49 30 1234567")] == ["+", "49", "30", "1234567"]
    assert [t.text for t in tokenize("pay 1 250 now")] == ["pay", "1 250", "now"]


def test_token_features_describe_shape_digits_and_lexicons() -> None:
    tokens = tokenize("Total: EUR 1,250.00 on 14 March 2024")
    feats = sentence_features(tokens)
    by_word = {t.text: f for t, f in zip(tokens, feats, strict=True)}
    amount = by_word["1,250.00"]
    assert amount["shape"] == "d,ddd.dd"
    assert amount["sshape"] == "d,d.d"
    assert amount["digits"] == "6"
    assert amount["last_group"] == "2"
    assert amount["has_sep"] == 1.0
    assert amount["-1:w"] == "eur"
    assert amount["-1:cur_code"] == 1.0
    assert amount["L:total"] == 1.0
    assert by_word["EUR"]["cur_code"] == 1.0
    assert by_word["March"]["month"] == 1.0
    assert by_word["2024"]["year"] == 1.0
    assert by_word["Total"]["shape"] == "Xxxxx"
    assert by_word["Total"]["p2"] == "to"
    assert by_word["Total"]["s3"] == "tal"
    assert feats[0]["BOS"] == 1.0
    assert feats[-1]["EOS"] == 1.0


def test_feature_options_switch_features_off() -> None:
    tokens = tokenize("Total: EUR 1,250.00")
    config = FeatureConfig(window=0, affixes=(), use_shape=False, use_lexicons=False, context=0)
    feats = sentence_features(tokens, config)[2]
    assert "shape" not in feats
    assert "cur_code" not in feats
    assert not any(key.startswith(("-1:", "+1:", "L:", "p", "s")) for key in feats)
    assert feats["w"] == "eur"


@pytest.mark.parametrize("word", ["March", "März", "mars", "marzo", "Sept", "févr", "Dezember"])
def test_month_names_are_known_in_several_languages(word: str) -> None:
    assert sentence_features(tokenize(word))[0].get("month") == 1.0


@pytest.mark.parametrize("word", ["marsh", "Total", "Margin"])
def test_other_words_are_not_months(word: str) -> None:
    assert "month" not in sentence_features(tokenize(word))[0]


def test_term_hits_mark_the_tokens_they_cover() -> None:
    text = "late payment fee of EUR 50"
    tokens = tokenize(text)
    start = text.index("late payment fee")
    feats = sentence_features(tokens, term_hits=[(start, start + len("late payment fee"), "fee")])
    assert [f.get("term") for f in feats] == ["fee", "fee", "fee", None, None, None]
    assert feats[3]["-1:term"] == "fee"


def test_a_repeated_token_gets_its_own_features_and_its_own_term() -> None:
    text = "fee 50 EUR, fee 50 EUR, late fee 50 EUR"
    tokens = tokenize(text)
    start = text.index("late fee")
    feats = sentence_features(tokens, term_hits=[(start, start + len("late fee"), "fee")])

    positional = {"bias", "BOS", "EOS", "term"}
    for token, got in zip(tokens, feats, strict=True):  # its own features, as if alone
        alone = sentence_features([token])[0]
        assert {k: v for k, v in got.items() if ":" not in k and k not in positional} == {
            k: v for k, v in alone.items() if k not in positional
        }
    assert [f.get("term") for f in feats] == [None] * 8 + ["fee", "fee", None, None]


def test_bio_tags_round_trip_through_spans() -> None:
    text = "Total due: EUR 1,250.00 by 14 March 2024"
    tokens = tokenize(text)
    spans = [(11, 14, "CURRENCY"), (15, 23, "AMOUNT"), (27, 40, "DATE")]
    tags = bio_tags(tokens, spans)
    assert tags == ["O", "O", "O", "B-CURRENCY", "B-AMOUNT", "O", "B-DATE", "I-DATE", "I-DATE"]
    recovered = [(tokens[a].start, tokens[b - 1].end, lab) for a, b, lab in spans_from_tags(tags)]
    assert recovered == spans


def test_a_span_that_cuts_a_token_labels_the_whole_token() -> None:
    tokens = tokenize("order INV2024 today")
    assert bio_tags(tokens, [(9, 13, "X")]) == ["O", "O", "B-X", "O"]


def test_stray_inside_tags_open_spans() -> None:
    assert spans_from_tags(["I-A", "I-A", "B-A", "O", "I-B", "I-A"]) == [
        (0, 2, "A"), (2, 3, "A"), (4, 5, "B"), (5, 6, "A"),
    ]  # fmt: skip
    assert spans_from_tags([]) == []
