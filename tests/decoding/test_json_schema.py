"""The decoder's keyword allow-list, kept honest against xgrammar, and schema bounding.

For every keyword in ``ENFORCED_KEYWORDS`` there is a case: a schema using it, a JSON text that
satisfies it and one that violates it. xgrammar's grammar for the schema (compiled as the engine
compiles it: compact separators, no free whitespace) must accept the first and reject the
second, and jsonschema must agree, so the case is about the keyword and not a typo.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
import xgrammar
from xgrammar.testing import _is_grammar_accept_string

from aau.decoding.json_schema import (
    ANNOTATION_KEYWORDS,
    ENFORCED_KEYWORDS,
    bound_schema,
    unsupported_keywords,
)
from aau.errors import SpecError
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML, PROMPTED_UNIT_FILES, UNIT_FILES

INT_ITEMS = {"type": "array", "items": {"type": "integer"}}
OBJECT_A = {"type": "object", "properties": {"a": {"type": "integer"}}}

# keyword -> (schema, valid JSON text, violating JSON text)
KEYWORD_CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    "type": ({"type": "integer"}, "5", '"5"'),
    "properties": (OBJECT_A, '{"a":1}', '{"a":"1"}'),
    "required": ({**OBJECT_A, "required": ["a"]}, '{"a":1}', "{}"),
    "additionalProperties": (
        {**OBJECT_A, "additionalProperties": {"type": "integer"}},
        '{"a":1,"b":2}',
        '{"a":1,"b":"2"}',
    ),
    "items": (INT_ITEMS, "[1,2]", '[1,"2"]'),
    "minItems": ({**INT_ITEMS, "minItems": 2}, "[1,2]", "[1]"),
    "maxItems": ({**INT_ITEMS, "maxItems": 1}, "[1]", "[1,2]"),
    "enum": ({"enum": ["EUR", "USD", None]}, '"USD"', '"GBP"'),
    "const": ({"const": "EUR"}, '"EUR"', '"USD"'),
    "anyOf": ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "null", '"1"'),
    "oneOf": ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, '"1"', "null"),
    "minLength": ({"type": "string", "minLength": 2}, '"ab"', '"a"'),
    "maxLength": ({"type": "string", "maxLength": 2}, '"ab"', '"abc"'),
    "pattern": ({"type": "string", "pattern": "^[A-Z]{3}$"}, '"EUR"', '"eur"'),
    "format": ({"type": "string", "format": "date"}, '"2024-03-14"', '"2024-13-45"'),
    "minimum": ({"type": "number", "minimum": 0.5}, "0.5", "0.4"),
    "maximum": ({"type": "number", "maximum": 2.5}, "2.5", "2.6"),
    "exclusiveMinimum": ({"type": "number", "exclusiveMinimum": 0}, "0.1", "0"),
    "exclusiveMaximum": ({"type": "integer", "exclusiveMaximum": 10}, "9", "10"),
    "multipleOf": ({"type": "integer", "multipleOf": 3}, "6", "4"),
}


def xgrammar_accepts(schema: dict[str, Any], text: str) -> bool:
    grammar = xgrammar.Grammar.from_json_schema(
        json.dumps(schema), any_whitespace=False, separators=(",", ":")
    )
    return bool(_is_grammar_accept_string(grammar, text))


def jsonschema_accepts(schema: dict[str, Any], text: str) -> bool:
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return validator.is_valid(json.loads(text))


# -- the allow-list -------------------------------------------------------------------------------


def test_every_enforced_keyword_has_a_case() -> None:
    assert set(KEYWORD_CASES) == ENFORCED_KEYWORDS, (
        "add a (schema, valid, violating) case for each keyword added to ENFORCED_KEYWORDS"
    )


def test_annotation_keywords_carry_no_constraint() -> None:
    assert ANNOTATION_KEYWORDS == {"title", "description", "default", "examples", "$comment"}
    assert not ANNOTATION_KEYWORDS & ENFORCED_KEYWORDS


@pytest.mark.parametrize("keyword", sorted(KEYWORD_CASES))
def test_xgrammar_enforces_each_allowed_keyword(keyword: str) -> None:
    schema, valid, violating = KEYWORD_CASES[keyword]
    assert keyword in schema or keyword in json.dumps(schema)

    assert jsonschema_accepts(schema, valid), "the case's valid text must be valid"
    assert not jsonschema_accepts(schema, violating), "the case's violating text must violate"
    assert xgrammar_accepts(schema, valid)
    assert not xgrammar_accepts(schema, violating), f"xgrammar does not enforce {keyword!r}"


def test_xgrammar_emits_compact_json_only() -> None:
    schema = {**OBJECT_A, "required": ["a"]}

    assert xgrammar_accepts(schema, '{"a":1}')
    assert not xgrammar_accepts(schema, '{"a": 1}')
    assert not xgrammar_accepts(schema, '{\n"a":1}')


# Forms of allowed keywords whose constraint xgrammar drops (it logs a warning and goes on):
# the schema, and a JSON text that violates it but that the grammar accepts.
DROPPED_FORMS: dict[str, tuple[dict[str, Any], str]] = {
    "multipleOf-on-number": ({"type": "number", "multipleOf": 0.5}, "1.2"),
    "oneOf-overlapping": ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "5"),
    "maxLength-beside-pattern": (
        {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        '"abcd"',
    ),
    "format-regex": ({"type": "string", "format": "regex"}, '"("'),
}


@pytest.mark.parametrize("form", sorted(DROPPED_FORMS))
def test_xgrammar_drops_these_forms_of_allowed_keywords(form: str) -> None:
    schema, violating = DROPPED_FORMS[form]

    assert not jsonschema_accepts(schema, violating)
    assert xgrammar_accepts(schema, violating), f"xgrammar now enforces {form}; update the list"


@pytest.mark.parametrize("form", sorted(DROPPED_FORMS))
def test_unit_using_a_form_xgrammar_drops_is_refused_at_load(form: str) -> None:
    data = UnitSpec.from_text(FIND_TOTAL_YAML).model_dump()
    data["output"]["properties"]["extra"] = DROPPED_FORMS[form][0]
    data["prompt"]["examples"] = []

    with pytest.raises(SpecError, match=r"\[S013\]"):
        UnitSpec.from_dict(data)


# -- unsupported_keywords -------------------------------------------------------------------------


def test_schema_of_enforced_and_annotation_keywords_has_no_unsupported_keyword() -> None:
    properties = {f"p{i}": case[0] for i, case in enumerate(KEYWORD_CASES.values())}
    schema = {"type": "object", "title": "Everything allowed", "properties": properties}

    assert list(unsupported_keywords(schema)) == []


@pytest.mark.parametrize("unit_file", UNIT_FILES, ids=lambda p: p.stem)
def test_shipped_unit_schemas_use_only_enforced_keywords(unit_file: Any) -> None:
    assert list(unsupported_keywords(UnitSpec.from_file(unit_file).output)) == []


@pytest.mark.parametrize(
    "keyword",
    ["uniqueItems", "not", "if", "allOf", "$ref", "$defs", "patternProperties", "propertyNames",
     "minProperties", "contains", "prefixItems", "dependentRequired", "unevaluatedProperties"],
)  # fmt: skip
def test_unsupported_keyword_is_reported_at_its_json_path(keyword: str) -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", keyword: {}}}}

    assert list(unsupported_keywords(schema)) == [("$.tags", keyword)]


def test_unsupported_keywords_are_found_in_every_nested_position() -> None:
    schema = {
        "type": "object",
        "not": {},
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "uniqueItems": True}},
            "amount": {"anyOf": [{"type": "number", "minimum": 2, "if": {}}, {"type": "null"}]},
            "kind": {"oneOf": [{"type": "string"}, {"type": "integer", "else": {}}]},
        },
        "additionalProperties": {"type": "string", "contentEncoding": "base64"},
    }

    assert sorted(unsupported_keywords(schema)) == [
        ("$", "not"),
        ("$.*", "contentEncoding"),
        ("$.amount.anyOf[0]", "if"),
        ("$.kind.oneOf[1]", "else"),
        ("$.tags[]", "uniqueItems"),
    ]


def test_unsupported_keywords_of_a_non_schema_is_empty() -> None:
    assert list(unsupported_keywords(True)) == []
    assert list(unsupported_keywords(None)) == []


# -- bound_schema ---------------------------------------------------------------------------------


def test_bound_schema_gives_strings_without_limit_the_default_max_length() -> None:
    properties = {"s": {"type": "string"}, "n": {"type": ["string", "null"]}}
    bounded = bound_schema({"type": "object", "properties": properties}, max_string_length=12)

    assert bounded["properties"]["s"]["maxLength"] == 12
    assert bounded["properties"]["n"]["maxLength"] == 12


@pytest.mark.parametrize("own", [3, 500])
def test_bound_schema_keeps_the_units_own_max_length(own: int) -> None:
    bounded = bound_schema({"type": "string", "maxLength": own}, max_string_length=12)

    assert bounded["maxLength"] == own


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^[A-Z]{3}$"},
        {"type": "string", "enum": ["EUR", "USD"]},
        {"type": "string", "const": "EUR"},
    ],
    ids=["pattern", "enum", "const"],
)
def test_bound_schema_leaves_self_bounded_strings_alone(schema: dict[str, Any]) -> None:
    assert bound_schema(schema, max_string_length=12) == schema


@pytest.mark.parametrize("kind", ["number", "integer", ["number", "null"]])
def test_bound_schema_bounds_numbers_without_limits(kind: Any) -> None:
    bounded = bound_schema({"type": kind}, max_string_length=12)

    assert bounded["minimum"] == -1e15
    assert bounded["maximum"] == 1e15


def test_bound_schema_never_loosens_a_units_own_number_limits() -> None:
    bounded = bound_schema(
        {"type": "number", "minimum": 0, "maximum": 1e18, "exclusiveMaximum": 100},
        max_string_length=12,
    )

    assert (bounded["minimum"], bounded["maximum"]) == (0, 1e18)
    assert bounded["exclusiveMaximum"] == 100


def test_bound_schema_closes_objects_unless_the_unit_says_otherwise() -> None:
    schema = {
        "type": "object",
        "properties": {
            "inner": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "open": {
                "type": "object",
                "properties": {"y": {"type": "integer"}},
                "additionalProperties": {"type": "integer"},
            },
        },
    }
    bounded = bound_schema(schema, max_string_length=12)

    assert bounded["additionalProperties"] is False
    assert bounded["properties"]["inner"]["additionalProperties"] is False
    assert bounded["properties"]["open"]["additionalProperties"] == {"type": "integer"}


def test_bound_schema_reaches_items_and_union_branches() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "value": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "either": {"oneOf": [{"type": "number"}, {"type": "null"}]},
        },
    }
    bounded = bound_schema(schema, max_string_length=7)

    assert bounded["properties"]["tags"]["items"]["maxLength"] == 7
    assert bounded["properties"]["value"]["anyOf"][0]["maxLength"] == 7
    assert bounded["properties"]["value"]["anyOf"][1]["maximum"] == 1e15
    assert bounded["properties"]["either"]["oneOf"][0]["minimum"] == -1e15


def test_bound_schema_does_not_change_its_input() -> None:
    schema = UnitSpec.from_text(FIND_TOTAL_YAML).output
    before = copy.deepcopy(schema)

    bound_schema(schema, max_string_length=5)

    assert schema == before


@pytest.mark.parametrize("unit_file", PROMPTED_UNIT_FILES, ids=lambda p: p.stem)
def test_bounded_unit_schema_still_admits_the_units_examples(unit_file: Any) -> None:
    spec = UnitSpec.from_file(unit_file)
    bounded = bound_schema(spec.output, max_string_length=spec.policy.max_string_length)

    assert list(unsupported_keywords(bounded)) == []
    assert spec.prompt is not None
    for example in spec.prompt.examples:
        jsonschema.validate(example.output, bounded)
        assert xgrammar_accepts(bounded, json.dumps(example.output, separators=(",", ":")))


def test_bounded_schema_makes_xgrammar_stop_long_strings_and_huge_numbers() -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "number"}},
        "required": ["s", "n"],
    }
    bounded = bound_schema(schema, max_string_length=4)

    assert xgrammar_accepts(schema, '{"s":"abcdefgh","n":1}')
    assert not xgrammar_accepts(bounded, '{"s":"abcdefgh","n":1}')
    assert xgrammar_accepts(bounded, '{"s":"abcd","n":1}')
    assert not xgrammar_accepts(bounded, '{"s":"abcd","n":12345678901234567890}')
