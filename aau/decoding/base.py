"""The constraint-backend seam: the ``ConstraintBackend`` protocol and its registry by name.

A backend turns a JSON Schema into something that constrains decoding for one tokenizer.
``ConstraintCompiler`` (``aau.decoding.constraints``) finds it in ``CONSTRAINT_BACKENDS`` by the
engine's ``constraint_backend`` name, builds it once per tokenizer, and keeps the rest to
itself: the in-memory cache, timing, the ``SpecError`` a unit author sees, the per-request
``TokenMask``. Backends are declared in the ``aau.constraint_backends`` entry-point group, the
shipped ones (``aau.decoding.backends``) in ``pyproject.toml`` like any third-party one, so
adding one (llguidance, a server that takes the schema itself) touches no code here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from aau.registry import Registry

if TYPE_CHECKING:
    import torch

__all__ = ["CONSTRAINT_BACKENDS", "ConstraintBackend", "Matcher", "schema_key"]


class Matcher(NamedTuple):
    """One request's matcher, as the callables a ``TokenMask`` calls per step.

    ``fill()`` overwrites every word of the request's bitmask with the tokens allowed next
    (what it returns is ignored); ``accept(token)`` advances past ``token`` and returns False
    (leaving the state unchanged) for a token the constraint does not allow. ``forced()``, where
    the library can tell, gives the tokens the constraint forces next (jump-forward: text such
    as ``{"amount":`` that the model has no say in), without advancing; None where it cannot.
    ``complete()``, where the library can tell, says whether the output so far is a whole
    match, so that a stop token may come next; without it every step may end.
    """

    fill: Callable[[], object]
    accept: Callable[[int], bool]
    forced: Callable[[], Sequence[int]] | None = None
    complete: Callable[[], bool] | None = None


class ConstraintBackend(Protocol):
    """A constrained-decoding library bound to one tokenizer.

    A backend class is built as ``Backend(tokenizer, vocab_size, *, model=None,
    cache_dir=None, extra_tokens=())``: the HF tokenizer, the model's logit rows (may exceed
    the tokenizer's vocabulary), the HF model (for a library that builds its vocabulary
    through it), a folder for compiled schemas kept across processes (None: memory only) and
    strings of tokens appended after the ``vocab_size`` rows (a tenant's merged terms). It
    raises ``ValueError`` there for an argument it cannot honour (e.g. extra tokens), so a
    misconfigured engine fails when it loads, not per request.

    ``compile`` is called under the compiler's lock, so a backend may build its tokenizer view
    lazily on the first schema without locking; ``new_matcher`` and ``new_processor`` are called
    per request, concurrently, and must not share mutable state between calls.

    Attributes:
        name: the name the backend is registered under (``xgrammar``, ``outlines_core``).
    """

    name: str

    @classmethod
    def check_schema(cls, schema: dict[str, Any]) -> None:
        """Whether the schema can be compiled at all, without a tokenizer (load-time checks).

        Raises:
            ValueError: it cannot; the message is the library's.
        """
        ...

    def compile(self, schema: dict[str, Any]) -> Any:
        """The schema compiled for this tokenizer (the library's object, opaque to callers).

        Raises:
            ValueError: the schema cannot be compiled; the message is the library's.
        """
        ...

    def new_matcher(self, compiled: Any, bitmask: torch.Tensor) -> Matcher:
        """One request's matcher over ``compiled`` (what ``compile`` returned).

        ``bitmask`` is an int32 tensor of shape ``(1, ceil(vocab / 32))``: token ``32 * i + j``
        may come next when bit ``j`` of word ``i`` is set; the matcher's ``fill`` writes it. A
        plain ``(fill, accept)`` pair is taken too, from a backend that cannot jump forward.
        """
        ...

    def new_processor(self, compiled: Any) -> Any:
        """A fresh outlines logits processor for one request (``processor(ids, logits)``).

        Raises:
            NotImplementedError: the backend has none (e.g. it constrains on a server).
        """
        ...


CONSTRAINT_BACKENDS: Registry[type[ConstraintBackend]] = Registry(
    "constraint backend", "aau.constraint_backends"
)
"""Constraint-backend classes by name, from the ``aau.constraint_backends`` entry points."""


def schema_key(schema: dict[str, Any]) -> str:
    """A stable hash of a schema (key order does not matter)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
