"""Features of a (request, unit) pair: what one model, for any unit, scores.

A request is cut into sentence windows (a long document's best window speaks for it). For each
unit it is compared with what the unit brings (``aau.routing.data``): sentence-embedding
similarity (all-MiniLM-L6-v2) to the description, to the texts it applies to, to its own
negatives and to its ``routing.requests`` (best, and mean of the nearest), the best two also as
a margin over the best other unit; the unit's share of the request's nearest references; hits
of its keywords and of the words learned from its texts; the kinds of value the request holds
(a calendar date, an amount of money, a quantity with its unit, read by ``aau.values``) against
how often the unit's own texts hold each; and the categories of the request's term hits
compared with the unit's category profile. Nothing names a unit, so the weights fitted on some
units score any other.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

from aau.values import find_dates, find_money, find_quantities

__all__ = [
    "EMBEDDING_FEATURES",
    "FEATURES",
    "FEATURE_VERSION",
    "LEXICAL_DIM",
    "TERM_FEATURES",
    "UnitReference",
    "VALUE_FEATURES",
    "chunks",
    "learned_words",
    "lexical_vectors",
    "mean_values",
    "pair_features",
    "term_profile",
    "value_kinds",
    "value_profile",
    "words",
]

FEATURE_VERSION = "route-features-5"
"""Changes whenever a feature's meaning does: a fitted router of another version is stale."""

EMBEDDING_FEATURES = (
    "description_sim",
    "example_sim_max",
    "example_sim_mean",
    "example_margin",
    "negative_sim_max",
    "example_minus_negative",
    "request_sim_max",
    "request_sim_mean",
    "request_margin",
    "neighbour_share",
    "head_score",
    "lexical_score",
)
WORD_FEATURES = ("keyword_hits", "learned_word_hits")
VALUE_FEATURES = ("value_share", "value_lift")
TERM_FEATURES = ("term_profile_cos", "term_category_lift", "term_hits")
FEATURES = (*EMBEDDING_FEATURES, *WORD_FEATURES, *VALUE_FEATURES, *TERM_FEATURES)

VALUE_KINDS = ("date", "money", "quantity")
"""The kinds of value ``value_kinds`` looks for."""

WINDOW_CHARS = 320
"""A window of sentences: about what the embedding model reads well at once."""
MAX_CHUNKS = 48
"""Windows embedded per request; a longer document is sampled evenly across its length."""
_SHORT_SENTENCE = 40
"""Sentences shorter than this join the next one (``Date:``, a greeting)."""
_HEAD_CHARS = 1_000
_MAX_COUNTED_HITS = 20
_NEIGHBOURS = 10
_TOP_EXAMPLES, _TOP_REQUESTS = 5, 3
_SENTENCE_END = re.compile(r"(?<=[.!?;:。！？])\s+|\n+")
_WORD = re.compile(r"[^\W\d_]{3,}")
_TOKEN = re.compile(r"\S+")
_DIGIT = re.compile(r"\d")
_LETTERS = re.compile(r"[^\W\d_]+")
_LONG_DIGITS = re.compile(r"9{5,}")
_DATE_SHAPE = re.compile(r"(?<![\d.,/-])\d{1,4}[./-]\d{1,2}[./-]\d{1,4}(?![\d,/-]|\.\d)")
"""A written date, valid or not (``31.02.1988``, ``2025/14/03``): what a date check is asked
about, though no calendar holds it."""
_VALUE_CHARS = 1_600
"""Characters of a request searched for values: a document's start says what it holds, and
the money finder can take 0.3 s on 400 characters dense with numbers and short words."""
_VALUE_WINDOW, _VALUE_OVERLAP = 400, 40
"""Windows read for values; the overlap keeps a value across a cut (``EUR 1 250,00``) whole."""
_MAX_LIFT = 3.0
_MAX_HEAD = 12.0
LEXICAL_DIM = 2**14
"""Hashed n-gram columns: no vocabulary to store, a head of this many weights per unit."""
_HASHING = HashingVectorizer(
    analyzer="char_wb", ngram_range=(2, 4), n_features=LEXICAL_DIM, alternate_sign=False
)


def chunks(text: str) -> list[str]:
    """The request's start (as much as the model reads) and each of its sentence windows.

    A document's best window speaks for the value it holds, and each value of a text with
    several is seen in its own sentence. At most ``MAX_CHUNKS``.
    """
    text = text.strip()
    windows: list[str] = []
    current = ""
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        while len(piece) > WINDOW_CHARS:  # one long "sentence" (a table, no punctuation)
            cut = piece.rfind(" ", 0, WINDOW_CHARS)
            cut = cut if cut > WINDOW_CHARS // 2 else WINDOW_CHARS
            windows.append((current + " " + piece[:cut]).strip())
            current, piece = "", piece[cut:].strip()
        if len(current) >= _SHORT_SENTENCE and len(current) + len(piece) + 1 > _SHORT_SENTENCE:
            windows.append(current)
            current = ""
        current = f"{current} {piece}".strip()
    if current:
        windows.append(current)
    if len(windows) > MAX_CHUNKS - 1:
        step = len(windows) / (MAX_CHUNKS - 1)
        windows = [windows[int(i * step)] for i in range(MAX_CHUNKS - 1)]
    head = text[:_HEAD_CHARS]
    return [head, *(w for w in windows if w != head)]


def words(text: str) -> set[str]:
    """The distinct folded words of ``text`` (letters only, three or more) and token shapes.

    A token holding digits or a currency sign counts by its shape (``2025-04-12`` is
    ``#9999-99-99``, ``€1,250.00`` is ``#€9,999.99``): a unit's values have shapes as telling
    as its words.
    """
    folded = text.casefold()
    found = set(_WORD.findall(folded))
    for token in _TOKEN.findall(folded):
        token = token.strip(".,;:()[]\"'")
        if any(ch.isdigit() for ch in token) or unicodedata.category(token[:1] or "a") == "Sc":
            shape = _LETTERS.sub("a", _DIGIT.sub("9", token))
            found.add("#" + _LONG_DIGITS.sub("9999+", shape)[:16])
    return found


def learned_words(own: Sequence[str], others: Sequence[str], *, top: int = 40) -> dict[str, float]:
    """Words that mark a unit's texts against the other units': smoothed log-odds, top ``top``.

    A word must occur in at least one in twenty of the unit's texts (a quarter of them, when
    there are few; at least two), so that one example's vocabulary does not become the unit's.
    """
    own_df = Counter(w for text in own for w in words(text))
    other_df = Counter(w for text in others for w in words(text))
    least = max(2, min(math.ceil(len(own) / 20), math.ceil(len(own) / 4)))
    scores = {}
    for word, count in own_df.items():
        if count < least:
            continue
        score = math.log((count + 0.5) / (len(own) + 1)) - math.log(
            (other_df[word] + 0.5) / (len(others) + 1)
        )
        if score > 1.0:
            scores[word] = round(score, 4)
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:top]
    return dict(best)


def value_kinds(text: str) -> frozenset[str]:
    """The ``VALUE_KINDS`` that ``text`` holds (its first ``_VALUE_CHARS`` characters).

    Read window by window, each kind until first found: the finders cost about 10 ms per value
    they read, and a dense document holds hundreds.
    """
    head = text[:_VALUE_CHARS]
    found = {"date"} if _DATE_SHAPE.search(head) else set()
    finders = (("date", find_dates), ("money", find_money), ("quantity", find_quantities))
    for start in range(0, max(len(head), 1), _VALUE_WINDOW - _VALUE_OVERLAP):
        window = head[start : start + _VALUE_WINDOW]
        for kind, finder in finders:
            if kind not in found and finder(window):
                found.add(kind)
        if len(found) == len(finders) or start + _VALUE_WINDOW >= len(head):
            break
    return frozenset(found)


def value_profile(kinds: Sequence[frozenset[str]], alpha: float = 0.5) -> dict[str, float]:
    """P(a text holds each kind) over one unit's texts, add-``alpha`` smoothed."""
    n = len(kinds)
    return {k: round((sum(k in ks for ks in kinds) + alpha) / (n + 2 * alpha), 6)
            for k in VALUE_KINDS}  # fmt: skip


def mean_values(units: Sequence[UnitReference]) -> dict[str, float]:
    """The mean of the units' ``values``: how often the average unit's texts hold each kind."""
    return {k: float(np.mean([u.values.get(k, 0.0) for u in units])) for k in VALUE_KINDS}


def _value_features(
    found: frozenset[str], profile: Mapping[str, float], mean: Mapping[str, float]
) -> list[float]:
    """How typical of the unit the request's kinds of value are, and how telling.

    ``value_share``: the most typical found kind's share of the unit's texts; ``value_lift``:
    its log ratio to the mean unit's. Both 0 for a request that holds no value (a question).
    """
    if not found or not profile:
        return [0.0, 0.0]
    share = max(profile.get(k, 0.0) for k in found)
    lift = max(math.log(profile.get(k, 1e-3) / max(mean.get(k, 1e-3), 1e-3)) for k in found)
    return [share, max(-_MAX_LIFT, min(_MAX_LIFT, lift))]


def term_profile(categories: Sequence[Sequence[str]], alpha: float = 0.5) -> dict[str, float]:
    """P(category | a term hit in these texts), add-``alpha`` smoothed over the seen ones."""
    counts = Counter(c for cats in categories for c in cats)
    total = sum(counts.values()) + alpha * max(len(counts), 1)
    return {c: round((n + alpha) / total, 6) for c, n in sorted(counts.items())}


@dataclass
class UnitReference:
    """What the features compare a request with, for one unit (fitted, then stored).

    Attributes:
        name: the unit.
        description: its embedding (unit length).
        examples, negatives, requests: embeddings (rows, unit length) with their texts.
        keywords: its folded ``routing.keywords``.
        learned: words learned from its texts, with their weights.
        profile: P(category) of the term hits in its texts.
        needs: the units a derived unit computes from.
        values: P(a text holds each of ``VALUE_KINDS``) over its texts (``value_profile``).
        head: the unit's own linear head over embeddings (weights, then the bias): fitted on
            its texts against every other unit's (``aau.routing.training``), it reads what
            similarities to a few references miss (any e-mail is a message to classify).
        lexical: the same over the text's character n-grams (``lexical_vectors``): the words
            that embeddings blur ("previous" and "current" revenue, "within 10%").
    """

    name: str
    description: np.ndarray
    description_text: str
    examples: np.ndarray
    example_texts: list[str]
    negatives: np.ndarray
    negative_texts: list[str]
    requests: np.ndarray
    request_texts: list[str]
    keywords: list[str]
    learned: dict[str, float]
    profile: dict[str, float]
    needs: list[str] = field(default_factory=list)
    values: dict[str, float] = field(default_factory=dict)
    head: np.ndarray | None = None
    lexical: np.ndarray | None = None
    _keyword_re: Any = field(default=None, repr=False)

    def keyword_hits(self, folded: str) -> int:
        """How many of the unit's keywords occur in ``folded`` as whole words."""
        if not self.keywords:
            return 0
        if self._keyword_re is None:
            alternatives = "|".join(re.escape(k) for k in sorted(self.keywords, key=len)[::-1])
            self._keyword_re = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")
        return len(set(self._keyword_re.findall(folded)))


def _masked(sims: np.ndarray, texts: Sequence[str], exclude: Collection[str]) -> np.ndarray:
    """Leave-one-out: a training text never counts its own copy (or its parts') as reference."""
    hidden = [i for i, t in enumerate(texts) if t in exclude] if exclude else []
    if hidden:
        sims = sims.copy()
        sims[:, hidden] = -1.0
    return sims


def _best(sims: np.ndarray, top: int) -> tuple[float, float]:
    """Best similarity, and the best window's mean of its ``top`` nearest references."""
    if sims.size == 0:
        return 0.0, 0.0
    k = min(top, sims.shape[1])
    nearest = -np.sort(-sims, axis=1)[:, :k]
    return float(sims.max()), float(nearest.mean(axis=1).max())


def _term_features(
    categories: Counter[str], profile: Mapping[str, float], prior: Mapping[str, float]
) -> list[float]:
    hits = sum(categories.values())
    if not hits:
        return [0.0, 0.0, 0.0]
    keys = sorted(set(categories) | set(profile))
    a = np.array([categories.get(k, 0) for k in keys], dtype=float)
    b = np.array([profile.get(k, 0.0) for k in keys], dtype=float)
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    cos = float(a @ b) / norm if norm else 0.0
    floor = min(prior.values(), default=1e-3) / 2
    lift = sum(
        n * math.log(profile.get(c, floor) / prior.get(c, floor)) for c, n in categories.items()
    )
    # Counted up to a short request's worth: a long document's thousands of hits must not
    # push the linear model far outside what it was fitted on.
    return [cos, max(-3.0, min(3.0, lift / hits)), math.log1p(min(hits, _MAX_COUNTED_HITS))]


def _neighbour_shares(
    windows: np.ndarray, units: Sequence[UnitReference], exclude: Collection[str]
) -> list[float]:
    """Per unit: its share of the nearest references (every unit's examples and requests).

    Taken per window, then the best window's: each value of a document votes on its own.
    """
    blocks, owners = [], []
    for i, unit in enumerate(units):
        for matrix, texts in (
            (unit.examples, unit.example_texts),
            (unit.requests, unit.request_texts),
        ):
            if texts:
                blocks.append(_masked(windows @ matrix.T, texts, exclude))
                owners += [i] * len(texts)
    if not blocks:
        return [0.0] * len(units)
    sims, owner = np.concatenate(blocks, axis=1), np.array(owners)
    k = min(_NEIGHBOURS, sims.shape[1])
    nearest = np.argsort(-sims, axis=1)[:, :k]
    shares = np.zeros((len(windows), len(units)))
    for row, columns in enumerate(nearest):
        np.add.at(shares[row], owner[columns], 1.0 / k)
    return [float(v) for v in shares.max(axis=0)]


def _head_scores(
    rows: Any, units: Sequence[UnitReference], heads: Sequence[np.ndarray | None] | np.ndarray
) -> list[float]:
    """Per unit, its head's best score over ``rows`` (a logit, bounded); 0 without a head."""
    out = []
    for unit_head in heads:
        if unit_head is None or not rows.shape[0] or not np.any(unit_head):
            out.append(0.0)
            continue
        best = float(np.max(rows @ unit_head[:-1]) + unit_head[-1])
        out.append(max(-_MAX_HEAD, min(_MAX_HEAD, best)))
    return out


def lexical_vectors(texts: Sequence[str]) -> Any:
    """Rows of hashed character 2-4-grams (unit length), one per text: a sparse matrix."""
    return _HASHING.transform([t.casefold() for t in texts])


def pair_features(
    windows: np.ndarray,
    text: str,
    categories: Counter[str],
    units: Sequence[UnitReference],
    prior: Mapping[str, float],
    *,
    exclude: str | Collection[str] = (),
    kinds: frozenset[str] | None = None,
    heads: np.ndarray | None = None,
    lexical_heads: np.ndarray | None = None,
) -> np.ndarray:
    """The ``FEATURES`` of ``text`` (its window embeddings ``windows``) for each of ``units``.

    Args:
        windows: the embeddings of ``chunks(text)``, one row each.
        text: the request (for keywords and words).
        categories: the categories of its term hits, counted (empty: no term features).
        units: the references of every routed unit (margins compare with the others).
        prior: P(category) over every unit's texts.
        exclude: a training text (or the texts a mixed one was made of), left out of the
            references it is compared with.
        kinds: ``value_kinds(text)``, when already read.
        heads: each unit's head (rows of weights and bias) in place of ``unit.head``: fitting
            scores a training text with heads fitted without it.
        lexical_heads: likewise in place of ``unit.lexical``.
    """
    exclude = (exclude,) if isinstance(exclude, str) else exclude
    folded = text.casefold()
    present = words(text)
    found = value_kinds(text) if kinds is None else kinds
    mean = mean_values(units)
    scores = _head_scores(windows, units, [u.head for u in units] if heads is None else heads)
    grams = lexical_vectors(chunks(text))
    lexical = _head_scores(
        grams, units, [u.lexical for u in units] if lexical_heads is None else lexical_heads
    )
    shares = _neighbour_shares(windows, units, exclude)
    raw = []
    for unit, share, head, lex in zip(units, shares, scores, lexical, strict=True):
        desc = float((windows @ unit.description).max())
        ex_max, ex_mean = _best(
            _masked(windows @ unit.examples.T, unit.example_texts, exclude), _TOP_EXAMPLES
        )
        neg_max, _ = _best(_masked(windows @ unit.negatives.T, unit.negative_texts, exclude), 1)
        rq_max, rq_mean = _best(
            _masked(windows @ unit.requests.T, unit.request_texts, exclude), _TOP_REQUESTS
        )
        learned = sum(w for word, w in unit.learned.items() if word in present)
        raw.append([
            desc, ex_max, ex_mean, 0.0, neg_max, ex_max - neg_max,
            rq_max, rq_mean, 0.0, share, head, lex,
            math.log1p(unit.keyword_hits(folded)), math.log1p(learned),
            *_value_features(found, unit.values, mean),
            *_term_features(categories, unit.profile, prior),
        ])  # fmt: skip
    out = np.array(raw, dtype=float).reshape(len(units), len(FEATURES))
    ex, rq = FEATURES.index("example_sim_max"), FEATURES.index("request_sim_max")
    for col, margin in ((ex, "example_margin"), (rq, "request_margin")):
        values = out[:, col]
        for i in range(len(units)):
            others = np.delete(values, i)
            out[i, FEATURES.index(margin)] = values[i] - (others.max() if others.size else 0.0)
    return out
