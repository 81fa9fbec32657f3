"""``aau.engines.kv``: a padded batch row cut back to its own positions."""

from __future__ import annotations

import torch
from transformers import DynamicCache

from aau.engines import kv


def cache_of(keys: torch.Tensor) -> DynamicCache:
    cache = DynamicCache()
    cache.update(keys, keys + 100, 0)
    return cache


def test_a_row_without_its_padding_keeps_only_its_positions_in_order() -> None:
    # Two rows, 6 positions: row 1 is [pad, c0, c1, pad, n0, n1].
    keys = torch.arange(2 * 6, dtype=torch.float32).reshape(2, 1, 6, 1)
    cache = cache_of(keys)

    own = kv.row_without_padding(cache, 1, [(1, 2), (4, 2)])

    layer = own.layers[0]
    assert layer.keys.flatten().tolist() == [7.0, 8.0, 10.0, 11.0]
    assert layer.values.flatten().tolist() == [107.0, 108.0, 110.0, 111.0]
    assert cache.layers[0].keys.shape == (2, 1, 6, 1)  # the batch cache is left as it was
