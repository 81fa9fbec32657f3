"""Tagging a text with a trained CRF: the predicted spans, their marginals, and "no span".

The CRF path (``aau.fallbacks.crf``) and its training (``aau.fallbacks.crf_training``) both tag
texts the same way: Viterbi spans with the marginal probability of each of their tokens, the
probability of the labelling with no span at all, and the ``O`` marginal of every token.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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
    label_marginals: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    """Per asked-for label, the marginal of being inside it (B or I) at each token."""


def term_spans(hits: Iterable[Any]) -> list[tuple[int, int, str]]:
    """``(start, end, category)`` of term hits (``aau.terms.TermHit``), as the features take."""
    return [(hit.start, hit.end, hit.category) for hit in hits]


WINDOW_TOKENS = 2048
"""The most tokens tagged as one sequence. A longer text is tagged window by window, cut where
a line or sentence ends when one is near, so the features held at once stay bounded (a
1,000,000-character text has some 300,000 tokens and their features take gigabytes)."""
_CUT_SEARCH = 256  # how far back from a window's end a line or sentence end is looked for


def tag_text(
    tagger: pycrfsuite.Tagger, tokens: Sequence[Token], features: FeatureConfig,
    term_hits: Sequence[tuple[int, int, str]] = (),
    text: str | None = None, labels: Sequence[str] = (),
) -> Tagging:  # fmt: skip
    """Tag ``tokens``; the tagger keeps per-sequence state, so callers sharing one serialise.

    ``term_hits`` (``(start, end, category)``) are used when ``features.use_terms``. ``text``,
    when given, lets a long text be cut between windows at a line break rather than a full stop.
    A text under ``WINDOW_TOKENS`` tokens is one sequence; a longer one is tagged per window
    and ``p_all_o`` is the product of the windows' (the CRF's transitions across a cut are not
    scored). For each of ``labels``, ``label_marginals`` holds its B-or-I marginal per token.
    """
    if not tokens:
        return Tagging((), 1.0, ())
    hits = sorted(term_hits) if features.use_terms else None
    longest = max((end - start for start, end, _ in hits or ()), default=0)
    spans: list[TaggedSpan] = []
    p_all_o = 1.0
    o_marginals: list[float] = []
    known = set(tagger.labels())
    inside = {label: [t for t in (f"B-{label}", f"I-{label}") if t in known] for label in labels}
    per_label: dict[str, list[float]] = {label: [] for label in labels}
    for first, last in _windows(tokens, text):
        window = tokens[first:last]
        window_hits = None if hits is None else _hits_within(hits, longest, window)
        tagger.set(sentence_features(window, features, term_hits=window_hits))
        tags = tagger.tag()
        spans.extend(
            TaggedSpan(
                label,
                window[begin].start,
                window[end - 1].end,
                tuple(tagger.marginal(tags[i], i) for i in range(begin, end)),
            )
            for begin, end, label in spans_from_tags(tags)
        )
        p_all_o *= tagger.probability(["O"] * len(window))
        o_marginals.extend(tagger.marginal("O", i) for i in range(len(window)))
        for label, tags_of in inside.items():
            per_label[label].extend(
                min(1.0, sum(tagger.marginal(tag, i) for tag in tags_of))
                for i in range(len(window))
            )
    label_marginals = {label: tuple(values) for label, values in per_label.items()}
    return Tagging(tuple(spans), p_all_o, tuple(o_marginals), label_marginals)


def _windows(tokens: Sequence[Token], text: str | None) -> Iterator[tuple[int, int]]:
    """``(first, last)`` token ranges of at most ``WINDOW_TOKENS`` covering ``tokens``."""
    first = 0
    while len(tokens) - first > WINDOW_TOKENS:
        last = first + WINDOW_TOKENS
        for cut in range(last - 1, max(first, last - _CUT_SEARCH), -1):
            gap = text[tokens[cut - 1].end : tokens[cut].start] if text is not None else ""
            if "\n" in gap or tokens[cut - 1].text in {".", "!", "?", ";"}:
                last = cut
                break
        yield first, last
        first = last
    yield first, len(tokens)


def _hits_within(
    hits: Sequence[tuple[int, int, str]], longest: int, window: Sequence[Token]
) -> list[tuple[int, int, str]]:
    """The hits (sorted by start, none longer than ``longest``) that overlap ``window``."""
    begin, end = window[0].start, window[-1].end
    low = bisect.bisect_left(hits, (begin - longest,))
    upto = bisect.bisect_left(hits, (end,))
    return [hit for hit in hits[low:upto] if hit[1] > begin]
