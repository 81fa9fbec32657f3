"""The json grammar: the same values as json.loads, and located errors."""

from __future__ import annotations

import json

import pytest

from aau.grammars import InvalidValue, load_grammar

DOCUMENTS = [
    '{"amount": "1250.00", "currency": "EUR", "confidence": 0.93, "spans": [[12, 20]], "ok": true}',
    '[1, -0, 1.5e10, 1E-2, "\\ud83d\\ude00", "\\"quoted\\"", {"a": {"a": null}}]',
    '{"dup": 1, "dup": 2}',
    '"\\u00e9\\/\\b\\f\\n\\r\\t"',
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_json_normalizes_like_json_loads(text: str) -> None:
    result = load_grammar("json").normalize(text)
    assert result == json.loads(text)
    assert type(result) is type(json.loads(text))


def test_json_has_no_regex_and_says_why() -> None:
    grammar = load_grammar("json")
    assert grammar.regex is None
    assert grammar.regex_reason == "rule 'value' is recursive (value -> object -> pair -> value)"


def test_json_error_position_counts_across_lines() -> None:
    text = '{\n  "a": 1,\n  "b": }'
    with pytest.raises(InvalidValue) as caught:
        load_grammar("json").normalize(text)
    assert caught.value.position == text.index("}")
    assert not hasattr(caught.value, "__notes__")  # no caret drawing under a multi-line value


def test_deeply_nested_json_is_rejected_not_crashed() -> None:
    result = load_grammar("json").parse("[" * 5000 + "]" * 5000)
    assert not result.ok
    assert result.error == "the value is nested too deeply to parse"
    assert load_grammar("json").normalize("[[1]]") == [[1]]  # the reused parser still works
