"""Compiling a JSON Schema into a constraint that masks logits, once per (schema, tokenizer).

``ConstraintCompiler`` builds the engine's constraint backend (``aau.decoding.base``: found by
name in ``CONSTRAINT_BACKENDS``; the shipped ones are in ``aau.decoding.backends``) for one
tokenizer and keeps what every backend shares: the in-memory cache of compiled schemas, the
compile time, and the ``SpecError`` a unit author sees when a schema cannot be compiled.

Per request, ``new_mask()`` gives a ``TokenMask``: the backend's matcher writing which tokens
may come next into a 32-bit bitmask row that the engine's decode loop reads per row and step in
numpy. The backend hands over its ``fill``/``accept`` callables once, when the mask is built,
so a step costs the library's own call and nothing more. outlines' logits processors
(``new_processor()``), which mask a whole logits tensor per call, serve callers that plug into
HF ``generate``. ``schema_compile_problem`` answers, with no tokenizer, whether a backend can
compile a schema at all: the load-time check of a unit.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aau.decoding.base import CONSTRAINT_BACKENDS, ConstraintBackend, schema_key
from aau.errors import SpecError

__all__ = [
    "CompiledConstraint",
    "ConstraintCompiler",
    "TokenMask",
    "schema_compile_problem",
    "schema_key",
]


def schema_compile_problem(schema: dict[str, Any], backend: str = "xgrammar") -> str | None:
    """Why ``backend`` cannot compile ``schema`` (its own message), or None when it can.

    Needs no tokenizer or model, so a unit's schema is checked when it loads. Pass the schema
    the engine will compile: the bounded one (``bound_schema``).

    Raises:
        UnknownName: no backend is registered as ``backend`` (the message lists them).
    """
    try:
        CONSTRAINT_BACKENDS.get(backend).check_schema(schema)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(slots=True)
class CompiledConstraint:
    """A compiled schema; ``new_mask()`` or ``new_processor()`` gives one request's state.

    Attributes:
        schema: the schema compiled.
        backend: the name of the backend that compiled it.
        compiled: the backend's compiled object.
        compile_ms: how long compiling took (a disk-cache hit counts as a compile).
        source: the backend instance, which makes the per-request matchers.
        vocab_size: tokens the mask covers (the model's rows plus any merged terms).
    """

    schema: dict[str, Any]
    backend: str
    compiled: Any
    compile_ms: float
    source: ConstraintBackend = field(repr=False)
    vocab_size: int = 0

    def new_processor(self) -> Any:
        """A per-request outlines logits processor: ``processor(input_ids, logits) -> logits``."""
        return self.source.new_processor(self.compiled)

    def new_mask(self) -> TokenMask:
        """A per-request ``TokenMask`` at the start of the output."""
        return TokenMask(self.source, self.compiled, self.vocab_size)


_UNASKED = -1  # TokenMask.only() not asked since the last fill (tokens are never negative)


class TokenMask:
    """One request's constraint state: which tokens may come next, and the token chosen.

    Per step the engine calls ``fill()`` (the backend writes its bitmask row: microseconds;
    again only after an ``accept``), asks ``only()`` and ``allows(token)`` of it (a few words
    read, no unpacking), unpacks it with ``allowed()`` only when the model's favourite is not
    allowed, and ``accept``s the token chosen. ``jump()`` gives the tokens the constraint
    forces next, where the backend can tell, so the engine feeds them without a step each;
    ``may_end()`` whether a stop may come next, without a fill. ``fill`` and ``only`` may run
    on another thread than the rest, one at a time (the engine fills during a forward).

    Args:
        backend: the backend that compiled ``compiled``; asked once for the matcher.
        compiled: the backend's compiled schema.
        vocab_size: tokens the mask covers.
    """

    __slots__ = ("_accept", "_bits", "_complete", "_fill", "_filled", "_forced", "_only", "_words",
                 "vocab_size")  # fmt: skip

    _fill: Callable[[], object]  # what it returns is ignored
    _accept: Callable[[int], bool]
    _forced: Callable[[], Sequence[int]] | None
    _complete: Callable[[], bool] | None

    def __init__(self, backend: ConstraintBackend, compiled: Any, vocab_size: int) -> None:
        import torch

        self.vocab_size = vocab_size
        bitmask = torch.full((1, (vocab_size + 31) // 32), -1, dtype=torch.int32)
        # The tensor's memory as words and as bytes: token ``32 * i + j`` is bit ``j`` of word
        # ``i``, which on a little-endian host is bit ``j % 8`` of byte ``4 * i + j // 8``.
        self._words = bitmask.numpy()[0].view(np.uint32)
        self._bits = self._words.view(np.uint8)
        matcher = backend.new_matcher(compiled, bitmask)
        self._fill, self._accept = matcher[0], matcher[1]
        self._forced = matcher[2] if len(matcher) > 2 else None  # a plain pair: no jumps
        self._complete = matcher[3] if len(matcher) > 3 else None
        self._filled = False
        self._only: int | None = _UNASKED  # only()'s answer since the last fill

    def fill(self) -> None:
        """Compute which tokens may come next (before ``allows``, ``only``, ``allowed``)."""
        if not self._filled:
            self._fill()
            self._filled = True
            self._only = _UNASKED

    def may_end(self) -> bool:
        """Whether a stop token may come next (the output so far is a whole match).

        Answered without a fill where the backend can tell; otherwise always True.
        """
        return True if self._complete is None else bool(self._complete())

    def allows(self, token: int) -> bool:
        """Whether ``token`` may come next."""
        return token < self.vocab_size and bool((int(self._words[token >> 5]) >> (token & 31)) & 1)

    def only(self) -> int | None:
        """The one token that may come next, if exactly one may (the output is forced there).

        Asked twice a step (a jump's stop check, then the choice); answered once per fill.
        """
        if self._only == _UNASKED:
            self._only = self._single()
        return self._only

    def _single(self) -> int | None:
        words = self._words
        if np.count_nonzero(words) != 1:  # no index array built: most steps allow many
            return None
        index = int(words.argmax())  # the one word that is not 0
        word = int(words[index])
        if word.bit_count() != 1:
            return None
        token = index * 32 + word.bit_length() - 1
        return token if token < self.vocab_size else None

    def allowed(self) -> np.ndarray:
        """One bool per token of the vocabulary: may it come next?"""
        return np.unpackbits(self._bits, count=self.vocab_size, bitorder="little").view(bool)

    def accept(self, token: int) -> None:
        """Advance past ``token``; a token the mask did not allow is a bug, not an input."""
        if not self._accept(token):
            raise RuntimeError(f"the constraint rejected token {token}")
        self._filled = False

    def jump(self) -> list[int]:
        """The tokens the constraint forces next (none where the backend cannot tell).

        Does not advance: the caller ``accept``s each one it feeds.
        """
        return [] if self._forced is None else list(self._forced())


class ConstraintCompiler:
    """Compiles and caches constraints for one tokenizer.

    Args:
        tokenizer: the HF tokenizer the engine decodes with.
        vocab_size: rows of the model's logits (may exceed the tokenizer's vocabulary).
        model: the HF model (needed by the ``outlines_core`` backend only).
        backend: the registered name of the constraint backend: ``xgrammar`` (default,
            fastest to compile), ``outlines_core``, or a plug-in's.
        max_entries: compiled schemas kept in memory, least recently used out.
        cache_dir: where a backend that can keeps compiled schemas across processes (xgrammar:
            keyed by schema, tokenizer and library version); None keeps them in memory only.
        extra_tokens: strings of tokens appended after the model's ``vocab_size`` rows (a
            tenant's merged terms); xgrammar only.

    Raises:
        UnknownName: no backend is registered as ``backend`` (the message lists them).
        ValueError: the backend cannot take these arguments (e.g. extra tokens).
    """

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        model: Any = None,
        *,
        backend: str = "xgrammar",
        max_entries: int = 256,
        cache_dir: Path | None = None,
        extra_tokens: Sequence[str] = (),
    ) -> None:
        self.tokenizer, self.vocab_size, self.backend = tokenizer, vocab_size, backend
        self.extra_tokens = tuple(extra_tokens)
        self.model, self.cache_dir = model, cache_dir
        factory: Any = CONSTRAINT_BACKENDS.get(backend)  # its constructor is documented, not typed
        self._backend: ConstraintBackend = factory(
            tokenizer, vocab_size, model=model, cache_dir=cache_dir, extra_tokens=self.extra_tokens
        )
        self._cache: OrderedDict[str, CompiledConstraint] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()

    @property
    def disk_hits(self) -> int:
        """Compiles the backend answered from its on-disk cache (0 for one without)."""
        return int(getattr(self._backend, "disk_hits", 0))

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
                compiled = self._backend.compile(schema)
            except Exception as exc:  # ValueError by contract; a plug-in may raise others
                raise SpecError(
                    f"{unit}: output schema cannot be compiled for constrained decoding: {exc}",
                    field="output",
                    check="S014",
                ) from exc
            constraint = CompiledConstraint(
                schema, self.backend, compiled, (time.perf_counter() - started) * 1000,
                self._backend, self.vocab_size + len(self.extra_tokens),
            )  # fmt: skip
            self._cache[key] = constraint
            if len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
            return constraint
