"""Operations on transformers' ``DynamicCache`` that batching and prefix reuse need.

A decode batch keeps one cache whose rows are left-padded to a common length; rows join (their
own prefilled cache is padded and stacked in), leave (selected out) and the common padding is
trimmed. A prefix-cache hit is a *view* of a stored cache cropped to the shared length: safe
without copying, because ``DynamicLayer.update`` concatenates into new tensors and never writes
in place.

Supported layer types: ``DynamicLayer`` (keys/values ``[batch, heads, seq, dim]``) and
``DynamicIndexedLayer`` (adds DSA indexer keys ``[batch, seq, dim]``, GLM-5). Other layer types
(sliding windows, static caches) report ``is_batchable() == False`` and the engine runs their
requests one at a time.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers.cache_utils import DynamicCache, DynamicIndexedLayer, DynamicLayer

__all__ = ["cache_bytes", "is_batchable", "left_pad", "own_layers",
           "select_rows", "stack_rows", "trim_left", "truncate"]  # fmt: skip

# (attribute, batch dim, sequence dim) of every tensor a supported layer holds.
_TENSORS: dict[type, tuple[tuple[str, int, int], ...]] = {
    DynamicLayer: (("keys", 0, -2), ("values", 0, -2)),
    DynamicIndexedLayer: (("keys", 0, -2), ("values", 0, -2), ("indexer_keys", 0, 1)),
}


def is_batchable(cache: DynamicCache) -> bool:
    """Whether every layer is of a type these operations understand."""
    return all(type(layer) in _TENSORS for layer in cache.layers)


def _map(cache: DynamicCache, fn: Callable[[torch.Tensor, int, int], torch.Tensor]) -> DynamicCache:
    """A shallow copy of ``cache`` whose tensors are ``fn(tensor, batch_dim, seq_dim)``."""
    out = copy.copy(cache)
    out.layers = []
    for layer in cache.layers:
        new = copy.copy(layer)
        for name, batch_dim, seq_dim in _TENSORS[type(layer)]:
            tensor = getattr(layer, name, None)
            if tensor is not None and tensor.numel() > 0:
                setattr(new, name, fn(tensor, batch_dim, seq_dim))
        out.layers.append(new)
    return out


def own_layers(cache: DynamicCache) -> DynamicCache:
    """A copy with its own layer objects sharing the same tensors (no tensor copy)."""
    return _map(cache, lambda t, _b, _s: t)


def truncate(cache: DynamicCache, length: int) -> DynamicCache:
    """A view holding the first ``length`` positions (no copy)."""
    return _map(cache, lambda t, _b, s: t.narrow(s % t.dim(), 0, length))


def left_pad(cache: DynamicCache, amount: int) -> DynamicCache:
    """``amount`` zero positions in front of every row (masked out by the attention mask)."""
    if amount <= 0:
        return cache

    def pad(t: torch.Tensor, _b: int, s: int) -> torch.Tensor:
        shape = list(t.shape)
        shape[s] = amount
        return torch.cat([t.new_zeros(shape), t], dim=s)

    return _map(cache, pad)


def trim_left(cache: DynamicCache, amount: int) -> DynamicCache:
    """Drop the first ``amount`` positions of every row (padding no row needs any more)."""
    if amount <= 0:
        return cache
    return _map(cache, lambda t, _b, s: t.narrow(s % t.dim(), amount, t.shape[s] - amount))


def select_rows(cache: DynamicCache, rows: torch.Tensor) -> DynamicCache:
    """Only the batch rows ``rows``, in that order."""
    return _map(cache, lambda t, b, _s: t.index_select(b, rows))


def stack_rows(caches: Sequence[DynamicCache]) -> DynamicCache:
    """Concatenate caches of equal length along the batch dimension."""
    first = caches[0]
    out = copy.copy(first)
    out.layers = []
    for index, layer in enumerate(first.layers):
        new = copy.copy(layer)
        for name, batch_dim, _seq in _TENSORS[type(layer)]:
            parts: list[Any] = [getattr(c.layers[index], name, None) for c in caches]
            if all(p is not None and p.numel() > 0 for p in parts):
                setattr(new, name, torch.cat(parts, dim=batch_dim))
        out.layers.append(new)
    return out


def row_without_padding(
    cache: DynamicCache, row: int, spans: Sequence[tuple[int, int]]
) -> DynamicCache:
    """Batch row ``row`` alone, keeping only the positions in ``spans`` (start, length)."""

    def cut(t: torch.Tensor, b: int, s: int) -> torch.Tensor:
        own = t.narrow(b, row, 1)
        return torch.cat([own.narrow(s % t.dim(), start, length) for start, length in spans], s)

    return _map(cache, cut)


def cache_bytes(cache: DynamicCache) -> int:
    """Memory held by the cache's tensors."""
    total = 0
    for layer in cache.layers:
        for name, _b, _s in _TENSORS.get(type(layer), ()):
            tensor: Any = getattr(layer, name, None)
            if tensor is not None:
                total += tensor.numel() * tensor.element_size()
    return total
