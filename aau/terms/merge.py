"""Merged tokens: a tenant's tokenizer view in which every dictionary term is one token.

The shared tokenizer and model are never modified (other tenants must not see these tokens).
A view appends, after the model's vocabulary of ``V`` rows, two tokens per surface form of the
tenant's term set: ``Ġ<TERM_force_majeure_clause>`` (the term after a space, the common case,
named like the byte-level BPE tokens it replaces) and ``<TERM_force_majeure_clause>`` (at the
start of a line or after punctuation). Each new token's embedding is the mean of the embeddings
of the pieces the base tokenizer splits it into — no training — and, for models whose output
head is not tied to the input embeddings, its output row the mean of the pieces' output rows.

The engine runs such a request on ``inputs_embeds`` (the view embeds the ids past ``V``),
extends the step's logits with ``hidden @ output_rows.T`` so merged tokens can also be
generated, and constrains with a grammar compiled for the extended vocabulary; ``decode`` turns
merged tokens back into their surface form.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

import torch

from aau.errors import TermDictionaryError
from aau.terms.matcher import fold_text
from aau.terms.store import TermSet

__all__ = ["MergedVocabulary", "term_token_name"]

_NAME_CHARS = re.compile(r"\W+")


def term_token_name(surface: str) -> str:
    """``force majeure clause`` -> ``<TERM_force_majeure_clause>``."""
    return f"<TERM_{_NAME_CHARS.sub('_', surface.lower()).strip('_') or 'x'}>"


class MergedVocabulary:
    """One term set's tokenizer view over a base tokenizer and model.

    Args:
        term_set: the tenant's active dictionaries.
        tokenizer: the engine's (base) HF tokenizer; not modified.
        input_embeddings: the model's input embedding matrix ``[V, d]``.
        output_embeddings: the output head's weight ``[V, d]`` (the same tensor when tied).
    """

    def __init__(
        self,
        term_set: TermSet,
        tokenizer: Any,
        input_embeddings: torch.Tensor,
        output_embeddings: torch.Tensor,
    ) -> None:
        self.term_set = term_set
        self.fingerprint = term_set.fingerprint
        # Its own copy (~0.1 s): a view is built on a caller's thread while the engine's worker
        # tokenizes with the shared one, and a Rust tokenizer must not be used from two threads.
        self.tokenizer = copy.deepcopy(tokenizer)
        tokenizer = self.tokenizer
        self.base_size = int(output_embeddings.shape[0])
        specials = {str(t).lower() for t in getattr(tokenizer, "all_special_tokens", ())}
        entries = term_set.matcher.entries
        # Token ids: base_size + 2 * entry (after a space), base_size + 2 * entry + 1 (bare).
        self.strings: list[str] = []
        self.names: list[str] = []
        for entry in entries:
            if entry.surface.lower() in specials:
                raise TermDictionaryError(
                    f"{entry.surface!r} collides with the tokenizer's special token of that name",
                    file=entry.dictionary,
                    line=entry.term.line,
                    code="T014",
                )
            name = term_token_name(entry.surface)
            self.strings += [" " + entry.surface, entry.surface]
            self.names += ["Ġ" + name, name]
        pieces = tokenizer(self.strings, add_special_tokens=False)["input_ids"] if entries else []
        flat = torch.tensor([i for ids in pieces for i in ids], dtype=torch.long)
        offsets = torch.tensor([0] + [len(ids) for ids in pieces[:-1]], dtype=torch.long).cumsum(0)
        self.piece_counts = [len(ids) for ids in pieces]

        def mean_rows(weight: torch.Tensor) -> torch.Tensor:
            if not entries:
                return weight.new_zeros((0, weight.shape[1]))
            with torch.no_grad():
                return torch.nn.functional.embedding_bag(
                    flat.to(weight.device), weight, offsets.to(weight.device), mode="mean"
                )

        self.input_rows = mean_rows(input_embeddings)
        tied = output_embeddings.data_ptr() == input_embeddings.data_ptr()
        self.output_rows = self.input_rows if tied else mean_rows(output_embeddings)

    def __len__(self) -> int:
        """Tokens the view adds."""
        return len(self.strings)

    @property
    def size(self) -> int:
        """The extended vocabulary's size."""
        return self.base_size + len(self.strings)

    # -- text <-> ids ---------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with every term hit as one merged token.

        A hit right after a space takes that space (``Ġ<TERM_…>``), as the pieces it replaces
        would have; the text between hits is tokenized by the base tokenizer as usual.
        """
        spans = self.term_set.matcher.spans(fold_text(text))
        if not len(spans):
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        segments: list[str] = []
        merged: list[int] = []
        position = 0
        for start, end, index in zip(
            spans.starts.tolist(), spans.ends.tolist(), spans.entries.tolist(), strict=True
        ):
            spaced = start > position and text[start - 1] == " "
            segments.append(text[position : start - 1 if spaced else start])
            merged.append(self.base_size + 2 * index + (0 if spaced else 1))
            position = end
        segments.append(text[position:])
        encoded = self.tokenizer(segments, add_special_tokens=False)["input_ids"]
        ids: list[int] = []
        for segment_ids, term_id in zip(encoded, merged, strict=False):
            ids += segment_ids
            ids.append(term_id)
        ids += encoded[-1]
        return ids

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        """Text of ``ids``; merged tokens become their dictionary surface form."""
        parts: list[str] = []
        run: list[int] = []
        for token in ids:
            if token < self.base_size:
                run.append(token)
                continue
            if run:
                parts.append(self.tokenizer.decode(run, skip_special_tokens=skip_special_tokens))
                run = []
            parts.append(self.strings[token - self.base_size])
        if run:
            parts.append(self.tokenizer.decode(run, skip_special_tokens=skip_special_tokens))
        return "".join(parts)

    def tokens(self, text: str) -> list[str]:
        """Token names of ``text`` in this view (``Ġ<TERM_…>`` for merged terms)."""
        ids = self.encode(text)
        names = self.tokenizer.convert_ids_to_tokens([i for i in ids if i < self.base_size])
        out, base = [], iter(names)
        for token in ids:
            out.append(next(base) if token < self.base_size else self.names[token - self.base_size])
        return out

    # -- model side -----------------------------------------------------------------------

    def embed(self, ids: torch.Tensor, embedding: torch.nn.Module) -> torch.Tensor:
        """Input embeddings of ``ids`` ``[rows, length]``; merged ids use the view's rows."""
        extra = ids >= self.base_size
        vectors = embedding(ids.clamp(max=self.base_size - 1))
        if bool(extra.any()):
            rows = self.input_rows.to(vectors.dtype)[(ids[extra] - self.base_size)]
            vectors[extra] = rows
        return vectors

    def extra_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits of the merged tokens for final hidden states ``[..., d]``."""
        return hidden @ self.output_rows.to(hidden.dtype).T
