"""The heuristic path: the values layer's finders, declared regex patterns and a context ranking.

It needs no model and no training, so it is the path that always answers: every value a finder
reads (``find: money`` — any currency in any locale's writing; ``date``; ``quantity``;
``number``, from ``aau.values``) and every match of every pattern becomes a candidate,
candidates near a context keyword (``total``, ``due``) rank higher, and the best one fills the
unit's schema. When nothing matches, the answer is the all-null object with a low confidence
("no value present" is a valid answer).

Patterns are Python regexes with Python's meaning, matched in linear time by RE2
(``aau.fallbacks.patterns``), so a unit file cannot hang a run with a backtracking pattern; the
few that need backtracking (lookaround, backreferences) run under ``LIMITS.regex_timeout_s`` per
text, a timeout failing the path with ``pattern_timeout``, and ``notes`` names them for
``aau validate``. Keywords match as whole words in one RE2 pass.

Confidence here is interim: a declared prior scaled by pattern strength and context, until the
calibrator replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aau import values
from aau.answers import PathAnswer, PathContext
from aau.errors import SpecError
from aau.fallbacks.fields import (
    FieldCodes,
    FieldUse,
    check_fields,
    check_tables,
    field_normalizers,
)
from aau.fallbacks.patterns import (
    KeywordSet,
    Pattern,
    PatternSyntaxError,
    compile_pattern,
    compile_patterns,
)
from aau.limits import LIMITS
from aau.spec.loader import LineMap, line_of, read_yaml_file
from aau.spec.model import FallbackSpec, Issue, UnitSpec

__all__ = [
    "FINDER_GROUPS",
    "FieldMapping",
    "HeuristicFallback",
    "HeuristicFinder",
    "HeuristicPath",
    "HeuristicPattern",
]

_CONTEXT_BONUS = 0.25

FINDER_GROUPS: dict[str, tuple[str, ...]] = {
    "money": ("amount", "currency", "money"),
    "date": ("date",),
    "quantity": ("value", "unit", "quantity"),
    "number": ("number",),
}
"""The groups each finder fills, as a pattern's named groups would: ``money`` fills ``amount``
(a number), ``currency`` (an ISO code, or the marker as written when nothing settles it) and
``money`` (the text as written)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FieldMapping(_Strict):
    """How a heuristic match fills one output field."""

    group: str | None = None
    """Named regex group whose text fills the field."""
    value: Any = None
    """A constant, used when ``group`` is absent or did not match."""
    normalize: str = "text"
    """Normalizer name: one of the unit's ``normalizers`` tables or a registered normalizer
    (``aau.fallbacks.normalize.NORMALIZERS``)."""


class HeuristicPattern(_Strict):
    """One regular expression that may find the answer."""

    regex: str
    """Python regex with named groups; matched case-insensitively, with Python's meaning, in
    linear time (RE2). Lookaround and backreferences run under a time limit per text."""
    strength: float = Field(0.7, ge=0, le=1)
    """How much a match of this pattern is trusted, before context."""


class HeuristicFinder(_Strict):
    """One of the values layer's finders (``aau.values``) as a source of candidates."""

    find: Literal["money", "date", "quantity", "number"]
    """What it finds: ``money`` (amounts with a currency marker, every ISO-4217 currency in
    every CLDR locale's writing), ``date`` (full dates in any locale's writing, read with the
    unit's ``locale.date_order``), ``quantity`` (a number and a unit of a pint registry, as a
    canonical symbol), ``number``. Its groups are ``FINDER_GROUPS[find]``; a field mapped to
    one takes the finder's value, a text value passed through the field's normalizer (a
    unit's table maps it)."""
    strength: float = Field(0.85, ge=0, le=1)
    """How much a value it finds is trusted, before context."""


class HeuristicFallback(FallbackSpec):
    """Finders, patterns, normalizers and a ranking: the last-resort path, no model needed."""

    kind: Literal["heuristic"]
    finders: list[HeuristicFinder] = []
    """The values layer's finders; their values are candidates like the patterns' matches."""
    patterns: list[HeuristicPattern] = []
    """Regexes for what no finder reads (a path needs at least one finder or pattern)."""
    fields: dict[str, FieldMapping]
    """Output field -> how a match fills it. Unmapped fields are null."""
    keywords: list[str] | dict[str, float] = []
    """Context words (``total``, ``due``…) that make a nearby match rank higher; as a mapping,
    each word's own bonus (``{total: 0.35, price: 0.1}``), else 0.25 each."""
    window: int = Field(48, ge=0, le=1000)
    """How many characters before a match are searched for keywords."""
    prefer: Literal["first", "last"] = "first"
    """Among equally ranked matches, the earliest or the latest in the text."""
    confidence: float = Field(0.55, ge=0, le=1)
    """Prior confidence of a matched answer (scaled by pattern strength and context)."""
    no_match_confidence: float = Field(0.35, ge=0, le=1)
    """Confidence of the all-null answer when nothing matches."""

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Load-time problems: patterns that do not compile, unknown fields, groups, normalizers.

        The fields' checks are every kind's (``aau.fallbacks.fields``), an enum value a
        field's normalizer can never produce among them.
        """
        if not self.patterns and not self.finders:
            yield ("patterns",), "a heuristic path needs at least one finder or pattern", "S044"
        groups: set[str] = {g for f in self.finders for g in FINDER_GROUPS[f.find]}
        all_compiled = True
        for p_index, pattern in enumerate(self.patterns):
            try:
                groups |= set(_compiled(pattern.regex).groupindex)
            except PatternSyntaxError as exc:
                all_compiled = False
                yield ("patterns", p_index, "regex"), f"invalid regex: {exc}", "S031"

        def group_problem(field: str) -> Iterator[Issue]:
            group = self.fields[field].group
            if group and all_compiled and group not in groups:
                yield ("fields", field, "group"), f"no pattern has a group named {group!r}", "S033"

        uses = {
            field: FieldUse(mapping.normalize, mapping.group is not None, mapping.value)
            for field, mapping in self.fields.items()
        }
        yield from check_fields(unit, uses, _FIELD_CODES, group_problem)

    def check_shared(self, unit: UnitSpec) -> Iterator[Issue]:
        """The unit's normalizer tables (S041, S042)."""
        return check_tables(unit)

    def notes(self, unit: UnitSpec) -> list[str]:
        """``aau validate`` notes: each pattern that needs backtracking, located in the file.

        Each is ``<file>:<line>: fallbacks[i].patterns[j].regex: needs backtracking (<why>); it
        runs under a <limit> s time limit`` (``<unit>`` and no line for a unit without a file).
        """
        slow = []
        for p_index, pattern in enumerate(self.patterns):
            try:
                reason = _compiled(pattern.regex).needs_backtracking
            except PatternSyntaxError:
                continue  # the load check refuses it (S031)
            if reason is not None:
                slow.append((p_index, reason))
        if not slow:
            return []
        index = next((i for i, f in enumerate(unit.fallbacks) if f is self), None)
        lines: LineMap = {}
        if unit.source is not None and index is not None:
            try:
                lines = read_yaml_file(unit.source)[1]
            except SpecError:  # the file changed or went away since loading: no line numbers
                lines = {}
        where = str(unit.source) if unit.source else "<unit>"
        prefix = "" if index is None else f"fallbacks[{index}]."
        notes = []
        for p_index, reason in slow:
            line = line_of(lines, ("fallbacks", index or 0, "patterns", p_index, "regex"))
            head = f"{where}:{line}" if line else where
            notes.append(
                f"{head}: {prefix}patterns[{p_index}].regex: needs backtracking ({reason}); "
                f"it runs under a {LIMITS.regex_timeout_s} s time limit"
            )
        return notes

    def build(self, unit: UnitSpec) -> HeuristicPath:
        """The live path: patterns compiled once."""
        return HeuristicPath(self, unit)


_FIELD_CODES = FieldCodes(not_in_schema="S032", unknown_normalizer="S034")


@lru_cache(maxsize=512)
def _compiled(source: str) -> Pattern:
    """A pattern compiled once (the load check and the notes share it)."""
    return compile_pattern(source)


@dataclass(frozen=True, slots=True)
class _Candidate:
    output: dict[str, Any]
    spans: dict[str, tuple[int, int]]
    strength: float
    context: float
    start: int

    @property
    def score(self) -> float:
        return self.strength + self.context


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    groups: dict[str, Any]

    def span(self, group: str) -> tuple[int, int]:
        """Where a group's value stands: a finder's groups all come from its whole span."""
        return self.start, self.end


@dataclass(slots=True)
class _OneText:
    """One text being read, and what its candidates have computed so far.

    A long text repeats the same few values and the same keyword windows thousands of times
    (a price list, a megabyte of sentences): each field's normalizer meets each distinct raw
    text once, and each distinct window is searched for keywords once.
    """

    text: str
    keyword_bytes: bytes | None
    normalized: dict[tuple[str, str], Any]
    contexts: dict[str, float]


class HeuristicPath:
    """Live heuristic path of one unit (patterns compiled once)."""

    name = "heuristic"

    def __init__(self, spec: HeuristicFallback, unit: UnitSpec) -> None:
        self.spec = spec
        self.fields = list(unit.output.get("properties", {}))
        self._normalizers = field_normalizers(spec.fields, unit)  # the unit's tables first
        compiled = _compiled_together(tuple(p.regex for p in spec.patterns))
        self._patterns = list(zip(compiled, (p.strength for p in spec.patterns), strict=True))
        weights = (
            spec.keywords
            if isinstance(spec.keywords, dict)
            else dict.fromkeys(spec.keywords, _CONTEXT_BONUS)
        )
        self._keywords = _keyword_set(tuple(weights))
        self._bonuses = list(weights.values())
        self._date_order = unit.locale.date_order

    def _found(self, finder: HeuristicFinder, text: str) -> Iterator[_Found]:
        """What one finder reads in ``text``: a span and its groups' values."""
        if finder.find == "money":
            for money in values.find_money(text):
                groups = {"amount": money.amount, "currency": money.currency, "money": money.text}
                yield _Found(money.start, money.end, groups)
        elif finder.find == "date":
            for date in values.find_dates(text, order=self._date_order):
                yield _Found(date.start, date.end, {"date": date.value})
        elif finder.find == "quantity":
            for quantity in values.find_quantities(text):
                groups = {"value": quantity.value, "unit": quantity.unit, "quantity": quantity.text}
                yield _Found(quantity.start, quantity.end, groups)
        else:
            for number in values.find_numbers(text):
                yield _Found(number.start, number.end, {"number": number.value})

    def _context(self, one: _OneText, start: int) -> float:
        """The bonus of the strongest keyword in the window before ``start``."""
        if not self._bonuses:
            return 0.0
        lo, hi = max(0, start - self.spec.window), start
        window = one.text[lo:hi]
        bonus = one.contexts.get(window)
        if bonus is None:
            # The encoding is one byte per character, so the window's bytes are the same slice.
            data = one.keyword_bytes[lo:hi] if one.keyword_bytes is not None else None
            hits = self._keywords.found(window, data)
            bonus = one.contexts[window] = max((self._bonuses[i] for i in hits), default=0.0)
        return bonus

    def _candidate(
        self,
        groups: Mapping[str, Any],
        span_of: Callable[[str], tuple[int, int]],
        strength: float,
        start: int,
        one: _OneText,
    ) -> _Candidate | None:
        """The answer one match or one finder's value makes; None if no field came from it.

        Text meets the field's normalizer; a finder's number is read already, and a finder's
        text still meets it, so a unit's table maps it ("h" -> "hours").
        """
        output: dict[str, Any] = dict.fromkeys(self.fields)
        spans: dict[str, tuple[int, int]] = {}
        for field, mapping in self.spec.fields.items():
            raw = groups.get(mapping.group) if mapping.group else None
            if raw is None or mapping.group is None:
                output[field] = mapping.value
                continue
            if isinstance(raw, str):
                key = (field, raw)
                if key not in one.normalized:
                    one.normalized[key] = self._normalizers[field](raw)
                output[field] = one.normalized[key]
            else:
                output[field] = raw
            if output[field] is not None:
                spans[field] = span_of(mapping.group)
        if not spans:  # nothing normalizable came from the text itself
            return None
        context = self._context(one, start)
        return _Candidate(output, spans, strength, context, start)

    def _candidates(self, text: str) -> list[_Candidate]:
        """Every normalizable finder value and pattern match, with its context bonus.

        Raises:
            PatternTimeout: a pattern that needs backtracking ran past its time limit.
        """
        keyword_bytes = self._keywords.encode(text) if self._bonuses else None
        one = _OneText(text, keyword_bytes, normalized={}, contexts={})
        found: list[_Candidate | None] = []
        for finder in self.spec.finders:
            for hit in self._found(finder, text):
                found.append(self._candidate(hit.groups, hit.span, finder.strength, hit.start,
                                             one))  # fmt: skip
        for pattern, strength in self._patterns:
            for match in pattern.finditer(text):
                found.append(self._candidate(match.groupdict(), match.span, strength,
                                             match.start(), one))  # fmt: skip
        return [candidate for candidate in found if candidate is not None]

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Best-ranked candidate, or the all-null answer when none matched.

        Raises:
            PatternTimeout: a pattern that needs backtracking ran past its time limit.
        """
        candidates = self._candidates(text)
        if not candidates:
            return PathAnswer(
                output=dict.fromkeys(self.fields),
                confidence=self.spec.no_match_confidence,
                signals={"rule_strength": 0.0, "competing_matches": 0.0, "has_context": 0.0},
            )
        sign = 1 if self.spec.prefer == "first" else -1
        best = min(
            candidates,
            key=lambda c: (-c.score, sign * c.start),
        )
        distinct = {tuple(sorted((k, str(v)) for k, v in c.output.items())) for c in candidates}
        competing = len(distinct) - 1
        confidence = self.spec.confidence * (0.5 + 0.5 * best.strength)
        confidence += 0.15 * (best.context > 0) - 0.05 * min(competing, 3)
        if any(v is None for f, v in best.output.items() if f in self.spec.fields):
            confidence *= 0.8  # a partial answer
        return PathAnswer(
            output=best.output,
            confidence=round(max(0.0, min(1.0, confidence)), 4),
            spans=best.spans,
            signals={
                "rule_strength": best.strength,
                "competing_matches": float(competing),
                "has_context": float(best.context > 0),
            },
        )


@lru_cache(maxsize=256)
def _compiled_together(sources: tuple[str, ...]) -> list[Pattern]:
    """One path's patterns, compiled to translate each text once for all of them."""
    return compile_patterns(sources)


@lru_cache(maxsize=256)
def _keyword_set(words: tuple[str, ...]) -> KeywordSet:
    return KeywordSet(words)
