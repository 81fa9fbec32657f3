"""The keyword-rules path: declared word rules that name a class answer, and a default.

A unit declares it in its ``fallbacks`` (``kind: keyword_rules``)::

    rules:
      - {any: [refund, overcharged], none: [thanks], output: {is_complaint: true,
         topic: billing}, strength: 0.7}
    default: {output: {is_complaint: false, topic: none}, strength: 0.35}

A rule matches a text when one of its ``any`` words occurs (or it has none), all of its ``all``
words do and none of its ``none`` words does. Words match whole and case-insensitively, all of
them in one linear-time pass (``aau.fallbacks.patterns.KeywordSet``, RE2), so no unit file can
slow a run down with its words.

The answer starts from ``default.output`` and each matched rule sets the fields it names: a
one-value field takes the value of its strongest rule (the earlier on a tie), an array field the
union of every matched rule's labels. Each field is as sure as the rule that set it, half that
when a matched rule said otherwise, and the default's ``strength`` when no rule set it: the
default is a claim too, made on no evidence, so its strength should be low. The answer's
confidence is its least sure field. Rules and the default are checked against the output schema
at load (S074), their words too (S075).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from aau.answers import PathAnswer, PathContext
from aau.fallbacks.patterns import KeywordSet
from aau.spec.classify import class_fields
from aau.spec.model import FallbackSpec, Issue, UnitSpec

__all__ = [
    "BAD_RULE_OUTPUT",
    "BAD_RULE_WORDS",
    "KeywordDefault",
    "KeywordRule",
    "KeywordRulesFallback",
    "KeywordRulesPath",
]

BAD_RULE_OUTPUT = "S074"
"""A rule's or the default's output that the output schema refuses."""
BAD_RULE_WORDS = "S075"
"""A rule without words to match, or a word that can never match whole."""
_MAX_WORDS = 10_000
_WORD = re.compile(r"\w")

_Word = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class KeywordRule(_Strict):
    """Words that, found in a text, give some fields of the answer."""

    any: list[_Word] = Field([], max_length=1000)
    """At least one of these occurs (no words: no such condition)."""
    all: list[_Word] = Field([], max_length=50)
    """Every one of these occurs."""
    none: list[_Word] = Field([], max_length=1000)
    """None of these occurs."""
    output: dict[str, Any] = Field(min_length=1, max_length=64)
    """The fields it sets, with their values."""
    strength: float = Field(0.7, gt=0, le=1)
    """How sure an answer this rule gives is."""


class KeywordDefault(_Strict):
    """The answer when no rule sets a field."""

    output: dict[str, Any]
    """Every output field's value."""
    strength: float = Field(0.3, ge=0, le=1)
    """How sure a field left at its default is (low: nothing in the text said so)."""


class KeywordRulesFallback(FallbackSpec):
    """Declared keyword rules answering a classification, and a default answer."""

    kind: Literal["keyword_rules"]
    rules: list[KeywordRule] = Field(min_length=1, max_length=1000)
    default: KeywordDefault

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Each rule's words and output, and the default, against the output schema."""
        properties = unit.output.get("properties", {})
        total = 0
        for index, rule in enumerate(self.rules):
            loc: tuple[str | int, ...] = ("rules", index)
            if not rule.any and not rule.all:
                yield loc, "a rule needs words to match (any or all)", BAD_RULE_WORDS
            for key in ("any", "all", "none"):
                words = getattr(rule, key)
                total += len(words)
                for number, word in enumerate(words):
                    if not _WORD.search(word):
                        yield ((*loc, key, number), f"{word!r} has no letter or digit, so it never "
                               "matches as a whole word", BAD_RULE_WORDS)  # fmt: skip
            for field, value in rule.output.items():
                problem = _value_problem(properties, field, value)
                if problem is not None:
                    yield (*loc, "output", field), problem, BAD_RULE_OUTPUT
        if total > _MAX_WORDS:
            yield ("rules",), f"{total} words in all; at most {_MAX_WORDS}", BAD_RULE_WORDS
        missing = [name for name in properties if name not in self.default.output]
        if missing:
            yield (("default", "output"), f"the default gives every field; it lacks "
                   f"{', '.join(missing)}", BAD_RULE_OUTPUT)  # fmt: skip
        for field, value in self.default.output.items():
            problem = _value_problem(properties, field, value)
            if problem is not None:
                yield ("default", "output", field), problem, BAD_RULE_OUTPUT

    def check_shared(self, unit: UnitSpec) -> Iterator[Issue]:
        """On a unit of another kind than classify, an output field that is no class (S070)."""
        if unit.kind != "classify":
            yield from class_fields(unit.output)[1]

    def build(self, unit: UnitSpec) -> KeywordRulesPath:
        """The live path (its words compiled once)."""
        return KeywordRulesPath(self, unit)


def _value_problem(properties: Mapping[str, Any], field: str, value: Any) -> str | None:
    if field not in properties:
        return f"{field!r} is not in the output schema. Available: {', '.join(properties)}"
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(properties[field]).iter_errors(value)
    )
    return None if error is None else f"{value!r} is no valid {field!r}: {error.message}"


@dataclass(frozen=True, slots=True)
class _Compiled:
    any: tuple[int, ...]
    all: tuple[int, ...]
    none: tuple[int, ...]


class KeywordRulesPath:
    """Live keyword-rules path of one unit."""

    name = "keyword_rules"

    def __init__(self, spec: KeywordRulesFallback, unit: UnitSpec) -> None:
        """Collect every rule's words into one keyword set."""
        self.spec = spec
        properties = unit.output.get("properties", {})
        self._labels = {n: f.values for n, f in class_fields(unit.output)[0].items()
                        if f.kind == "labels"}  # fmt: skip
        self.properties = list(properties)
        index: dict[str, int] = {}
        self._rules = [
            _Compiled(
                *(
                    tuple(index.setdefault(w.casefold(), len(index)) for w in words)
                    for words in (rule.any, rule.all, rule.none)
                )
            )  # fmt: skip
            for rule in spec.rules
        ]
        self._keywords = KeywordSet(list(index))
        self._finders = {w: re.compile(rf"\b{re.escape(w)}\b", re.IGNORECASE) for w in index}

    def _matched(self, present: set[int]) -> list[int]:
        return [
            number
            for number, rule in enumerate(self._rules)
            if (not rule.any or any(w in present for w in rule.any))
            and all(w in present for w in rule.all)
            and not any(w in present for w in rule.none)
        ]

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Apply the matched rules over the default answer."""
        present = set(self._keywords.found(text, self._keywords.encode(text)))
        found = {self._keywords.words[i] for i in present}
        matched = self._matched(present)
        output: dict[str, Any] = dict.fromkeys(self.properties)
        output.update(self.spec.default.output)
        sureness = dict.fromkeys(self.properties, self.spec.default.strength)
        spans: dict[str, tuple[int, int]] = {}
        conflicts = 0
        for field in self.properties:
            setters = [n for n in matched if field in self.spec.rules[n].output]
            if not setters:
                continue
            rules = [self.spec.rules[n] for n in setters]
            if field in self._labels:
                chosen = {v for rule in rules for v in rule.output[field]}
                output[field] = [v for v in self._labels[field] if v in chosen]
                sureness[field] = min(rule.strength for rule in rules)
                first = setters[0]
            else:
                first = max(setters, key=lambda n: (self.spec.rules[n].strength, -n))
                winner = self.spec.rules[first]
                output[field] = winner.output[field]
                rivals = [r for r in rules if _key(r.output[field]) != _key(winner.output[field])]
                conflicts += bool(rivals)
                sureness[field] = winner.strength / 2 if rivals else winner.strength
            span = self._span(text, self.spec.rules[first], found)
            if span is not None:
                spans[field] = span
        confidence = min(sureness.values(), default=self.spec.default.strength)
        return PathAnswer(
            output=output,
            confidence=round(confidence, 4),
            spans=spans,
            signals={
                "rule_strength": round(confidence, 4),
                "rules_matched": float(len(matched)),
                "rule_conflicts": float(conflicts),
                "rule_default": float(not matched),
            },
        )

    def _span(self, text: str, rule: KeywordRule, present: set[str]) -> tuple[int, int] | None:
        """Where the rule's first present word first occurs (its evidence), if found.

        Only words the keyword set found are searched: each search may read the whole text.
        """
        for word in (*rule.any, *rule.all):
            if word.casefold() not in present:
                continue
            found = self._finders[word.casefold()].search(text)
            if found is not None:
                return found.span()
        return None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
