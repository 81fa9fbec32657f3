"""A unit's own calibrator: P(correct) for units the shared calibrator never saw.

The shared calibrator (``aau.calibration.calibrator``) is fitted on runs of extract units: its
signals are spans, value mentions and the model's tokens over one value. A classify unit's
answer is a class, a records unit's a list; the shared network, applied to them, reads signals it
was never shown (measured on detect_complaint's held-out texts: ECE 0.31 against 0.13 for the
classifier's own probability); an extract unit of another domain fares little better. Such a
unit carries its own calibrator instead,
``<name>.calibration.json`` beside the unit file, fitted by ``aau calibrate --unit``
(``aau.fitting.unit_calibration``) from out-of-fold runs of every path on the unit's own
labelled texts, with whole languages left out of the paths' training.

It is one logistic regression over ``unit_signals``:

- which path answered, and its own confidence (as a logit);
- every numeric signal the path reports (``class_margin`` of the classifier, ``record_score_min``
  of the records path, ``rule_default`` of the keyword rules…: whatever the unit's paths gave
  when it was fitted);
- how many of the other paths' answers equal this one (agreement);
- whether the answer says "nothing" (no record, no class but none);
- the model's token log-probabilities, for the model's answer;
- how unlike its training texts the text is: the shares of its words and of its word pairs no
  training text holds, and the share of training texts in its language (``py3langid``). They are
  computed, when fitting, against the texts the answering path was trained on, so that a
  language left out of a fold teaches the calibrator what an unseen language does to a path.

The regression's logit is then rescaled (``rescale``, Platt scaling) on texts written apart from
the training data, so that its probabilities hold on real wording and not only on the generated
texts the paths learn from.

The artifact is JSON read through a strict pydantic model (bounded lists, finite numbers, every
shape checked), never unpickled: a unit folder may come from someone else.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aau.calibration.base import PathEvidence
from aau.calibration.features import same_output
from aau.errors import CalibrationError

if TYPE_CHECKING:
    from aau.spec.model import UnitSpec

__all__ = [
    "UNIT_CALIBRATION_FORMAT",
    "Rescale",
    "UnitCalibrationData",
    "UnitCalibrator",
    "Vocabulary",
    "language_of",
    "load_unit_calibrator",
    "pairs_of",
    "stale_reason",
    "unit_calibration_path",
    "unit_signals",
    "words_of",
]

UNIT_CALIBRATION_FORMAT = 1
_MAX_FEATURES = 512
_MAX_WORDS = 200_000
_MAX_CHARS_READ = 20_000  # the text's beginning: the words and the language of a long text
_WORD = re.compile(r"\w+", re.UNICODE)
_NOTHING = frozenset({"none", "null", ""})


def unit_calibration_path(unit: UnitSpec) -> Path:
    """Where ``unit``'s own calibrator is: ``<name>.calibration.json`` beside its file."""
    return unit.base_dir / f"{unit.name}.calibration.json"


def words_of(text: str) -> list[str]:
    """The lower-cased words of ``text``'s beginning (digits and letters, any script)."""
    return [w.lower() for w in _WORD.findall(text[:_MAX_CHARS_READ]) if not w.isdigit()]


_LANGID_LOCK = threading.Lock()


def language_of(text: str) -> str:
    """The language py3langid reads in ``text``'s beginning (``und`` with no letter)."""
    sample = text[:_MAX_CHARS_READ]
    if not any(c.isalpha() for c in sample):
        return "und"
    import py3langid  # 0.5 s to load its model: only units with their own calibrator pay it

    with _LANGID_LOCK:  # its module-level identifier is built lazily, once
        language, _ = py3langid.classify(sample)
    return str(language)


def pairs_of(words: Sequence[str]) -> list[str]:
    """The word pairs (bigrams) of ``words``, each as the two words and a space."""
    return [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


class Vocabulary:
    """What a path's training texts held: their words, word pairs, and texts per language."""

    def __init__(
        self, words: Iterable[str], pairs: Iterable[str], languages: Mapping[str, int]
    ) -> None:
        self.words = frozenset(words)
        self.pairs = frozenset(pairs)
        self.languages = dict(languages)
        self.texts = sum(self.languages.values())

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        """The vocabulary of ``texts``."""
        words: set[str] = set()
        pairs: set[str] = set()
        languages: dict[str, int] = {}
        for text in texts:
            seen = words_of(text)
            words.update(seen)
            pairs.update(pairs_of(seen))
            language = language_of(text)
            languages[language] = languages.get(language, 0) + 1
        return cls(words, pairs, languages)

    def unseen_share(self, text: str) -> float:
        """The share of ``text``'s words that no training text holds (0 for a text without)."""
        words = words_of(text)
        if not words:
            return 0.0
        return sum(w not in self.words for w in words) / len(words)

    def unseen_pair_share(self, text: str) -> float:
        """The share of ``text``'s word pairs no training text holds.

        Words tell an unseen language; pairs tell unseen wording in a known one: texts made
        from a few templates share most of their pairs, a real contract clause few of them.
        """
        pairs = pairs_of(words_of(text))
        if not pairs:
            return 0.0
        return sum(p not in self.pairs for p in pairs) / len(pairs)

    def language_share(self, text: str) -> float:
        """The share of training texts written in ``text``'s language."""
        return self.languages.get(language_of(text), 0) / self.texts if self.texts else 0.0


def _says_nothing(value: Any) -> bool:
    if value is None or value is False:
        return True
    if isinstance(value, str):
        return value.strip().lower() in _NOTHING
    if isinstance(value, list | dict):
        return not value
    return False


def unit_signals(
    evidence: PathEvidence,
    paths: Sequence[str],
    signal_names: Sequence[str],
    vocabulary: Vocabulary,
) -> dict[str, float]:
    """The named signals of one answer, as ``UnitCalibrator`` reads them.

    ``paths`` are the unit's path names (one indicator each); ``signal_names`` the path signals
    the calibrator was fitted with (0.0 where the answering path reports none).
    """
    answer = evidence.answer
    own = min(max(float(answer.confidence), 1e-4), 1.0 - 1e-4)
    signals: dict[str, float] = {f"path={name}": float(evidence.path == name) for name in paths}
    signals["own_logit"] = math.log(own / (1.0 - own))
    for name in signal_names:
        value = answer.signals.get(name, 0.0)
        signals[f"signal:{name}"] = float(value) if math.isfinite(value) else 0.0
    witnesses = list(evidence.witnesses)
    agreeing = sum(same_output(answer.output, w, evidence.normalizers) for w in witnesses)
    signals["witnesses"] = float(len(witnesses))
    signals["agree_share"] = agreeing / len(witnesses) if witnesses else 0.5
    signals["says_nothing"] = float(all(_says_nothing(v) for v in answer.output.values()))
    generation = evidence.generation
    free = [lp for lp, forced in zip(generation.token_logprobs, generation.forced, strict=False)
            if not forced] if generation is not None else []  # fmt: skip
    signals["gen_mean_logprob"] = sum(free) / len(free) if free else 0.0
    signals["gen_min_logprob"] = min(free) if free else 0.0
    signals["gen_missing"] = float(not free)
    signals["unseen_words"] = vocabulary.unseen_share(evidence.text)
    signals["unseen_pairs"] = vocabulary.unseen_pair_share(evidence.text)
    signals["language_share"] = vocabulary.language_share(evidence.text)
    signals["log_chars"] = math.log1p(len(evidence.text))
    return signals


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Rescale(_Strict):
    """``slope * logit + offset``, the offset the answering path's own where it has one."""

    slope: float = 1.0
    offset: float = 0.0
    offsets: dict[str, float] = Field(default_factory=dict, max_length=32)

    def __call__(self, logit: float, path: str) -> float:
        """The rescaled logit of ``path``'s answer."""
        return self.slope * logit + self.offsets.get(path, self.offset)

    def rounded(self) -> Rescale:
        """The same, each number to 8 significant digits (the artifact's precision)."""
        return Rescale(slope=float(f"{self.slope:.8g}"), offset=float(f"{self.offset:.8g}"),
                       offsets={p: float(f"{v:.8g}") for p, v in self.offsets.items()})  # fmt: skip


class UnitCalibrationData(_Strict):
    """The artifact: the regression, what it reads, and what the unit's paths were trained on."""

    format: int
    unit: str = Field(max_length=128)
    paths: list[str] = Field(min_length=1, max_length=32)
    signal_names: list[str] = Field(max_length=_MAX_FEATURES)
    features: list[str] = Field(min_length=1, max_length=_MAX_FEATURES)
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    rescale: Rescale = Field(default_factory=lambda: Rescale())
    """Platt scaling of the regression's logit, fitted on texts written apart from the training
    data; the identity when there were none."""
    words: list[str] = Field(max_length=_MAX_WORDS)
    """The words of the unit's training texts (those its shipped paths were trained on)."""
    pairs: list[str] = Field(max_length=_MAX_WORDS)
    """Their word pairs (``pairs_of``)."""
    languages: dict[str, int] = Field(max_length=512)
    """Per language, how many training texts are in it."""
    data_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The sha256 of the labelled texts it was fitted from (``aau validate`` compares it)."""
    report: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _shapes(self) -> UnitCalibrationData:
        width = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == width):
            raise ValueError(f"mean, scale and coef must each hold {width} numbers")
        if any(s <= 0 for s in self.scale):
            raise ValueError("every scale must be positive")
        if self.format != UNIT_CALIBRATION_FORMAT:
            raise ValueError(f"format {self.format} is not {UNIT_CALIBRATION_FORMAT}")
        return self


class UnitCalibrator:
    """P(correct) of a unit's answers from its own fitted regression (``unit_signals``)."""

    def __init__(self, data: UnitCalibrationData) -> None:
        self.data = data
        self.vocabulary = Vocabulary(data.words, data.pairs, data.languages)
        self._mean = np.asarray(data.mean, dtype=np.float64)
        self._scale = np.asarray(data.scale, dtype=np.float64)
        self._coef = np.asarray(data.coef, dtype=np.float64)

    @property
    def logprobs_after_mask(self) -> bool:
        """Fitted on the in-process engine's raw log-probabilities."""
        return False

    @property
    def embed_ms(self) -> float:
        """It runs no embedding model."""
        return 0.0

    def signals(self, evidence: PathEvidence) -> dict[str, float]:
        """The signals it reads of ``evidence``, by name."""
        return unit_signals(evidence, self.data.paths, self.data.signal_names, self.vocabulary)

    def confidence(self, evidence: PathEvidence) -> float:
        """P(correct) of the answer ``evidence`` describes."""
        if evidence.outcome != "valid":
            return 0.0
        signals = self.signals(evidence)
        x = np.asarray([signals.get(name, 0.0) for name in self.data.features], dtype=np.float64)
        logit = float(((x - self._mean) / self._scale) @ self._coef) + self.data.intercept
        logit = self.data.rescale(logit, evidence.path)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit))))


def training_examples(unit: UnitSpec) -> Path | None:
    """The labelled texts a unit calibration is fitted from: its first trainable path's."""
    for fallback in unit.fallbacks:
        examples = getattr(fallback, "examples", None)
        if isinstance(examples, str) and getattr(fallback, "model", None) is not None:
            return unit.base_dir / examples
    return None


def stale_reason(data: UnitCalibrationData, unit: UnitSpec) -> str | None:
    """Why ``data`` no longer fits ``unit`` (another unit, other texts), or None when it does."""
    if data.unit != unit.name:
        return f"it was fitted for unit {data.unit!r}"
    examples = training_examples(unit)
    if examples is None or not examples.is_file():
        return "the unit has no labelled texts to have fitted it from"
    digest = hashlib.sha256(examples.read_bytes()).hexdigest()
    if digest != data.data_sha256:
        return f"the labelled texts {examples.name} changed since it was fitted"
    return None


def load_unit_calibrator(path: str | Path) -> UnitCalibrator:
    """The unit calibrator stored at ``path``.

    Raises:
        CalibrationError: the file is missing, unreadable, too large or not a unit calibration.
    """
    path = Path(path)
    try:
        if path.stat().st_size > 64 * 1024 * 1024:
            raise CalibrationError(f"{path}: larger than 64 MiB; not a unit calibration")
        data = UnitCalibrationData.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read the unit calibration: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise CalibrationError(f"{path}: not a unit calibration: {where}: {first['msg']}") from None
    return UnitCalibrator(data)
