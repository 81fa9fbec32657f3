"""One decode step of one row: the greedy token under its mask, and its raw statistics.

The statistics are the chosen token's log-probability and the entropy of the distribution
before the mask. They are computed in numpy on the row's logits (a view of the forward's
output, no copy): a few passes over the vocabulary, tens of microseconds per row, where
whole-batch torch ops on freshly allocated buffers cost milliseconds.
"""

from __future__ import annotations

import numpy as np

__all__ = ["choose", "distribution_stats"]


def choose(logits: np.ndarray, allowed: np.ndarray | None) -> tuple[int, bool]:
    """The highest-scoring allowed token, and whether it was the only allowed one.

    ``allowed`` is one bool per token (None: every token). The model's own favourite is allowed
    most of the time, so it is tried first; otherwise only the allowed tokens are compared.
    """
    best = int(np.argmax(logits))
    if allowed is None:
        return best, False
    allowed = allowed[: len(logits)]
    count = int(np.count_nonzero(allowed))
    if count == 0:
        raise RuntimeError("the constraint allows no token")
    if allowed[best]:
        return best, count == 1
    candidates = np.flatnonzero(allowed)
    return int(candidates[np.argmax(logits[candidates])]), count == 1


def distribution_stats(logits: np.ndarray, token: int) -> tuple[float, float]:
    """Log-probability of ``token`` and entropy (nats) of ``softmax(logits)``.

    With ``m = max``, ``e = exp(logits - m)``, ``s = sum(e)``: ``log Z = m + log s`` and the
    entropy is ``log Z - sum(e * logits) / s``: one exponentiation, no log-softmax buffer.
    """
    top = float(logits.max())
    weights = np.exp(logits - top)
    total = float(weights.sum())
    log_z = top + float(np.log(total))
    expected = float(np.dot(weights, logits)) / total
    return float(logits[token]) - log_z, max(0.0, log_z - expected)
