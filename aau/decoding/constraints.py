"""Compiling a JSON Schema into a constraint that masks logits, once per (schema, tokenizer).

The backend is chosen by measurement (``benchmarks/RESULTS.md``): xgrammar compiles a unit
schema in milliseconds, outlines-core in tens of milliseconds, and both give the same masks.
Logits processors come from outlines' backend layer, so either backend plugs into the engine's
decode loop the same way: ``processor(input_ids, logits)`` per step, one processor per request.

xgrammar is compiled here with compact separators and no free whitespace: small models given
free whitespace pretty-print (and sometimes loop on newlines), which costs tokens for nothing.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from aau.errors import SpecError

__all__ = ["CompiledConstraint", "ConstraintCompiler"]

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

    def new_processor(self) -> Any:
        """A per-request outlines logits processor: ``processor(input_ids, logits) -> logits``."""
        return self._factory(self.compiled)


class ConstraintCompiler:
    """Compiles and caches constraints for one tokenizer.

    Args:
        tokenizer: the HF tokenizer the engine decodes with.
        vocab_size: rows of the model's logits (may exceed the tokenizer's vocabulary).
        model: the HF model (needed by the ``outlines_core`` backend only).
        backend: ``xgrammar`` (default, fastest to compile) or ``outlines_core``.
        max_entries: compiled schemas kept in memory, least recently used out.
    """

    def __init__(
        self,
        tokenizer: Any,
        vocab_size: int,
        model: Any = None,
        *,
        backend: Backend = "xgrammar",
        max_entries: int = 256,
    ) -> None:
        self.tokenizer, self.vocab_size, self.backend = tokenizer, vocab_size, backend
        self.model = model  # outlines-core's vocabulary is built through outlines' model wrapper
        self._cache: OrderedDict[str, CompiledConstraint] = OrderedDict()
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._compiler: Any = None

    def _xgrammar_compile(self, schema: dict[str, Any]) -> tuple[Any, Any]:
        import xgrammar as xgr
        from outlines.backends.xgrammar import XGrammarLogitsProcessor

        if self._compiler is None:
            info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.vocab_size)
            self._compiler = xgr.GrammarCompiler(info, cache_enabled=True)
        compiled = self._compiler.compile_json_schema(
            json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=True
        )
        return compiled, lambda c: XGrammarLogitsProcessor(c, "torch")

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
                schema, self.backend, compiled, (time.perf_counter() - started) * 1000, factory
            )
            self._cache[key] = constraint
            if len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
            return constraint
