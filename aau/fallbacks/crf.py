"""The CRF path: a sequence labeller trained per unit from the unit's own annotated examples.

A unit declares it in its ``fallbacks`` list (``kind: crf``) with its span labels, how each
label fills an output field, the annotated examples and the trained model file. At run time the
path tags the text, takes for every field the best span of its label (highest mean marginal),
normalizes it into the unit's schema and answers with the mean marginal of the chosen spans as
its confidence, or, when it finds nothing, with the probability of the all-``O`` labelling:
"no value present" is an answer too. A field left empty beside filled ones is such a claim as
well ("2 quarters' notice" read as a value without a unit): the confidence is multiplied by the
probability that no token carries that field's label, which is at most one minus the label's
largest marginal at any token (a span that the tagger saw but that did not normalize counts).

The files a declaration names (examples, model, the model's record) must lie inside the unit's
folder, or inside ``AAU_UNITS_ROOT`` when that is set: an absolute path, a ``..`` or a link
leading out of it is refused at load (S061) and by every path accessor, so neither reading the
examples nor ``aau train`` writing the model can reach another file.

The model is loaded on the first ``extract``, not when the unit loads, so that a unit whose model
is missing, stale or corrupt still loads and runs its other paths; the run records the coded
error (``crf_model_missing``, ``crf_model_stale``, ``crf_model_corrupt``) and moves on.

This module is the whole kind: its declaration (``CrfFallback``) with its load checks, the
trained model's record and its opening (``open_model``: hashes checked before crfsuite reads
the file), and the live path. Training is ``aau.fallbacks.crf_training``; tagging, shared by
both, is ``aau.fallbacks.crf_tagging``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import itertools
import json
import os
import re
import struct
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator

from aau.answers import PathAnswer, PathContext
from aau.errors import SpecError, UnitRunError
from aau.fallbacks.annotated import check_annotated
from aau.fallbacks.crf_features import FEATURE_VERSION, FeatureConfig, tokenize
from aau.fallbacks.crf_tagging import TaggedSpan, Tagging, tag_text, term_spans
from aau.fallbacks.fields import (
    FieldCodes,
    FieldUse,
    check_fields,
    check_tables,
    field_normalizers,
)
from aau.spec.model import FallbackSpec, Issue, UnitSpec
from aau.terms.matcher import TermMatcher
from aau.terms.store import shipped_dictionaries
from aau.values.money import currency_codes, is_currency_marker, read_money
from aau.values.numbers import is_scale_word, read_number, scale_value
from aau.values.quantities import is_preposition_in, read_unit

if TYPE_CHECKING:
    import pycrfsuite


__all__ = [
    "RECORD_FORMAT",
    "UNITS_ROOT_ENV",
    "CrfFallback",
    "CrfFeatureOptions",
    "CrfField",
    "CrfModelCorrupt",
    "CrfModelError",
    "CrfModelMissing",
    "CrfModelStale",
    "CrfPath",
    "CrfTraining",
    "OpenModel",
    "choose_fields",
    "config_digest",
    "open_model",
    "sha256_hex",
    "shown_path",
]

RECORD_FORMAT = 1
_MAGIC = b"lCRF"
UNITS_ROOT_ENV = "AAU_UNITS_ROOT"
"""A folder inside which a unit's files may also lie (shared data beside many units)."""


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
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class CrfField(_Strict):
    """How spans of one label fill one output field."""

    label: str
    """The span label whose best span fills the field (``AMOUNT``)."""
    normalize: str = "text"
    """Normalizer name: one of the unit's ``normalizers`` tables or a registered normalizer
    (``aau.fallbacks.normalize.NORMALIZERS``)."""


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


class CrfFallback(FallbackSpec):
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
        """The examples file, resolved against the unit's folder.

        Raises:
            SpecError: it leads outside the unit's folder (S061).
        """
        return _confined(unit, self.examples, "examples")

    def model_path(self, unit: UnitSpec) -> Path:
        """The model file, resolved against the unit's folder.

        Raises:
            SpecError: it leads outside the unit's folder (S061).
        """
        return _confined(unit, self.model, "model")

    def record_path(self, unit: UnitSpec) -> Path:
        """The training record (hashes, report) beside the model file.

        Raises:
            SpecError: it leads outside the unit's folder (S061).
        """
        return _confined(unit, self.model + ".json", "model")

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Load-time problems: unknown fields, labels, normalizers, missing examples.

        The fields' checks are every kind's (``aau.fallbacks.fields``), an enum value a
        field's normalizer can never produce among them.
        """

        def label_problem(field: str) -> Iterator[Issue]:
            label = self.fields[field].label
            if label not in self.labels:
                yield (
                    ("fields", field, "label"),
                    f"label {label!r} is not in labels. Available: {', '.join(self.labels)}",
                    "S058",
                )

        uses = {field: FieldUse(mapping.normalize) for field, mapping in self.fields.items()}
        yield from check_fields(unit, uses, _FIELD_CODES, label_problem)
        for field, value in (("model", self.model), ("model", self.model + ".json")):
            problem = _outside(unit, value)
            if problem is not None:
                yield (field,), problem, "S061"
                break
        problem = _outside(unit, self.examples)
        if problem is not None:
            yield ("examples",), problem, "S061"
        elif not self.examples_path(unit).is_file():
            yield (
                ("examples",),
                f"annotated examples file not found: {self.examples_path(unit)}; create it or "
                "fix the path (relative to the unit's folder)",
                "S050",
            )

    def check_shared(self, unit: UnitSpec) -> Iterator[Issue]:
        """The unit's normalizer tables (S041, S042)."""
        return check_tables(unit)

    def data_problems(self, unit: UnitSpec) -> list[SpecError]:
        """Problems of the annotated examples file (each located in that file)."""
        if _outside(unit, self.examples) is not None or not self.examples_path(unit).is_file():
            return []  # the load check reports it outside the unit's folder or missing
        return check_annotated(self.examples_path(unit), self.labels)

    def build(self, unit: UnitSpec) -> CrfPath:
        """The live path; its model is read on the first ``extract``."""
        return CrfPath(self, unit)


_FIELD_CODES = FieldCodes(not_in_schema="S057", unknown_normalizer="S059")


def _roots(unit: UnitSpec) -> list[Path]:
    roots = [unit.base_dir.resolve()]
    extra = os.environ.get(UNITS_ROOT_ENV)
    if extra:
        roots.append(Path(extra).expanduser().resolve())
    return roots


def _outside(unit: UnitSpec, value: str) -> str | None:
    """Why the file ``value`` names is not inside the unit's folder (or the root), or None.

    The path is resolved with its links, so a link inside the folder that points out of it is
    outside too.
    """
    roots = _roots(unit)
    allowed = f"the unit's folder {roots[0]}" + (
        f" or {UNITS_ROOT_ENV} ({roots[1]})" if len(roots) > 1 else ""
    )
    if Path(value).is_absolute():
        return f"{value!r} is an absolute path; name a file inside {allowed}, relative to the unit"
    try:
        resolved = (unit.base_dir / value).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a link loop, a NUL byte
        return f"{value!r} cannot be resolved ({exc}); name a file inside {allowed}"
    if not any(resolved.is_relative_to(root) for root in roots):
        return f"{value!r} leads to {resolved}, outside {allowed}"
    return None


def _confined(unit: UnitSpec, value: str, field: str) -> Path:
    problem = _outside(unit, value)
    if problem is not None:
        where = str(unit.source) if unit.source else unit.name
        raise SpecError(problem, file=where, field=field, check="S061")
    return unit.base_dir / value


# -- the trained model ------------------------------------------------------------------


def config_digest(spec: CrfFallback) -> str:
    """sha256 of the parts of the CRF config that change the model.

    Fields and normalizers are left out: they act after tagging, so editing them needs no
    retraining.
    """
    relevant = spec.model_dump(mode="json", include={"labels", "features", "training"})
    if spec.features.use_terms:  # the dictionaries the model was trained with matter too
        relevant["terms"] = _shipped_terms().fingerprint
    else:
        relevant["features"].pop("use_terms")  # models trained before the option stay valid
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def _shipped_terms() -> TermMatcher:
    return TermMatcher(shipped_dictionaries())


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data`` (the training record's hashes)."""
    return hashlib.sha256(data).hexdigest()


def shown_path(path: Path) -> str:
    """``path`` relative to the working folder when inside it (for messages), else as is."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _train_command(unit: UnitSpec) -> str:
    return f"aau train {shown_path(unit.source) if unit.source else 'units/' + unit.name + '.yaml'}"


@dataclass(frozen=True, slots=True)
class OpenModel:
    """An opened model and the bytes it was opened from.

    Attributes:
        tagger: the crfsuite tagger.
        data: the model bytes; crfsuite reads them in place, so they must outlive the tagger.
    """

    tagger: pycrfsuite.Tagger
    data: bytes


def open_model(spec: CrfFallback, unit: UnitSpec) -> OpenModel:
    """Check the model against its record and the current data, then open it.

    Raises:
        CrfModelMissing: the model file or its record does not exist.
        CrfModelCorrupt: either is unreadable, or the model is not the one recorded.
        CrfModelStale: the examples, the CRF config or the feature recipe changed since training.
    """
    import pycrfsuite

    model_path, record_path = spec.model_path(unit), spec.record_path(unit)
    retrain = f"; run `{_train_command(unit)}`"
    prefix = f"{unit.name}: CRF model {shown_path(model_path)}"
    for path, what in ((model_path, "model file"), (record_path, "training record")):
        if not path.is_file():
            raise CrfModelMissing(f"{prefix}: {what} {shown_path(path)} not found{retrain}")
    try:
        data = model_path.read_bytes()
        record = json.loads(record_path.read_text(encoding="utf-8"))
        recorded = {k: record[k] for k in ("model_sha256", "examples_sha256", "config_sha256",
                                           "feature_version")}  # fmt: skip
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise CrfModelCorrupt(f"{prefix}: unreadable model or record ({exc}){retrain}") from None
    if sha256_hex(data) != recorded["model_sha256"]:
        raise CrfModelCorrupt(
            f"{prefix}: the file does not match its training record (truncated or replaced?)"
            f"{retrain}"
        )
    if data[:4] != _MAGIC or len(data) < 8 or struct.unpack("<I", data[4:8])[0] != len(data):
        raise CrfModelCorrupt(f"{prefix}: not a crfsuite model{retrain}")
    examples_path = spec.examples_path(unit)
    try:
        examples_sha = sha256_hex(examples_path.read_bytes())
    except OSError:
        examples_sha = None
    reasons = []
    if examples_sha != recorded["examples_sha256"]:
        reasons.append(f"the annotated examples {shown_path(examples_path)} changed")
    if config_digest(spec) != recorded["config_sha256"]:
        reasons.append("the crf labels, features or training settings changed")
    if recorded["feature_version"] != FEATURE_VERSION:
        reasons.append(
            f"it was built with feature recipe {recorded['feature_version']}, "
            f"this version uses {FEATURE_VERSION}"
        )
    if reasons:
        raise CrfModelStale(f"{prefix} is stale: {' and '.join(reasons)} since training{retrain}")
    tagger = pycrfsuite.Tagger()
    try:
        tagger.open_inmemory(data)
    except (ValueError, OSError) as exc:
        raise CrfModelCorrupt(f"{prefix}: crfsuite cannot read it ({exc}){retrain}") from None
    return OpenModel(tagger, data)


# -- choosing fields --------------------------------------------------------------------


def _absence(
    tagging: Tagging,
    fields: Mapping[str, CrfField],
    values: Mapping[str, Any],
    chosen: Mapping[str, TaggedSpan],
) -> float:
    """The probability, at most, that the fields left empty really have no span in the text.

    For each empty field whose label fills no other field: one minus the label's largest
    marginal at any token (no token carries the label only if the token likeliest to carry it
    does not). 1.0 when every field is filled.
    """
    used = {span.label for span in chosen.values()}
    absent = 1.0
    for field, mapping in fields.items():
        if values.get(field) is not None or mapping.label in used:
            continue
        used.add(mapping.label)  # two empty fields of one label: one claim
        absent *= 1.0 - max(tagging.label_marginals.get(mapping.label, ()), default=0.0)
    return max(0.0, absent)


def choose_fields(
    text: str,
    spans: Sequence[TaggedSpan],
    fields: Mapping[str, CrfField],
    field_schemas: Mapping[str, Any],
    normalizers: Mapping[str, Callable[[str], Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, TaggedSpan]]:
    """Fill each field from the best span of its label that normalizes to a schema-valid value.

    Args:
        text: the tagged text.
        spans: predicted spans.
        fields: output field -> label and normalizer.
        field_schemas: output field -> its JSON Schema (``properties`` of the output schema).
        normalizers: output field -> its normalizer, resolved in the unit
            (``aau.fallbacks.fields.field_normalizers``: the unit's tables first); without it,
            the fields' names are resolved among the registered normalizers.

    Returns:
        The field values (``None`` where no span fits) and the span chosen for each filled field.
    """
    functions = normalizers if normalizers is not None else field_normalizers(fields, None)
    values: dict[str, Any] = {}
    chosen: dict[str, TaggedSpan] = {}
    for field, mapping in fields.items():
        values[field] = None
        candidates = sorted(
            (s for s in spans if s.label == mapping.label), key=lambda s: (-s.score, s.start)
        )
        for span in candidates:
            if mapping.normalize in ("amount", "number"):
                span = _with_scale_word(text, span)
                if mapping.normalize == "amount":
                    span = _with_minor_units(text, span)
            elif mapping.normalize == "currency":
                span = _with_country_prefix(text, span)
            elif mapping.normalize == "unit":
                if is_preposition_in(text, span.start):
                    continue  # "3 in a row": the preposition, not inches
                if is_scale_word(text[span.start : span.end]):
                    continue  # "2,4 miljard liter": the number's scale, not miles
                span = _with_unit_words(text, span)
            value = functions[field](text[span.start : span.end])
            schema = field_schemas.get(field)
            # A normalizer can return text the schema rejects (an unknown currency marker longer
            # than maxLength); the next span may fit, so skip rather than answer invalid output.
            if value is None or (schema is not None and not _is_valid(value, schema)):
                continue
            values[field], chosen[field] = value, span
            break
    return values, chosen


_WORD_AFTER = re.compile(r" ?([^\W\d_][^\s\d]{1,11})")
_TOKEN_AFTER = re.compile(r" ?(\S{1,12})(?= )")


def _with_scale_word(text: str, span: TaggedSpan) -> TaggedSpan:
    """An amount's or number's span with the scale word after it ("€2.4 billion", "£1.2bn").

    The tagger may end a number at its digits ("₹1.5 lakh", "2,4 miljard liter"); the scale
    word is part of it, also after a currency marker ("75 USD milhões").
    """
    end = span.end
    marker = _TOKEN_AFTER.match(text, end)
    if marker is not None and is_currency_marker(marker.group(1)):
        scaled = _WORD_AFTER.match(text, marker.end())
        if scaled is not None and scale_value(scaled.group(1).rstrip(".,;:!?)")) is not None:
            end = marker.end()  # "75 USD milhões": the scale word after the currency's code
    for _ in range(2):  # "1.5 lakh crore"
        match = _WORD_AFTER.match(text, end)
        word = match.group(1).rstrip(".,;:!?)") if match else ""
        if match is None or len(word) < 2 or scale_value(word) is None:
            break
        end = match.start(1) + len(word)
    return span if end == span.end else dataclasses.replace(span, end=end)


_MINOR_REACH = 5
"""Tokens after a whole amount that may hold its marker and minor units ("USD et 23 centimes")."""


def _with_minor_units(text: str, span: TaggedSpan) -> TaggedSpan:
    """A whole amount's span with the minor units written after its marker.

    The tagger labels "1" in "1 USD et 23 centimes" (and "20" in "20 Rupees 43"); the money
    reader reads the words after it as the cents. Taken only where the wider text reads as the
    same whole amount and some cents.
    """
    whole = read_number(text[span.start : span.end])
    if whole is None or whole != int(whole):
        return span
    tokens = list(itertools.islice(_TOKEN.finditer(text, span.end), _MINOR_REACH))
    for count in range(len(tokens), 1, -1):  # the widest reading first
        end = tokens[count - 1].end()
        if _LIST_MARK.search(text, span.end, end):
            continue  # "5 EUR, 23 EUR": a list of amounts, not 5.23
        money = read_money(text[span.start : end])
        if money is not None and money.amount != whole and int(money.amount) == whole:
            return dataclasses.replace(span, end=end)
    return span


_TOKEN = re.compile(r"\S+")
_LIST_MARK = re.compile(r"[,;/|]")
_WORDS_AFTER = re.compile(r"(?: [^\W\d_][^\s\d,;.!?]{0,15}){1,2}")


def _with_unit_words(text: str, span: TaggedSpan) -> TaggedSpan:
    """A unit's span with the words after it that make it another unit.

    The tagger may label the first word of a unit of several: "graus f" is Fahrenheit, not a
    degree; "metrische ton" tonnes, not metres; "km per hour" a speed.
    """
    alone = read_unit(text[span.start : span.end])
    following = _WORDS_AFTER.match(text, span.end)
    if following is None:
        return span
    added = list(re.finditer(r" (\S+)", following.group()))
    for count in range(len(added), 0, -1):  # the longest reading first
        end = span.end + added[count - 1].end()
        reading = read_unit(text[span.start : end])
        # One added word must be a unit itself, or make a power of it ("metros cuadrados"):
        # unit names are looked up without their spaces, and "1,65m en 70 kilo" would read
        # "m en" as minutes.
        if (
            reading is not None
            and reading != alone
            and (
                reading.rstrip("23") == alone
                or any(read_unit(word.group(1)) is not None for word in added[:count])
            )
        ):
            return dataclasses.replace(span, end=end)
    return span


_PREFIX_BEFORE = re.compile(r"(?<![\w.])((?:[^\W\d_]\.){1,3}|[^\W\d_]{1,4}\.?) ?$")


def _with_country_prefix(text: str, span: TaggedSpan) -> TaggedSpan:
    """A currency's span with the country letters written before it ("nt $", "cdn $").

    The tagger may label the symbol alone; the letters before it say whose dollar it is. Taken
    only where the marker with them names fewer currencies, and never an article ("a $ 5").
    """
    prefix = _PREFIX_BEFORE.search(text, max(0, span.start - 8), span.start)
    if prefix is None or prefix.group(1).casefold() in {"a", "an"}:
        return span
    alone, joined = text[span.start : span.end], text[prefix.start(1) : span.end]
    narrower = 0 < len(currency_codes(joined)) < len(currency_codes(alone))
    if narrower and is_currency_marker(joined):
        return dataclasses.replace(span, start=prefix.start(1))
    return span


def _is_valid(value: Any, schema: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


# -- the live path ---------------------------------------------------------------------------


# Every CRF tagging of the process runs on this one thread. Tagging holds each token's features
# (about 1 KB per input character); freed on a thread, glibc keeps that memory in the thread's
# own arena, so taggings spread over the runner's worker threads took 2.3 GB for three units over
# one 1 MB text where one thread takes 1.3 GB. pycrfsuite holds the GIL, so one thread costs no
# parallelism either.
_TAGGER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="aau-crf")


class CrfPath:
    """Live CRF path of one unit. The model is loaded on the first ``extract``."""

    name = "crf"

    def __init__(self, spec: CrfFallback, unit: UnitSpec) -> None:
        """Prepare the path; nothing is read from disk until the first ``extract``."""
        self.spec = spec
        self.unit = unit
        self.properties: dict[str, Any] = dict(unit.output.get("properties", {}))
        self._normalizers = field_normalizers(spec.fields, unit)  # the unit's tables first
        self._features = spec.features.to_config()
        self._labels = sorted({mapping.label for mapping in spec.fields.values()})
        self._model: OpenModel | None = None
        # pycrfsuite's Tagger keeps the current sequence inside it: concurrent extract calls
        # (the scheduler may run paths in threads) must not interleave set() and marginal().
        self._lock = threading.Lock()

    def _loaded_tagger(self) -> pycrfsuite.Tagger:
        if self._model is None:
            self._model = open_model(self.spec, self.unit)
        return self._model.tagger

    def _tag(self, text: str, hits: list[tuple[int, int, str]]) -> Tagging:
        with self._lock:
            return tag_text(self._loaded_tagger(), tokenize(text), self._features, hits, text,
                            self._labels)  # fmt: skip

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Tag ``text`` and map the best span of each field's label into the unit's schema.

        Raises:
            CrfModelMissing: no trained model or no training record.
            CrfModelStale: the examples, the CRF config or the feature recipe changed since
                training; the message names the ``aau train`` command to run.
            CrfModelCorrupt: the model file or its record is unreadable or altered.
        """
        hits = term_spans(context.extras.get("term_hits", ()))
        tagging = _TAGGER.submit(self._tag, text, hits).result()
        values, chosen = choose_fields(
            text, tagging.spans, self.spec.fields, self.properties, self._normalizers
        )
        output: dict[str, Any] = dict.fromkeys(self.properties)
        output.update(values)
        if chosen:
            # Two fields may share one span (a label mapped twice); count it once.
            distinct = list({(s.label, s.start): s for s in chosen.values()}.values())
            mean = sum(s.score for s in distinct) / len(distinct)
            minimum = min(m for s in distinct for m in s.marginals)
            confidence = mean * _absence(tagging, self.spec.fields, values, chosen)
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
