"""The heuristic path: declared regex patterns, normalizers and a context ranking.

It needs no model and no training, so it is the path that always answers: every match of every
pattern becomes a candidate, candidates near a context keyword (``total``, ``due``) rank higher,
and the best one is normalized into the unit's schema. When nothing matches, the answer is the
all-null object with a low confidence ("no value present" is a valid answer).

Confidence here is interim: a declared prior scaled by pattern strength and context, until the
calibrator replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aau.answers import PathAnswer, PathContext
from aau.fallbacks.normalize import NORMALIZERS
from aau.fallbacks.registry import register_fallback
from aau.spec.model import HeuristicFallback, UnitSpec

__all__ = ["HeuristicPath"]

_CONTEXT_BONUS = 0.25


@dataclass(frozen=True, slots=True)
class _Candidate:
    output: dict[str, Any]
    spans: dict[str, tuple[int, int]]
    strength: float
    context: float
    start: int

    @property
    def score(self) -> float:
        return self.strength + self.context


class HeuristicPath:
    """Live heuristic path of one unit (patterns compiled once)."""

    name = "heuristic"

    def __init__(self, spec: HeuristicFallback, unit: UnitSpec) -> None:
        self.spec = spec
        self.fields = list(unit.output.get("properties", {}))
        locale = unit.locale.model_dump()
        self._normalizers = {
            field: _bind_locale(mapping.normalize, locale) for field, mapping in spec.fields.items()
        }
        self._patterns = [(re.compile(p.regex, re.IGNORECASE), p.strength) for p in spec.patterns]
        weights = (
            spec.keywords
            if isinstance(spec.keywords, dict)
            else dict.fromkeys(spec.keywords, _CONTEXT_BONUS)
        )
        self._keywords = [
            (re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE), bonus)
            for word, bonus in weights.items()
        ]

    def _candidates(self, text: str) -> list[_Candidate]:
        found = []
        for pattern, strength in self._patterns:
            for match in pattern.finditer(text):
                output: dict[str, Any] = dict.fromkeys(self.fields)
                spans: dict[str, tuple[int, int]] = {}
                for field, mapping in self.spec.fields.items():
                    raw = match.groupdict().get(mapping.group) if mapping.group else None
                    if raw is None:
                        output[field] = mapping.value
                        continue
                    output[field] = self._normalizers[field](raw)
                    if output[field] is not None:
                        spans[field] = match.span(mapping.group)
                if not spans:  # nothing normalizable came from the text itself
                    continue
                before = text[max(0, match.start() - self.spec.window) : match.start()]
                context = max((b for rx, b in self._keywords if rx.search(before)), default=0.0)
                found.append(_Candidate(output, spans, strength, context, match.start()))
        return found

    def extract(self, text: str, context: PathContext) -> PathAnswer:
        """Best-ranked candidate, or the all-null answer when none matched."""
        candidates = self._candidates(text)
        if not candidates:
            return PathAnswer(
                output=dict.fromkeys(self.fields),
                confidence=self.spec.no_match_confidence,
                signals={"rule_strength": 0.0, "competing_matches": 0.0, "has_context": 0.0},
            )
        sign = 1 if self.spec.prefer == "first" else -1
        best = min(
            candidates,
            key=lambda c: (-c.score, sign * c.start),
        )
        distinct = {tuple(sorted((k, str(v)) for k, v in c.output.items())) for c in candidates}
        competing = len(distinct) - 1
        confidence = self.spec.confidence * (0.5 + 0.5 * best.strength)
        confidence += 0.15 * (best.context > 0) - 0.05 * min(competing, 3)
        if any(v is None for f, v in best.output.items() if f in self.spec.fields):
            confidence *= 0.8  # a partial answer
        return PathAnswer(
            output=best.output,
            confidence=round(max(0.0, min(1.0, confidence)), 4),
            spans=best.spans,
            signals={
                "rule_strength": best.strength,
                "competing_matches": float(competing),
                "has_context": float(best.context > 0),
            },
        )


def _bind_locale(name: str, locale: dict[str, Any]) -> Any:
    function = NORMALIZERS[name]
    if name.startswith("grammar:"):  # grammar normalizers read ambiguous values by the locale
        return lambda text: function(text, **locale)
    return function


register_fallback("heuristic", HeuristicFallback, HeuristicPath)
