"""Named registry of fallback kinds: their spec model and how to build the live path.

A kind registers once (``register_fallback("heuristic", HeuristicFallback, HeuristicPath)``);
the unit spec's ``fallbacks`` list is a union discriminated by ``kind`` over every registered
spec type, and third-party packages add kinds through the ``aau.fallbacks`` entry point group.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from importlib import metadata
from typing import TYPE_CHECKING, Any

from aau.errors import SpecError

if TYPE_CHECKING:
    from aau.answers import FallbackPath
    from aau.spec.model import UnitSpec

__all__ = ["build_fallback", "fallback_kinds", "fallback_spec_types", "register_fallback"]

PathFactory = Callable[[Any, "UnitSpec"], "FallbackPath"]
_KINDS: dict[str, tuple[type, PathFactory]] = {}
_loaded = False


def register_fallback(kind: str, spec_type: type, factory: PathFactory) -> None:
    """Make ``kind`` usable in unit files; ``factory(spec, unit)`` builds the path."""
    _KINDS[kind] = (spec_type, factory)


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import aau.fallbacks.crf  # noqa: F401  # registers "crf"
    import aau.fallbacks.heuristic  # noqa: F401  # registers "heuristic"

    for entry in metadata.entry_points(group="aau.fallbacks"):
        entry.load()


def fallback_kinds() -> list[str]:
    """Every registered kind, sorted."""
    _load_builtins()
    return sorted(_KINDS)


def fallback_spec_types() -> Any:
    """The union of every registered fallback spec model."""
    _load_builtins()
    return reduce(lambda a, b: a | b, (t for t, _ in _KINDS.values()))


def build_fallback(spec: Any, unit: UnitSpec) -> FallbackPath:
    """Build the live path for one declared fallback."""
    _load_builtins()
    try:
        _, factory = _KINDS[spec.kind]
    except KeyError:
        raise SpecError(
            f"unknown fallback kind {spec.kind!r}. Available: {', '.join(fallback_kinds())}",
            file=str(unit.source),
            field="fallbacks",
            code="S030",
        ) from None
    return factory(spec, unit)
