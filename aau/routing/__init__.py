"""The router: which units apply to a document or a question, learned from the units' own data.

``Router.fit(units)`` / ``Router.load(path, units=...)``, then ``router.route(text)`` gives a
``RouteDecision``: per unit a probability, whether it applies, and why (top features, nearest
examples). ``aau route`` is its command (``aau.cli.route``).
"""

from aau.routing.artifact import RouterArtifactError, RouterStale
from aau.routing.router import (
    Contribution,
    Nearest,
    RouteDecision,
    Router,
    RouterUnavailable,
    UnitRoute,
    default_router_path,
)

__all__ = [
    "Contribution",
    "Nearest",
    "RouteDecision",
    "Router",
    "RouterArtifactError",
    "RouterStale",
    "RouterUnavailable",
    "UnitRoute",
    "default_router_path",
]
