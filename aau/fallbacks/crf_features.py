"""Tokens and per-token features for the CRF path, and the BIO encoding of labelled spans.

The tokenizer keeps character offsets, so a predicted token run maps straight back to a span of
the analysed text. It keeps written numbers whole (``1,250.00``, ``1.250,00``, ``1 250,00``,
``1'250.00``, ``14.03.2024``, ``2024-03-14``) because a number split at its separators would
have to be re-assembled by the model, and it splits letters from digits (``5kg``, ``EUR5``) and
every other symbol into its own token, so ``€5`` is a currency token and an amount token.

Features are the usual sequence-labelling ones (word, shape, affixes, digit facts, lexicon hits,
neighbours in a window) plus a bag of the words shortly before a token, which is what tells the
total apart from the subtotal. ``FEATURE_VERSION`` names this recipe: a trained model records it,
and a model trained on another recipe is stale.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

from aau import values

__all__ = [
    "FEATURE_VERSION",
    "FeatureConfig",
    "Token",
    "bio_tags",
    "sentence_features",
    "spans_from_tags",
    "tokenize",
]

FEATURE_VERSION = 2
"""Bump when ``tokenize`` or ``sentence_features`` change what they produce."""

_SPACE_GROUPED = r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?!\d)"
_NUMBER = r"\d+(?:[.,'’/:\-]\d+)*"
# Chinese and Japanese write no spaces: each kana or ideograph is a token of its own, so a
# span can start and end inside "7万円です".
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_WORD = rf"(?:(?![{_CJK}])[^\W\d_])+(?:['’](?:(?![{_CJK}])[^\W\d_])+)*"
_TOKEN = re.compile(
    rf"(?P<num>{_SPACE_GROUPED}|{_NUMBER})|(?P<word>{_WORD}|[{_CJK}])|(?P<other>[^\w\s]|_)"
)

_CURRENCY_SYMBOLS = frozenset("$€£¥₹₩₽₺₪₫₴₦₱¢円元")
_CURRENCY_WORDS = frozenset(
    {"euro", "euros", "dollar", "dollars", "pound", "pounds", "yen", "franc", "francs", "rs",
     "fr", "kr", "zł", "rmb", "pesos", "peso"}
)  # fmt: skip
_UNIT_WORDS = frozenset(
    {"kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "g", "gram", "grams", "t", "tonne",
     "tonnes", "ton", "tons", "lb", "lbs", "l", "liter", "liters", "litre", "litres", "ml", "m",
     "meter", "meters", "metre", "metres", "km", "cm", "mm", "m²", "sqm", "pcs", "pc", "piece",
     "pieces", "unit", "units", "box", "boxes", "pallet", "pallets", "carton", "cartons",
     "bottle", "bottles", "bag", "bags", "hour", "hours", "hrs", "h", "day", "days", "kwh",
     "mwh", "stück", "stk", "kisten", "karton", "kartons", "paletten", "stunden", "pièces",
     "palettes", "heures", "unidades", "cajas", "palés", "horas"}
)  # fmt: skip


class Token(NamedTuple):
    """One token of the analysed text.

    A named tuple: a long text makes hundreds of thousands of them, and one is built in half
    the time of a frozen dataclass (figures in ``benchmarks/RESULTS.md``, "Hostile input").

    Attributes:
        text: the token as written.
        start: offset of its first character.
        end: offset just past its last character.
        kind: ``num``, ``word`` or ``other`` (a single symbol).
    """

    text: str
    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class FeatureConfig:
    """What the feature extractor emits; mirrors the unit's ``features:`` block.

    Attributes:
        window: how many neighbours on each side contribute their features.
        affixes: prefix and suffix lengths of the lowercased word.
        use_shape: emit word shapes (``Xxxx``, ``d,ddd.dd``) and their short forms.
        use_lexicons: emit month, currency and unit lexicon hits.
        context: how many preceding tokens contribute a bag of words (0 turns it off).
        use_terms: emit ``term=<category>`` for tokens inside a dictionary term hit.
    """

    window: int = 2
    affixes: tuple[int, ...] = (1, 2, 3)
    use_shape: bool = True
    use_lexicons: bool = True
    context: int = 6
    use_terms: bool = False


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens that keep their character offsets."""
    return [
        Token(match.group(), match.start(), match.end(), match.lastgroup or "other")
        for match in _TOKEN.finditer(text)
    ]


@cache
def _month_names() -> frozenset[str]:
    from babel.dates import get_month_names

    names: set[str] = {"sept"}
    for locale in ("en", "de", "fr", "es", "it", "nl", "pt"):
        for width in ("wide", "abbreviated"):
            names |= {n.lower().rstrip(".") for n in get_month_names(width, locale=locale).values()}
    return frozenset(names)


@cache
def _currency_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


def _shape(word: str) -> str:
    out = []
    for char in word:
        if char.isdigit():
            out.append("d")
        elif char.isalpha():
            out.append("X" if char.isupper() else "x")
        else:
            out.append(char)
    return "".join(out)


def _short_shape(shape: str) -> str:
    # Runs collapse so that 1,250.00 and 12,500.00 share the short shape d,d.d.
    return re.sub(r"(.)\1+", r"\1", shape)


def _token_features(token: Token, config: FeatureConfig) -> dict[str, str | float]:
    """Features of one token on its own, without its neighbours."""
    word = token.text
    lower = word.lower()
    feats: dict[str, str | float] = {"w": lower}
    if config.use_shape:
        shape = _shape(word)
        feats["shape"] = shape if len(shape) <= 12 else shape[:12] + "…"
        feats["sshape"] = _short_shape(shape)
    for n in config.affixes:
        if len(lower) > n:
            feats[f"p{n}"] = lower[:n]
            feats[f"s{n}"] = lower[-n:]
    if token.kind == "num":
        digits = sum(c.isdigit() for c in word)
        groups = re.split(r"[.,'’/:\- \u00a0\u202f]", word)
        feats["num"] = 1.0
        feats["digits"] = str(min(digits, 9))
        feats["ngroups"] = str(min(len(groups), 4))
        feats["last_group"] = str(min(len(groups[-1]), 5))
        if len(groups) > 1:
            feats["has_sep"] = 1.0
            feats["seps"] = "".join(c for c in word if not c.isdigit()).replace("\u202f", " ")
        if len(groups) == 1 and len(word) == 4 and word[:2] in {"19", "20"}:
            feats["year"] = 1.0
    elif token.kind == "word":
        if word.istitle():
            feats["title"] = 1.0
        if word.isupper():
            feats["upper"] = 1.0
    if config.use_lexicons:
        stripped = lower.rstrip(".")
        if word in _CURRENCY_SYMBOLS:
            feats["cur_sym"] = 1.0
        if word.isupper() and len(word) == 3 and word in _currency_codes():
            feats["cur_code"] = 1.0
        if stripped in _CURRENCY_WORDS:
            feats["cur_word"] = 1.0
        elif _is_currency_marker(word):
            feats["cur_any"] = 1.0  # a marker in some CLDR locale: "Kč", "руб", "ドル"
        if stripped in _month_names() or _is_month(stripped):
            feats["month"] = 1.0
        if stripped in _UNIT_WORDS:
            feats["unit"] = 1.0
        elif _is_unit(stripped):
            feats["unit_any"] = 1.0  # a unit of the values layer's registry: "Stunden", "°C"
    return feats


@lru_cache(maxsize=1 << 16)
def _is_currency_marker(word: str) -> bool:
    return len(word) > 1 and bool(values.currency_codes(word)) or word in "$€£¥₹₩₽₺₪₫₴₦₱¢円元"


@lru_cache(maxsize=1 << 16)
def _is_month(word: str) -> bool:
    return len(word) > 2 and any(c.isalpha() for c in word) and values.read_month(word) is not None


@lru_cache(maxsize=1 << 16)
def _is_unit(word: str) -> bool:
    return len(word) > 1 and values.read_unit(word) is not None


# Neighbours contribute only their most telling features; all of them would multiply the model
# size by the window width for little gain.
_NEIGHBOUR_KEYS = ("w", "sshape", "num", "has_sep", "cur_sym", "cur_code", "cur_word", "cur_any",
                   "month", "unit", "unit_any", "year", "term")  # fmt: skip


def sentence_features(
    tokens: Sequence[Token],
    config: FeatureConfig = FeatureConfig(),
    *,
    term_hits: Sequence[tuple[int, int, str]] | None = None,
) -> list[dict[str, str | float]]:
    """The feature dict of every token, in python-crfsuite's format.

    Args:
        tokens: the tokens of one text, from ``tokenize``.
        config: which features to emit.
        term_hits: optional ``(start, end, type)`` hits of the tenant's term layer; a token
            inside a hit gets ``term=<type>``.

    Returns:
        One dict per token (string values are categorical, floats are weights).
    """
    # A token's own features depend on its text and kind alone: computed once per distinct
    # token of the text (a long document repeats most of its words), shared by its occurrences,
    # and so are the features it lends its neighbours at each offset.
    seen: dict[tuple[str, str], dict[str, str | float]] = {}
    own = []
    for token in tokens:
        spelled = (token.text, token.kind)
        feats = seen.get(spelled)
        if feats is None:
            feats = seen[spelled] = _token_features(token, config)
        own.append(feats)
    for index, hit_type in _tokens_in_hits(tokens, term_hits or ()):
        own[index] = {**own[index], "term": hit_type}
    offsets = [o for o in range(-config.window, config.window + 1) if o != 0]
    lent_by: dict[tuple[tuple[str, str | float], ...], dict[int, dict[str, str | float]]] = {}
    lent = []  # per token: offset -> the features it lends a token at that offset
    for feats in own:
        shown = tuple((key, feats[key]) for key in _NEIGHBOUR_KEYS if key in feats)
        per_offset = lent_by.get(shown)
        if per_offset is None:
            per_offset = lent_by[shown] = {
                o: {f"{o:+d}:{key}": value for key, value in shown} for o in offsets
            }
        lent.append(per_offset)
    left = [f"L:{t.text.lower()}" if t.kind == "word" and len(t.text) > 2 else None
            for t in tokens]  # fmt: skip
    out: list[dict[str, str | float]] = []
    for index, feats in enumerate(own):
        full = dict(feats)
        full["bias"] = 1.0
        if index == 0:
            full["BOS"] = 1.0
        if index == len(own) - 1:
            full["EOS"] = 1.0
        for offset in offsets:
            at = index + offset
            if 0 <= at < len(own):
                full.update(lent[at][offset])
        for word in left[max(0, index - config.context) : index]:
            if word is not None:
                full[word] = 1.0
        out.append(full)
    return out


def _tokens_in_hits(
    tokens: Sequence[Token], hits: Iterable[tuple[int, int, str]]
) -> Iterator[tuple[int, str]]:
    """``(token index, type)`` of every token a hit overlaps (a bisect per hit)."""
    ends = [token.end for token in tokens]
    for hit_start, hit_end, hit_type in hits:
        index = bisect.bisect_right(ends, hit_start)  # the first token ending after the start
        while index < len(tokens) and tokens[index].start < hit_end:
            yield index, hit_type
            index += 1


def bio_tags(tokens: Sequence[Token], spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """BIO tags of ``tokens`` for labelled character spans ``(start, end, label)``.

    A token that overlaps a span belongs to it, so a span that cuts a token still labels the
    whole token (``spans_from_tags`` then returns the token-aligned span).
    """
    tags = ["O"] * len(tokens)
    for start, end, label in sorted(spans):
        inside = [i for i, t in enumerate(tokens) if t.start < end and start < t.end]
        for position, index in enumerate(inside):
            tags[index] = f"{'B' if position == 0 else 'I'}-{label}"
    return tags


def spans_from_tags(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """Token ranges ``(first, last + 1, label)`` of a BIO sequence.

    An ``I-`` tag that does not continue a span of its label opens one, as conlleval reads it.
    """
    found: list[tuple[int, int, str]] = []
    open_label: str | None = None
    open_start = 0
    for index, tag in enumerate([*tags, "O"]):
        prefix, _, label = tag.partition("-")
        continues = prefix == "I" and label == open_label
        if open_label is not None and not continues:
            found.append((open_start, index, open_label))
            open_label = None
        if prefix == "B" or (prefix == "I" and not continues):
            open_label, open_start = label, index
    return found
