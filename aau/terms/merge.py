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

from aau.errors import EngineUnavailable
from aau.terms.matcher import fold_text
from aau.terms.store import TermSet

__all__ = ["MergedVocabulary", "term_token_name"]

_NAME_CHARS = re.compile(r"\W+")


def term_token_name(surface: str) -> str:
    """``force majeure clause`` -> ``<TERM_force_majeure_clause>``."""
    return f"<TERM_{_NAME_CHARS.sub('_', surface.lower()).strip('_') or 'x'}>"


class MergedVocabulary:
    """One term set's tokenizer view over a base tokenizer and model.

    Supported: tokenizers whose encoding of a text is the concatenation of the encodings of
    its parts at a space (byte-level BPE: GPT-2, Llama 3, SmolLM2, GLM), and models whose
    logits are their output head applied to the final hidden state, without soft-capping or
    scaling; others are refused when the view is built.

    Args:
        term_set: the tenant's active dictionaries.
        tokenizer: the engine's (base) HF tokenizer; not modified.
        model: the engine's HF causal LM; not modified.
    """

    def __init__(self, term_set: TermSet, tokenizer: Any, model: Any) -> None:
        self.term_set = term_set
        self.fingerprint = term_set.fingerprint
        # Its own copy (~0.1 s): a view is built on a caller's thread while the engine's worker
        # tokenizes with the shared one, and a Rust tokenizer must not be used from two threads.
        self.tokenizer = copy.deepcopy(tokenizer)
        tokenizer = self.tokenizer
        _check_supported(tokenizer, model)
        head = model.get_output_embeddings()
        embedding = model.get_input_embeddings()
        self.base_size = int(head.weight.shape[0])
        specials = [str(t) for t in getattr(tokenizer, "all_special_tokens", ()) if str(t)]
        self._specials = re.compile("|".join(map(re.escape, specials))) if specials else None
        entries = term_set.matcher.entries
        # Token ids: base_size + 2 * entry (after a space), base_size + 2 * entry + 1 (bare).
        self.strings: list[str] = []
        self.names: list[str] = []
        for entry in entries:
            name = term_token_name(entry.surface)
            self.strings += [" " + entry.surface, entry.surface]
            self.names += ["Ġ" + name, name]
        pieces = tokenizer(self.strings, add_special_tokens=False)["input_ids"] if entries else []
        flat = torch.tensor([i for ids in pieces for i in ids], dtype=torch.long)
        sizes = torch.tensor([len(ids) for ids in pieces], dtype=torch.long)
        owner = torch.repeat_interleave(torch.arange(len(pieces)), sizes)
        counts = torch.bincount(owner, minlength=len(pieces)).clamp(min=1).unsqueeze(1)

        def mean_of(vectors: torch.Tensor) -> torch.Tensor:
            total = vectors.new_zeros((len(pieces), vectors.shape[1]))
            return total.index_add_(0, owner.to(vectors.device), vectors) / counts.to(vectors)

        with torch.no_grad():
            # Inputs through the embedding module, not its weight: some models scale inside it.
            # Outputs from the head's own rows (the same tensor when the two are tied).
            self.input_rows = mean_of(embedding(flat.to(head.weight.device)))
            self.output_rows = mean_of(head.weight[flat.to(head.weight.device)])

    def __len__(self) -> int:
        """Tokens the view adds."""
        return len(self.strings)

    @property
    def size(self) -> int:
        """The extended vocabulary's size."""
        return self.base_size + len(self.strings)

    # -- text <-> ids ---------------------------------------------------------------------

    def encode(
        self, text: str, regions: Sequence[tuple[int, int]] | None = None,
        written: dict[int, str] | None = None,
    ) -> list[int]:  # fmt: skip
        """Token ids of ``text`` with every term hit as one merged token.

        Only hits inside ``regions`` (character ranges: the messages' contents in a rendered
        chat prompt) merge; by default, all of the text but the tokenizer's special tokens. So
        a term such as ``user`` never rewrites a role header or a special token. A hit right
        after a space takes that space (``Ġ<TERM_…>``), as the pieces it replaces would have;
        the text between hits is tokenized by the base tokenizer as usual. ``written``, when
        given, receives each merged id's text as this text writes it (for ``decode``).
        """
        spans = self.term_set.matcher.spans(fold_text(text))
        allowed = self._allowed(text, regions)
        hits = [
            (start, end, index)
            for start, end, index in zip(
                spans.starts.tolist(), spans.ends.tolist(), spans.entries.tolist(), strict=True
            )
            if any(low <= start and end <= high for low, high in allowed)
        ]
        if not hits:
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        segments: list[str] = []
        merged: list[int] = []
        position = 0
        for start, end, index in hits:
            spaced = start > position and text[start - 1] == " "
            segments.append(text[position : start - 1 if spaced else start])
            merged.append(self.base_size + 2 * index + (0 if spaced else 1))
            if written is not None:
                written[merged[-1]] = text[start - 1 if spaced else start : end]
            position = end
        segments.append(text[position:])
        encoded = self.tokenizer(segments, add_special_tokens=False)["input_ids"]
        ids: list[int] = []
        for segment_ids, term_id in zip(encoded, merged, strict=False):
            ids += segment_ids
            ids.append(term_id)
        ids += encoded[-1]
        return ids

    def _allowed(
        self, text: str, regions: Sequence[tuple[int, int]] | None
    ) -> Sequence[tuple[int, int]]:
        if regions is not None:
            return regions
        if self._specials is None:
            return [(0, len(text))]
        allowed, position = [], 0
        for special in self._specials.finditer(text):
            allowed.append((position, special.start()))
            position = special.end()
        allowed.append((position, len(text)))
        return allowed

    def decode(
        self, ids: Sequence[int], *, skip_special_tokens: bool = True,
        written: dict[int, str] | None = None,
    ) -> str:  # fmt: skip
        """Text of ``ids``, merged tokens as their terms.

        A merged token becomes the term as ``written`` has it (as the prompt wrote it, so an
        extracted value keeps the document's spelling), else its dictionary surface form.
        """
        parts: list[str] = []
        run: list[int] = []
        for token in ids:
            if token < self.base_size:
                run.append(token)
                continue
            if run:
                parts.append(self.tokenizer.decode(run, skip_special_tokens=skip_special_tokens))
                run = []
            known = written.get(token) if written else None
            parts.append(known if known is not None else self.strings[token - self.base_size])
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


def _check_supported(tokenizer: Any, model: Any) -> None:
    """Refuse tokenizers and models a merged-token view would silently get wrong."""
    config = getattr(model, "config", None)
    for setting in ("final_logit_softcapping", "logit_scale"):
        if getattr(config, setting, None):
            raise EngineUnavailable(
                f"term merging: this model's logits are transformed after the output head "
                f"({setting}), which merged tokens cannot follow; set term_merging: false"
            )
    if getattr(model.get_output_embeddings(), "bias", None) is not None:
        raise EngineUnavailable(
            "term merging: the model's output head has a bias; set term_merging: false"
        )

    def encode(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    for left, right in (("the", " force majeure clause,"), ("Total", " due: 5 EUR")):
        if encode(left) + encode(right) != encode(left + right):
            raise EngineUnavailable(
                "term merging needs a tokenizer that encodes text piece by piece the same as "
                "whole (byte-level BPE); this one adds a prefix to every piece (SentencePiece"
                "-style); set term_merging: false"
            )
