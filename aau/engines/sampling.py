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

    ``mask`` None allows every token. A forced token needs no look at the logits; otherwise the
    model's own favourite, allowed most of the time, is tried first, and only when the mask
    refuses it are the allowed tokens unpacked and compared.
    """
    if mask is None:
        return int(np.argmax(logits)), False
    mask.fill()
    single = mask.only()
    if single is not None:
        return single, True
    best = int(np.argmax(logits))
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

    With ``m = max``, ``g = logits - m`` (at most 0), ``e = exp(g)``, ``s = sum(e)``: the
    log-probability is ``g[token] - log s`` and the entropy ``log s - sum(e * g) / s``, a sum of
    non-negative terms, so a near-certain step keeps its small entropy (``log Z - E[logits]``
    would cancel it away in float32). ``scratch`` (float32, at least twice as long as
    ``logits``) holds ``g`` and ``e``: buffers kept from step to step stay in the CPU's cache.
    """
    size = len(logits)
    if scratch is None or len(scratch) < 2 * size:
        scratch = np.empty(2 * size, dtype=np.float32)
    shifted, weights = scratch[:size], scratch[size : 2 * size]
    top = logits.max()
    np.subtract(logits, top, out=shifted)
    np.exp(shifted, out=weights)
    total = float(weights.sum(dtype=np.float64))
    log_total = float(np.log(total))
    with np.errstate(invalid="ignore"):
        spread = -float(np.dot(weights, shifted))
    if spread != spread:  # NaN: a -inf logit (weight 0) times -inf; leave those out
        finite = np.isfinite(shifted)
        spread = -float(np.dot(weights[finite], shifted[finite]))
    return float(shifted[token]) - log_total, log_total + spread / total
