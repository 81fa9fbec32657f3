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

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.preprocessing import StandardScaler

from aau.routing.artifact import LinearModel
from aau.routing.data import UnitTexts, stable_hash
from aau.routing.features import (
    FEATURES,
    TERM_FEATURES,
    UnitReference,
    chunks,
    learned_words,
    pair_features,
    term_profile,
)

__all__ = ["FitReport", "build_references", "fit_models", "training_pairs"]

MAX_REF_EXAMPLES = 60
MAX_REF_NEGATIVES = 20
MAX_REF_REQUESTS = 64
"""References kept per unit: the artifact's size and a request's cost stay bounded."""

CLEANING_P = 0.5
"""Out-of-fold probability from which a presumed negative is not trusted."""

Embed = Callable[[Sequence[str]], np.ndarray]
Categorize = Callable[[str], Counter[str]]


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
    units: Sequence[UnitTexts], embed: Embed, categorize: Categorize
) -> tuple[list[UnitReference], dict[str, float]]:
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
        ))  # fmt: skip
    return refs, prior


def training_pairs(
    units: Sequence[UnitTexts],
    refs: Sequence[UnitReference],
    prior: dict[str, float],
    embed: Embed,
    categorize: Categorize,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels, each pair's fold (by its text) and whether its label is presumed.

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
    texts = list(labels)
    windows = {t: chunks(t) for t in texts}
    embedded = embed(list(dict.fromkeys(w for ws in windows.values() for w in ws)))
    index = {w: i for i, w in enumerate(dict.fromkeys(w for ws in windows.values() for w in ws))}
    rows, ys, groups, presumed = [], [], [], []
    for text in texts:
        vectors = embedded[[index[w] for w in windows[text]]]
        x = pair_features(vectors, text, categorize(text), refs, prior, exclude=text)
        for i, name in enumerate(names):
            label: int | None = labels[text].get(name, 0)
            if name not in labels[text] and needs[name] & set(labels[text]):
                label = None  # a text of what a derived unit needs: the unit may well apply
            if label is None:
                continue
            rows.append(x[i])
            ys.append(label)
            groups.append(stable_hash(text) % 5)
            presumed.append(name not in labels[text])
    return np.array(rows), np.array(ys), np.array(groups), np.array(presumed, dtype=bool)


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
