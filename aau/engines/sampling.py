"""One decode step of one row: the greedy token under its mask, and its raw statistics.

The statistics are the chosen token's log-probability and the entropy of the distribution
before the mask. They are computed in numpy on the row's logits (a view of the forward's
output, no copy): a few passes over the vocabulary, tens of microseconds per row, where
whole-batch torch ops on freshly allocated buffers cost milliseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from aau.decoding.constraints import TokenMask

__all__ = ["choose", "distribution_stats"]


def choose(logits: np.ndarray, mask: TokenMask | None) -> tuple[int, bool]:
    """The highest-scoring allowed token, and whether it was the only allowed one.

    ``mask`` None allows every token. A forced token needs no comparison; otherwise the model's
    own favourite, allowed most of the time, is tried first, and only when the mask refuses it
    are the allowed tokens unpacked and compared.
    """
    best = int(np.argmax(logits))
    if mask is None:
        return best, False
    mask.fill()
    single = mask.only()
    if single is not None:
        return single, True
    if mask.allows(best):
        return best, False
    candidates = np.flatnonzero(mask.allowed()[: len(logits)])
    if not len(candidates):
        raise RuntimeError("the constraint allows no token")
    return int(candidates[np.argmax(logits[candidates])]), False


def distribution_stats(
    logits: np.ndarray, token: int, scratch: np.ndarray | None = None
) -> tuple[float, float]:
    """Log-probability of ``token`` and entropy (nats) of ``softmax(logits)``.

    With ``m = max``, ``e = exp(logits - m)``, ``s = sum(e)``: ``log Z = m + log s`` and the
    entropy is ``log Z - sum(e * logits) / s``: one exponentiation, no log-softmax buffer.
    ``scratch`` (float32, at least as long as ``logits``) is reused for ``e``: a buffer kept
    from step to step stays in the CPU's cache.
    """
    top = logits.max()
    if scratch is None or len(scratch) < len(logits):
        scratch = np.empty_like(logits)
    weights = scratch[: len(logits)]
    np.subtract(logits, top, out=weights)
    np.exp(weights, out=weights)
    total = float(weights.sum())
    log_z = float(top) + float(np.log(total))
    expected = float(np.dot(weights, logits)) / total
    return float(logits[token]) - log_z, max(0.0, log_z - expected)
