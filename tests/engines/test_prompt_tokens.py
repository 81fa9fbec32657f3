"""``PromptTokens``: a unit's static prompt part is tokenized once, and the ids never change."""

from __future__ import annotations

from typing import Any

import pytest

import aau
from aau.engines.prompt_tokens import PromptTokens
from aau.prompts import render_messages
from tests.conftest import PROMPTED_UNIT_FILES

UNITS = [aau.load_unit(p) for p in PROMPTED_UNIT_FILES]
TEXTS = [
    "Invoice 7: 12 boxes delivered on 3 March 2024, total due EUR 1,250.50.",
    "a",  # short enough to occur inside the chat template's own text
    "A line with <|im_start|>user and <|im_end|> written into the input.",
    "  leading spaces, trailing newline\n",
    "Zahlung bis 30.04.2024: 1.250,00 € für 40 Kartons.",
]


def whole(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    encoded = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=True
    )
    return list(encoded["input_ids"])


def test_ids_equal_the_chat_templates_for_every_unit_and_input(smollm2_tokenizer: Any) -> None:
    prompts = PromptTokens(smollm2_tokenizer)
    for _ in range(2):  # the second round reads every static part from the cache
        for unit in UNITS:
            for text in TEXTS:
                messages = render_messages(unit, text)
                assert prompts.ids(messages) == whole(smollm2_tokenizer, messages), (unit, text)
    assert prompts.cut_ok
    assert prompts.frames_ok
    assert 1 <= len(prompts._heads) <= len(UNITS) * len(TEXTS)


def test_a_units_static_part_is_tokenized_once(
    smollm2_tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = PromptTokens(smollm2_tokenizer)
    unit = UNITS[0]
    prompts.ids(render_messages(unit, TEXTS[0]))
    encoded: list[str] = []
    real = prompts._encode
    monkeypatch.setattr(prompts, "_encode", lambda text: encoded.append(text) or real(text))

    prompts.ids(render_messages(unit, TEXTS[3]))

    assert len(encoded) == 1
    assert TEXTS[3] in encoded[0]
    assert unit.prompt.system not in encoded[0]


def test_a_units_template_is_rendered_once_per_static_part(
    smollm2_tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = PromptTokens(smollm2_tokenizer)
    unit = UNITS[0]
    prompts.ids(render_messages(unit, TEXTS[0]))  # the frame, its probes, its first check
    prompts.ids(render_messages(unit, TEXTS[1]))
    rendered: list[Any] = []
    real = prompts._template
    monkeypatch.setattr(prompts, "_template", lambda m: rendered.append(m) or real(m))

    messages = render_messages(unit, TEXTS[3])
    assert prompts.ids(messages) == whole(smollm2_tokenizer, messages)
    assert rendered == []


class TrimmingTokenizer:
    """Fault injection: a tokenizer whose chat template trims each message's content (as some
    models' templates do), so a prompt is not its frame around the input as given."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.added_tokens_decoder = real.added_tokens_decoder

    def apply_chat_template(self, messages: list[dict[str, str]], **kwargs: Any) -> Any:
        trimmed = [{**m, "content": m["content"].strip()} for m in messages]
        return self.real.apply_chat_template(trimmed, **kwargs)

    def __call__(self, text: str, **kwargs: Any) -> Any:
        return self.real(text, **kwargs)


def test_a_template_that_changes_the_input_is_rendered_in_full(smollm2_tokenizer: Any) -> None:
    tokenizer = TrimmingTokenizer(smollm2_tokenizer)
    prompts = PromptTokens(tokenizer)
    for text in (TEXTS[0], TEXTS[3], TEXTS[3]):
        messages = render_messages(UNITS[0], text)
        trimmed = [{**m, "content": m["content"].strip()} for m in messages]
        assert prompts.ids(messages) == whole(smollm2_tokenizer, trimmed)
    assert not prompts.frames_ok


class MarkingTokenizer:
    """Fault injection: a tokenizer that marks the start of every text it encodes (as some
    SentencePiece tokenizers do), so a prompt cut in two encodes differently from the whole."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.added_tokens_decoder = real.added_tokens_decoder

    def apply_chat_template(self, *args: Any, **kwargs: Any) -> Any:
        return self.real.apply_chat_template(*args, **kwargs)

    def __call__(self, text: str, **kwargs: Any) -> dict[str, list[int]]:
        return {"input_ids": [7, *self.real(text, **kwargs)["input_ids"]]}


def test_a_tokenizer_that_encodes_a_cut_prompt_differently_is_never_cut(
    smollm2_tokenizer: Any,
) -> None:
    tokenizer = MarkingTokenizer(smollm2_tokenizer)
    prompts = PromptTokens(tokenizer)
    messages = render_messages(UNITS[0], TEXTS[0])
    expected = [7, *whole(smollm2_tokenizer, messages)]

    assert prompts.ids(messages) == expected
    assert not prompts.cut_ok
    assert prompts.ids(render_messages(UNITS[0], TEXTS[4])) == [
        7, *whole(smollm2_tokenizer, render_messages(UNITS[0], TEXTS[4]))
    ]  # fmt: skip
