"""What the benchmark scripts share: the nearest-rank percentile they report latencies with."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0 <= q <= 1) of ``values``, which must not be empty."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
