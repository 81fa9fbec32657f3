"""Fitting the router from the units' own data: references, training pairs, two linear models.

Every text a unit brings is a training request: a positive of its unit, and a presumed
negative of every other unit (the other units' texts are what a unit must not claim); a
unit's own negatives (texts it finds nothing in) are its sure negatives and the others'
presumed ones. A presumed negative may hold the unit's value after all (a dated invoice is a
price text and a date text): those the cross-validated model finds probable are left out.
Each request is compared with references that never hold its own copy (leave-one-out), so
the fitted weights see similarities like those of a new request rather than of a memorized
one. A derived unit learns from its routing requests; where the units it needs all apply, it
applies too (``Router.route``), so their texts are not counted against it. The threshold is
the one that maximizes the F1 of the pair decisions under 5-fold cross-validation (folds by a
stable hash of the text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.preprocessing import StandardScaler

from aau.routing.artifact import LinearModel
from aau.routing.data import MAX_TEXT_CHARS, UnitTexts, stable_hash
from aau.routing.features import (
    FEATURES,
    TERM_FEATURES,
    UnitReference,
    chunks,
    learned_words,
    lexical_vectors,
    mean_values,
    pair_features,
    term_profile,
    value_kinds,
    value_profile,
)

__all__ = ["FitReport", "build_references", "fit_models", "training_pairs"]

MAX_REF_EXAMPLES = 60
MAX_REF_NEGATIVES = 20
MAX_REF_REQUESTS = 64
"""References kept per unit: the artifact's size and a request's cost stay bounded."""

TELLING_SHARE, TELLING_LIFT = 0.85, 2.5
"""A kind of value held by this share of a unit's texts, and this many times the mean unit's."""

HEAD_C = 10.0
"""Inverse regularization of the units' heads over embeddings."""

MIXED_PER_PAIR = 6
"""Mixed documents per pair of units and fold (``_mixed_texts``)."""

CLEANING_P = 0.5
"""Out-of-fold probability from which a presumed negative is not trusted."""

Embed = Callable[[Sequence[str]], np.ndarray]
Categorize = Callable[[str], Counter[str]]
ReadKinds = Callable[[str], frozenset[str]]
"""``value_kinds``, or a cache of it: fitting reads a unit's texts for both steps."""


@dataclass(frozen=True)
class FitReport:
    """What fitting saw and how the pair decisions fared in cross-validation."""

    texts: int
    pairs: int
    positives: int
    presumed_dropped: dict[str, int]
    cv_f1: dict[str, float]
    cv_accuracy: dict[str, float]

    def to_json(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "texts": self.texts, "pairs": self.pairs, "positives": self.positives,
            "presumed_negatives_dropped": self.presumed_dropped,
            "cv_f1": self.cv_f1, "cv_accuracy": self.cv_accuracy,
        }  # fmt: skip


def build_references(
    units: Sequence[UnitTexts], embed: Embed, categorize: Categorize,
    read_kinds: ReadKinds = value_kinds,
) -> tuple[list[UnitReference], dict[str, float]]:  # fmt: skip
    """Each unit's references (embedded) and the category prior over every unit's texts."""
    own_texts = {u.name: [t for t, _ in u.positives] + list(u.requests) for u in units}
    cats = {
        name: [list(categorize(t).elements()) for t in texts] for name, texts in own_texts.items()
    }
    prior = term_profile([c for per_unit in cats.values() for c in per_unit])
    refs = []
    for unit in units:
        fixed = [t for t, source in unit.positives if source != "data"]
        data = [t for t, source in unit.positives if source == "data"]
        examples = list(dict.fromkeys(fixed + data))[: max(MAX_REF_EXAMPLES, len(fixed))]
        negatives = [t for t, _ in unit.negatives][:MAX_REF_NEGATIVES]
        requests = list(unit.requests)[:MAX_REF_REQUESTS]
        others = [t for name, texts in own_texts.items() if name != unit.name for t in texts]
        refs.append(UnitReference(
            name=unit.name, description=embed([unit.description])[0],
            description_text=unit.description,
            examples=embed(examples), example_texts=examples,
            negatives=embed(negatives), negative_texts=negatives,
            requests=embed(requests), request_texts=requests,
            keywords=list(unit.keywords),
            learned=learned_words(own_texts[unit.name], others),
            profile=term_profile(cats[unit.name]),
            needs=list(unit.needs),
            values=value_profile([read_kinds(t) for t, _ in unit.positives]),
        ))  # fmt: skip
    return refs, prior


def training_pairs(
    units: Sequence[UnitTexts],
    refs: Sequence[UnitReference],
    prior: dict[str, float],
    embed: Embed,
    categorize: Categorize,
    read_kinds: ReadKinds = value_kinds,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels, each pair's fold (by its text) and whether its label is presumed.

    Also sets each reference's ``head`` and ``lexical``, fitted on every text: the pairs'
    own features come from heads fitted without the text's fold.

    A presumed label is a negative taken from another unit's text: nothing says the text does
    not hold this unit's value too (a dated invoice is a price text and a date text).
    """
    labels: dict[str, dict[str, int]] = {}
    for unit in units:
        for text in [t for t, _ in unit.positives] + list(unit.requests):
            labels.setdefault(text, {})[unit.name] = 1
        for text, _ in unit.negatives:
            labels.setdefault(text, {}).setdefault(unit.name, 0)
    names = [r.name for r in refs]
    needs = {u.name: set(u.needs) for u in units}
    parts: dict[str, tuple[str, ...]] = {text: (text,) for text in labels}
    for mixed, pieces in _mixed_texts(units).items():
        if mixed not in labels:
            labels[mixed] = {n: 1 for piece in pieces for n, y in labels[piece].items() if y}
            parts[mixed] = pieces
    texts = list(labels)
    windows = {t: chunks(t) for t in texts}
    embedded = embed(list(dict.fromkeys(w for ws in windows.values() for w in ws)))
    index = {w: i for i, w in enumerate(dict.fromkeys(w for ws in windows.values() for w in ws))}
    telling = _telling_kinds(refs)
    kinds = {text: read_kinds(text) for text in texts}
    # Each pair's label: 1, 0, or unknown (-1: left out of training).
    known = np.full((len(texts), len(names)), -1, dtype=int)
    for row, text in enumerate(texts):
        for i, name in enumerate(names):
            if name in labels[text]:
                known[row, i] = labels[text][name]
            elif needs[name] & set(labels[text]):
                continue  # a text of what a derived unit needs: the unit may well apply
            elif kinds[text] & telling[name]:
                continue  # it holds what this unit's texts nearly always hold: unknown
            else:
                known[row, i] = 0
    folds = np.array([_fold(parts[text][0]) for text in texts])
    starts = embedded[[index[windows[t][0]] for t in texts]]
    grams = lexical_vectors(texts)
    fold_heads = [_fit_heads(starts[folds != f], known[folds != f]) for f in range(5)]
    fold_lexical = [_fit_heads(grams[folds != f], known[folds != f]) for f in range(5)]
    for ref, head, lexical in zip(
        refs, _fit_heads(starts, known), _fit_heads(grams, known), strict=True
    ):
        ref.head, ref.lexical = head, lexical
    rows, ys, groups, presumed = [], [], [], []
    for row, text in enumerate(texts):
        vectors = embedded[[index[w] for w in windows[text]]]
        x = pair_features(
            vectors, text, categorize(text), refs, prior, exclude=parts[text], kinds=kinds[text],
            heads=fold_heads[folds[row]], lexical_heads=fold_lexical[folds[row]],
        )  # fmt: skip
        for i, name in enumerate(names):
            if known[row, i] < 0:
                continue
            rows.append(x[i])
            ys.append(int(known[row, i]))
            groups.append(int(folds[row]))
            presumed.append(name not in labels[text])
    return np.array(rows), np.array(ys), np.array(groups), np.array(presumed, dtype=bool)


def _fit_heads(vectors: Any, known: np.ndarray) -> np.ndarray:
    """Per unit (column of ``known``), a logistic head over the texts' start embeddings.

    Rows: the weights, then the bias; all zero for a unit without both labels to learn from.
    """
    heads = np.zeros((known.shape[1], vectors.shape[1] + 1), dtype=np.float32)
    for i in range(known.shape[1]):
        mask = known[:, i] >= 0
        y = known[mask, i]
        if len(set(y.tolist())) < 2:
            continue
        model = LogisticRegression(C=HEAD_C, class_weight="balanced", max_iter=2000)
        model.fit(vectors[mask], y)
        heads[i, :-1], heads[i, -1] = model.coef_[0], model.intercept_[0]
    return heads


def _fold(text: str) -> int:
    return stable_hash(text) % 5


def _mixed_texts(units: Sequence[UnitTexts]) -> dict[str, tuple[str, ...]]:
    """Documents made of two units' texts, each mapped to its parts.

    A unit's texts each hold its own value alone; requests are documents that hold several
    (an invoice with a date, a total and terms). Joining texts of two units (never a derived
    one: its needs route it) teaches that both apply, as the parts' labels say. For each pair
    of units and fold, ``MIXED_PER_PAIR`` mixes are made of parts taken in hash order, both
    from one fold, so cross-validation never scores a mix whose part it was fitted on. (Mixes
    of three units were tried: no better on the dev requests, a fifth slower to fit.)
    """
    pools: dict[str, list[list[str]]] = {}
    for unit in units:
        if unit.needs:
            continue
        by_fold: list[list[str]] = [[] for _ in range(5)]
        for text, source in unit.positives:
            if source != "golden" and len(text) <= MAX_TEXT_CHARS // 2:
                by_fold[_fold(text)].append(text)
        pools[unit.name] = [sorted(f, key=stable_hash) for f in by_fold]
    mixed: dict[str, tuple[str, ...]] = {}
    for first, second in combinations(sorted(pools), 2):
        for fold in range(5):
            picked = zip(pools[first][fold][0::2], pools[second][fold][1::2], strict=False)
            for pair in list(picked)[:MIXED_PER_PAIR]:
                ordered = tuple(sorted(pair, key=lambda t: stable_hash(t + pair[0])))
                mixed[" ".join(ordered)] = ordered
    return mixed


def _telling_kinds(refs: Sequence[UnitReference]) -> dict[str, frozenset[str]]:
    """Per unit, the kinds of value its texts nearly always hold and few other units' do.

    Another unit's text holding one (a dated invoice, for the date unit) says nothing about
    whether this unit applies to it: it is no presumed negative.
    """
    mean = mean_values(refs)
    return {
        ref.name: frozenset(
            kind for kind, share in ref.values.items()
            if share >= TELLING_SHARE and share >= TELLING_LIFT * mean.get(kind, 0.0)
        )
        for ref in refs
    }  # fmt: skip


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[StandardScaler, LogisticRegression]:
    scaler = StandardScaler().fit(x)
    scaler.scale_[scaler.scale_ < 1e-9] = 1.0  # a constant feature: no division by zero
    model = LogisticRegression(C=1.0, max_iter=2000).fit(scaler.transform(x), y)
    return scaler, model


def _held_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each pair's probability from the model fitted on the other folds."""
    held = np.zeros(len(y))
    for fold in range(5):
        train, test = groups != fold, groups == fold
        if test.any() and len(set(y[train].tolist())) == 2:
            scaler, model = _fit(x[train], y[train])
            held[test] = model.predict_proba(scaler.transform(x[test]))[:, 1]
    return held


def fit_models(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, presumed: np.ndarray, texts: int, *,
    drop: Sequence[str] = (),
) -> tuple[dict[str, LinearModel], FitReport]:  # fmt: skip
    """The router's two models (``terms``, ``no_terms``) and the cross-validated figures.

    A presumed negative that the cross-validated model finds probable (``CLEANING_P``) is
    left out before the final fit: most are texts that hold the unit's value besides their
    own unit's. ``drop`` names features left out of both (to measure what one is worth).
    """
    models: dict[str, LinearModel] = {}
    f1s: dict[str, float] = {}
    accuracies: dict[str, float] = {}
    dropped: dict[str, int] = {}
    grid = np.round(np.arange(0.05, 0.96, 0.025), 3)
    for key, features in (
        ("terms", [f for f in FEATURES if f not in drop]),
        ("no_terms", [f for f in FEATURES if f not in (*TERM_FEATURES, *drop)]),
    ):
        cols = [FEATURES.index(f) for f in features]
        keep = ~(presumed & (_held_out(x[:, cols], y, groups) >= CLEANING_P))
        xs, ys, gs = x[keep][:, cols], y[keep], groups[keep]
        dropped[key] = int((~keep).sum())
        held = _held_out(xs, ys, gs)
        scores = [f1_score(ys, held >= t) for t in grid]
        best = float(grid[int(np.argmax(scores))])
        f1s[key] = round(float(max(scores)), 4)
        accuracies[key] = round(float(((held >= best) == ys).mean()), 4)
        scaler, model = _fit(xs, ys)
        models[key] = LinearModel(
            features, scaler.mean_, scaler.scale_, model.coef_[0], float(model.intercept_[0]), best
        )
    report = FitReport(texts, len(y), int(y.sum()), dropped, f1s, accuracies)
    return models, report
