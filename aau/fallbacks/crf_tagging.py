"""Tagging a text with a trained CRF: the predicted spans, their marginals, and "no span".

The CRF path (``aau.fallbacks.crf``) and its training (``aau.fallbacks.crf_training``) both tag
texts the same way: Viterbi spans with the marginal probability of each of their tokens, the
probability of the labelling with no span at all, and the ``O`` marginal of every token.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aau.fallbacks.crf_features import FeatureConfig, Token, sentence_features, spans_from_tags

if TYPE_CHECKING:
    import pycrfsuite

__all__ = ["TaggedSpan", "Tagging", "tag_text", "term_spans"]


@dataclass(frozen=True, slots=True)
class TaggedSpan:
    """A predicted span with its per-token marginals.

    Attributes:
        label: the span label.
        start: character offset of the first token.
        end: character offset past the last token.
        marginals: marginal probability of the predicted tag of each of its tokens.
    """

    label: str
    start: int
    end: int
    marginals: tuple[float, ...]

    @property
    def score(self) -> float:
        """Mean marginal: how sure the model is of this span as a whole."""
        return sum(self.marginals) / len(self.marginals)


@dataclass(frozen=True, slots=True)
class Tagging:
    """What the tagger says about one text.

    Attributes:
        spans: the Viterbi spans with their marginals.
        p_all_o: probability of the labelling with no span at all.
        o_marginals: marginal probability of ``O`` at each token.
    """

    spans: tuple[TaggedSpan, ...]
    p_all_o: float
    o_marginals: tuple[float, ...]


def term_spans(hits: Iterable[Any]) -> list[tuple[int, int, str]]:
    """``(start, end, category)`` of term hits (``aau.terms.TermHit``), as the features take."""
    return [(hit.start, hit.end, hit.category) for hit in hits]


def tag_text(
    tagger: pycrfsuite.Tagger, tokens: Sequence[Token], features: FeatureConfig,
    term_hits: Sequence[tuple[int, int, str]] = (),
) -> Tagging:  # fmt: skip
    """Tag ``tokens``; the tagger keeps per-sequence state, so callers sharing one serialise.

    ``term_hits`` (``(start, end, category)``) are used when ``features.use_terms``.
    """
    if not tokens:
        return Tagging((), 1.0, ())
    hits = term_hits if features.use_terms else None
    tagger.set(sentence_features(tokens, features, term_hits=hits))
    tags = tagger.tag()
    spans = tuple(
        TaggedSpan(
            label,
            tokens[first].start,
            tokens[last - 1].end,
            tuple(tagger.marginal(tags[i], i) for i in range(first, last)),
        )
        for first, last, label in spans_from_tags(tags)
    )
    p_all_o = tagger.probability(["O"] * len(tokens))
    return Tagging(spans, p_all_o, tuple(tagger.marginal("O", i) for i in range(len(tokens))))
