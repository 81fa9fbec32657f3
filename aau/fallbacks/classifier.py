"""The classifier path: a linear text classifier trained per unit from its labelled examples.

A classify unit (booleans, enums, arrays of enums: ``aau.spec.classify``) declares it in its
``fallbacks`` (``kind: classifier``) with its labelled examples (``<name>.labelled.jsonl``,
``aau.fallbacks.labelled``) and its model file (``<name>.classifier.json``). ``aau train``
fits tf-idf n-grams and logistic heads with calibrated probabilities
(``aau.fallbacks.classifier_training``) and writes them as JSON; the path rebuilds them in numpy
(``aau.fallbacks.linear_text``) and answers every class field, with the probability of the
whole answer as its confidence and, as signals, that probability (``class_top``) and its lead
over the next most likely answer (``class_margin``).

A model file is never unpickled: it is JSON, bounded in size and checked type by type and shape
by shape. It records the sha256 of the examples it was trained on and of the settings and
classes it was trained with, so a model that is missing, stale or does not fit is a coded error
of the run (``classifier_model_missing``, ``classifier_model_stale``,
``classifier_model_corrupt``), the unit still loads and runs its other paths, and
``aau validate`` flags it (S077). The files must lie inside the unit's folder (S061, the CRF's
rule, ``aau.fallbacks.crf``). The text classified is its first ``max_chars`` characters.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from aau.answers import PathAnswer, PathContext
from aau.errors import SpecError, UnitRunError
from aau.fallbacks.classifier_training import ClassifierFeatures, ClassifierTraining, train
from aau.fallbacks.crf import _confined, _outside, sha256_hex, shown_path
from aau.fallbacks.labelled import LABELLED_MISSING, check_labelled, load_labelled
from aau.fallbacks.linear_text import MODEL_FORMAT, LinearTextModel, ModelData, answer_of
from aau.files import write_replacing
from aau.limits import LIMITS
from aau.spec.classify import ClassField, class_fields
from aau.spec.model import FallbackSpec, Issue, UnitSpec

__all__ = [
    "MAX_MODEL_BYTES",
    "MODEL_PROBLEM",
    "ClassifierFallback",
    "ClassifierModelCorrupt",
    "ClassifierModelError",
    "ClassifierModelMissing",
    "ClassifierModelStale",
    "ClassifierPath",
    "config_digest",
    "open_model",
]

MAX_MODEL_BYTES = 64 * 2**20
"""Size of one classifier model file."""
MODEL_PROBLEM = "S077"
"""``aau validate``: the classifier model is missing, stale or unreadable."""


class ClassifierModelError(UnitRunError):
    """The classifier's model cannot be used; the run skips to the next path."""

    code = "classifier_model_error"


class ClassifierModelMissing(ClassifierModelError):
    """No trained model exists yet."""

    code = "classifier_model_missing"


class ClassifierModelStale(ClassifierModelError):
    """The model was trained on other examples, settings or classes."""

    code = "classifier_model_stale"


class ClassifierModelCorrupt(ClassifierModelError):
    """The model file cannot be read, or its numbers do not fit together or the unit."""

    code = "classifier_model_corrupt"


class ClassifierFallback(FallbackSpec):
    """A linear text classifier trained from the unit's own labelled examples."""

    kind: Literal["classifier"]
    examples: str
    """Labelled-examples JSONL (``{"text": ..., "output": {...}}``), relative to the unit."""
    model: str
    """The trained model (JSON), relative to the unit's folder; ``aau train`` writes it."""
    features: ClassifierFeatures = ClassifierFeatures()
    """The n-grams it sees; part of the model's fingerprint."""
    training: ClassifierTraining = ClassifierTraining()
    """Hyper-parameters of ``aau train``; part of the model's fingerprint."""
    max_chars: int = Field(20_000, ge=100, le=LIMITS.text_chars)
    """Characters of a text classified (its beginning); a longer labelled text is refused."""

    def examples_path(self, unit: UnitSpec) -> Path:
        """The examples file. Raises ``SpecError`` (S061) when it leads out of the unit's folder."""
        return _confined(unit, self.examples, "examples")

    def model_path(self, unit: UnitSpec) -> Path:
        """The model file. Raises ``SpecError`` (S061) when it leads out of the unit's folder."""
        return _confined(unit, self.model, "model")

    def predicted_fields(self, unit: UnitSpec) -> dict[str, ClassField]:
        """The output fields it predicts: every class field of the unit's schema."""
        return class_fields(unit.output)[0]

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Its files inside the unit's folder (S061) and the examples present (S071)."""
        for field, value in (("model", self.model), ("examples", self.examples)):
            problem = _outside(unit, value)
            if problem is not None:
                yield (field,), problem, "S061"
        if _outside(unit, self.examples) is None and not self.examples_path(unit).is_file():
            yield (
                ("examples",),
                f"labelled examples file not found: {self.examples_path(unit)}; create it or fix "
                "the path (relative to the unit's folder)",
                LABELLED_MISSING,
            )

    def check_shared(self, unit: UnitSpec) -> Iterator[Issue]:
        """On a unit of another kind than classify, an output field it cannot answer (S070).

        A classify unit's own check refuses those fields already.
        """
        if unit.kind != "classify":
            yield from class_fields(unit.output)[1]

    def data_problems(self, unit: UnitSpec) -> list[SpecError]:
        """Problems of the labelled examples (located in that file) and of the model (S077)."""
        if _outside(unit, self.examples) is not None or _outside(unit, self.model) is not None:
            return []  # the load check reports it
        problems = []
        if self.examples_path(unit).is_file():
            problems += check_labelled(self.examples_path(unit), unit.output,
                                       self.predicted_fields(unit), self.max_chars)  # fmt: skip
        try:
            open_model(self, unit)
        except ClassifierModelError as exc:
            where = str(unit.source) if unit.source else unit.name
            problems.append(SpecError(str(exc), file=where, field="model", check=MODEL_PROBLEM))
        return problems

    def train(self, unit: UnitSpec) -> str:
        """Train on the labelled examples, measure on a held-out share, write the model.

        Raises:
            SpecError: a path leads out of the unit's folder (S061), or the examples file has a
                problem (S071–S073); nothing is written.
        """
        model_path = self.model_path(unit)  # refused before any work when it leads out
        examples_path = self.examples_path(unit)
        fields = self.predicted_fields(unit)
        examples = load_labelled(examples_path, unit.output, fields, self.max_chars)
        data, report = train(
            examples, fields, self.features, self.training, unit=unit.key,
            examples_sha256=sha256_hex(examples_path.read_bytes()),
            config_sha256=config_digest(self, unit), max_chars=self.max_chars,
        )  # fmt: skip
        write_replacing(model_path, data.model_dump_json() + "\n")
        return _format_report(unit, report, model_path)

    def build(self, unit: UnitSpec) -> ClassifierPath:
        """The live path; its model is read on the first ``extract``."""
        return ClassifierPath(self, unit)


def _format_report(unit: UnitSpec, report: dict[str, Any], model_path: Path) -> str:
    lines = [f"{unit.key}: classifier trained on {report['examples']} labelled examples "
             f"({report['train']} train, {report['held_out']} held out) in "
             f"{report['seconds']:.1f} s"]  # fmt: skip
    if report["held_out"]:
        fields = ", ".join(f"{k} {v:.3f}" for k, v in report["held_out_field_accuracy"].items())
        lines.append(f"  held out: accuracy {report['held_out_accuracy']:.3f}, mean confidence "
                     f"{report['held_out_mean_confidence']:.3f}; fields: {fields}")  # fmt: skip
    classes = ", ".join(f"{k} {v}" for k, v in report["classes"].items())
    lines.append(f"  model: {shown_path(model_path)} (all {report['examples']} examples; "
                 f"classes: {classes})")  # fmt: skip
    return "\n".join(lines)


def config_digest(spec: ClassifierFallback, unit: UnitSpec) -> str:
    """sha256 of what shapes the model: features, training settings, the classes, the format."""
    relevant = {
        "format": MODEL_FORMAT,
        "features": spec.features.model_dump(mode="json"),
        "training": spec.training.model_dump(mode="json"),
        "fields": [[f.name, f.kind, list(f.values)] for f in spec.predicted_fields(unit).values()],
    }
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def _train_command(unit: UnitSpec) -> str:
    return f"aau train {shown_path(unit.source) if unit.source else 'units/' + unit.name + '.yaml'}"


def open_model(spec: ClassifierFallback, unit: UnitSpec) -> LinearTextModel:
    """Read and check the model file, then rebuild the model.

    Raises:
        ClassifierModelMissing: the model file does not exist.
        ClassifierModelCorrupt: it is too large, not the model format, or its numbers or
            classes do not fit together or the unit's fields.
        ClassifierModelStale: the examples, the settings or the classes changed since training.
    """
    path = spec.model_path(unit)
    retrain = f"; run `{_train_command(unit)}`"
    prefix = f"{unit.name}: classifier model {shown_path(path)}"
    if not path.is_file():
        raise ClassifierModelMissing(f"{prefix} not found{retrain}")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_MODEL_BYTES + 1)
        if len(raw) > MAX_MODEL_BYTES:
            raise ValueError(f"over {MAX_MODEL_BYTES} bytes")
        data = ModelData.model_validate_json(raw)
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ClassifierModelCorrupt(
            f"{prefix}: not a classifier model ({detail}){retrain}"
        ) from None
    reasons = []
    try:
        examples_sha = sha256_hex(spec.examples_path(unit).read_bytes())
    except OSError:
        examples_sha = None
    if examples_sha != data.examples_sha256:
        reasons.append(f"the labelled examples {shown_path(spec.examples_path(unit))} changed")
    if config_digest(spec, unit) != data.config_sha256:
        reasons.append("the classifier settings or the output's classes changed")
    if reasons:
        raise ClassifierModelStale(f"{prefix} is stale: {' and '.join(reasons)} since "
                                   f"training{retrain}")  # fmt: skip
    problem = _fit_problem(data, spec.predicted_fields(unit))
    try:
        if problem is not None:
            raise ValueError(problem)
        return LinearTextModel(data)
    except ValueError as exc:
        raise ClassifierModelCorrupt(f"{prefix}: {exc}{retrain}") from None


def _fit_problem(data: ModelData, fields: dict[str, ClassField]) -> str | None:
    """Why the heads do not answer exactly the unit's class fields with their values, or None."""
    covered = [name for head in data.heads for name in head.fields]
    if sorted(covered) != sorted(fields):
        return f"its heads answer {sorted(covered)}, the unit's class fields are {sorted(fields)}"
    for head in data.heads:
        for cls in head.classes:
            values = cls if head.kind == "choice" else [cls]
            names = head.fields if head.kind == "choice" else head.fields * len(values)
            for name, value in zip(names, values, strict=False):
                if not any(type(value) is type(v) and value == v for v in fields[name].values):
                    return f"class value {value!r} of {name!r} is not in the output schema"
    return None


class ClassifierPath:
    """Live classifier path of one unit. The model is read on the first ``extract``."""

    name = "classifier"

    def __init__(self, spec: ClassifierFallback, unit: UnitSpec) -> None:
        """Prepare the path; nothing is read from disk until the first ``extract``."""
        self.spec = spec
        self.unit = unit
        self.properties = list(unit.output.get("properties", {}))
        self._model: LinearTextModel | None = None
        self._lock = threading.Lock()

    def _loaded(self) -> LinearTextModel:
        with self._lock:
            if self._model is None:
                self._model = open_model(self.spec, self.unit)
            return self._model

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Classify the text's first ``max_chars`` characters into every class field.

        Raises:
            ClassifierModelMissing: no trained model.
            ClassifierModelStale: the examples, settings or classes changed since training.
            ClassifierModelCorrupt: the model file is unreadable, altered or does not fit.
        """
        model = self._loaded()
        answer = answer_of(model, text[: self.spec.max_chars])
        output: dict[str, Any] = dict.fromkeys(self.properties)
        output.update(answer.output)
        confidence = round(max(0.0, min(1.0, answer.confidence)), 4)
        return PathAnswer(
            output=output,
            confidence=confidence,
            signals={
                "class_top": confidence,
                "class_margin": round(answer.margin, 4),
                "class_features": float(answer.features),
                "class_truncated": float(len(text) > self.spec.max_chars),
            },
        )
