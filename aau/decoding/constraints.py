"""Compiling a JSON Schema into a constraint that masks logits, once per (schema, tokenizer).

The backend is chosen by measurement (``benchmarks/RESULTS.md``): xgrammar compiles a unit
schema in milliseconds, outlines-core in tens of milliseconds, and both give the same masks.
Per request, ``new_mask()`` gives a ``TokenMask``: the backend's own matcher (xgrammar's
``GrammarMatcher``, outlines-core's ``Guide``) writing which tokens may come next into a 32-bit
bitmask row, the format both share. The engine's decode loop reads it per row and step in numpy;
outlines' logits processors (``new_processor()``), which mask a whole logits tensor per call,
serve callers that plug into HF ``generate``.

xgrammar is compiled here with compact separators and no free whitespace: small models given
free whitespace pretty-print (and sometimes loop on newlines), which costs tokens for nothing.
Its vocabulary is the tokenizer's decoded tokens with every special token blanked (xgrammar
would otherwise read ``<|im_start|>`` as literal text a JSON string may hold), plus any
``extra_tokens`` a tenant's merged-term view appends after the model's rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import numpy as np

from aau.errors import SpecError

__all__ = ["CompiledConstraint", "ConstraintCompiler", "TokenMask"]

Backend = Literal["xgrammar", "outlines_core"]


def schema_key(schema: dict[str, Any]) -> str:
    """A stable hash of a schema (key order does not matter)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(slots=True)
class CompiledConstraint:
    """A compiled schema; ``new_processor()`` gives a fresh stateful mask for one request."""

    schema: dict[str, Any]
    backend: Backend
    compiled: Any
    compile_ms: float
    _factory: Any = field(repr=False, default=None)
    vocab_size: int = 0  # tokens the mask covers (the model's rows plus any merged terms)

    def new_processor(self) -> Any:
        """A per-request outlines logits processor: ``processor(input_ids, logits) -> logits``."""
        return self._factory(self.compiled)

    def new_mask(self) -> TokenMask:
        """A per-request ``TokenMask`` at the start of the output."""
        return TokenMask(self.backend, self.compiled, self.vocab_size)


class TokenMask:
    """One request's constraint state: which tokens may come next, and the token chosen.

    Per step the engine calls ``fill()`` (the backend writes its bitmask row: microseconds),
    asks ``only()`` and ``allows(token)`` of it (a few words read, no unpacking), unpacks it
    with ``allowed()`` only when the model's favourite is not allowed, and ``accept``s the
    token chosen.
    """

    __slots__ = ("_accept", "_bits", "_fill", "_words", "vocab_size")

    def __init__(self, backend: Backend, compiled: Any, vocab_size: int) -> None:
        import torch

        self.vocab_size = vocab_size
        bitmask = torch.full((1, (vocab_size + 31) // 32), -1, dtype=torch.int32)
        # The tensor's memory as words and as bytes: token ``32 * i + j`` is bit ``j`` of word
        # ``i``, which on a little-endian host is bit ``j % 8`` of byte ``4 * i + j // 8``.
        self._words = bitmask.numpy()[0].view(np.uint32)
        self._bits = self._words.view(np.uint8)
        if backend == "xgrammar":
            import xgrammar as xgr

            matcher = xgr.GrammarMatcher(compiled)
            self._fill = lambda: matcher.fill_next_token_bitmask(bitmask, 0)
            self._accept = matcher.accept_token
        else:
            from outlines_core import Guide

            guide = Guide(compiled)
            address, words = bitmask.data_ptr(), bitmask.numel()
            self._fill = lambda: guide.write_mask_into(address, words, 4)

            def accept(token: int) -> bool:
                if not guide.accepts_tokens([token]):
                    return False
                guide.advance(token_id=token, return_tokens=False)
                return True

            self._accept = accept

    def fill(self) -> None:
        """Compute which tokens may come next (before ``allows``, ``only``, ``allowed``)."""
        self._fill()

    def allows(self, token: int) -> bool:
        """Whether ``token`` may come next."""
        return token < self.vocab_size and bool((int(self._words[token >> 5]) >> (token & 31)) & 1)

    def only(self) -> int | None:
        """The one token that may come next, if exactly one may (the output is forced there)."""
        nonzero = np.flatnonzero(self._words)
        if len(nonzero) != 1:
            return None
        word = int(self._words[nonzero[0]])
        if word.bit_count() != 1:
            return None
        token = int(nonzero[0]) * 32 + word.bit_length() - 1
        return token if token < self.vocab_size else None

    def allowed(self) -> np.ndarray:
        """One bool per token of the vocabulary: may it come next?"""
        return np.unpackbits(self._bits, count=self.vocab_size, bitorder="little").view(bool)

    def accept(self, token: int) -> None:
        """Advance past ``token``; a token the mask did not allow is a bug, not an input."""
        if not self._accept(token):
            raise RuntimeError(f"the constraint rejected token {token}")


class ConstraintCompiler:
    """Compiles and caches constraints for one tokenizer.

    Args:
        tokenizer: the HF tokenizer the engine decodes with.
        vocab_size: rows of the model's logits (may exceed the tokenizer's vocabulary).
        model: the HF model (needed by the ``outlines_core`` backend only).
        cache_dir: where compiled xgrammar schemas are kept across processes (keyed by schema,
            tokenizer and library version); None keeps them in memory only.
        backend: ``xgrammar`` (default, fastest to compile) or ``outlines_core``.
        max_entries: compiled schemas kept in memory, least recently used out.
        extra_tokens: strings of tokens appended after the model's ``vocab_size`` rows (a
            tenant's merged terms); xgrammar only.
    """

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        model: Any = None,
        *,
        backend: Backend = "xgrammar",
        max_entries: int = 256,
        cache_dir: Path | None = None,
        extra_tokens: Sequence[str] = (),
    ) -> None:
        self.tokenizer, self.vocab_size, self.backend = tokenizer, vocab_size, backend
        self.extra_tokens = tuple(extra_tokens)
        if self.extra_tokens and backend != "xgrammar":
            raise ValueError("merged term tokens need the xgrammar constraint backend")
        self.model = model  # outlines-core's vocabulary is built through outlines' model wrapper
        self._cache: OrderedDict[str, CompiledConstraint] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._compiler: Any = None
        self._tokenizer_info: Any = None
        self.cache_dir = cache_dir
        self.disk_hits = 0
        self._fingerprint: str | None = None

    def _xgrammar_compile(self, schema: dict[str, Any]) -> tuple[Any, Any]:
        import xgrammar as xgr
        from outlines.backends.xgrammar import XGrammarLogitsProcessor

        if self._compiler is None:
            info = self._xgrammar_tokenizer_info()
            self._tokenizer_info = info
            self._compiler = xgr.GrammarCompiler(info, cache_enabled=True)
        path = self._disk_path(schema)
        if path is not None and path.is_file():
            try:
                compiled = xgr.CompiledGrammar.deserialize_json(
                    path.read_text(encoding="utf-8"), self._tokenizer_info
                )
                self.disk_hits += 1
                return compiled, lambda c: XGrammarLogitsProcessor(c, "torch")
            except (OSError, RuntimeError, ValueError):
                path.unlink(missing_ok=True)  # corrupt or from another build: recompile
        compiled = self._compiler.compile_json_schema(
            json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=True
        )
        if path is not None:
            try:  # write-then-rename, so a concurrent reader never sees half a file
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(compiled.serialize_json(), encoding="utf-8")
                tmp.replace(path)
            except OSError:
                pass  # the disk cache only saves time
        return compiled, lambda c: XGrammarLogitsProcessor(c, "torch")

    def _xgrammar_tokenizer_info(self) -> Any:
        import xgrammar as xgr

        base = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.vocab_size)
        specials = set(getattr(self.tokenizer, "all_special_ids", ())) | {
            i for i, t in getattr(self.tokenizer, "added_tokens_decoder", {}).items() if t.special
        }
        decoded = list(base.decoded_vocab)[: self.vocab_size]
        decoded += [b""] * (self.vocab_size - len(decoded))
        for token in specials:
            if token < len(decoded):
                decoded[token] = b""  # an empty token is special to xgrammar: never text
        decoded += [token.encode() for token in self.extra_tokens]
        return xgr.TokenizerInfo(
            decoded,
            vocab_type=xgr.VocabType.RAW,
            vocab_size=self.vocab_size + len(self.extra_tokens),
            stop_token_ids=list(base.stop_token_ids),
        )

    def _disk_path(self, schema: dict[str, Any]) -> Path | None:
        if self.cache_dir is None:
            return None
        if self._fingerprint is None:
            vocab = sorted(self.tokenizer.get_vocab().items(), key=lambda kv: kv[1])
            digest = hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode())
            digest.update(f"{self.vocab_size}|xgrammar {version('xgrammar')}|compact".encode())
            digest.update(("\x00".join(self.extra_tokens) + "|specials blanked").encode())
            self._fingerprint = digest.hexdigest()[:16]
        return self.cache_dir / f"{self._fingerprint}-{schema_key(schema)}.json"

    def _outlines_core_compile(self, schema: dict[str, Any]) -> tuple[Any, Any]:
        import outlines
        from outlines.backends.outlines_core import OutlinesCoreBackend, OutlinesCoreLogitsProcessor
        from outlines_core import Index
        from outlines_core.json_schema import build_regex_from_schema

        if self._compiler is None:
            self._compiler = OutlinesCoreBackend(
                outlines.from_transformers(self.model, self.tokenizer)
            )
        regex = build_regex_from_schema(json.dumps(schema), "")
        return Index(regex, self._compiler.vocabulary), lambda i: OutlinesCoreLogitsProcessor(
            i, "torch"
        )

    def compile(self, schema: dict[str, Any], *, unit: str = "<unit>") -> CompiledConstraint:
        """The compiled constraint for ``schema``, from cache when seen before.

        Raises:
            SpecError: the backend cannot compile the schema (code S014).
        """
        key = schema_key(schema)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            started = time.perf_counter()
            try:
                compile_fn = (
                    self._xgrammar_compile
                    if self.backend == "xgrammar"
                    else self._outlines_core_compile
                )
                compiled, factory = compile_fn(schema)
            except Exception as exc:  # the backends raise RuntimeError/ValueError variants
                raise SpecError(
                    f"{unit}: output schema cannot be compiled for constrained decoding: {exc}",
                    field="output",
                    code="S014",
                ) from exc
            constraint = CompiledConstraint(
                schema, self.backend, compiled, (time.perf_counter() - started) * 1000, factory,
                self.vocab_size + len(self.extra_tokens),
            )  # fmt: skip
            self._cache[key] = constraint
            if len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
            return constraint
