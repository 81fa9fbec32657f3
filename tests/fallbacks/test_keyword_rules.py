"""The keyword-rules path: whole-word rules over a default answer, checked against the schema."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from aau.answers import PathContext
from aau.errors import SpecError
from aau.fallbacks.keyword_rules import KeywordRulesFallback
from aau.spec.model import UnitSpec

UNITS = Path(__file__).resolve().parents[2] / "units"

OUTPUT = {
    "type": "object",
    "properties": {
        "is_complaint": {"type": "boolean"},
        "topic": {"type": "string", "enum": ["billing", "delivery", "none"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["urgent", "legal"]}},
    },
    "required": ["is_complaint", "topic", "tags"],
    "additionalProperties": False,
}
RULES: list[dict[str, Any]] = [
    {"any": ["refund", "charged twice"], "none": ["processed"],
     "output": {"is_complaint": True, "topic": "billing"}, "strength": 0.8},
    {"any": ["parcel", "courier"], "all": ["late"],
     "output": {"is_complaint": True, "topic": "delivery"}, "strength": 0.6},
    {"any": ["asap", "urgent"], "output": {"tags": ["urgent"]}, "strength": 0.9},
    {"any": ["lawyer"], "output": {"tags": ["legal"]}, "strength": 0.7},
]  # fmt: skip
DEFAULT = {"output": {"is_complaint": False, "topic": "none", "tags": []}, "strength": 0.3}


def unit_of(rules: list[dict[str, Any]] | None = None, default: Any = None,
            kind: str = "classify", output: Any = None) -> UnitSpec:  # fmt: skip
    return UnitSpec.from_dict({
        "name": "detect", "version": 1, "kind": kind, "description": "Complaints.",
        "output": output or OUTPUT,
        "prompt": {"system": "Classify.", "template": "{{ text }}"},
        "fallbacks": [{"kind": "keyword_rules", "rules": RULES if rules is None else rules,
                       "default": default or DEFAULT}],
    })  # fmt: skip


def run(text: str, unit: UnitSpec | None = None) -> Any:
    unit = unit or unit_of()
    spec = next(f for f in unit.fallbacks if isinstance(f, KeywordRulesFallback))
    return spec.build(unit).extract(text, PathContext(unit.name, unit.output))


def test_a_rule_sets_its_fields_over_the_default() -> None:
    result = run("I want a REFUND for this order.")
    assert result.output == {"is_complaint": True, "topic": "billing", "tags": []}
    # the fields it set are as sure as it; the one left at the default, as the default
    assert result.confidence == 0.3
    assert result.signals["rules_matched"] == 1
    assert result.signals["rule_default"] == 0
    start, end = result.spans["topic"]
    assert "I want a REFUND for this order."[start:end] == "REFUND"


def test_a_complete_rule_answers_with_its_strength() -> None:
    rules = [{"any": ["refund"], "output": DEFAULT["output"] | {"is_complaint": True,
                                                                "topic": "billing"},
              "strength": 0.8}]  # fmt: skip
    assert run("refund please", unit_of(rules)).confidence == 0.8


def test_no_match_is_the_default_with_its_low_strength() -> None:
    result = run("Thanks for the lovely flowers.")
    assert result.output == DEFAULT["output"]
    assert result.confidence == 0.3
    assert result.signals["rule_default"] == 1.0
    assert result.spans == {}


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("refunds are listed on page 2", "none"),  # whole words only
        ("Your refund has been processed.", "none"),  # a none word vetoes
        ("I was Charged Twice", "billing"),  # phrases, any case
        ("the parcel is late", "delivery"),  # any and all
        ("the parcel arrived", "none"),  # all missing
    ],
)
def test_any_all_none_whole_words(text: str, topic: str) -> None:
    assert run(text).output["topic"] == topic


def test_array_fields_take_every_matched_rules_labels() -> None:
    result = run("My lawyer says: refund ASAP")
    assert result.output["tags"] == ["urgent", "legal"]  # schema order
    assert result.output["topic"] == "billing"
    assert result.confidence == 0.7  # the least sure field


def test_a_rival_value_halves_the_winners_strength() -> None:
    result = run("refund for the late parcel", unit_of(rules=[*RULES[:2]],
                 default={"output": DEFAULT["output"], "strength": 0.9}))  # fmt: skip
    assert result.output["topic"] == "billing"  # the stronger rule
    assert result.confidence == 0.4
    assert result.signals["rule_conflicts"] == 1


@pytest.mark.parametrize(
    ("rules", "default", "check", "words"),
    [
        ([{"any": ["x"], "output": {"topic": "shipping"}}], None, "S074", "no valid 'topic'"),
        ([{"any": ["x"], "output": {"colour": "red"}}], None, "S074", "not in the output schema"),
        ([{"any": ["x"], "output": {"tags": "urgent"}}], None, "S074", "no valid 'tags'"),
        (None, {"output": {"is_complaint": False}}, "S074", "lacks topic, tags"),
        (None, {"output": DEFAULT["output"] | {"is_complaint": "no"}}, "S074", "no valid"),
        ([{"none": ["x"], "output": {"topic": "none"}}], None, "S075", "needs words"),
        ([{"any": ["!!"], "output": {"topic": "none"}}], None, "S075", "no letter or digit"),
    ],
)
def test_load_checks(rules: Any, default: Any, check: str, words: str) -> None:
    with pytest.raises(SpecError, match=words) as caught:
        unit_of(rules, default)
    assert caught.value.check == check


def test_an_extract_unit_with_free_text_fields_is_refused() -> None:
    output = json.loads(json.dumps(OUTPUT))
    output["properties"]["note"] = {"type": "string"}
    default = {"output": DEFAULT["output"] | {"note": "x"}}
    with pytest.raises(SpecError, match="no boolean, string enum") as caught:
        unit_of(default=default, kind="extract", output=output)
    assert caught.value.check == "S070"


def test_a_long_text_with_many_words_is_matched_in_one_pass() -> None:
    words = [f"word{i}" for i in range(1000)]
    rules = [{"any": words, "output": {"topic": "billing"}}]
    text = ("lorem ipsum dolor " * 50_000) + " word999"
    started = time.perf_counter()
    result = run(text, unit_of(rules))
    assert result.output["topic"] == "billing"
    assert time.perf_counter() - started < 20  # linear: about a second; backtracking: never


def test_the_shipped_unit_rules() -> None:
    unit = UnitSpec.from_file(UNITS / "detect_complaint.yaml")
    assert run("I was charged twice, please refund me.", unit).output == {
        "is_complaint": True,
        "topic": "billing",
    }
    result = run("See you at the meeting tomorrow.", unit)
    assert result.output == {"is_complaint": False, "topic": "none"}
    assert result.signals["rule_default"] == 1.0
    assert result.confidence < 0.5
