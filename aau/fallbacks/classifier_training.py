"""Training a unit's linear text classifier: features, heads, calibration, a held-out measure.

The texts become tf-idf features (word n-grams and character n-grams within word boundaries,
``TfidfVectorizer``), and each head is a scikit-learn ``LogisticRegression`` over them:

- the unit's one-value fields (booleans, enums) share one ``choice`` head whose classes are the
  combinations of their values the examples show (``training.joint``, the default): the answer
  is always a combination someone wrote, and its probability is the whole answer's, not a
  product of fields that depend on each other (no complaint, so no complaint topic); with
  ``joint: false`` each field has its own head;
- each array field (multi-label) has a ``labels`` head, one-vs-rest: one binary regression per
  enum member.

Probabilities are calibrated by temperature: out-of-fold predictions (``training.folds``-fold
cross-validation on the training texts) fix one scale of the logits per head (per label for
``labels``) that minimises their log loss. A scale changes no decision, only how sure it is.

``train`` keeps a deterministic ``held_out`` share of the examples out (the lowest seeded
sha256 ranks of their texts, the CRF's rule: adding examples moves few across), fits on the
rest and measures accuracy and mean confidence on the held-out texts, then refits on every
example for the written model: the settings are declared in the unit, not tuned on the held-out
texts. Measurement runs the model rebuilt from its JSON, as the live path does.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from sklearn.linear_model import LogisticRegression

from aau.fallbacks.labelled import LabelledExample
from aau.fallbacks.linear_text import (
    MODEL_FORMAT,
    BlockData,
    HeadData,
    LinearTextModel,
    ModelData,
    answer_of,
    rows_of,
    vectorizer,
)
from aau.spec.classify import ClassField

__all__ = [
    "ClassifierFeatures",
    "ClassifierTraining",
    "Measure",
    "fit_model",
    "measure",
    "split_held_out",
    "train",
]

_EPS = 1e-9


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ClassifierFeatures(_Strict):
    """Which n-grams the classifier sees. Changing them requires retraining."""

    word_ngrams: tuple[int, int] | None = (1, 2)
    """Word n-gram lengths (words of two or more letters); None: no word block."""
    char_ngrams: tuple[int, int] | None = (2, 5)
    """Character n-gram lengths within words (robust to inflection and typos); None: none."""
    max_features: int = Field(6000, ge=1, le=200_000)
    """The most frequent n-grams kept per block (the model file grows with them)."""
    min_df: int = Field(2, ge=1, le=1000)
    """Texts an n-gram must occur in to be kept."""


class ClassifierTraining(_Strict):
    """Hyper-parameters of ``aau train``."""

    c: float = Field(10.0, gt=0, le=1e6)
    """Inverse L2 regularisation strength of the logistic regressions."""
    joint: bool = True
    """Predict the one-value fields together (one class per combination seen) or one by one."""
    folds: int = Field(5, ge=2, le=20)
    """Cross-validation folds whose out-of-fold predictions fit the temperature."""
    held_out: float = Field(0.2, gt=0, lt=1)
    """Share of the examples kept out of training to measure the model."""
    seed: int = 13
    """Seed of the held-out split and of the folds."""


@dataclass(frozen=True, slots=True)
class Measure:
    """How a model does on labelled texts.

    Attributes:
        count: texts measured.
        accuracy: share whose whole answer is exactly right.
        mean_confidence: mean answer probability (close to ``accuracy`` when calibrated).
        field_accuracy: per field, the share right.
    """

    count: int
    accuracy: float
    mean_confidence: float
    field_accuracy: dict[str, float]


def split_held_out(
    examples: Sequence[LabelledExample], training: ClassifierTraining
) -> tuple[list[LabelledExample], list[LabelledExample]]:
    """Deterministic (train, held-out) split: the lowest seeded-hash ranks are held out."""

    def rank(example: LabelledExample) -> str:
        return hashlib.sha256(f"{training.seed}\0{example.text}".encode()).hexdigest()

    count = round(len(examples) * training.held_out)
    count = min(max(count, 1), len(examples) - 1) if len(examples) > 1 else 0
    held = set(map(id, sorted(examples, key=rank)[:count]))
    return [e for e in examples if id(e) not in held], [e for e in examples if id(e) in held]


def _layout(fields: Mapping[str, ClassField], joint: bool) -> list[tuple[str, list[str]]]:
    choices = [f.name for f in fields.values() if f.kind == "choice"]
    heads = [("choice", choices)] if joint and choices else [("choice", [n]) for n in choices]
    return heads + [("labels", [f.name]) for f in fields.values() if f.kind == "labels"]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _fit_lr(x: Any, y: np.ndarray, training: ClassifierTraining) -> LogisticRegression:
    # scikit-learn is imported where a model is fitted: every unit file declares this
    # module's settings, and most processes only run units (about 0.4 s saved at start).
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=training.c, max_iter=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(x, y)


def _temperature(log_probs: np.ndarray, targets: np.ndarray) -> float:
    """The scale of ``log_probs`` (n, k) minimising the log loss of ``targets`` under softmax."""
    from scipy.optimize import minimize_scalar

    def loss(log_scale: float) -> float:
        z = log_probs * np.exp(log_scale)
        z = z - z.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(z).sum(axis=1))
        return float(np.mean(log_norm - z[np.arange(len(targets)), targets]))

    found = minimize_scalar(loss, bounds=(np.log(0.05), np.log(20.0)), method="bounded")
    return float(np.exp(found.x))


def _out_of_fold(x: Any, y: np.ndarray, k: int, training: ClassifierTraining) -> np.ndarray | None:
    """Out-of-fold class probabilities (n, k) of a regression on ``x``; None: too few texts."""
    from sklearn.model_selection import KFold

    folds = min(training.folds, len(y))
    if folds < 2:
        return None
    out = np.full((len(y), k), _EPS)
    for fit_rows, test_rows in KFold(folds, shuffle=True, random_state=training.seed).split(x):
        seen = np.unique(y[fit_rows])
        if len(seen) == 1:
            out[np.ix_(test_rows, seen)] = 1.0
            continue
        probs = _fit_lr(x[fit_rows], y[fit_rows], training).predict_proba(x[test_rows])
        out[np.ix_(test_rows, seen)] = probs
    return out


def _choice_head(
    x: Any,
    width: int,
    names: list[str],
    outputs: list[Mapping[str, Any]],
    training: ClassifierTraining,
) -> HeadData:
    combos = [[o[n] for n in names] for o in outputs]
    classes = list({_key(c): c for c in combos}.values())
    index = {_key(c): i for i, c in enumerate(classes)}
    y = np.asarray([index[_key(c)] for c in combos])
    coef, intercept, scale = np.zeros((len(classes), width)), np.zeros(len(classes)), 1.0
    if len(classes) > 1:
        model = _fit_lr(x, y, training)
        # A binary regression has one row (class 1 against 0): softmax([0, z]) is its sigmoid.
        coef[-model.coef_.shape[0] :], intercept[-len(model.intercept_) :] = (
            model.coef_,
            model.intercept_,
        )
        oof = _out_of_fold(x, y, len(classes), training)
        if oof is not None:  # softmax(s * log p) is softmax(s * z): a temperature of the logits
            scale = _temperature(np.log(np.clip(oof, _EPS, 1.0)), y)
    return HeadData(kind="choice", fields=names, classes=classes, coef=rows_of(coef),
                    intercept=[float(f"{v:.6g}") for v in intercept],
                    scale=[round(scale, 6)])  # fmt: skip


def _labels_head(
    x: Any,
    width: int,
    field: ClassField,
    outputs: list[Mapping[str, Any]],
    training: ClassifierTraining,
) -> HeadData:
    coef, intercept, scales = np.zeros((len(field.values), width)), [], []
    for row, value in enumerate(field.values):
        y = np.asarray([int(value in o[field.name]) for o in outputs])
        scale = 1.0
        if 0 < y.sum() < len(y):
            model = _fit_lr(x, y, training)
            coef[row], bias = model.coef_[0], float(model.intercept_[0])
            oof = _out_of_fold(x, y, 2, training)
            if oof is not None:
                scale = _temperature(np.log(np.clip(oof, _EPS, 1.0)), y)
        else:  # always or never present: the smoothed share of texts that have it
            share = (y.sum() + 0.5) / (len(y) + 1.0)
            bias = float(np.log(share / (1 - share)))
        intercept.append(float(f"{bias:.6g}"))
        scales.append(round(scale, 6))
    return HeadData(kind="labels", fields=[field.name], classes=list(field.values),
                    coef=rows_of(coef), intercept=intercept, scale=scales)  # fmt: skip


def fit_model(
    examples: Sequence[LabelledExample],
    fields: Mapping[str, ClassField],
    features: ClassifierFeatures,
    training: ClassifierTraining,
    *,
    unit: str,
    examples_sha256: str,
    config_sha256: str,
) -> ModelData:
    """Fit the features and every head on ``examples``; the model file's data.

    Raises:
        ValueError: no feature block is configured, or no n-gram survives ``min_df``.
    """
    texts = [e.text for e in examples]
    outputs = [e.output for e in examples]
    blocks, matrices = [], []
    for analyzer, span in (("word", features.word_ngrams), ("char_wb", features.char_ngrams)):
        if span is None:
            continue
        fitted = vectorizer(analyzer, span, min_df=min(features.min_df, len(texts)),
                            max_features=features.max_features)  # fmt: skip
        matrices.append(fitted.fit_transform(texts))
        blocks.append(BlockData(analyzer=analyzer, ngram_range=span,
                                terms=fitted.get_feature_names_out().tolist(),
                                idf=[float(f"{v:.8g}") for v in fitted.idf_]))  # fmt: skip
    if not blocks:
        raise ValueError("the classifier has no feature block (word_ngrams and char_ngrams null)")
    x = scipy.sparse.hstack(matrices, format="csr")
    heads = []
    for kind, names in _layout(fields, training.joint):
        if kind == "choice":
            heads.append(_choice_head(x, x.shape[1], names, outputs, training))
        else:
            heads.append(_labels_head(x, x.shape[1], fields[names[0]], outputs, training))
    return ModelData(format=MODEL_FORMAT, unit=unit, examples_sha256=examples_sha256,
                     config_sha256=config_sha256, blocks=blocks, heads=heads)  # fmt: skip


def measure(model: LinearTextModel, examples: Sequence[LabelledExample], max_chars: int) -> Measure:
    """Accuracy (whole answer exact), mean confidence and per-field accuracy on ``examples``."""
    names = [name for head in model.heads for name in head.fields]
    right = {name: 0 for name in names}
    exact, confidence = 0, 0.0
    for example in examples:
        answer = answer_of(model, example.text[:max_chars])
        hits = {n: _key(answer.output[n]) == _key(example.output[n]) for n in names}
        exact += all(hits.values())
        confidence += answer.confidence
        for name, hit in hits.items():
            right[name] += hit
    count = len(examples) or 1
    return Measure(len(examples), round(exact / count, 4), round(confidence / count, 4),
                   {n: round(r / count, 4) for n, r in right.items()})  # fmt: skip


def train(
    examples: Sequence[LabelledExample],
    fields: Mapping[str, ClassField],
    features: ClassifierFeatures,
    training: ClassifierTraining,
    *,
    unit: str,
    examples_sha256: str,
    config_sha256: str,
    max_chars: int,
) -> tuple[ModelData, dict[str, Any]]:
    """Measure on the held-out split, then fit on every example: the model and its report."""
    started = time.perf_counter()
    fit_part, held = split_held_out(examples, training)
    keys = {"unit": unit, "examples_sha256": examples_sha256, "config_sha256": config_sha256}
    report: dict[str, Any] = {"examples": len(examples), "train": len(fit_part),
                              "held_out": len(held)}  # fmt: skip
    if held:
        measured = LinearTextModel(fit_model(fit_part, fields, features, training, **keys))
        m = measure(measured, held, max_chars)
        report |= {"held_out_accuracy": m.accuracy, "held_out_mean_confidence": m.mean_confidence,
                   "held_out_field_accuracy": m.field_accuracy}  # fmt: skip
    data = fit_model(examples, fields, features, training, **keys)
    report |= {"trained_on": "all", "seconds": round(time.perf_counter() - started, 2),
               "classes": {",".join(h.fields): len(h.classes) for h in data.heads}}  # fmt: skip
    return data.model_copy(update={"report": report}), report
