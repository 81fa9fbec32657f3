"""Training a unit's CRF model, measuring it, and telling a current model from a stale one.

``train_unit`` reads the unit's annotated examples, keeps a deterministic 20% out (by a seeded
hash rank of each text, so adding examples moves few others across the split), trains an L-BFGS
CRF on the rest and measures it on the held-out texts: span-level exact-match precision, recall
and F1 per label, the same per token, and how often each output field comes out right after
normalization. It then retrains on every example and writes that model: the hyper-parameters
are declared in the unit, not tuned on the held-out texts, so refitting selects nothing on them,
and the rare formats in the held-out fifth are worth having in the shipped model. The figures
therefore describe a model trained on 80% of the data: a slightly pessimistic estimate.

Beside the model (``<model>.json``) a record stores the sha256 of the model file, of the
examples file and of the training-relevant CRF config, with the feature recipe version.
``aau.fallbacks.crf.open_model`` checks that record before crfsuite reads the file: a truncated
model file can crash crfsuite's C reader, so its hash must match first.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from aau.errors import SpecError
from aau.fallbacks.annotated import AnnotatedExample, load_annotated
from aau.fallbacks.crf import (
    RECORD_FORMAT,
    CrfFallback,
    CrfTraining,
    choose_fields,
    config_digest,
    sha256_hex,
    shown_path,
)
from aau.fallbacks.crf_features import (
    FEATURE_VERSION,
    Token,
    bio_tags,
    sentence_features,
    spans_from_tags,
    tokenize,
)
from aau.fallbacks.crf_tagging import tag_text, term_spans
from aau.fallbacks.fields import field_normalizers
from aau.files import write_replacing
from aau.terms.matcher import TermMatcher
from aau.terms.store import shipped_dictionaries

if TYPE_CHECKING:
    from aau.spec.model import UnitSpec

__all__ = [
    "LabelScore",
    "TrainReport",
    "crf_spec_of",
    "format_report",
    "gold_output",
    "split_held_out",
    "train_unit",
]


@dataclass(frozen=True, slots=True)
class LabelScore:
    """Precision, recall and F1 of one label (or ``all``, micro-averaged).

    Attributes:
        label: the span label.
        precision: correct / predicted.
        recall: correct / gold.
        f1: harmonic mean of precision and recall.
        gold: number of gold spans (or tokens).
        predicted: number of predicted spans (or tokens).
    """

    label: str
    precision: float
    recall: float
    f1: float
    gold: int
    predicted: int


@dataclass(frozen=True, slots=True)
class TrainReport:
    """What ``train_unit`` did and how well the model does on held-out texts.

    Attributes:
        unit: the unit's ``name@version``.
        n_examples: annotated examples read.
        n_train: examples the measured model was trained on.
        n_held_out: examples it was measured on.
        span_scores: per label, then ``all``: exact-match span scores on the held-out texts.
        token_scores: the same per token (B/I merged).
        field_accuracy: output field -> share of held-out texts where it came out right.
        misaligned_spans: gold spans whose edges cut a token (they label the whole token).
        misaligned: the first few of them, each as ``line N: LABEL 'span' in 'token'``.
        trained_on: ``all`` (the written model saw every example) or ``train``.
        model_path: where the model was written, or None when not written.
        seconds: wall time of training and measuring.
        record: the training record written beside the model (empty when not written).
        extra: figures of the caller's own measure on the held-out texts (``train_unit``'s
            ``measure``), e.g. record-level scores of a records path; empty without one.
    """

    unit: str
    n_examples: int
    n_train: int
    n_held_out: int
    span_scores: tuple[LabelScore, ...]
    token_scores: tuple[LabelScore, ...]
    field_accuracy: dict[str, float]
    misaligned_spans: int
    trained_on: Literal["all", "train"]
    model_path: Path | None = None
    seconds: float = 0.0
    record: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, float] = field(default_factory=dict)
    misaligned: tuple[str, ...] = ()


_SHOWN_MISALIGNED = 5


Measure = Callable[[bytes, Sequence[AnnotatedExample]], dict[str, float]]
"""A kind's own figures of the measured model (its bytes) on the held-out examples."""


# -- fingerprints and loading ----------------------------------------------------------------


def crf_spec_of(unit: UnitSpec) -> CrfFallback:
    """The unit's CRF fallback declaration.

    Raises:
        SpecError: the unit declares none (S060).
    """
    for fallback in unit.fallbacks:
        if isinstance(fallback, CrfFallback):
            return fallback
    raise SpecError(
        "the unit declares no crf fallback; add one to `fallbacks:` (kind: crf) to train it",
        file=str(unit.source) if unit.source else unit.name,
        field="fallbacks",
        check="S060",
    )


# -- training and measuring ------------------------------------------------------------------


def _shipped_terms() -> TermMatcher:
    return TermMatcher(shipped_dictionaries())


def _term_hits(matcher: TermMatcher | None, text: str) -> list[tuple[int, int, str]]:
    return term_spans(matcher.find(text)) if matcher is not None else []


def split_held_out(
    examples: Sequence[AnnotatedExample], training: CrfTraining
) -> tuple[list[AnnotatedExample], list[AnnotatedExample]]:
    """Deterministic (train, held-out) split: the lowest seeded-hash ranks are held out."""

    def rank(example: AnnotatedExample) -> str:
        return hashlib.sha256(f"{training.seed}\0{example.text}".encode()).hexdigest()

    count = round(len(examples) * training.held_out)
    count = min(max(count, 1), len(examples) - 1) if len(examples) > 1 else 0
    held = set(map(id, sorted(examples, key=rank)[:count]))
    return [e for e in examples if id(e) not in held], [e for e in examples if id(e) in held]


def _fit(spec: CrfFallback, xs: list[Any], ys: list[list[str]]) -> bytes:
    import sklearn_crfsuite

    with tempfile.TemporaryDirectory(prefix="aau-crf-") as folder:
        path = os.path.join(folder, "model.crfsuite")
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs",
            c1=spec.training.c1,
            c2=spec.training.c2,
            max_iterations=spec.training.max_iterations,
            all_possible_transitions=True,
            model_filename=path,
        )
        crf.fit(xs, ys)
        return Path(path).read_bytes()


def _scores(counts: dict[str, list[int]]) -> tuple[LabelScore, ...]:
    """``counts``: label -> [correct, gold, predicted]; adds the micro-averaged ``all`` row."""
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    rows = []
    for label, (correct, gold, predicted) in [*sorted(counts.items()), ("all", total)]:
        precision = correct / predicted if predicted else 0.0
        recall = correct / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(LabelScore(label, round(precision, 4), round(recall, 4), round(f1, 4), gold,
                               predicted))  # fmt: skip
    return tuple(rows)


def gold_output(
    example: AnnotatedExample,
    spec: CrfFallback,
    unit: UnitSpec | None = None,
    *,
    normalizers: Mapping[str, Callable[[str], Any]] | None = None,
) -> dict[str, Any]:
    """The unit's answer for a labelled text: each field's normalizer over its labelled span.

    Args:
        example: the labelled text.
        spec: the unit's CRF declaration.
        unit: the unit, whose normalizer tables the fields may name; without it (and without
            ``normalizers``), only registered normalizers are known.
        normalizers: output field -> its normalizer, resolved once for many examples
            (``aau.fallbacks.fields.field_normalizers``).
    """
    functions = normalizers if normalizers is not None else field_normalizers(spec.fields, unit)
    out: dict[str, Any] = {}
    for name, mapping in spec.fields.items():
        span = next((s for s in example.spans if s.label == mapping.label), None)
        text = example.text[span.start : span.end] if span else None
        out[name] = functions[name](text) if text is not None else None
    return out


def _measure(
    model: bytes,
    spec: CrfFallback,
    unit: UnitSpec,
    held: Sequence[AnnotatedExample],
    tokens: dict[int, list[Token]],
    gold_tags: dict[int, list[str]],
) -> tuple[tuple[LabelScore, ...], tuple[LabelScore, ...], dict[str, float]]:
    """Span, token and field scores of ``model`` on the held-out examples."""
    import pycrfsuite

    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(model)
    config = spec.features.to_config()
    terms = _shipped_terms() if config.use_terms else None
    properties = unit.output.get("properties", {})
    normalizers = field_normalizers(spec.fields, unit)
    span_counts = {label: [0, 0, 0] for label in spec.labels}
    token_counts = {label: [0, 0, 0] for label in spec.labels}
    right = dict.fromkeys(spec.fields, 0)
    for example in held:
        toks, gold = tokens[id(example)], gold_tags[id(example)]
        tagged = tag_text(tagger, toks, config, _term_hits(terms, example.text)).spans
        predicted = {(s.start, s.end, s.label) for s in tagged}
        expected = {(toks[a].start, toks[b - 1].end, lab) for a, b, lab in spans_from_tags(gold)}
        for label, counts in span_counts.items():
            counts[0] += sum(1 for s in expected & predicted if s[2] == label)
            counts[1] += sum(1 for s in expected if s[2] == label)
            counts[2] += sum(1 for s in predicted if s[2] == label)
        for token, gold_tag in zip(toks, gold, strict=True):
            gold_label = gold_tag.partition("-")[2]
            pred_label = next(
                (s[2] for s in predicted if s[0] <= token.start and token.end <= s[1]), ""
            )
            if gold_label:
                token_counts[gold_label][1] += 1
            if pred_label:
                token_counts[pred_label][2] += 1
                token_counts[pred_label][0] += pred_label == gold_label
        values, _ = choose_fields(example.text, tagged, spec.fields, properties, normalizers)
        wanted = gold_output(example, spec, normalizers=normalizers)
        for name in spec.fields:
            right[name] += values[name] == wanted[name]
    accuracy = {name: round(n / len(held), 4) if held else 0.0 for name, n in right.items()}
    return _scores(span_counts), _scores(token_counts), accuracy


def _misaligned(example: AnnotatedExample, toks: Sequence[Token]) -> list[str]:
    """Each gold span of ``example`` whose edge falls inside a token, as the author can find it.

    The CRF labels whole tokens: such a span is learned as the whole token ("days'" for
    "days"), which is what the model will then answer.
    """
    starts, ends = {t.start for t in toks}, {t.end for t in toks}
    found = []
    for span in example.spans:
        if span.start in starts and span.end in ends:
            continue
        cut = [t.text for t in toks if t.start < span.end and span.start < t.end]
        found.append(f"line {example.line}: {span.label} {example.text[span.start:span.end]!r} "
                     f"in {' '.join(cut)!r}")  # fmt: skip
    return found


def train_unit(
    unit: UnitSpec,
    *,
    write: bool = True,
    spec: CrfFallback | None = None,
    measure: Measure | None = None,
) -> TrainReport:
    """Train, measure and (by default) write the CRF model of ``unit``.

    Args:
        unit: a unit that declares a ``crf`` fallback.
        write: write the model retrained on every example, and its record, beside the unit
            (paths from the declaration). Without it, only the measured model is trained.
        spec: the tagger to train, when another kind tags with a CRF (the records kind builds
            one from its own declaration); without it, the unit's ``crf`` fallback.
        measure: the kind's own figures of the measured model on the held-out examples, kept
            in the report (``extra``) and in the training record.

    Returns:
        The held-out report.

    Raises:
        SpecError: the unit declares no crf fallback, its annotated examples are invalid, or
            its examples or model lead outside the unit's folder (S061: nothing is written).
    """
    began = time.perf_counter()
    spec = spec if spec is not None else crf_spec_of(unit)
    if write:  # a model path out of the unit's folder fails here, before training (S061)
        spec.model_path(unit)
        spec.record_path(unit)
    examples_path = spec.examples_path(unit)
    examples_bytes = examples_path.read_bytes() if examples_path.is_file() else b""
    examples = load_annotated(examples_path, spec.labels)
    config = spec.features.to_config()
    tokens = {id(e): tokenize(e.text) for e in examples}
    terms = _shipped_terms() if config.use_terms else None
    features = {
        id(e): sentence_features(tokens[id(e)], config, term_hits=_term_hits(terms, e.text))
        for e in examples
    }
    tags = {
        id(e): bio_tags(tokens[id(e)], [(s.start, s.end, s.label) for s in e.spans])
        for e in examples
    }
    train, held = split_held_out(examples, spec.training)
    measured = _fit(spec, [features[id(e)] for e in train], [tags[id(e)] for e in train])
    span_scores, token_scores, accuracy = _measure(measured, spec, unit, held, tokens, tags)
    extra: dict[str, float] = {}
    if measure is not None:  # the kind's own figures replace the top-level fields' accuracy
        extra, accuracy = measure(measured, held), {}
    model_path: Path | None = None
    record: dict[str, Any] = {}
    if write:
        final = _fit(spec, [features[id(e)] for e in examples], [tags[id(e)] for e in examples])
        model_path = spec.model_path(unit)
        record = {
            "format": RECORD_FORMAT,
            "unit": unit.key,
            "model_sha256": sha256_hex(final),
            "examples_sha256": sha256_hex(examples_bytes),
            "config_sha256": config_digest(spec),
            "feature_version": FEATURE_VERSION,
            "trained_on": "all",
            "n_examples": len(examples),
            "held_out": {
                "n": len(held),
                "span_f1": {s.label: s.f1 for s in span_scores},
                "field_accuracy": accuracy,
            },
        }
        if extra:
            record["held_out"]["extra"] = extra
        write_replacing(model_path, final)  # a reader never sees half a model
        write_replacing(spec.record_path(unit), json.dumps(record, indent=2, sort_keys=True) + "\n")
    misaligned = [m for e in examples for m in _misaligned(e, tokens[id(e)])]
    return TrainReport(
        unit=unit.key,
        n_examples=len(examples),
        n_train=len(train),
        n_held_out=len(held),
        span_scores=span_scores,
        token_scores=token_scores,
        field_accuracy=accuracy,
        misaligned_spans=len(misaligned),
        misaligned=tuple(misaligned[:_SHOWN_MISALIGNED]),
        trained_on="all" if write else "train",
        model_path=model_path,
        seconds=round(time.perf_counter() - began, 3),
        record=record,
        extra=extra,
    )


def format_report(report: TrainReport) -> str:
    """A plain-text table of ``report`` for the terminal."""
    if report.model_path is not None:
        target = shown_path(report.model_path)
        written = f"model retrained on all {report.n_examples} examples -> {target}"
    else:
        written = "model not written"
    lines = [
        f"{report.unit}: {report.n_examples} examples ({report.n_train} train, "
        f"{report.n_held_out} held out); {written} ({report.seconds:.1f} s)",
    ]
    if report.misaligned_spans:
        lines.append(f"  warning: {report.misaligned_spans} span(s) cut a token; the CRF learns "
                     "the whole token, so end each span where a token ends, e.g.:")  # fmt: skip
        lines += [f"    {where}" for where in report.misaligned]
    for title, rows in (("spans, exact match", report.span_scores),
                        ("tokens", report.token_scores)):  # fmt: skip
        lines.append(f"  held out, {title}:")
        lines.append(f"    {'label':<12} {'P':>6} {'R':>6} {'F1':>6} {'gold':>6} {'pred':>6}")
        for row in rows:
            lines.append(
                f"    {row.label:<12} {row.precision:>6.3f} {row.recall:>6.3f} {row.f1:>6.3f} "
                f"{row.gold:>6} {row.predicted:>6}"
            )
    fields = ", ".join(f"{name} {share:.3f}" for name, share in report.field_accuracy.items())
    if fields:
        lines.append(f"  held out, output fields right: {fields}")
    if report.extra:
        figures = ", ".join(f"{name} {value:.3f}" for name, value in report.extra.items())
        lines.append(f"  held out, {figures}")
    return "\n".join(lines)
