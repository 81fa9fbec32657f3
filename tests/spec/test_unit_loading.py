"""Loading unit YAML: a good unit loads from text, dict or file; a bad one names file, line, field.

Every bad input is written to a real file (named after the unit, so the stem check passes) and
loaded with ``UnitSpec.from_file``; the expected line is found in the test's own text, so the
loader's line map is checked against an independent count.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aau.errors import SpecError
from aau.fallbacks.heuristic import HeuristicFallback
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML


def write_unit(folder: Path, text: str | bytes, name: str = "find_total") -> Path:
    path = folder / f"{name}.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str, start: int = 1) -> int:
    """1-based number of the first line at or after ``start`` that contains ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the test text")


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} must occur once in the test unit"
    return text.replace(old, new)


def load_error(tmp_path: Path, text: str | bytes, name: str = "find_total") -> SpecError:
    path = write_unit(tmp_path, text, name)
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(path)
    return caught.value


# -- good units -----------------------------------------------------------------------------------


def test_loading_valid_unit_from_text_dict_and_file_gives_the_same_unit(tmp_path: Path) -> None:
    from_text = UnitSpec.from_text(FIND_TOTAL_YAML)
    data, _ = read_yaml(FIND_TOTAL_YAML)
    from_dict = UnitSpec.from_dict(data)
    path = write_unit(tmp_path, FIND_TOTAL_YAML)
    from_file = UnitSpec.from_file(path)

    assert from_text == from_dict
    assert from_file.model_dump() == from_text.model_dump()  # ``source`` is excluded
    assert from_file.source == path.resolve()
    assert from_file.base_dir == tmp_path.resolve()
    assert from_text.source is None


def test_loaded_unit_has_typed_fields_and_version_as_text() -> None:
    spec = UnitSpec.from_text(FIND_TOTAL_YAML)

    assert spec.name == "find_total"
    assert spec.version == "3"  # written as the integer 3
    assert spec.key == "find_total@3"
    assert spec.policy.threshold == 0.6
    assert spec.policy.max_new_tokens == 32
    assert [e.input for e in spec.prompt.examples] == ["Total: 10 USD", "See you on Monday."]
    (heuristic,) = spec.fallbacks
    assert isinstance(heuristic, HeuristicFallback)
    assert heuristic.fields["currency"].normalize == "currency"
    assert heuristic.patterns[0].strength == 0.9


def test_unit_spec_is_immutable() -> None:
    spec = UnitSpec.from_text(FIND_TOTAL_YAML)
    with pytest.raises(ValueError, match="frozen"):
        spec.name = "other"  # type: ignore[misc]  # the point of the test


def test_yaml_on_off_yes_no_stay_strings_while_true_false_are_booleans() -> None:
    data, _ = read_yaml("words: [on, off, yes, no, On, NO, y, n]\nflags: [true, false, True]\n")

    assert data["words"] == ["on", "off", "yes", "no", "On", "NO", "y", "n"]
    assert data["flags"] == [True, False, True]


def test_heuristic_keywords_on_and_yes_load_as_words() -> None:
    text = replace_once(FIND_TOTAL_YAML, "keywords: [total]", "keywords: [total, on, yes, off]")
    spec = UnitSpec.from_text(text)

    assert spec.fallbacks[0].keywords == ["total", "on", "yes", "off"]


def test_read_yaml_maps_json_paths_to_lines() -> None:
    _, lines = read_yaml(FIND_TOTAL_YAML)

    assert lines[("policy", "threshold")] == line_of(FIND_TOTAL_YAML, "threshold:")
    assert lines[("prompt", "examples", 1, "output")] == line_of(
        FIND_TOTAL_YAML, "output: {amount: null"
    )
    assert lines[("fallbacks", 0, "patterns", 0, "regex")] == line_of(FIND_TOTAL_YAML, "regex:")


# -- files that cannot be read --------------------------------------------------------------------


def test_loading_missing_file_names_the_file_with_code_s002(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(missing)

    error = caught.value
    assert error.spec_code == "S002"
    assert error.file == str(missing)
    assert str(error) == f"{missing}: file not found [S002]"


def test_loading_a_directory_says_a_unit_file_was_expected(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"is a directory, expected a unit YAML file \[S002\]"):
        UnitSpec.from_file(tmp_path)


def test_loading_malformed_yaml_names_file_and_line_of_the_syntax_error(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "  timeout_s: 30\n", "  timeout_s: [30\n")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S001"
    assert error.file == str(tmp_path / "find_total.yaml")
    assert error.line is not None
    assert error.line >= line_of(text, "timeout_s: [30")
    assert "not valid YAML" in str(error)
    assert str(error).startswith(f"{error.file}:{error.line}: ")


def test_loading_yaml_with_bad_indentation_names_its_line(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "  threshold: 0.6\n", "  threshold: 0.6\n oops: 1\n")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S001"
    assert error.line == line_of(text, "oops: 1")


def test_loading_non_utf8_file_names_the_line_of_the_bad_byte(tmp_path: Path) -> None:
    raw = FIND_TOTAL_YAML.encode().replace(b"Reply with", b"Reply with caf\xe9")  # latin-1
    bad_byte = raw.index(b"\xe9")
    error = load_error(tmp_path, raw)

    assert error.spec_code == "S003"
    assert error.line == line_of(FIND_TOTAL_YAML, "Reply with")
    assert f"(byte {bad_byte})" in error.message
    assert "not UTF-8 text" in str(error)


@pytest.mark.parametrize(
    ("text", "got"),
    [("- a\n- b\n", "list"), ("just words\n", "str"), ("", "NoneType"), ("# only\n", "NoneType")],
)
def test_loading_a_file_that_is_not_a_mapping_is_refused(
    tmp_path: Path, text: str, got: str
) -> None:
    error = load_error(tmp_path, text)

    assert error.spec_code == "S004"
    assert error.line == 1
    assert f"a unit file must be a mapping, got {got}" in str(error)


# -- fields: unknown, missing, wrong type, name ---------------------------------------------------


def test_loading_unit_with_unknown_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "  timeout_s: 30\n", "  timeout_s: 30\n  retries: 2\n")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S010"
    assert error.field == "policy.retries"
    assert error.line == line_of(text, "retries: 2")
    assert str(error) == (
        f"{tmp_path / 'find_total.yaml'}:{error.line}: policy.retries: unknown field [S010]"
    )


def test_loading_unit_without_required_field_names_the_missing_field(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "  system: Reply with the invoice total as JSON.\n", "")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S010"
    assert error.field == "prompt.system"
    assert error.line == line_of(text, "prompt:")  # the mapping that lacks it
    assert "required field is missing" in str(error)


def test_loading_unit_without_top_level_field_names_it(tmp_path: Path) -> None:
    text = replace_once(
        FIND_TOTAL_YAML, "description: The total amount of an invoice and its currency.\n", ""
    )
    error = load_error(tmp_path, text)

    assert error.field == "description"
    assert error.line == 1
    assert "description: required field is missing" in str(error)


def test_loading_unit_with_wrong_type_reports_the_field_and_what_it_got(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "threshold: 0.6", "threshold: high")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S010"
    assert error.field == "policy.threshold"
    assert error.line == line_of(text, "threshold: high")
    assert "valid number" in error.message
    assert "(got 'high')" in error.message


def test_loading_unit_with_out_of_range_value_names_the_bound(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "strength: 0.9", "strength: 1.5")
    error = load_error(tmp_path, text)

    assert error.field == "fallbacks[0].patterns[0].strength"
    assert error.line == line_of(text, "strength: 1.5")
    assert "less than or equal to 1" in error.message


def test_loading_unit_with_several_mistakes_reports_the_first_and_notes_the_rest(
    tmp_path: Path,
) -> None:
    text = replace_once(FIND_TOTAL_YAML, "threshold: 0.6", "threshold: high")
    text = replace_once(text, "max_new_tokens: 32", "max_new_tokens: lots")
    error = load_error(tmp_path, text)

    assert error.field == "policy.threshold"
    notes = getattr(error, "__notes__", [])
    where = f"{tmp_path / 'find_total.yaml'}:{line_of(text, 'max_new_tokens: lots')}: "
    assert any(note.startswith(where + "policy.max_new_tokens: ") for note in notes), notes


def test_loading_unit_with_unknown_fallback_kind_lists_the_known_kinds(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "kind: heuristic", "kind: oracle")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S010"
    assert error.field == "fallbacks[0]"
    assert error.line == line_of(text, "kind: oracle")
    assert "'oracle'" in error.message
    assert "'heuristic'" in error.message


def test_loading_unit_with_unknown_fallback_trigger_lists_the_triggers(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "  timeout_s: 30\n", "  fallback_on: [sometimes]\n")
    error = load_error(tmp_path, text)

    assert error.field == "policy.fallback_on[0]"
    assert "(got 'sometimes')" in error.message
    assert "'invalid_output'" in error.message
    assert "'engine_timeout'" in error.message


def test_loading_unit_whose_name_differs_from_the_file_stem_names_both(tmp_path: Path) -> None:
    error = load_error(tmp_path, FIND_TOTAL_YAML, name="total_finder")

    assert error.spec_code == "S005"
    assert error.field == "name"
    assert error.line == line_of(FIND_TOTAL_YAML, "name: find_total")
    assert "name 'find_total' differs from the file stem 'total_finder'; rename one" in str(error)


def test_unit_name_must_be_a_lowercase_identifier() -> None:
    text = replace_once(FIND_TOTAL_YAML, "name: find_total", "name: Find-Total")
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_text(text)

    assert caught.value.field == "name"
    assert caught.value.line == 1
    assert "(got 'Find-Total')" in str(caught.value)


def test_errors_of_units_from_text_name_the_unit_placeholder() -> None:
    text = replace_once(FIND_TOTAL_YAML, "threshold: 0.6", "threshold: high")
    with pytest.raises(SpecError, match=r"^<unit>:\d+: policy\.threshold: "):
        UnitSpec.from_text(text)


# -- the output schema ----------------------------------------------------------------------------


def test_loading_output_that_is_not_json_schema_names_the_bad_keyword(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, 'type: [number, "null"]', 'type: [numeric, "null"]')
    error = load_error(tmp_path, text)

    assert error.spec_code == "S011"
    assert error.field == "output.properties.amount.type"
    assert error.line == line_of(text, "numeric")
    assert "not a valid JSON Schema" in error.message


@pytest.mark.parametrize(
    "output",
    [
        "output:\n  type: string\n",
        "output:\n  type: array\n  items: {type: string}\n",
        "output:\n  type: object\n",
    ],
    ids=["string", "array", "object-without-properties"],
)
def test_loading_output_that_is_not_an_object_with_properties_is_refused(
    tmp_path: Path, output: str
) -> None:
    start = FIND_TOTAL_YAML.index("output:\n")
    end = FIND_TOTAL_YAML.index("prompt:\n")
    text = FIND_TOTAL_YAML[:start] + output + FIND_TOTAL_YAML[end:]
    text = re.sub(r"(?m)^  examples:\n(?:    .*\n)+", "  examples: []\n", text)  # no longer fit
    text = re.sub(r"(?s)fallbacks:.*?policy:", "policy:", text)
    error = load_error(tmp_path, text)

    assert error.spec_code == "S012"
    assert error.field == "output"
    assert error.line == line_of(text, "output:")
    assert "must be an object schema with properties (type: object)" in error.message


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("uniqueItems", "true"),
        ("not", "{const: 0}"),
        ("if", "{const: 0}"),
        ("$ref", "'#/$defs/x'"),
        ("dependentRequired", "{}"),
        ("minContains", "1"),
    ],
)
def test_loading_output_with_unsupported_keyword_names_the_keyword(
    tmp_path: Path, keyword: str, value: str
) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        '      type: [number, "null"]\n',
        f'      type: [number, "null"]\n      {keyword}: {value}\n',
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S013"
    assert error.field == f"output.properties.amount.{keyword}"
    assert error.line == line_of(text, f"{keyword}: {value}")
    assert f"JSON-Schema keyword {keyword!r} at $.amount is not enforced" in error.message
    assert "remove it or express it with enforced keywords" in error.message


def test_loading_output_with_unsupported_keyword_at_the_top_names_it(tmp_path: Path) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        "  additionalProperties: false\n",
        "  additionalProperties: false\n  minProperties: 1\n",
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S013"
    assert error.field == "output.minProperties"
    assert error.line == line_of(text, "minProperties: 1")
    assert "'minProperties' at $ is not enforced" in error.message


def test_unsupported_keyword_inside_any_of_names_its_real_field(tmp_path: Path) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        '      type: [number, "null"]\n',
        "      anyOf:\n        - {type: number, not: {const: 0}}\n        - {type: 'null'}\n",
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S013"
    assert error.field == "output.properties.amount.anyOf[0].not"


def test_annotation_keywords_in_the_output_schema_are_accepted() -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        '      type: [number, "null"]\n',
        '      type: [number, "null"]\n      title: Amount\n      description: The total.\n'
        "      examples: [12.5]\n      default: null\n",
    )
    spec = UnitSpec.from_text(text)

    assert spec.output["properties"]["amount"]["title"] == "Amount"


# -- prompts --------------------------------------------------------------------------------------


def test_loading_unit_with_unknown_template_variable_names_file_line_and_field(
    tmp_path: Path,
) -> None:
    text = replace_once(FIND_TOTAL_YAML, "{{ text }}", "{{ text }} ({{ document }})")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S021"
    assert error.field == "prompt.template"
    assert error.line == line_of(text, "{{ document }}")
    assert "unknown template variable 'document'. Available: terms, text, unit" in error.message


def test_loading_unit_with_unknown_variable_in_system_text_names_the_system_field(
    tmp_path: Path,
) -> None:
    text = replace_once(FIND_TOTAL_YAML, "invoice total", "{{ today }} invoice total")
    error = load_error(tmp_path, text)

    assert error.field == "prompt.system"
    assert error.line == line_of(text, "{{ today }}")
    assert "'today'" in error.message


def test_template_may_use_the_unit_variable() -> None:
    text = replace_once(FIND_TOTAL_YAML, '"Text: {{ text }}"', '"{{ unit.name }}: {{ text }}"')
    assert UnitSpec.from_text(text).prompt.template == "{{ unit.name }}: {{ text }}"


def test_loading_unit_with_template_syntax_error_names_the_template(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, '"Text: {{ text }}"', '"Text: {{ text "')
    error = load_error(tmp_path, text)

    assert error.spec_code == "S020"
    assert error.field == "prompt.template"
    assert error.line == line_of(text, "Text: {{ text")
    assert "template syntax error on its line 1" in error.message


def test_loading_unit_with_unclosed_block_tag_is_a_syntax_error(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, '"Text: {{ text }}"', '"{% if text %}{{ text }}"')
    error = load_error(tmp_path, text)

    assert error.spec_code == "S020"
    assert error.field == "prompt.template"


def test_loading_unit_with_unknown_template_filter_is_a_located_spec_error(
    tmp_path: Path,
) -> None:
    text = replace_once(FIND_TOTAL_YAML, '"Text: {{ text }}"', '"Text: {{ text | shout }}"')
    error = load_error(tmp_path, text)

    assert error.spec_code == "S024"
    assert error.field == "prompt.template"
    assert "unknown filter 'shout'" in error.message
    assert "(template line 1)" in error.message


def test_loading_unit_with_few_shot_example_violating_the_schema_names_the_example(
    tmp_path: Path,
) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        "output: {amount: null, currency: null}",
        'output: {amount: "ten", currency: null}',
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S022"
    assert error.field == "prompt.examples[1].output"
    assert error.line == line_of(text, 'amount: "ten"')
    assert "example output violates the output schema at $.amount" in error.message
    assert "'ten' is not of type" in error.message


def test_few_shot_example_missing_a_required_key_is_refused(tmp_path: Path) -> None:
    text = replace_once(
        FIND_TOTAL_YAML, "output: {amount: 10, currency: USD}", "output: {amount: 10}"
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S022"
    assert error.field == "prompt.examples[0].output"
    assert "'currency' is a required property" in error.message


# -- heuristic fallbacks --------------------------------------------------------------------------


def test_loading_heuristic_with_invalid_regex_names_the_pattern(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "[A-Z]{3})'", "[A-Z]{3}'")  # unbalanced parenthesis
    error = load_error(tmp_path, text)

    assert error.spec_code == "S031"
    assert error.field == "fallbacks[0].patterns[0].regex"
    assert error.line == line_of(text, "regex:")
    assert "invalid regex: missing ), unterminated subpattern" in error.message


def test_loading_heuristic_with_unknown_normalizer_lists_the_normalizers(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "normalize: amount}", "normalize: money}")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S034"
    assert error.field == "fallbacks[0].fields.amount.normalize"
    assert error.line == line_of(text, "normalize: money")
    assert "unknown normalizer 'money'. Available: amount, currency, date, " in error.message


def test_loading_heuristic_filling_a_field_not_in_the_schema_lists_the_fields(
    tmp_path: Path,
) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        "      amount: {group: amount, normalize: amount}\n",
        "      amount: {group: amount, normalize: amount}\n      total: {group: amount}\n",
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S032"
    assert error.field == "fallbacks[0].fields.total"
    assert error.line == line_of(text, "total: {group")
    assert "field 'total' is not in the output schema. Available: amount, currency" in str(error)


def test_loading_heuristic_with_unknown_group_names_the_group(tmp_path: Path) -> None:
    text = replace_once(FIND_TOTAL_YAML, "{group: currency,", "{group: ccy,")
    error = load_error(tmp_path, text)

    assert error.spec_code == "S033"
    assert error.field == "fallbacks[0].fields.currency.group"
    assert error.line == line_of(text, "group: ccy")
    assert "no pattern has a group named 'ccy'" in error.message


def test_loading_heuristic_whose_patterns_have_no_named_groups_refuses_group_mappings(
    tmp_path: Path,
) -> None:
    text = replace_once(
        FIND_TOTAL_YAML,
        r"'(?P<amount>\d+(?:\.\d+)?)\s*(?P<currency>[A-Z]{3})'",
        r"'\d+ [A-Z]{3}'",
    )
    error = load_error(tmp_path, text)

    assert error.spec_code == "S033"


def test_loading_heuristic_without_patterns_is_refused(tmp_path: Path) -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data = copy.deepcopy(data)
    data["fallbacks"][0]["patterns"] = []
    text = yaml.safe_dump(data, sort_keys=False)
    error = load_error(tmp_path, text)

    assert (error.field, error.spec_code) == ("fallbacks[0].patterns", "S044")
    assert error.message == "a heuristic path needs at least one finder or pattern"


# -- flows ----------------------------------------------------------------------------------------


def flow_yaml(states: dict[str, Any]) -> str:
    return yaml.safe_dump({"flow": {"states": states}}, sort_keys=False)


def test_loading_unit_with_flow_to_an_unknown_state_names_the_flow(tmp_path: Path) -> None:
    from aau.fsm.machine import default_flow

    states = copy.deepcopy(default_flow()["states"])
    states["accepted"]["transitions"] = [{"event": "finish", "target": "archived"}]
    text = FIND_TOTAL_YAML + flow_yaml(states)
    error = load_error(tmp_path, text)

    assert error.spec_code == "S040"
    assert error.field == "flow"
    assert error.line == line_of(text, "flow:")
    assert "state 'accepted': transition to undeclared state 'archived'" in error.message


def test_loading_unit_with_malformed_flow_transition_is_a_located_spec_error(
    tmp_path: Path,
) -> None:
    from aau.fsm.machine import default_flow

    states = copy.deepcopy(default_flow()["states"])
    states["accepted"]["transitions"] = ["finish"]
    error = load_error(tmp_path, FIND_TOTAL_YAML + flow_yaml(states))

    assert error.spec_code == "S040"
