"""The records path: a CRF labels every field, then layout and proximity group fields into records.

A ``records`` unit answers with a list of objects (``{clauses: [{amount, currency, trigger}]}``).
Its fallback declares which output property holds the list (``list``), the span labels, how each
label fills a field of an item (``fields``), and the field every record is built around
(``anchor``): each anchor span the tagger finds is one record, and every other field span joins
the anchor it belongs with by layout, best first:

1. the same table row (a line with ``|`` or tab cells, or wide gaps between columns); a value in
   a table's header row (``Penalty (EUR)``) fills that field in each row of the table lacking it;
2. the same line and sentence;
3. the same sentence (prose hard-wrapped over lines);
4. the same line (a list line with no sentence punctuation).

Within a level the anchor in the same clause (``;``) wins, then the nearest one. A field span
with no anchor in reach is dropped. The tagger is the CRF kind's (``aau.fallbacks.crf``): the
same model file, record, staleness checks and training (``aau train``), built from this
declaration, so this module holds only what records add.

Confidence. Each record's score is the product of its fields' span scores (the mean marginal of
their tokens) and, for each field it lacks, the chance that the field is really absent from its
row or sentence (one minus the highest marginal of that label there). The answer's confidence is
the product of the record scores times the chance that no record was missed: one minus the
highest marginal of an anchor tag at any token outside the chosen anchors. "No records" is an
answer as well, with that last chance as its confidence.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from aau.answers import PathAnswer, PathContext
from aau.errors import SpecError
from aau.fallbacks.annotated import AnnotatedExample
from aau.fallbacks.crf import (
    _TAGGER,
    CrfFallback,
    CrfFeatureOptions,
    CrfField,
    CrfModelError,
    CrfModelMissing,
    CrfTraining,
    OpenModel,
    open_model,
)
from aau.fallbacks.crf_features import tokenize
from aau.fallbacks.crf_tagging import TaggedSpan, tag_text, term_spans
from aau.fallbacks.crf_training import format_report, train_unit
from aau.fallbacks.normalize import NORMALIZERS, normalizer_for
from aau.registry import UnknownName
from aau.spec.model import FallbackSpec, Issue, UnitSpec

if TYPE_CHECKING:
    import pycrfsuite

__all__ = [
    "Record",
    "RecordsFallback",
    "RecordsField",
    "RecordsPath",
    "assemble",
    "list_property",
    "matched_records",
    "normalized_text",
    "records_equal",
    "values_equal",
]

_MODEL_MISSING = "S088"
_MODEL_UNUSABLE = "S089"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RecordsField(_Strict):
    """How spans of one label fill one field of each record."""

    label: str
    """The span label (``AMOUNT``)."""
    normalize: str = "text"
    """Normalizer name: one of the unit's tables or a registered normalizer."""


class RecordsFallback(FallbackSpec):
    """A CRF that labels every field, and records assembled by layout around an anchor field."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    kind: Literal["records"]
    list_name: str = Field(alias="list")
    """The output property that holds the records (an array of objects)."""
    labels: list[str] = Field(min_length=1, max_length=32)
    """Span labels, e.g. ``[AMOUNT, CURRENCY, TRIGGER]``."""
    fields: dict[str, RecordsField] = Field(min_length=1, max_length=32)
    """Item field -> the label that fills it. Item fields not named here are null."""
    anchor: str
    """The field each record is built around: one record per span of its label."""
    examples: str
    """Annotated-examples JSONL (``aau.fallbacks.annotated``), relative to the unit's folder."""
    model: str
    """Trained model file, relative to the unit's folder; its record lies beside it (``.json``)."""
    features: CrfFeatureOptions = CrfFeatureOptions()
    """Token features; part of the model's fingerprint."""
    training: CrfTraining = CrfTraining()
    """Hyper-parameters of ``aau train``; part of the model's fingerprint."""
    max_records: int = Field(100, ge=1, le=10_000)
    """At most this many records (the item schema's ``maxItems`` too), best scores first."""
    confidence: float = Field(1.0, gt=0, le=1)
    """Scale applied to the answer's confidence (below 1 to trust this path less)."""

    def tagger(self) -> CrfFallback:
        """The CRF declaration this path tags with: same labels, files, features and training.

        Its fingerprint (``aau.fallbacks.crf.config_digest``) is the records declaration's, so the
        model record and its staleness checks are the CRF kind's.
        """
        return CrfFallback(
            kind="crf",
            labels=self.labels,
            fields={name: CrfField(label=f.label, normalize=f.normalize)
                    for name, f in self.fields.items()},
            examples=self.examples,
            model=self.model,
            features=self.features,
            training=self.training,
        )  # fmt: skip

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Load-time problems (S080-S087), then the CRF kind's path checks (S050, S061)."""
        if unit.kind != "records":
            yield (
                ("kind",),
                f"a records fallback answers a list of records; the unit is of kind {unit.kind}. "
                "Set kind: records on the unit",
                "S080",
            )
        properties = unit.output.get("properties", {})
        item = list_property(unit.output, self.list_name)
        if item is None:
            lists = [n for n in properties if list_property(unit.output, n) is not None]
            yield (
                ("list",),
                f"list {self.list_name!r} is not an array-of-objects property of the output. "
                f"Available: {', '.join(lists) or 'none'}",
                "S081",
            )
            item_properties: Mapping[str, Any] = {}
        else:
            item_properties = item.get("properties", {})
        label_issues = list(self._label_issues())
        yield from label_issues
        for name, mapping in self.fields.items():
            loc: tuple[str | int, ...] = ("fields", name)
            if item is not None and name not in item_properties:
                yield (
                    loc,
                    f"field {name!r} is not in the items of {self.list_name!r}. "
                    f"Available: {', '.join(item_properties)}",
                    "S082",
                )
            if mapping.label not in self.labels:
                yield (
                    (*loc, "label"),
                    f"label {mapping.label!r} is not in labels. "
                    f"Available: {', '.join(self.labels)}",
                    "S083",
                )
            try:
                normalizer_for(mapping.normalize, unit)
            except UnknownName:
                yield (
                    (*loc, "normalize"),
                    f"unknown normalizer {mapping.normalize!r}. "
                    f"Available: {', '.join(NORMALIZERS.names())}",
                    "S084",
                )
        if self.anchor not in self.fields:
            yield (
                ("anchor",),
                f"anchor {self.anchor!r} is not one of fields. Available: {', '.join(self.fields)}",
                "S086",
            )
        yield from self._unfilled(unit.output, item_properties)
        if not label_issues:  # the tagger's declaration refuses such labels
            for loc, message, code in self.tagger().check(unit):
                if code in {"S050", "S061"}:  # its field checks are about top-level fields
                    yield loc, message, code

    def _label_issues(self) -> Iterator[Issue]:
        seen: set[str] = set()
        for index, label in enumerate(self.labels):
            if not label or label == "O" or "-" in label or label != label.strip():
                yield (
                    ("labels", index),
                    f"label {label!r} cannot be a BIO label (not 'O', no '-', no outer spaces)",
                    "S085",
                )
            elif label in seen:
                yield ("labels", index), f"label {label!r} is listed twice", "S085"
            seen.add(label)

    def _unfilled(
        self, output: Mapping[str, Any], item_properties: Mapping[str, Any]
    ) -> Iterator[Issue]:
        """Properties this path never fills must accept null, or its answer is invalid."""
        unfilled = [(("output", "properties", name), name, prop)
                    for name, prop in output.get("properties", {}).items()
                    if name != self.list_name]  # fmt: skip
        unfilled += [((self.list_name, "items", name), name, prop)
                     for name, prop in item_properties.items()
                     if name != self.anchor]  # fmt: skip
        for loc, name, prop in unfilled:
            if isinstance(prop, dict) and not _accepts_null(prop):
                yield (
                    loc,
                    f"{name!r} must accept null (type: [..., 'null']): the records path leaves it "
                    "null when the text does not give it",
                    "S087",
                )

    def data_problems(self, unit: UnitSpec) -> list[SpecError]:
        """Problems of the annotated examples, then a missing (S088) or stale model (S089)."""
        tagger = self.tagger()
        problems = tagger.data_problems(unit)
        if problems:
            return problems
        where = str(unit.source) if unit.source else unit.name
        try:
            open_model(tagger, unit)
        except CrfModelError as exc:
            code = _MODEL_MISSING if isinstance(exc, CrfModelMissing) else _MODEL_UNUSABLE
            problems.append(SpecError(str(exc), file=where, field="model", check=code))
        except SpecError as exc:
            problems.append(exc)
        return problems

    def train(self, unit: UnitSpec) -> str | None:
        """Train the tagger (``aau train``) and report span and record scores on held-out texts."""
        path = RecordsPath(self, unit)
        return format_report(train_unit(unit, spec=self.tagger(), measure=path.measure))

    def build(self, unit: UnitSpec) -> RecordsPath:
        """The live path; its model is read on the first ``extract``."""
        return RecordsPath(self, unit)


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds is None:
        return "enum" not in schema or None in schema["enum"]
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return "null" in kinds and ("enum" not in schema or None in schema["enum"])


def list_property(output: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The item schema of the output property ``name`` when it is an array of objects."""
    prop = output.get("properties", {}).get(name)
    if not isinstance(prop, dict):
        return None
    items = prop.get("items")
    kinds = prop.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    if "array" not in kinds or not isinstance(items, dict):
        return None
    item_kinds = items.get("type")
    item_kinds = [item_kinds] if isinstance(item_kinds, str) else item_kinds or []
    return items if "object" in item_kinds else None


# -- layout ------------------------------------------------------------------------------


_TABLE_ROW = re.compile(r"\|.*\||\t|\S(?: {3,}|\u00a0{2,})\S")
"""A table row: pipe-delimited cells, a tab, or a column gap of three spaces or more."""
_SENTENCE_END = re.compile(r"[.!?。！？](?=[\s\"'»”)]|$)")
_LIST_ITEM = re.compile(r"\s*(?:[-•*–·]|\(?[0-9a-zA-Z]{1,3}[.)]|\d+(?:\.\d+)+)\s")
_ABBREVIATIONS = frozenset(
    {"art", "abs", "no", "nr", "sec", "para", "cl", "approx", "e.g", "i.e", "etc", "vs", "z.b",
     "bzw", "ca", "inkl", "zzgl", "gem", "ziff", "str", "p.a", "p", "pp", "ref", "fig", "max",
     "min", "incl", "excl", "mr", "mrs", "dr", "ltd", "inc", "co", "corp", "gmbh", "s.a", "cf",
     "al", "vol", "u.a", "d.h", "o", "n°", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
     "sep", "sept", "oct", "nov", "dec", "mio", "mrd", "tsd", "bn", "m", "k"}
)  # fmt: skip
_WORD_BEFORE = re.compile(r"([\w.°]+)$")
_WORD_WINDOW = 32  # longer than any abbreviation, so a cut-off word never reads as one


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where each line, table, sentence and clause of a text starts (sorted offsets)."""

    line_starts: tuple[int, ...]
    row_table: dict[int, int]
    """Line index of a table row -> the index of its table (consecutive rows)."""
    sentence_starts: tuple[int, ...]
    clause_starts: tuple[int, ...]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset) - 1

    def sentence(self, offset: int) -> int:
        return bisect.bisect_right(self.sentence_starts, offset) - 1

    def clause(self, offset: int) -> int:
        return bisect.bisect_right(self.clause_starts, offset) - 1


def _layout(text: str) -> _Layout:
    lines = text.split("\n")
    line_starts, offset = [], 0
    for line in lines:
        line_starts.append(offset)
        offset += len(line) + 1
    row_table: dict[int, int] = {}
    table = -1
    for index, line in enumerate(lines):
        if _TABLE_ROW.search(line) and line.strip():
            if index - 1 not in row_table:
                table += 1
            row_table[index] = table
    # A sentence ends at terminal punctuation (not after an abbreviation or an initial), at a
    # blank line, a table row, a list item or a heading line; a single line break inside prose
    # is a soft wrap.
    starts = {0}
    for match in _SENTENCE_END.finditer(text):
        # A bounded look-behind: an unbounded one rescans the text for every full stop.
        before = _WORD_BEFORE.search(text, max(0, match.start() - _WORD_WINDOW), match.start())
        word = before.group(1).casefold().rstrip(".") if before else ""
        if match.group() == "." and word in _ABBREVIATIONS:
            continue
        starts.add(match.end())
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else ""
        if (
            index in row_table or index - 1 in row_table or not line.strip()
            or not previous.strip() or _LIST_ITEM.match(line) or previous.rstrip().endswith(":")
            or (len(previous) < 60 and not previous.rstrip().endswith((",", "-")))
        ):  # fmt: skip
            starts.add(line_starts[index])
    clauses = set(starts) | {m.end() for m in re.finditer(r"[;；]", text)}
    return _Layout(tuple(line_starts), row_table, tuple(sorted(starts)), tuple(sorted(clauses)))


# -- assembly ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Value:
    field: str
    value: Any
    span: TaggedSpan


@dataclass(frozen=True, slots=True)
class Record:
    """One assembled record.

    Attributes:
        values: item field -> value (None where the text gives none).
        spans: item field -> the span its value was read from.
        score: product of the fields' span scores.
    """

    values: dict[str, Any]
    spans: dict[str, TaggedSpan]
    score: float


def _level(layout: _Layout, field: int, anchor: int) -> int | None:
    """How closely two offsets belong together (0 best), or None when not at all."""
    field_line, anchor_line = layout.line(field), layout.line(anchor)
    if field_line in layout.row_table or anchor_line in layout.row_table:
        return 0 if field_line == anchor_line else None
    same_sentence = layout.sentence(field) == layout.sentence(anchor)
    if same_sentence:
        return 1 if field_line == anchor_line else 2
    return 3 if field_line == anchor_line else None


def assemble(
    text: str,
    values: Sequence[tuple[str, Any, TaggedSpan]],
    anchor: str,
    *,
    max_records: int = 100,
) -> list[Record]:
    """Group field values into records, one per anchor value, by layout and proximity.

    Args:
        text: the tagged text.
        values: ``(field, normalized value, span)`` of every usable tagged span.
        anchor: the field each record is built around.
        max_records: keep at most this many records (the best scored), in text order.

    Returns:
        The records in text order.
    """
    layout = _layout(text)
    anchors = sorted((v for v in values if v[0] == anchor), key=lambda v: v[2].start)
    chosen: list[dict[str, tuple[tuple[int, int, float], _Value]]] = [
        {anchor: ((-1, 0, 0.0), _Value(anchor, value, span))} for _, value, span in anchors
    ]
    for field, value, span in values:
        if field == anchor:
            continue
        best: tuple[tuple[int, int, float], int] | None = None
        for index, (_, _, anchor_span) in enumerate(anchors):
            level = _level(layout, span.start, anchor_span.start)
            if level is None:
                continue
            apart = layout.clause(span.start) != layout.clause(anchor_span.start)
            gap = max(span.start - anchor_span.end, anchor_span.start - span.end, 0)
            # After the anchor reads more naturally ("EUR 500 per day of delay"): a small edge.
            rank = (level, int(apart), gap + (0.5 if span.start < anchor_span.start else 0.0))
            if best is None or rank < best[0]:
                best = (rank, index)
        if best is None:
            continue
        rank, index = best
        held = chosen[index].get(field)
        if held is None or (rank, -span.score) < (held[0], -held[1].span.score):
            chosen[index][field] = (rank, _Value(field, value, span))
    _inherit_headers(layout, values, anchors, chosen, anchor)
    records = [
        Record(
            {f: v.value for f, (_, v) in fields.items()},
            {f: v.span for f, (_, v) in fields.items()},
            math.prod(v.span.score for _, v in fields.values()),
        )
        for fields in chosen
    ]
    if len(records) > max_records:
        keep = sorted(range(len(records)), key=lambda i: -records[i].score)[:max_records]
        records = [records[i] for i in sorted(keep)]
    return records


def _inherit_headers(
    layout: _Layout,
    values: Sequence[tuple[str, Any, TaggedSpan]],
    anchors: Sequence[tuple[str, Any, TaggedSpan]],
    chosen: list[dict[str, tuple[tuple[int, int, float], _Value]]],
    anchor: str,
) -> None:
    """A value in a table row with no anchor (a header) fills the later rows that lack it."""
    anchor_lines = {layout.line(span.start) for _, _, span in anchors}
    for field, value, span in values:
        line = layout.line(span.start)
        if field == anchor or line not in layout.row_table or line in anchor_lines:
            continue
        table = layout.row_table[line]
        for index, (_, _, anchor_span) in enumerate(anchors):
            row = layout.line(anchor_span.start)
            if row > line and layout.row_table.get(row) == table and field not in chosen[index]:
                chosen[index][field] = ((4, 0, 0.0), _Value(field, value, span))


# -- the live path -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tagged:
    spans: tuple[TaggedSpan, ...]
    marginals: Mapping[str, Sequence[float]]
    """Label -> per token, the marginal of a tag of that label (B or I)."""
    token_starts: list[int]


class RecordsPath:
    """Live records path of one unit. The model is loaded on the first ``extract``."""

    name = "records"

    def __init__(self, spec: RecordsFallback, unit: UnitSpec) -> None:
        """Prepare the path; nothing is read from disk until the first ``extract``."""
        self.spec = spec
        self.unit = unit
        self.item = list_property(unit.output, spec.list_name) or {}
        self.item_properties: dict[str, Any] = dict(self.item.get("properties", {}))
        max_items = self.unit.output["properties"].get(spec.list_name, {}).get("maxItems")
        self.max_records = min(spec.max_records, max_items) if isinstance(max_items, int) \
            else spec.max_records  # fmt: skip
        self._tagger_spec = spec.tagger()
        self._normalizers = {f: normalizer_for(m.normalize, unit) for f, m in spec.fields.items()}
        self._by_label: dict[str, list[str]] = {}
        for name, mapping in spec.fields.items():
            self._by_label.setdefault(mapping.label, []).append(name)
        self._features = spec.features.to_config()
        self._model: OpenModel | None = None
        self._lock = threading.Lock()  # the tagger keeps the current sequence inside it

    @cached_property
    def _validators(self) -> dict[str, jsonschema.Draft202012Validator]:
        return {name: jsonschema.Draft202012Validator(schema)
                for name, schema in self.item_properties.items()}  # fmt: skip

    def _values(self, text: str, spans: Sequence[TaggedSpan]) -> list[tuple[str, Any, TaggedSpan]]:
        """Each span's normalized value for every field of its label, where schema-valid."""
        found = []
        for span in spans:
            for field in self._by_label.get(span.label, ()):
                value = self._normalizers[field](text[span.start : span.end])
                validator = self._validators.get(field)
                if value is None or (validator is not None and not validator.is_valid(value)):
                    continue
                found.append((field, value, span))
        return found

    def _tag(self, tagger: pycrfsuite.Tagger, text: str, hits: Sequence[Any]) -> _Tagged:
        """The spans and, per token, its start and the marginal of each label (B or I)."""
        tokens = tokenize(text)
        labels = sorted({f.label for f in self.spec.fields.values()})
        tagging = tag_text(tagger, tokens, self._features, hits, text, labels)
        return _Tagged(tagging.spans, tagging.label_marginals, [t.start for t in tokens])

    def _tagged(self, text: str, hits: Sequence[Any]) -> _Tagged:
        def work() -> _Tagged:
            with self._lock:
                if self._model is None:
                    self._model = open_model(self._tagger_spec, self.unit)
                return self._tag(self._model.tagger, text, hits)

        # The process's one tagging thread (``aau.fallbacks.crf``: memory stays in one arena).
        return _TAGGER.submit(work).result()

    def answer(self, text: str, tagged: _Tagged) -> PathAnswer:
        """The answer for a tagged text (``extract`` without the tagging)."""
        records = assemble(text, self._values(text, tagged.spans), self.spec.anchor,
                           max_records=self.max_records)  # fmt: skip
        used = [(s.start, s.end) for r in records for s in r.spans.values()]
        free = [not any(a <= start < b for a, b in used) for start in tagged.token_starts]
        anchor_label = self.spec.fields[self.spec.anchor].label
        missed = max(
            (p for p, is_free in zip(tagged.marginals.get(anchor_label, ()), free, strict=False)
             if is_free),
            default=0.0,
        )  # fmt: skip
        scores = [self._absent(text, tagged, record, free) * record.score for record in records]
        confidence = math.prod(scores) * (1.0 - missed)
        item_fields = list(self.item_properties) or list(self.spec.fields)
        items = [{name: record.values.get(name) for name in item_fields} for record in records]
        output: dict[str, Any] = dict.fromkeys(self.unit.output.get("properties", {}))
        output[self.spec.list_name] = items
        grounding = {
            f"{self.spec.list_name}[{index}].{name}": (span.start, span.end)
            for index, record in enumerate(records)
            for name, span in record.spans.items()
        }
        return PathAnswer(
            output=output,
            confidence=round(max(0.0, min(1.0, confidence * self.spec.confidence)), 4),
            spans=grounding,
            signals={
                "records": float(len(records)),
                "record_score_min": round(min(scores, default=1.0), 4),
                "record_score_mean": round(sum(scores) / len(scores), 4) if scores else 1.0,
                "record_missed_max": round(missed, 4),
            },
        )

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Tag ``text``, assemble its records and answer in the unit's schema.

        Raises:
            CrfModelMissing: no trained model or no training record.
            CrfModelStale: the examples or the tagger's settings changed since training.
            CrfModelCorrupt: the model file or its record is unreadable or altered.
        """
        hits = term_spans(context.extras.get("term_hits", ()))
        return self.answer(text, self._tagged(text, hits))

    def _absent(self, text: str, tagged: _Tagged, record: Record, free: Sequence[bool]) -> float:
        """The chance that the record's null fields are really absent from its row or sentence.

        One minus the highest marginal of the field's label at a free token in reach of the
        anchor: a trigger the tagger half saw makes a record without one less certain.
        """
        layout = _layout(text)
        anchor = record.spans[self.spec.anchor].start
        reach = [
            is_free and _level(layout, start, anchor) in (0, 1, 2)
            for start, is_free in zip(tagged.token_starts, free, strict=True)
        ]
        chance = 1.0
        for name, mapping in self.spec.fields.items():
            if name in record.spans:
                continue
            marginals = tagged.marginals.get(mapping.label, [])
            chance *= 1.0 - max((p for p, ok in zip(marginals, reach, strict=False) if ok),
                                default=0.0)  # fmt: skip
        return chance

    def gold_output(self, example: AnnotatedExample) -> dict[str, Any]:
        """The answer an annotated text's labelled spans make, assembled as predicted ones are."""
        starts = [token.start for token in tokenize(example.text)]
        spans = tuple(TaggedSpan(s.label, s.start, s.end, (1.0,)) for s in example.spans)
        none = {f.label: [0.0] * len(starts) for f in self.spec.fields.values()}
        return dict(self.answer(example.text, _Tagged(spans, none, starts)).output)

    def measure(self, model: bytes, held: Sequence[AnnotatedExample]) -> dict[str, float]:
        """Record-level scores of a trained model on annotated texts (``aau train``).

        The gold records are the labelled spans assembled as predicted ones are, so the figures
        measure the tagger through the assembly, not the assembly itself.
        """
        import pycrfsuite

        tagger = pycrfsuite.Tagger()
        tagger.open_inmemory(model)
        item = self.item_properties
        right = gold_total = predicted_total = exact = 0
        for example in held:
            tagged = self._tag(tagger, example.text, [])
            got = self.answer(example.text, tagged).output[self.spec.list_name]
            expected = self.gold_output(example)[self.spec.list_name]
            right += matched_records(expected, got, item)
            gold_total, predicted_total = gold_total + len(expected), predicted_total + len(got)
            exact += records_equal(expected, got, item)
        precision = right / predicted_total if predicted_total else 1.0
        recall = right / gold_total if gold_total else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "record_precision": round(precision, 4),
            "record_recall": round(recall, 4),
            "record_f1": round(f1, 4),
            "exact_output": round(exact / len(held), 4) if held else 0.0,
        }


# -- comparing records -------------------------------------------------------------------


_LEADING = frozenset(
    {"a", "an", "the", "for", "per", "each", "every", "any", "in", "case", "of", "on", "upon",
     "je", "pro", "für", "fur", "bei", "im", "fall", "falle", "jede", "jeden", "jeder", "jedes",
     "des", "der", "die", "das", "den", "dem", "par", "pour", "chaque", "en", "cas", "de", "du",
     "la", "le", "les", "d", "l"}
)  # fmt: skip
_PUNCTUATION = re.compile(r"[^\w\s]+")


def normalized_text(value: str) -> str:
    """A text as records compare it: NFKC, case-folded, punctuation and leading connectives off.

    "for each day of delay" and "Day of delay." compare equal: where a phrase starts is a matter
    of taste, not of what the record says.
    """
    words = _PUNCTUATION.sub(" ", unicodedata.normalize("NFKC", value).casefold()).split()
    while words and words[0] in _LEADING:
        words.pop(0)
    return " ".join(words)


def values_equal(expected: Any, got: Any, schema: Mapping[str, Any] | None = None) -> bool:
    """One field's values: numbers as floats (close), texts after ``normalized_text``."""
    del schema  # the values' own types decide; the schema is kept for richer comparers
    if expected is None or got is None:
        return expected is None and got is None
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(float(expected), float(got), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(got, str):
        return normalized_text(expected) == normalized_text(got)
    return bool(expected == got)


def _record_equal(expected: Any, got: Any, item_schema: Mapping[str, Any]) -> bool:
    if not isinstance(expected, Mapping) or not isinstance(got, Mapping):
        return False
    properties = item_schema.get("properties", {})
    names = set(expected) | set(got)
    return all(values_equal(expected.get(n), got.get(n), properties.get(n)) for n in names)


def matched_records(
    expected: Sequence[Any], got: Sequence[Any], item_schema: Mapping[str, Any]
) -> int:
    """How many records of ``got`` equal a distinct record of ``expected`` (order aside)."""
    free = list(expected)
    count = 0
    for record in got:
        for index, wanted in enumerate(free):
            if _record_equal(wanted, record, item_schema):
                del free[index]
                count += 1
                break
    return count


def records_equal(expected: Any, output: Any, item_schema: Mapping[str, Any]) -> bool:
    """Whether two lists of records say the same, in any order (see ``values_equal``)."""
    if not isinstance(expected, Sequence) or not isinstance(output, Sequence):
        return False
    if isinstance(expected, str) or isinstance(output, str) or len(expected) != len(output):
        return False
    return matched_records(expected, output, item_schema) == len(expected)
