"""The CRF path: a sequence labeller trained per unit from the unit's own annotated examples.

A unit declares it in its ``fallbacks`` list (``kind: crf``) with its span labels, how each
label fills an output field, the annotated examples and the trained model file. At run time the
path tags the text, takes for every field the best span of its label (highest mean marginal),
normalizes it into the unit's schema and answers with the mean marginal of the chosen spans as
its confidence, or, when it finds nothing, with the probability of the all-``O`` labelling:
"no value present" is an answer too.

The model is loaded on the first ``extract``, not when the unit loads, so that a unit whose model
is missing, stale or corrupt still loads and runs its other paths; the run records the coded
error (``crf_model_missing``, ``crf_model_stale``, ``crf_model_corrupt``) and moves on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator

from aau.answers import PathAnswer, PathContext
from aau.errors import UnitRunError
from aau.fallbacks.crf_features import (
    FeatureConfig,
    Token,
    sentence_features,
    spans_from_tags,
    tokenize,
)
from aau.fallbacks.normalize import NORMALIZERS
from aau.fallbacks.registry import register_fallback

if TYPE_CHECKING:
    import pycrfsuite

    from aau.fallbacks.crf_training import OpenModel
    from aau.spec.model import UnitSpec

__all__ = [
    "CrfFallback",
    "CrfFeatureOptions",
    "CrfField",
    "CrfModelCorrupt",
    "CrfModelError",
    "CrfModelMissing",
    "CrfModelStale",
    "CrfPath",
    "CrfTraining",
    "TaggedSpan",
    "Tagging",
    "choose_fields",
    "tag_text",
    "term_spans",
]

Issue = tuple[tuple[str | int, ...], str, str]


# -- errors ----------------------------------------------------------------------------------


class CrfModelError(UnitRunError):
    """The CRF path's trained model cannot be used; the run skips to the next path."""

    code = "crf_model_error"


class CrfModelMissing(CrfModelError):
    """No trained model (or no record of how it was trained) exists yet."""

    code = "crf_model_missing"


class CrfModelStale(CrfModelError):
    """The model was trained on other examples, another CRF config or another feature recipe."""

    code = "crf_model_stale"


class CrfModelCorrupt(CrfModelError):
    """The model file or its record cannot be read, or they do not belong together."""

    code = "crf_model_corrupt"


# -- declaration -----------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CrfField(_Strict):
    """How spans of one label fill one output field."""

    label: str
    """The span label whose best span fills the field (``AMOUNT``)."""
    normalize: str = "text"
    """Normalizer name (see ``aau.fallbacks.normalize.NORMALIZERS``)."""


class CrfFeatureOptions(_Strict):
    """Which token features the model sees. Changing them requires retraining."""

    window: int = Field(2, ge=0, le=5)
    """Neighbours on each side whose features a token also sees."""
    affixes: list[int] = Field([1, 2, 3], max_length=6)
    """Prefix and suffix lengths of the lowercased token."""
    use_shape: bool = True
    """Word shapes (``Xxxx``, ``d,ddd.dd``)."""
    use_lexicons: bool = True
    """Month-name, currency and unit lexicon hits."""
    context: int = Field(6, ge=0, le=50)
    """Preceding tokens whose words a token sees as a bag (``total``, ``due``…)."""
    use_terms: bool = False
    """Dictionary terms (``term=<category>`` on tokens inside a hit): trained on the shipped
    dictionaries' hits, run on the tenant's."""

    @field_validator("affixes")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(n < 1 or n > 10 for n in value):
            raise ValueError("affix lengths must be between 1 and 10")
        return value

    def to_config(self) -> FeatureConfig:
        """The feature extractor's value object."""
        return FeatureConfig(
            window=self.window,
            affixes=tuple(self.affixes),
            use_shape=self.use_shape,
            use_lexicons=self.use_lexicons,
            context=self.context,
            use_terms=self.use_terms,
        )


class CrfTraining(_Strict):
    """Hyper-parameters of ``aau train`` (L-BFGS with elastic-net regularisation)."""

    c1: float = Field(0.05, ge=0)
    """L1 regularisation strength."""
    c2: float = Field(0.05, ge=0)
    """L2 regularisation strength."""
    max_iterations: int = Field(150, ge=1, le=10_000)
    """L-BFGS iteration cap."""
    held_out: float = Field(0.2, gt=0, lt=1)
    """Fraction of the examples kept out of training to measure the model."""
    seed: int = 13
    """Seed of the held-out split."""


class CrfFallback(_Strict):
    """A CRF sequence labeller trained from the unit's own annotated examples."""

    kind: Literal["crf"]
    labels: list[str] = Field(min_length=1)
    """Span labels, e.g. ``[AMOUNT, CURRENCY]``."""
    fields: dict[str, CrfField] = Field(min_length=1)
    """Output field -> the label that fills it. Unmapped fields are null."""
    examples: str
    """Annotated-examples JSONL, relative to the unit's folder."""
    model: str
    """Trained model file, relative to the unit's folder; its record lies beside it (``.json``)."""
    features: CrfFeatureOptions = CrfFeatureOptions()
    """Token features; part of the model's fingerprint."""
    training: CrfTraining = CrfTraining()
    """Hyper-parameters of ``aau train``; part of the model's fingerprint."""
    confidence: float = Field(1.0, gt=0, le=1)
    """Scale applied to the marginal-based confidence (below 1 to trust this path less)."""

    @field_validator("labels")
    @classmethod
    def _bio_safe(cls, value: list[str]) -> list[str]:
        for label in value:
            if not label or label == "O" or "-" in label or label != label.strip():
                raise ValueError(f"label {label!r} cannot be a BIO label (no 'O', no '-')")
        if len(set(value)) != len(value):
            raise ValueError("labels must be unique")
        return value

    def examples_path(self, unit: UnitSpec) -> Path:
        """The examples file, resolved against the unit's folder."""
        return unit.base_dir / self.examples

    def model_path(self, unit: UnitSpec) -> Path:
        """The model file, resolved against the unit's folder."""
        return unit.base_dir / self.model

    def record_path(self, unit: UnitSpec) -> Path:
        """The training record (hashes, report) beside the model file."""
        model = self.model_path(unit)
        return model.with_name(model.name + ".json")

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Load-time problems: unknown fields, labels or normalizers, missing examples."""
        properties = unit.output.get("properties", {})
        for field, mapping in self.fields.items():
            loc: tuple[str | int, ...] = ("fields", field)
            if field not in properties:
                yield (
                    loc,
                    f"field {field!r} is not in the output schema. "
                    f"Available: {', '.join(properties)}",
                    "S057",
                )
            if mapping.label not in self.labels:
                yield (
                    (*loc, "label"),
                    f"label {mapping.label!r} is not in labels. "
                    f"Available: {', '.join(self.labels)}",
                    "S058",
                )
            if mapping.normalize not in NORMALIZERS:
                yield (
                    (*loc, "normalize"),
                    f"unknown normalizer {mapping.normalize!r}. "
                    f"Available: {', '.join(sorted(NORMALIZERS))}",
                    "S059",
                )
        if not self.examples_path(unit).is_file():
            yield (
                ("examples",),
                f"annotated examples file not found: {self.examples_path(unit)}; create it or "
                "fix the path (relative to the unit's folder)",
                "S050",
            )


# -- tagging and choosing --------------------------------------------------------------------


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


def choose_fields(
    text: str,
    spans: Sequence[TaggedSpan],
    fields: Mapping[str, CrfField],
    field_schemas: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, TaggedSpan]]:
    """Fill each field from the best span of its label that normalizes to a schema-valid value.

    Args:
        text: the tagged text.
        spans: predicted spans.
        fields: output field -> label and normalizer.
        field_schemas: output field -> its JSON Schema (``properties`` of the output schema).

    Returns:
        The field values (``None`` where no span fits) and the span chosen for each filled field.
    """
    values: dict[str, Any] = {}
    chosen: dict[str, TaggedSpan] = {}
    for field, mapping in fields.items():
        values[field] = None
        candidates = sorted(
            (s for s in spans if s.label == mapping.label), key=lambda s: (-s.score, s.start)
        )
        for span in candidates:
            value = NORMALIZERS[mapping.normalize](text[span.start : span.end])
            schema = field_schemas.get(field)
            # A normalizer can return text the schema rejects (an unknown currency marker longer
            # than maxLength); the next span may fit, so skip rather than answer invalid output.
            if value is None or (schema is not None and not _is_valid(value, schema)):
                continue
            values[field], chosen[field] = value, span
            break
    return values, chosen


def _is_valid(value: Any, schema: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


# -- the live path ---------------------------------------------------------------------------


class CrfPath:
    """Live CRF path of one unit. The model is loaded on the first ``extract``."""

    name = "crf"

    def __init__(self, spec: CrfFallback, unit: UnitSpec) -> None:
        """Prepare the path; nothing is read from disk until the first ``extract``."""
        self.spec = spec
        self.unit = unit
        self.properties: dict[str, Any] = dict(unit.output.get("properties", {}))
        self._features = spec.features.to_config()
        self._model: OpenModel | None = None
        # pycrfsuite's Tagger keeps the current sequence inside it: concurrent extract calls
        # (the scheduler may run paths in threads) must not interleave set() and marginal().
        self._lock = threading.Lock()

    def _loaded_tagger(self) -> pycrfsuite.Tagger:
        if self._model is None:
            # Imported here: the training module imports this one for the spec and the errors.
            from aau.fallbacks.crf_training import open_model

            self._model = open_model(self.spec, self.unit)
        return self._model.tagger

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Tag ``text`` and map the best span of each field's label into the unit's schema.

        Raises:
            CrfModelMissing: no trained model or no training record.
            CrfModelStale: the examples, the CRF config or the feature recipe changed since
                training; the message names the ``aau train`` command to run.
            CrfModelCorrupt: the model file or its record is unreadable or altered.
        """
        tokens = tokenize(text)
        hits = term_spans(context.extras.get("term_hits", ()))
        with self._lock:
            tagging = tag_text(self._loaded_tagger(), tokens, self._features, hits)
        values, chosen = choose_fields(text, tagging.spans, self.spec.fields, self.properties)
        output: dict[str, Any] = dict.fromkeys(self.properties)
        output.update(values)
        if chosen:
            # Two fields may share one span (a label mapped twice); count it once.
            distinct = list({(s.label, s.start): s for s in chosen.values()}.values())
            confidence = mean = sum(s.score for s in distinct) / len(distinct)
            minimum = min(m for s in distinct for m in s.marginals)
        else:
            # "No value present" is answered with the probability of tagging nothing at all.
            confidence = tagging.p_all_o
            marginals = tagging.o_marginals or (1.0,)
            mean, minimum = sum(marginals) / len(marginals), min(marginals)
        return PathAnswer(
            output=output,
            confidence=round(max(0.0, min(1.0, confidence * self.spec.confidence)), 4),
            spans={field: (s.start, s.end) for field, s in chosen.items()},
            signals={
                "crf_marginal_mean": round(mean, 4),
                "crf_marginal_min": round(minimum, 4),
                "crf_spans": float(len(chosen)),
            },
        )


register_fallback("crf", CrfFallback, CrfPath)
