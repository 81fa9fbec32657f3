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


def test_a_roomy_layer_appends_in_place_and_reads_as_concatenation_would() -> None:
    keys = torch.arange(2 * 3, dtype=torch.float32).reshape(2, 1, 3, 1)
    plain, roomy = cache_of(keys), kv.with_room(cache_of(keys))
    assert isinstance(roomy.layers[0], kv.RoomyLayer)

    buffers = set()
    for step in range(5):
        new = torch.full((2, 1, 1, 1), 50.0 + step)
        expected = plain.update(new, new + 100, 0)
        got = roomy.update(new, new + 100, 0)
        assert torch.equal(got[0], expected[0])
        assert torch.equal(got[1], expected[1])
        buffers.add(roomy.layers[0].keys.untyped_storage().data_ptr())
    assert len(buffers) == 1  # one buffer after the first append: no copy per step


def test_a_copy_of_a_roomy_cache_never_writes_into_the_original() -> None:
    roomy = kv.with_room(cache_of(torch.zeros(1, 1, 2, 1)))
    roomy.update(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 1, 1), 0)  # the buffer now has room
    view = kv.truncate(roomy, 3)  # what a prefix-cache hit or a batch operation holds
    copy = kv.own_layers(roomy)

    copy.update(torch.full((1, 1, 1, 1), 7.0), torch.full((1, 1, 1, 1), 7.0), 0)
    roomy.update(torch.full((1, 1, 1, 1), 9.0), torch.full((1, 1, 1, 1), 9.0), 0)

    assert copy.layers[0].keys.flatten().tolist() == [0.0, 0.0, 1.0, 7.0]
    assert roomy.layers[0].keys.flatten().tolist() == [0.0, 0.0, 1.0, 9.0]
    assert view.layers[0].keys.flatten().tolist() == [0.0, 0.0, 1.0]


def test_stacking_left_padded_caches_in_one_copy_equals_padding_then_stacking() -> None:
    generator = torch.Generator().manual_seed(5)
    lengths = [(2, 3), (1, 5), (3, 1)]  # (rows, positions) of each cache
    caches = [cache_of(torch.randn(r, 2, n, 4, generator=generator)) for r, n in lengths]
    roomy = kv.with_room(caches[0])
    roomy.update(torch.ones(2, 2, 1, 4), torch.ones(2, 2, 1, 4), 0)  # a batch's own cache
    parts = [(roomy, 2), (caches[1], 1), (caches[2], 5)]  # each to 6 positions

    stacked = kv.stack_left_padded(parts)

    for name in ("keys", "values"):
        padded = [getattr(kv.left_pad(c, pad).layers[0], name) for c, pad in parts]
        assert torch.equal(getattr(stacked.layers[0], name), torch.cat(padded, 0))
    assert stacked.layers[0].keys.shape == (6, 2, 6, 4)
    assert stacked.layers[0].keys[:, :, :1].abs().sum() == 0  # padding is zeros
    assert stacked.layers[0].keys.data_ptr() != roomy.layers[0].keys.data_ptr()
