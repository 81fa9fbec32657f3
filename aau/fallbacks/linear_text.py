"""A linear text model kept as JSON: tf-idf n-gram features and logistic heads, run in numpy.

A trained classifier is data someone may have replaced, so it is never unpickled: the file holds
plain numbers and strings (each feature block's n-gram terms and idf weights, each head's
coefficients, intercepts and temperature), read through a pydantic model that checks every type
and shape before numpy sees an array. Prediction rebuilds the model from those numbers alone:
the text is cut into the block's word or character n-grams (scikit-learn's own analyzer, built
from the stored settings, so training and prediction cut alike), weighted ``(1 + log tf) * idf``
and L2-normalised per block, as ``TfidfVectorizer(sublinear_tf=True)`` does, then scored.

Two kinds of head:

- ``choice``: one of ``classes`` (each a list of values, one per field of the head, so several
  fields can be predicted together as one class), by a softmax over the rows;
- ``labels``: each of ``classes`` present or not (one array field, multi-label), each row its own
  sigmoid.

Each row's logits are multiplied by the head's ``scale`` (one temperature, or one per label),
fitted so that the probabilities are calibrated (``aau.fallbacks.classifier_training``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

__all__ = [
    "MODEL_FORMAT",
    "Answer",
    "BlockData",
    "HeadData",
    "LinearTextModel",
    "ModelData",
    "answer_of",
    "rows_of",
    "sigmoid",
    "softmax",
    "vectorizer",
]

MODEL_FORMAT = 1
_MAX_NGRAM = 8


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class BlockData(_Strict):
    """One feature block: the n-grams of one analyzer and their idf weights."""

    analyzer: Literal["word", "char_wb"]
    ngram_range: tuple[int, int]
    terms: list[str] = Field(max_length=1_000_000)
    idf: list[float] = Field(max_length=1_000_000)


class HeadData(_Strict):
    """One head: its fields, its classes and the linear scores of each."""

    kind: Literal["choice", "labels"]
    fields: list[str] = Field(min_length=1, max_length=256)
    classes: list[Any] = Field(min_length=1, max_length=100_000)
    coef: list[list[float]]
    intercept: list[float]
    scale: list[float]


class ModelData(_Strict):
    """The whole model file."""

    format: Literal[1]
    unit: str
    examples_sha256: str
    config_sha256: str
    blocks: list[BlockData] = Field(min_length=1, max_length=8)
    heads: list[HeadData] = Field(min_length=1, max_length=256)
    report: dict[str, Any] = {}


def vectorizer(analyzer: str, ngram_range: tuple[int, int], **fit: Any) -> TfidfVectorizer:
    """The scikit-learn vectorizer of one block; ``fit`` adds the training-only settings."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # only where a unit uses one

    return TfidfVectorizer(analyzer=analyzer, ngram_range=ngram_range, lowercase=True,
                           sublinear_tf=True, dtype=np.float64, **fit)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Block:
    analyze: Callable[[str], list[str]]
    index: dict[str, int]
    idf: np.ndarray
    offset: int


@dataclass(frozen=True, slots=True)
class _Head:
    data: HeadData
    coef: np.ndarray
    intercept: np.ndarray
    scale: np.ndarray


class LinearTextModel:
    """A model file's numbers, checked and turned into arrays; ``probabilities`` scores a text.

    Raises (from the constructor):
        ValueError: the numbers do not fit together (lengths, ranges, non-positive scales).
    """

    def __init__(self, data: ModelData) -> None:
        self.data = data
        blocks: list[_Block] = []
        offset = 0
        for number, block in enumerate(data.blocks):
            low, high = block.ngram_range
            if not 1 <= low <= high <= _MAX_NGRAM:
                raise ValueError(f"block {number}: n-gram range {low}..{high} is not within "
                                 f"1..{_MAX_NGRAM}")  # fmt: skip
            if len(block.terms) != len(block.idf) or len(set(block.terms)) != len(block.terms):
                raise ValueError(f"block {number}: terms and idf differ in length, or terms repeat")
            analyze = vectorizer(block.analyzer, (low, high)).build_analyzer()
            index = {term: i for i, term in enumerate(block.terms)}
            blocks.append(_Block(analyze, index, np.asarray(block.idf, dtype=np.float64), offset))
            offset += len(block.terms)
        self.width = offset
        self._blocks = blocks
        self._heads = [self._head(number, head) for number, head in enumerate(data.heads)]

    def _head(self, number: int, head: HeadData) -> _Head:
        rows = len(head.classes)
        scales = 1 if head.kind == "choice" else rows
        if len(head.coef) != rows or len(head.intercept) != rows or len(head.scale) != scales:
            raise ValueError(f"head {number}: {rows} classes but {len(head.coef)} coefficient "
                             f"rows, {len(head.intercept)} intercepts, {len(head.scale)} "
                             "scales")  # fmt: skip
        if any(len(row) != self.width for row in head.coef):
            raise ValueError(f"head {number}: a coefficient row is not {self.width} long")
        if any(not s > 0 for s in head.scale):
            raise ValueError(f"head {number}: scales must be positive")
        if head.kind == "choice" and any(
            not isinstance(c, list) or len(c) != len(head.fields) for c in head.classes
        ):
            raise ValueError(f"head {number}: each class must list one value per field")
        coef = np.asarray(head.coef, dtype=np.float64).reshape(rows, self.width)
        return _Head(head, coef, np.asarray(head.intercept), np.asarray(head.scale))

    @property
    def heads(self) -> list[HeadData]:
        """The heads as stored."""
        return [head.data for head in self._heads]

    def features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The text's non-zero features: their column indices and weights."""
        columns: list[int] = []
        weights: list[float] = []
        for block in self._blocks:
            counts = Counter(t for t in block.analyze(text) if t in block.index)
            if not counts:
                continue
            idx = np.fromiter((block.index[t] for t in counts), dtype=np.int64, count=len(counts))
            tf = np.fromiter((1.0 + math.log(c) for c in counts.values()), dtype=np.float64,
                             count=len(counts))  # fmt: skip
            values = tf * block.idf[idx]
            norm = float(np.linalg.norm(values))
            columns += (idx + block.offset).tolist()
            weights += (values / norm if norm else values).tolist()
        return np.asarray(columns, dtype=np.int64), np.asarray(weights, dtype=np.float64)

    def probabilities(self, text: str) -> list[np.ndarray]:
        """Per head: the probability of each class (``choice``) or of each label (``labels``)."""
        return self.probabilities_of(*self.features(text))

    def probabilities_of(self, columns: np.ndarray, weights: np.ndarray) -> list[np.ndarray]:
        """``probabilities`` of a text already turned into features."""
        out = []
        for head in self._heads:
            logits = (head.coef[:, columns] @ weights + head.intercept) * head.scale
            out.append(softmax(logits) if head.data.kind == "choice" else sigmoid(logits))
        return out


@dataclass(frozen=True, slots=True)
class Answer:
    """The model's answer to one text.

    Attributes:
        output: every head's fields, filled.
        confidence: the probability of the whole answer (the product over heads: each head's
            top class; for ``labels``, the chosen set, the labels taken as independent).
        margin: that probability minus the next most likely answer's (the one that changes the
            least sure head).
        features: the text's non-zero features (none: no n-gram of the text is known).
    """

    output: dict[str, Any]
    confidence: float
    margin: float
    features: int


def answer_of(model: LinearTextModel, text: str) -> Answer:
    """Fill the heads' fields from ``text``: each head's most likely class or label set."""
    columns, weights = model.features(text)
    output: dict[str, Any] = {}
    confidence, runner_up = 1.0, 0.0
    for head, probs in zip(model.heads, model.probabilities_of(columns, weights), strict=True):
        if head.kind == "choice":
            order = np.argsort(-probs, kind="stable")
            top = float(probs[order[0]])
            second = float(probs[order[1]]) if len(order) > 1 else 0.0
            output.update(zip(head.fields, head.classes[int(order[0])], strict=True))
        else:
            sure = np.maximum(probs, 1.0 - probs)
            top = float(np.prod(sure))
            weakest = float(sure.min())  # flipping the least sure label: the next likeliest set
            second = top * (1.0 - weakest) / weakest if weakest > 0 else 0.0
            output[head.fields[0]] = [c for c, p in zip(head.classes, probs, strict=True)
                                      if p >= 0.5]  # fmt: skip
        ratio = second / top if top > 0 else 0.0
        runner_up = max(runner_up, ratio)  # the alternative that changes one head, the closest
        confidence *= top
    return Answer(output, confidence, confidence - confidence * runner_up, len(columns))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, stable for large logits."""
    shifted = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    result: np.ndarray = shifted / np.sum(shifted, axis=-1, keepdims=True)
    return result


def sigmoid(logits: np.ndarray) -> np.ndarray:
    """The logistic function, stable for large logits."""
    result: np.ndarray = np.exp(-np.logaddexp(0.0, -logits))
    return result


def rows_of(matrix: Sequence[Sequence[float]] | np.ndarray) -> list[list[float]]:
    """A coefficient matrix as JSON numbers, 5 significant digits (the file stays small)."""
    return [[float(f"{x:.5g}") for x in row] for row in np.asarray(matrix, dtype=np.float64)]
