"""Long texts are tagged window by window: bounded features, the same spans as a short text."""

from __future__ import annotations

import pycrfsuite
import pytest

from aau.fallbacks.crf_features import sentence_features, tokenize
from aau.fallbacks.crf_tagging import WINDOW_TOKENS, _windows, tag_text
from aau.spec.model import UnitSpec
from tests.conftest import PRICE_UNIT

FILLER = "The parties met and talked. " * 2000  # some 12,000 tokens, no price
PRICE = "Total due: EUR 1,250.00."


@pytest.fixture(scope="module")
def tagger_and_features() -> tuple[pycrfsuite.Tagger, object]:
    unit = UnitSpec.from_file(PRICE_UNIT)
    crf = next(f for f in unit.fallbacks if f.kind == "crf")
    tagger = pycrfsuite.Tagger()
    tagger.open(str(crf.model_path(unit)))  # type: ignore[attr-defined]
    return tagger, crf.features.to_config()  # type: ignore[attr-defined]


def test_windows_cover_every_token_once_and_cut_after_a_sentence() -> None:
    text = FILLER + PRICE
    tokens = tokenize(text)
    windows = list(_windows(tokens, text))

    assert len(windows) > 1
    assert windows[0][0] == 0
    assert windows[-1][1] == len(tokens)
    for (_, last), (first, _) in zip(windows, windows[1:], strict=False):
        assert last == first  # contiguous, no token twice or skipped
    for first, last in windows:
        assert 0 < last - first <= WINDOW_TOKENS
    for _, last in windows[:-1]:
        assert tokens[last - 1].text == "."  # cut where a sentence ends


def test_a_short_text_is_one_window() -> None:
    tokens = tokenize(PRICE)
    assert list(_windows(tokens, PRICE)) == [(0, len(tokens))]


def test_a_price_after_many_windows_is_tagged_as_when_alone(
    tagger_and_features: tuple[pycrfsuite.Tagger, object],
) -> None:
    tagger, features = tagger_and_features
    alone = tag_text(tagger, tokenize(PRICE), features)  # type: ignore[arg-type]
    long_text = FILLER + PRICE
    tokens = tokenize(long_text)
    late = tag_text(tagger, tokens, features, text=long_text)  # type: ignore[arg-type]

    assert alone.spans, "the price unit's CRF tags the price on its own"
    shift = len(FILLER)
    assert [(s.label, s.start - shift, s.end - shift) for s in late.spans] == [
        (s.label, s.start, s.end) for s in alone.spans
    ]
    assert len(late.o_marginals) == len(tokens)
    assert late.p_all_o < alone.p_all_o  # more windows, each a chance of some span


def test_term_hits_reach_the_tokens_of_their_window() -> None:
    text = "a b EUR c"
    tokens = tokenize(text)
    features = sentence_features(tokens, term_hits=[(4, 7, "currency")])
    assert [f.get("term") for f in features] == [None, None, "currency", None]
