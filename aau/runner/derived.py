"""Derived units: a deterministic computation over the outputs of the units they need.

A derived unit (``kind: derived``) reads no text and runs no model: ``compute`` names an
operation (``difference``, ``ratio``, ``change``, ``compare``, ``within_ratio``,
``range_check``) over fields of its upstream units' outputs (``rev_q3.amount``). Its answer is
only as trustworthy as its inputs: the confidence is the product of the confidences of the
upstream results it read (each an estimate that its output is right; the computation adds no
doubt of its own), so two inputs at 0.9 give 0.81.

An input without a value (null) gives null results: "cannot compare" is the answer, with the
inputs' confidence. An upstream unit that failed, or fields that must agree and do not (two
amounts in different currencies), fail the run with a coded error (``upstream_failed``,
``incomparable_inputs``) instead of a number that means nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aau.errors import InputError
from aau.results import UnitResult
from aau.spec.model import UnitSpec
from aau.spec.sections import ComputeSpec

__all__ = ["DerivedAnswer", "compute_derived", "upstream_failure"]


@dataclass(frozen=True, slots=True)
class DerivedAnswer:
    """A derived unit's output, its confidence and the trace's account of its inputs."""

    output: dict[str, Any]
    confidence: float
    detail: str


def upstream_failure(spec: UnitSpec, upstream: Mapping[str, UnitResult]) -> InputError | None:
    """The error a derived run ends with when an input it needs is missing or failed, else None."""
    missing = [name for name in spec.needs if name not in upstream]
    if missing:
        return InputError(
            f"{spec.name}: needs {', '.join(missing)}, which the pipeline did not run",
            code="upstream_failed",
        )
    failed = [(name, upstream[name]) for name in spec.needs if upstream[name].output is None]
    if failed:
        detail = ", ".join(
            f"{name} ({result.error.code if result.error else 'no output'})"
            for name, result in failed
        )
        return InputError(f"{spec.name}: needs {detail}, which failed", code="upstream_failed")
    return None


def _read(ref: str, upstream: Mapping[str, UnitResult]) -> Any:
    unit, field = ref.split(".", 1)
    output = upstream[unit].output or {}
    return output.get(field)


def _number(ref: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{ref} is {value!r}, not a number", code="incomparable_inputs")
    return float(value)


def _results(compute: ComputeSpec, a: float, b: float | None) -> dict[str, Any]:
    """Every result ``compute.op`` gives for operands that are both there."""
    if compute.op == "range_check":
        low = compute.minimum if compute.minimum is not None else -math.inf
        high = compute.maximum if compute.maximum is not None else math.inf
        return {"within": low <= a <= high}
    assert b is not None
    difference = a - b
    change = difference / abs(b) if b else None
    results: dict[str, Any] = {"difference": difference, "change": change}
    if compute.op == "ratio":
        results["ratio"] = a / b if b else None
    if compute.op == "compare":
        near = abs(difference) <= compute.tolerance * abs(b)
        results["relation"] = "equal" if near else ("greater" if difference > 0 else "less")
    if compute.op == "within_ratio":
        results["within"] = abs(difference) <= compute.tolerance * abs(b)
    return results


def compute_derived(spec: UnitSpec, upstream: Mapping[str, UnitResult]) -> DerivedAnswer:
    """``spec``'s output from the results of the units it needs (all present and answered).

    Raises:
        InputError: ``incomparable_inputs`` when a field that must be a number is not, or
            fields declared ``same`` differ.
    """
    compute = spec.compute
    assert compute is not None, "a derived unit declares compute (checked at load)"
    for group in compute.same:  # a null is not known to differ: only values are compared
        seen = {repr(v) for ref in group if (v := _read(ref, upstream)) is not None}
        if len(seen) > 1:
            written = ", ".join(f"{ref}={_read(ref, upstream)!r}" for ref in group)
            raise InputError(f"{spec.name}: {written} differ", code="incomparable_inputs")
    a = _number(compute.a, _read(compute.a, upstream))
    b = _number(compute.b, _read(compute.b, upstream)) if compute.b else None
    properties = spec.output.get("properties", {})
    missing = a is None or (compute.b is not None and b is None)
    results = {} if missing else _results(compute, a, b)  # type: ignore[arg-type]
    output = {name: _rounded(results.get(name)) for name in properties}
    read = [
        unit for unit in spec.needs if any(ref.startswith(f"{unit}.") for ref in compute.fields)
    ]
    confidence = math.prod(upstream[unit].confidence for unit in read)
    detail = "inputs " + ", ".join(f"{unit} ({upstream[unit].confidence:.3f})" for unit in read)
    if missing:
        detail += "; an input has no value"
    return DerivedAnswer(output=output, confidence=confidence, detail=detail)


def _rounded(value: Any) -> Any:
    # Float noise (0.1 + 0.2) must not make two equal computations differ in the JSON.
    return round(value, 9) if isinstance(value, float) else value
