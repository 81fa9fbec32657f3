"""Operations on transformers' ``DynamicCache`` that batching and prefix reuse need.

A decode batch keeps one cache whose rows are left-padded to a common length; rows join (their
own prefilled cache is padded and stacked in), leave (selected out) and the common padding is
trimmed. A prefix-cache hit is a *view* of a stored cache cropped to the shared length: safe
without copying, because ``DynamicLayer.update`` concatenates into new tensors and never writes
in place.

The batch's own cache appends in place instead (``with_room``): its layers keep their keys and
values at the front of buffers with room for more positions, so a decode step writes one
position rather than copying the whole cache (that copy was a fifth of a decode step at 40 rows
of 300 positions). Only positions past every view ever handed out are written, and a copy made
by any operation here starts without room, so no two layers write into one buffer.

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

__all__ = ["RoomyLayer", "cache_bytes", "cache_from_tensors", "is_batchable", "left_pad",
           "own_layers", "select_rows", "stack_left_padded", "tensors_of", "trim_left", "truncate",
           "with_room"]  # fmt: skip


class RoomyLayer(DynamicLayer):
    """A ``DynamicLayer`` that appends in place.

    ``keys`` and ``values`` are views of the first positions of buffers with ``ROOM`` positions
    to spare; the buffers are reallocated only when full.
    """

    ROOM = 64
    _key_room: torch.Tensor | None = None
    _value_room: torch.Tensor | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new positions and return all of them (the contract of ``DynamicLayer``)."""
        if not self.is_initialized or self.keys is None or self.keys.numel() == 0:
            return super().update(key_states, value_states, *args, **kwargs)
        keys, values = self.keys, self.values
        assert values is not None  # initialized with the keys
        held, adding = keys.shape[-2], key_states.shape[-2]
        key_room, value_room = self._key_room, self._value_room
        if key_room is None or value_room is None or key_room.shape[-2] < held + adding:
            key_room = self._key_room = self._grown(keys, held + adding)
            value_room = self._value_room = self._grown(values, held + adding)
        key_room[..., held : held + adding, :] = key_states
        value_room[..., held : held + adding, :] = value_states
        self.keys = key_room[..., : held + adding, :]
        self.values = value_room[..., : held + adding, :]
        return self.keys, self.values

    def _grown(self, tensor: torch.Tensor, needed: int) -> torch.Tensor:
        shape = list(tensor.shape)
        shape[-2] = needed + self.ROOM
        buffer = tensor.new_empty(shape)
        buffer[..., : tensor.shape[-2], :] = tensor
        return buffer

    def drop_room(self) -> None:
        """Forget the buffers (a copy must not write into the original's)."""
        self._key_room = self._value_room = None


def with_room(cache: DynamicCache) -> DynamicCache:
    """A shallow copy whose plain layers append in place (``RoomyLayer``); tensors are shared.

    For the decode batch's own cache only: a cache stored elsewhere (the prefix cache) must
    keep the copy-on-append layers its views rely on.
    """
    out = copy.copy(cache)
    out.layers = []
    for layer in cache.layers:
        if type(layer) is DynamicLayer:
            roomy = RoomyLayer.__new__(RoomyLayer)
            roomy.__dict__.update(layer.__dict__)
            layer = roomy
        out.layers.append(layer)
    return out


# (attribute, batch dim, sequence dim) of every tensor a supported layer holds.
_TENSORS: dict[type, tuple[tuple[str, int, int], ...]] = {
    DynamicLayer: (("keys", 0, -2), ("values", 0, -2)),
    RoomyLayer: (("keys", 0, -2), ("values", 0, -2)),
    DynamicIndexedLayer: (("keys", 0, -2), ("values", 0, -2), ("indexer_keys", 0, 1)),
}


def is_batchable(cache: DynamicCache) -> bool:
    """Whether every layer is of a type these operations understand."""
    return all(type(layer) in _TENSORS for layer in cache.layers)


def _copied(layer: Any) -> Any:
    """A shallow copy of ``layer``; a roomy one's copy starts without the original's buffers."""
    new = copy.copy(layer)
    if isinstance(new, RoomyLayer):
        new.drop_room()
    return new


def _map(cache: DynamicCache, fn: Callable[[torch.Tensor, int, int], torch.Tensor]) -> DynamicCache:
    """A shallow copy of ``cache`` whose tensors are ``fn(tensor, batch_dim, seq_dim)``."""
    out = copy.copy(cache)
    out.layers = []
    for layer in cache.layers:
        new = _copied(layer)
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
    """Only the batch rows ``rows``, in that order.

    ``rows`` may be on another device: the batch keeps its bookkeeping on the CPU, the cache
    may be on a GPU.
    """
    return _map(cache, lambda t, b, _s: t.index_select(b, rows.to(t.device)))


def stack_left_padded(parts: Sequence[tuple[DynamicCache, int]]) -> DynamicCache:
    """The caches concatenated along the batch dimension, each left-padded by its amount.

    ``parts``: (cache, padding) pairs whose lengths plus paddings are equal. Each position is
    written once, into a buffer allocated for all rows; padding and then stacking copied every
    position twice (at 48 rows of 400 positions, 0.55 s of a 4.2 s round). The padding is
    zeros, not left uninitialised: masked positions still enter the attention product with
    weight 0, and 0 times a stray NaN would be NaN.
    """
    first = parts[0][0]
    out = copy.copy(first)
    out.layers = []
    for index, layer in enumerate(first.layers):
        new = _copied(layer)
        for name, batch_dim, seq_dim in _TENSORS[type(layer)]:
            tensors: list[Any] = [getattr(c.layers[index], name, None) for c, _ in parts]
            if not all(t is not None and t.numel() > 0 for t in tensors):
                continue
            seq = seq_dim % tensors[0].dim()
            shape = list(tensors[0].shape)
            shape[batch_dim] = sum(t.shape[batch_dim] for t in tensors)
            shape[seq] = tensors[0].shape[seq] + parts[0][1]
            stacked = tensors[0].new_empty(shape)
            offset = 0
            for tensor, (_, padding) in zip(tensors, parts, strict=True):
                rows = stacked.narrow(batch_dim, offset, tensor.shape[batch_dim])
                rows.narrow(seq, 0, padding).zero_()
                rows.narrow(seq, padding, tensor.shape[seq]).copy_(tensor)
                offset += tensor.shape[batch_dim]
            setattr(new, name, stacked)
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


def tensors_of(cache: DynamicCache) -> dict[str, torch.Tensor] | None:
    """Every tensor of ``cache`` by name (``"<layer>.<attribute>"``), contiguous, for saving.

    A layer's keys and values are always there; its other tensors where the model wrote them
    (GLM-5 leaves some layers' indexer keys out). None for a cache this module cannot rebuild:
    a layer of another type, or one holding state beyond its tensors (indexer positions).
    """
    if not is_batchable(cache):
        return None
    out: dict[str, torch.Tensor] = {}
    for index, layer in enumerate(cache.layers):
        if getattr(layer, "indexer_position_ids", None) is not None:
            return None
        for name, _b, _s in _TENSORS[type(layer)]:
            tensor = getattr(layer, name, None)
            if tensor is not None and tensor.numel() > 0:
                out[f"{index}.{name}"] = tensor.contiguous()
            elif name in ("keys", "values"):
                return None
    return out


def cache_from_tensors(config: Any, tensors: dict[str, torch.Tensor]) -> DynamicCache | None:
    """The cache ``tensors_of`` gave ``tensors`` from, rebuilt for a model of ``config``.

    None when the tensors do not fit that model's layers (names, a batch of one, one length):
    a cache saved by another model must not be continued.
    """
    cache = DynamicCache(config=config)
    if not cache.layers or not is_batchable(cache):
        return None
    layers: list[Any] = list(cache.layers)
    allowed = {f"{i}.{name}" for i, layer in enumerate(layers)
               for name, _b, _s in _TENSORS[type(layer)]}  # fmt: skip
    if not set(tensors) <= allowed:
        return None
    lengths = set()
    for index, layer in enumerate(layers):
        keys, values = tensors.get(f"{index}.keys"), tensors.get(f"{index}.values")
        if keys is None or values is None or keys.dim() != 4 or values.dim() != 4:
            return None
        if keys.shape[0] != 1 or keys.shape[:3] != values.shape[:3]:
            return None
        lengths.add(keys.shape[-2])
        layer.update(keys, values)
        indexer = tensors.get(f"{index}.indexer_keys")
        if indexer is not None:
            if indexer.dim() != 3 or indexer.shape[0] != 1:
                return None
            lengths.add(indexer.shape[1])
            layer.update_indexer(indexer)
    return cache if len(lengths) == 1 else None
