"""Chat prompts to token ids, tokenizing a unit's static part once.

A unit's prompts differ only in the last message (the input); its system text and few-shot
turns come first and are the same every time, and tokenizing them was most of the work of
turning a prompt into ids (0.2 of 0.3 ms alone, more in the engine's loop). The rendered text
is cut at the last special token before the last message's content: special tokens are split
out before anything else is tokenized, so the two sides tokenize as they do in the whole. The
ids of the part before the cut are kept (least recently used out).

Each newly kept part is checked once against tokenizing the whole prompt; a tokenizer for which
they differ (one that marks the start of every piece of text, say) is never cut again.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

__all__ = ["PromptTokens"]


class PromptTokens:
    """Token ids of chat prompts for one tokenizer (used from one thread: the engine's worker).

    Args:
        tokenizer: the HF tokenizer whose chat template renders the prompts.
        max_entries: static parts whose ids are kept.
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
        self.cut_ok = True  # False once a cut tokenized differently from the whole

    def ids(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The prompt's ids, as ``apply_chat_template(..., tokenize=True)`` gives them."""
        text = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=False
        )
        cut = self._cut(text, messages) if self.cut_ok else 0
        if cut <= 0:
            return self._encode(text)
        head_text = text[:cut]
        head = self._heads.get(head_text)
        if head is not None:
            self._heads.move_to_end(head_text)
            return head + self._encode(text[cut:])
        head = self._encode(head_text)
        ids = head + self._encode(text[cut:])
        whole = self._encode(text)
        if ids != whole:
            self.cut_ok = False
            self._heads.clear()
            return whole
        self._heads[head_text] = head
        if len(self._heads) > self.max_entries:
            self._heads.popitem(last=False)
        return ids

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
