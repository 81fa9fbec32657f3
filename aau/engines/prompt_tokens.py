"""Chat prompts to token ids, rendering and tokenizing a unit's static part once.

A unit's prompts differ only in the last message (the input); its system text and few-shot
turns come first and are the same every time. Rendering the chat template (a Jinja program,
0.2 ms) and tokenizing the static part (0.2 of 0.3 ms) were most of the work of turning a prompt
into ids, on the engine's thread between two forwards.

Rendering: the template is rendered once per static part with a placeholder for the input,
and the text before and after the placeholder is kept (a *frame*); a prompt is then the frame
around its input. That holds for templates that write a message's content as it is, which is
checked once per frame with probe inputs (surrounding whitespace, which some templates trim;
reasoning tags, which some split out) and on the frame's first real prompt: a template that
fails any check is rendered in full for every prompt from then on.

Tokenizing: the text is cut at the last special token before the input. Special tokens are
split out before anything else is tokenized, so the two sides tokenize as they do in the whole;
the ids of the part before the cut are kept (least recently used out). Each newly kept part is
checked once against tokenizing the whole prompt; a tokenizer for which they differ (one that
marks the start of every piece of text, say) is never cut again.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PromptTokens"]

# Private-use code points: no template or unit writes them, no tokenizer merges them with text.
_PLACEHOLDER = "\ue000aau-input\ue001"
# Inputs a template that writes content as it is renders unchanged; others trim or split them.
_PROBES = (" \n probe text \n ", "</think>probe<think>", "{{ probe }}{% raw %}")


@dataclass(frozen=True, slots=True)
class _Frame:
    """A rendered prompt around its input, ``before + input + after``."""

    before: str
    after: str
    cut: int  # where the last special token in ``before`` starts (0: none)
    checked: bool  # rendered in full with a real input once and found equal


class PromptTokens:
    """Token ids of chat prompts for one tokenizer (used from one thread: the engine's worker).

    Args:
        tokenizer: the HF tokenizer whose chat template renders the prompts.
        max_entries: static parts whose frames and ids are kept.
    """

    def __init__(self, tokenizer: Any, max_entries: int = 256) -> None:
        self.tokenizer = tokenizer
        self.max_entries = max_entries
        specials = {
            token.content
            for token in getattr(tokenizer, "added_tokens_decoder", {}).values()
            if token.special and token.content
        }
        self._special = (
            re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)))
            if specials
            else None
        )
        self._heads: OrderedDict[str, list[int]] = OrderedDict()
        self._frames: OrderedDict[Hashable, _Frame | None] = OrderedDict()
        self.cut_ok = True  # False once a cut tokenized differently from the whole
        self.frames_ok = True  # False once the template changed an input it was given

    def ids(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The prompt's ids, as ``apply_chat_template(..., tokenize=True)`` gives them."""
        return self.ids_and_head(messages)[0]

    def ids_and_head(self, messages: Sequence[dict[str, str]]) -> tuple[list[int], int]:
        """The prompt's ids and how many of them come from every message but the last.

        The head is 0 where the prompt could not be cut before the last message.
        """
        text, cut = self._render(messages)
        if not self.cut_ok or cut <= 0:
            return self._encode(text), 0
        head_text = text[:cut]
        head = self._heads.get(head_text)
        if head is not None:
            self._heads.move_to_end(head_text)
            return head + self._encode(text[cut:]), len(head)
        head = self._encode(head_text)
        ids = head + self._encode(text[cut:])
        whole = self._encode(text)
        if ids != whole:
            self.cut_ok = False
            self._heads.clear()
            return whole, 0
        self._heads[head_text] = head
        if len(self._heads) > self.max_entries:
            self._heads.popitem(last=False)
        return ids, len(head)

    # -- rendering ------------------------------------------------------------------------

    def _render(self, messages: Sequence[dict[str, str]]) -> tuple[str, int]:
        """The prompt's text and where to cut it (0: nowhere)."""
        key = _static_key(messages) if self.frames_ok and messages else None
        frame = self._frame(key, messages) if key is not None else None
        if frame is None:
            text = self._template(messages)
            return text, self._cut(text, messages)
        content = messages[-1].get("content") or ""
        text = frame.before + content + frame.after
        if not frame.checked:
            whole = self._template(messages)
            if whole != text:
                self._give_up_frames()
                return whole, self._cut(whole, messages)
            self._frames[key] = _Frame(frame.before, frame.after, frame.cut, checked=True)
        return text, frame.cut

    def _frame(self, key: Hashable, messages: Sequence[dict[str, str]]) -> _Frame | None:
        if key in self._frames:
            self._frames.move_to_end(key)
            return self._frames[key]
        frame = self._new_frame(messages)
        if not self.frames_ok:
            return None
        self._frames[key] = frame
        if len(self._frames) > self.max_entries:
            self._frames.popitem(last=False)
        return frame

    def _new_frame(self, messages: Sequence[dict[str, str]]) -> _Frame | None:
        """The frame of ``messages``' static part.

        None where the placeholder is not found once (a template that repeats or drops the
        input); gives frames up for a template that changes a probe input.
        """
        framed = _with_content(messages, _PLACEHOLDER)
        rendered = self._template(framed)
        if rendered.count(_PLACEHOLDER) != 1:
            return None
        before, after = rendered.split(_PLACEHOLDER)
        for probe in _PROBES:
            if self._template(_with_content(messages, probe)) != before + probe + after:
                self._give_up_frames()
                return None
        return _Frame(before, after, self._cut(rendered, framed), checked=False)

    def _give_up_frames(self) -> None:
        self.frames_ok = False
        self._frames.clear()

    def _template(self, messages: Sequence[dict[str, str]]) -> str:
        text = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=False
        )
        return str(text)

    def _cut(self, text: str, messages: Sequence[dict[str, str]]) -> int:
        """Where the last special token before the last message's content starts (0: none)."""
        if self._special is None or not messages:
            return 0
        content = messages[-1].get("content") or ""
        end = text.rfind(content) if content else -1
        if end <= 0:
            return 0
        last = 0
        for match in self._special.finditer(text, 0, end):
            last = match.start()
        return last

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def _static_key(messages: Sequence[dict[str, str]]) -> Hashable | None:
    """Everything of ``messages`` but the last message's content.

    None where that is not hashable, or the content is not text (a list of parts).
    """
    *static, last = messages
    if not isinstance(last.get("content", ""), str):
        return None
    key = (
        tuple(tuple(sorted(message.items())) for message in static),
        tuple(sorted((k, v) for k, v in last.items() if k != "content")),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _with_content(messages: Sequence[dict[str, str]], content: str) -> list[dict[str, str]]:
    return [*messages[:-1], {**messages[-1], "content": content}]
