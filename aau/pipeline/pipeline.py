"""``Pipeline``: several units over one input, concurrently, on one shared engine.

A pipeline is a DAG: a derived unit (``needs: [a, b]``) runs once the units it needs have
answered, every other unit at once; independent units run as concurrent tasks and each one's
failure stays in its own result (a unit that needs a failed one ends with ``upstream_failed``,
its siblings go on). The engine is shared by every pipeline that is given it, so a process holds
one model however many pipelines and requests it serves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import graphlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aau.engines.base import Engine
from aau.engines.registry import EngineConfig, build_engine
from aau.errors import AAUError, InputError, TermDictionaryError
from aau.ingest import Document
from aau.limits import LIMITS
from aau.pipeline.results import PipelineResult
from aau.prompts.render import Layout
from aau.results import Source, UnitError, UnitResult, zero_timings
from aau.runner.runner import DEFAULT_ENGINE, UnitRunner, valid_text
from aau.spec.model import UnitSpec
from aau.spec.pipelines import PipelineSpec, pipeline_units_dir
from aau.terms import TermSet, TermStore

if TYPE_CHECKING:
    from aau.calibration import Calibrator
    from aau.routing import Router

__all__ = ["Pipeline", "load_unit", "run"]


def load_unit(path: str | Path) -> UnitSpec:
    """Read and check one unit file (raises a located ``SpecError``)."""
    return UnitSpec.from_file(path)


def _as_spec(unit: UnitSpec | str | Path) -> UnitSpec:
    return unit if isinstance(unit, UnitSpec) else load_unit(unit)


class Pipeline:
    """Run units over inputs.

    Args:
        units: unit specs or paths of unit files.
        engine: a shared engine, an ``EngineConfig`` to build one, ``None`` for the default
            (transformers with the embedded model), or ``False`` for no model at all (fallback
            paths only).
        layout: prompt layout (``aau.prompts.render_messages``): ``unit_first`` shares each
            unit's instructions across inputs, ``document_first`` shares a document across units.
        engines: further named engines (instances or configs) for units whose ``engines``
            chain names them (``engines: [glm5, local]``); ``default`` is ``engine``.
        calibrator: the calibrator that scores paths (see ``_calibrator``).
        terms: the term store tenants' dictionaries come from (``aau.terms.TermStore``); None
            uses the default store (``AAU_TERMS_DIR``), False turns the term layer off.
        router: route each input to the units that apply (``aau.routing.Router``): a router,
            the path of a fitted one, True for the shipped one (``calibration/router.json``),
            or None (the default) to run every unit. It must have been fitted on these units
            as they are now (``RouterStale`` otherwise). A run given ``units`` is not routed.
    """

    def __init__(
        self,
        units: Iterable[UnitSpec | str | Path],
        engine: Engine | EngineConfig | None | bool = None,
        *,
        engines: Mapping[str, Engine | EngineConfig] | None = None,
        layout: Layout = "unit_first",
        calibrator: Calibrator | str | Path | None | bool = None,
        terms: TermStore | None | bool = None,
        router: Router | str | Path | bool | None = None,
    ) -> None:
        specs = [_as_spec(u) for u in units]
        names = [s.name for s in specs]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"units must have distinct names; repeated: {', '.join(duplicates)}")
        if engine is None or isinstance(engine, EngineConfig):
            engine = build_engine(engine)
        self.engine: Engine | None = engine if engine is not False else None  # type: ignore[assignment]
        self.engines: dict[str, Engine] = {
            name: build_engine(e) if isinstance(e, EngineConfig) else e
            for name, e in (engines or {}).items()
        }
        """The named engines (``default`` is ``engine``, when there is one)."""
        if self.engine is not None:
            self.engines.setdefault(DEFAULT_ENGINE, self.engine)
        self.spec: PipelineSpec | None = None
        """The pipeline file this pipeline was built from (``from_file``), if any."""
        self.graph = _graph(specs)
        """Each unit's name -> the units it needs (the DAG the pipeline runs)."""
        self.calibrator = _calibrator(calibrator, self.engine)
        self.router = _router(router, specs)
        """The router that picks each input's units, or None when every unit runs."""
        self._terms = terms
        own = calibrator is None or calibrator is True
        self.runners = [
            UnitRunner(
                spec,
                self.engine,
                engines=self.engines,
                layout=layout,
                calibrator=(_unit_calibrator(spec) if own else None) or self.calibrator,
            )  # fmt: skip
            for spec in specs
        ]

    @classmethod
    def from_file(cls, path: str | Path, **options: Any) -> Pipeline:
        """The pipeline a pipeline file declares (``units/pipelines/<name>.yaml``).

        ``options`` are the constructor's (engine, calibrator, terms…). The units the named
        ones need are loaded too, from the same folder.

        Raises:
            SpecError: the pipeline file or one of its units is wrong (located).
        """
        spec = PipelineSpec.from_file(path)
        if spec.route:
            options.setdefault("router", True)
        units = {p.stem: load_unit(p) for p in spec.unit_paths()}
        folder = pipeline_units_dir(spec.source)
        todo = [need for unit in units.values() for need in unit.needs]
        while todo:  # what the declared units need, transitively
            name = todo.pop()
            if name not in units:
                units[name] = load_unit(folder / f"{name}.yaml")
                todo.extend(units[name].needs)
        pipeline = cls(list(units.values()), **options)
        pipeline.spec = spec
        return pipeline

    @property
    def units(self) -> list[UnitSpec]:
        """The pipeline's units, in order."""
        return [r.spec for r in self.runners]

    async def warmup(self) -> None:
        """Load the model, compile every unit's constraint and cache every unit's prompt prefix.

        One real generation per unit over a probe input stores the unit's static prefix in the
        engine's prefix cache, so the first real request of each unit skips most of its prefill.
        The prefix cache is kept per tenant: this fills the default tenant's part. Without an
        engine, the probe run still loads every unit's fallback models and the calibrator.
        """
        used = {id(e): e for r in self.runners for _, e in r.chain}
        schemas = [r.schema for r in self.runners if r.chain]
        await asyncio.gather(*(e.warmup(schemas) for e in used.values()))
        terms = self.term_set(None)
        await asyncio.gather(*(r.run("warm-up probe", terms=terms) for r in self.runners))

    @property
    def terms(self) -> TermStore | None:
        """The term store (built on first use), or None when the term layer is off."""
        if self._terms is False:
            return None
        if self._terms is None or self._terms is True:
            self._terms = TermStore()
        return self._terms

    def term_set(self, tenant: str | None = None) -> TermSet | None:
        """The live term set of ``tenant`` (None: the shipped dictionaries), if terms are on."""
        store = self.terms
        return store.term_set(tenant) if store is not None else None

    def runners_of(self, units: Sequence[str] | None = None) -> list[UnitRunner]:
        """The runners of ``units`` and of the units they need, in the pipeline's order.

        None: every unit.

        Raises:
            KeyError: a name that is not one of the pipeline's units.
        """
        if units is None:
            return self.runners
        unknown = sorted(set(units) - {r.spec.name for r in self.runners})
        if unknown:
            raise KeyError(", ".join(unknown))
        wanted: set[str] = set()
        todo = list(units)
        while todo:  # the units named, and everything they need
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(self.graph[name])
        return [r for r in self.runners if r.spec.name in wanted]

    async def arun(
        self, source: str | Document, *, id: str | int | None = None,  # noqa: A002
        tenant: str | None = None, units: Sequence[str] | None = None, route: bool | None = None,
    ) -> PipelineResult:  # fmt: skip
        """Every unit (or the named ``units``) over a text or a ``Document``, concurrently.

        With a document, each result's ``sources`` place its fields on the pages, with the OCR
        quality of the words under them. ``tenant`` selects whose term dictionaries annotate
        the input (and, on an engine with ``term_merging``, whose merged tokens it is read in);
        an unknown tenant fails every unit with ``unknown_tenant``. Whatever goes wrong, the
        result has every unit: an unexpected fault is each unit's ``internal_error``.

        ``route``: True runs only those of ``units`` (default: all) the router says apply, and
        the result's ``route`` says which and how likely each was; None routes when the
        pipeline has a ``router`` and ``units`` is not given; False never routes.

        Raises:
            KeyError: a unit name the pipeline does not have.
            ValueError: ``route=True`` on a pipeline without a router.
        """
        runners = self.runners_of(units)  # an unknown name is the caller's error: raised
        if route and self.router is None:
            raise ValueError("this pipeline has no router: build it with router=True")
        routed = route if route is not None else self.router is not None and units is None
        try:
            return await self._arun(source, id=id, tenant=tenant, runners=runners, routed=routed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # nothing escapes a pipeline run either
            return self.failed(InputError(
                f"the input could not be analysed: {type(exc).__name__}: {exc}"[:2000],
                code="internal_error"), id=id, units=units)  # fmt: skip

    async def _arun(
        self,
        source: str | Document,
        *,
        id: str | int | None,  # noqa: A002
        tenant: str | None,
        runners: Sequence[UnitRunner],
        routed: bool = False,
    ) -> PipelineResult:
        units = [r.spec.name for r in runners]
        text = valid_text(source if isinstance(source, str) else source.text)
        if len(text) > LIMITS.text_chars:  # refused before any part reads it (each unit says so)
            return self.failed(InputError(
                f"the input text has {len(text):,} characters, over the limit of "
                f"{LIMITS.text_chars:,} (AAU_MAX_TEXT_CHARS); split the document",
                code="input_too_large"), id=id, units=units)  # fmt: skip
        try:
            terms = self.term_set(tenant)
        except TermDictionaryError as exc:
            return self.failed(exc, id=id, units=units)
        # Matching terms and building a document are CPU work that grows with the text: off the
        # event loop, so that one long input does not stall the other requests' runs.
        hits = await asyncio.to_thread(terms.find, text) if terms is not None else []
        route = None
        if routed and self.router is not None:
            try:
                route = await asyncio.to_thread(self._route, text, terms, units)
            except InputError as exc:  # empty or binary text: each unit says so
                return self.failed(exc, id=id, units=units)
            runners = self.runners_of(route["applies"])
        document = source if not isinstance(source, str) else None
        if document is None and self.calibrator is not None:
            # Only the calibrator reads it (native text: OCR quality 1.0); building one costs
            # ~0.6 s for a 1 MB text, so plain text without a calibrator skips it.
            document = await asyncio.to_thread(_native, text)
        tasks: dict[str, asyncio.Task[UnitResult]] = {}

        async def run_unit(runner: UnitRunner) -> UnitResult:
            needs = self.graph[runner.spec.name]
            upstream = {name: await tasks[name] for name in needs} if needs else None
            return await runner.run(text, document=document, terms=terms, term_hits=hits,
                                    tenant=tenant, upstream=upstream)  # fmt: skip

        # Every unit starts at once; a derived one waits inside its task for those it needs.
        for runner in runners:
            tasks[runner.spec.name] = asyncio.ensure_future(run_unit(runner))
        try:
            results = list(await asyncio.gather(*tasks.values()))
        finally:  # a cancelled request leaves no unit running
            for task in tasks.values():
                task.cancel()
        if not isinstance(source, str):
            results = [_with_sources(r, source) for r in results]
        return PipelineResult(id=id, units={r.unit: r for r in results}, terms=hits,
                              graph=self._graph_of(runners), route=route)  # fmt: skip

    def _route(self, text: str, terms: TermSet | None, among: Sequence[str]) -> dict[str, Any]:
        """The router's decision over the units ``among``, as ``PipelineResult.route``."""
        assert self.router is not None
        decision = self.router.route(text, terms=terms, use_terms=terms is not None)
        mine = set(among)
        return {
            "applies": [name for name in decision.applies if name in mine],
            "probabilities": {
                u.unit: round(u.probability, 4) for u in decision.units if u.unit in mine
            },
            "threshold": decision.threshold,
        }

    def _graph_of(self, runners: Sequence[UnitRunner]) -> dict[str, tuple[str, ...]]:
        """The needs among ``runners``, or empty when none needs another (the usual case)."""
        graph = {r.spec.name: self.graph[r.spec.name] for r in runners}
        return graph if any(graph.values()) else {}

    def run(
        self, source: str | Document, *, id: str | int | None = None,  # noqa: A002
        tenant: str | None = None, units: Sequence[str] | None = None, route: bool | None = None,
    ) -> PipelineResult:  # fmt: skip
        """Synchronous ``arun`` (not from inside a running event loop: use ``arun`` there)."""
        results: list[PipelineResult] = []

        async def main() -> None:
            # The result stays out of the task: on leaving, asyncio.run (3.11) restores SIGINT
            # and formats an error message holding the task's repr, result included (0.4 s
            # for the result of a megabyte of text).
            results.append(await self.arun(source, id=id, tenant=tenant, units=units,
                                           route=route))  # fmt: skip

        asyncio.run(main())
        return results[0]

    def failed(
        self, error: AAUError, *, id: str | int | None = None,  # noqa: A002
        units: Sequence[str] | None = None,
    ) -> PipelineResult:  # fmt: skip
        """The result of an input that could not be analysed: each of ``units`` has ``error``."""
        runners = self.runners_of(units)
        results = {
            r.spec.name: UnitResult(
                unit=r.spec.name,
                version=r.spec.version,
                output=None,
                confidence=0.0,
                path=None,
                error=UnitError(error.code, str(error)),
                timings=zero_timings(),
            )  # fmt: skip
            for r in runners
        }
        # the same shape as an analysed input's, so every batch line reads alike
        return PipelineResult(id=id, units=results, graph=self._graph_of(runners))


def _router(router: Router | str | Path | bool | None, specs: Sequence[UnitSpec]) -> Router | None:
    """The router a pipeline routes with, checked against its units (see ``Pipeline``)."""
    if router is None or router is False:
        return None
    from aau.routing import Router  # the embedder it carries is only loaded when routing

    if not isinstance(router, Router):
        router = Router.load(None if router is True else router)
    router.check_units(specs, subset=True)
    return router


def _graph(specs: Sequence[UnitSpec]) -> dict[str, tuple[str, ...]]:
    """Each unit -> the units it needs, checked: all in the pipeline, and no cycle.

    Raises:
        ValueError: a unit needs one the pipeline does not have, or the needs form a cycle.
    """
    graph = {spec.name: tuple(spec.needs) for spec in specs}
    for name, needs in graph.items():
        missing = [need for need in needs if need not in graph]
        if missing:
            raise ValueError(
                f"{name} needs {', '.join(missing)}, which the pipeline does not have; "
                "add the unit files"
            )
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise ValueError(f"the units' needs form a cycle: {' -> '.join(exc.args[1])}") from None
    return graph


def _calibrator(
    choice: Calibrator | str | Path | None | bool, engine: Engine | None = None
) -> Calibrator | None:
    """The calibrator of a pipeline whose (default) engine is ``engine``.

    ``None`` (or ``True``): the one fitted with ``engine`` when it is not the in-process engine
    and its artifact ``calibrator-<engine>.pt`` is there (``aau calibrate --engine``), else the
    shipped one when there is one (the runner then reads the generations only of engines whose
    log-probabilities are of the kind it was fitted on), else the paths' raw confidences;
    ``False``: none; a path or a ``Calibrator``: that one.
    """
    if choice is False:
        return None
    # Imported here: torch loads with it, and `aau validate` or `aau schema` need no torch.
    from aau.calibration import load_calibrator
    from aau.calibration.calibrator import (
        IN_PROCESS_ENGINE,
        default_artifact_path,
        engine_artifact_path,
    )
    from aau.errors import CalibrationError

    if choice is None or choice is True:
        if engine is not None and engine.name != IN_PROCESS_ENGINE:
            try:
                own: Path | None = engine_artifact_path(engine.name)
            except CalibrationError:  # a name no file can carry: there is no such artifact
                own = None
            if own is not None and own.is_file():
                return load_calibrator(own)  # fitted for another spec: refused, loudly
        if not default_artifact_path().is_file():
            return None
        return load_calibrator()  # present but fitted for another spec: refused, loudly
    if isinstance(choice, str | Path):
        return load_calibrator(choice)
    return choice


def _unit_calibrator(spec: UnitSpec) -> Calibrator | None:
    """The unit's own calibrator (``<name>.calibration.json`` beside it), or None without one.

    A unit of a kind the shared calibrator was not fitted on (classify, records) carries one,
    fitted by ``aau calibrate --unit``; it then scores that unit's answers instead.

    Raises:
        CalibrationError: the file is there but is no readable unit calibration.
    """
    if spec.source is None:
        return None
    from aau.calibration.unit_calibrator import load_unit_calibrator, unit_calibration_path

    path = unit_calibration_path(spec)
    return load_unit_calibrator(path) if path.is_file() else None


def _native(text: str) -> Document | None:
    try:
        return Document.from_text(text)
    except InputError:  # empty text: the run refuses it itself
        return None


def _with_sources(result: UnitResult, document: Document) -> UnitResult:
    sources = {}
    for field, (start, end) in result.spans.items():
        places = document.locate(start, end)
        page, bbox = places[0] if places else (None, None)
        sources[field] = Source(start, end, page, bbox, round(document.ocr_quality(start, end), 4))
    return dataclasses.replace(result, sources=sources)


def run(
    units: Sequence[UnitSpec | str | Path],
    text: str,
    *,
    engine: Engine | EngineConfig | None = None,
) -> PipelineResult:
    """One-shot convenience: build a pipeline and run it over ``text``."""
    return Pipeline(units, engine=engine).run(text)
