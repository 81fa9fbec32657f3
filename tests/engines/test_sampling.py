"""``aau.engines.sampling``: the greedy choice under a mask and the raw distribution's signals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from aau.engines.sampling import choose, distribution_stats


class FixedMask:
    """A test double for ``TokenMask``: a fixed set of allowed tokens, through its interface."""

    def __init__(self, allowed: list[bool]) -> None:
        self._allowed = np.array(allowed, dtype=bool)
        self.filled = 0

    def fill(self) -> None:
        self.filled += 1

    def allows(self, token: int) -> bool:
        return token < len(self._allowed) and bool(self._allowed[token])

    def only(self) -> int | None:
        ids = np.flatnonzero(self._allowed)
        return int(ids[0]) if len(ids) == 1 else None

    def allowed(self) -> np.ndarray:
        return self._allowed


def test_the_models_favourite_is_chosen_when_the_mask_allows_it() -> None:
    logits = np.array([0.5, 3.0, 1.0, 2.0], dtype=np.float32)

    assert choose(logits, None) == (1, False)
    assert choose(logits, FixedMask([True, True, False, True])) == (1, False)


def test_a_disallowed_favourite_gives_way_to_the_best_allowed_token() -> None:
    logits = np.array([0.5, 3.0, 1.0, 2.0], dtype=np.float32)

    assert choose(logits, FixedMask([True, False, True, False])) == (2, False)


def test_a_single_allowed_token_is_chosen_and_reported_forced() -> None:
    logits = np.array([0.5, 3.0, 1.0, 2.0], dtype=np.float32)

    assert choose(logits, FixedMask([True, False, False, False])) == (0, True)
    assert choose(logits, FixedMask([False, True, False, False])) == (1, True)


def test_a_refused_favourite_is_replaced_from_the_logits_tokens_only() -> None:
    logits = np.array([0.5, 3.0, 1.0], dtype=np.float32)

    assert choose(logits, FixedMask([True, False, False, True, True])) == (0, False)


def test_a_mask_that_allows_nothing_is_an_error_not_a_silent_pick() -> None:
    with pytest.raises(RuntimeError, match="allows no token"):
        choose(np.zeros(3, dtype=np.float32), FixedMask([False, False, False]))


def test_log_probability_and_entropy_match_torch_on_a_vocabulary_sized_row() -> None:
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(49152, generator=generator) * 4
    log_probs = torch.log_softmax(logits.double(), -1)
    entropy = float(-(log_probs.exp() * log_probs).sum())

    for token in (0, int(logits.argmax()), 1234):
        logprob, got_entropy = distribution_stats(logits.numpy(), token)
        reused = distribution_stats(logits.numpy(), token, np.empty(99_000, dtype=np.float32))

        assert logprob == pytest.approx(float(log_probs[token]), abs=1e-4)
        assert got_entropy == pytest.approx(entropy, abs=1e-4)
        assert reused == (logprob, got_entropy)


def test_a_peaked_distribution_matches_a_float64_reference() -> None:
    logits = np.array([0.0, 15.0, 0.0, -3.0], dtype=np.float32)
    log_probs = torch.log_softmax(torch.tensor(logits, dtype=torch.float64), -1)
    entropy = float(-(log_probs.exp() * log_probs).sum())

    logprob, got_entropy = distribution_stats(logits, 1)

    assert entropy > 1e-6  # small, but not underflowed to nothing
    assert logprob == pytest.approx(float(log_probs[1]), rel=1e-3)
    assert got_entropy == pytest.approx(entropy, rel=1e-3)


def test_minus_infinity_logits_count_as_impossible_tokens_not_as_nan() -> None:
    logits = np.array([0.0, 5.0, -np.inf, 0.0, 1.0], dtype=np.float32)
    finite = torch.tensor([0.0, 5.0, 0.0, 1.0], dtype=torch.float64)
    log_probs = torch.log_softmax(finite, -1)
    entropy = float(-(log_probs.exp() * log_probs).sum())

    logprob, got_entropy = distribution_stats(logits, 1)

    assert logprob == pytest.approx(float(log_probs[1]), abs=1e-5)
    assert got_entropy == pytest.approx(entropy, abs=1e-5)
