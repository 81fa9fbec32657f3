"""Driving one unit run through its state chart: the work behind each state.

``UnitRunner`` is built once per unit (schema bounded, validator and fallback paths built) and
runs many inputs. For each input it walks the chart: it does the current state's work, records
the outcome, and sends the event that outcome names. Whatever happens inside — a model timeout,
invalid JSON, a broken fallback — ends as a ``UnitResult``; nothing escapes to sibling units.

Each state's work is one method, named in the runner's ``{state: handler}`` table; the chart
(``aau.fsm``) only says where the event a handler returns leads. Selection is the one rule of
``aau.answers.select``: the first path whose confidence reaches ``policy.threshold`` is
accepted; when none does, the most confident schema-valid answer is delivered; when no path
produced a valid answer, the run fails with ``fallbacks_exhausted`` (or the single path's own
error code).

With a calibrator, a path is scored only once every other path has had its say: before the first
scoring the fallbacks not yet tried run as witnesses (milliseconds each), and whether the scored
answer equals theirs is one of the calibrator's signals. Their answers are kept, so the chain
never runs a path twice; the trace step after each scoring names the witnesses that ran and
which answers agreed.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import math
import os
import re
import threading
import time
import unicodedata
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import jsonschema

from aau.answers import Candidate, FallbackPath, PathAnswer, PathContext, select
from aau.calibration import Calibrator, PathEvidence
from aau.calibration.features import output_normalizers, prepare_text_signals, same_output
from aau.engines.base import Engine, Generation, GenerationRequest
from aau.errors import (
    AAUError,
    EngineError,
    EngineTimeout,
    EngineUnavailable,
    FallbacksExhausted,
    InputError,
    RunTimeout,
    UngroundedOutput,
    ValidationFailed,
)
from aau.fallbacks.normalize import normalizer_for
from aau.fsm.machine import FINAL_STATES, STATES, RunMachine
from aau.limits import LIMITS
from aau.prompts.render import Layout, render_messages
from aau.results import Attempt, TraceStep, UnitError, UnitResult, zero_timings
from aau.runner.derived import compute_derived, upstream_failure
from aau.runner.grounding import ground_output
from aau.spec.decoding_schema import decoding_schema, field_grammars
from aau.spec.model import UnitSpec

_T = TypeVar("_T")

if TYPE_CHECKING:
    from collections.abc import Sequence

    from aau.ingest import Document
    from aau.terms import TermHit, TermSet

__all__ = ["DEFAULT_ENGINE", "UnitRunner", "engine_chain", "primary_confidence"]

PRIMARY = "primary"
DEFAULT_ENGINE = "default"
"""The name of a pipeline's own engine in a unit's ``engines`` chain."""


def engine_chain(
    spec: UnitSpec, engine: Engine | None, engines: Mapping[str, Engine]
) -> list[tuple[str, Engine]]:
    """The engines ``spec``'s model path tries, in order, as ``(name, engine)``.

    A unit without ``engines`` uses the pipeline's engine (none: fallbacks only).

    Raises:
        ValueError: the unit names an engine the pipeline does not have.
    """
    named = {**engines, **({DEFAULT_ENGINE: engine} if engine is not None else {})}
    if spec.kind == "derived":  # a computation over other units' outputs: no model
        return []
    if not spec.engines:
        return [(DEFAULT_ENGINE, engine)] if engine is not None else []
    missing = [name for name in spec.engines if name not in named]
    if missing:
        raise ValueError(
            f"{spec.name}: engines {', '.join(missing)} are not among the pipeline's engines "
            f"({', '.join(sorted(named)) or 'none'})"
        )
    return [(name, named[name]) for name in spec.engines]


def primary_confidence(generation: Generation) -> float:
    """Interim confidence of the model's answer: the geometric mean probability of its free tokens.

    Tokens the constraint forced carry no information about the model's belief, so they are left
    out; the calibrator (``aau.calibration``) replaces this number with a fitted one.
    """
    free = [
        lp
        for lp, forced in zip(generation.token_logprobs, generation.forced, strict=True)
        if not forced
    ]
    if not free:
        return 1.0
    return math.exp(sum(free) / len(free))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, at the same offsets.

    A lone surrogate is not Unicode text, though JSON can spell one (a backslash, ``ud800``);
    tokenizers and writers downstream fail on it, so every part reads U+FFFD instead.
    """
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def check_text(text: str) -> None:
    """Refuse inputs no path can analyse: empty, too long, or mostly control characters."""
    if not text.strip():
        raise InputError("the input text is empty", code="empty_input")
    if len(text) > LIMITS.text_chars:
        raise InputError(
            f"the input text has {len(text):,} characters, over the limit of "
            f"{LIMITS.text_chars:,} (AAU_MAX_TEXT_CHARS); split the document",
            code="input_too_large",
        )
    sample = text[:4096]
    control = sum(1 for ch in sample if unicodedata.category(ch) in {"Cc", "Cs", "Co", "Cn"}
                  and ch not in "\n\r\t\f")  # fmt: skip
    if control > 0.1 * len(sample):
        raise InputError(
            f"the input looks like binary data ({control} control characters in the first "
            f"{len(sample)}); pass a document path for PDFs and images",
            code="binary_input",
        )


def _detail(error: AAUError) -> str:
    """The trace note of a failure: its code, and where a grammar stopped parsing."""
    position = getattr(error, "position", None)
    if position is None:
        return error.code
    return f"{error.code} at {getattr(error, 'json_path', '$')}[{position}]"


class _ActiveRuns:
    """How many unit runs are in flight in this process (on any event loop)."""

    FEW = os.cpu_count() or 1  # a run per core; more, and the batch has the cores to itself

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def enter(self) -> None:
        with self._lock:
            self._count += 1

    def leave(self) -> None:
        with self._lock:
            self._count -= 1

    def few(self) -> bool:
        return self._count <= self.FEW


_ACTIVE = _ActiveRuns()

# Engines that have been ready once: their runs await ``ready()`` without the look at whether it
# is loading (a task and a turn of the loop for every run).
_READY: weakref.WeakSet[Any] = weakref.WeakSet()


def _was_ready(engine: Any) -> bool:
    try:
        return engine in _READY
    except TypeError:  # an engine that cannot be weakly referenced: always looked at
        return False


@dataclass
class _Run:
    """Mutable state of one run (the runner itself is shared and stateless)."""

    text: str
    document: Document | None = None
    terms: TermSet | None = None
    term_hits: Sequence[TermHit] | None = None  # found once the text passed its checks
    tenant: str | None = None
    context: PathContext | None = None  # what the fallback paths are told besides the text
    started: float = field(default_factory=time.perf_counter)
    deadline: float = 0.0  # time.monotonic() when policy.timeout_s runs out for the whole run
    path: str | None = None
    engine_index: int = 0  # which of the unit's engines the model path is on
    engine_name: str | None = None
    cursor: int = -1
    messages: list[dict[str, str]] = field(default_factory=list)
    answer: PathAnswer | None = None
    generation: Generation | None = None
    candidates: list[tuple[str, PathAnswer]] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    errors: list[AAUError] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    final: tuple[str, PathAnswer] | None = None
    flow_error: InputError | None = None
    # Calibrated runs: each path's output by slot (-1 the model, i the i-th fallback), valid
    # or not; the fallbacks' results from running as witnesses; a note for the trace.
    outputs: dict[int, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    witnessed: dict[int, PathAnswer | AAUError] = field(default_factory=dict)
    # Every fallback's answer, started beside the model's decoding when scoring will need them.
    early: asyncio.Future[list[PathAnswer | AAUError] | AAUError] | None = None
    asked: bool = False  # a fallback ran without the early start: it is not wanted any more
    ended: bool = False
    note: str | None = None

    def ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def note_error(self, error: AAUError) -> None:
        self.errors.append(error)
        output = self.answer.output if self.answer is not None else None
        self.attempts.append(
            Attempt(self.path or "?", None, UnitError(error.code, str(error)), output)
        )


class UnitRunner:
    """A unit made ready to run: its schema bounded, validator and fallbacks built."""

    def __init__(
        self,
        spec: UnitSpec,
        engine: Engine | None,
        *,
        engines: Mapping[str, Engine] | None = None,
        layout: Layout = "unit_first",
        calibrator: Calibrator | None = None,
    ) -> None:
        self.spec = spec
        self.chain = engine_chain(spec, engine, engines or {})
        """The model path's engines in the order they are tried: ``(name, engine)``."""
        self.engine = self.chain[0][1] if self.chain else None
        self.calibrator = calibrator
        self.layout: Layout = layout
        self.grammars = field_grammars(spec.fields)
        # The schema `aau validate` compiled: grammar patterns added, strings bounded.
        self.schema = decoding_schema(spec.output, self.grammars, spec.policy.max_string_length)
        self.validator = jsonschema.Draft202012Validator(spec.output)
        self.fallbacks: list[FallbackPath] = [f.build(spec) for f in spec.fallbacks]
        self.context = PathContext(unit_name=spec.name, output_schema=spec.output)
        field_normalizers = output_normalizers(spec)
        self.normalizers = field_normalizers if calibrator is not None else {}
        self._field_normalizers = {
            name: normalizer_for(normalizer, spec) for name, normalizer in field_normalizers.items()
        }
        # An engine that reports no token log-probabilities gives the calibrator nothing to read
        # in its generations, and one whose log-probabilities are of another kind than those the
        # calibrator was fitted on (raw or after the mask) would mislead it: the model path is
        # then scored on its other signals.
        fitted = calibrator.logprobs_after_mask if calibrator is not None else False
        self._reads_generation = {
            name: e.capabilities.token_logprobs and e.capabilities.logprobs_after_mask == fitted
            for name, e in self.chain
        }
        self._work: dict[str, Callable[[_Run], str | Awaitable[str]]] = {
            "received": self._received,
            "prompting": self._prompting,
            "decoding": self._decoding,
            "validating": self._validating,
            "scoring": self._scoring,
            "falling_back": self._falling_back,
            "accepted": self._accepted,
        }
        """The work of each non-final state; it returns the event to send."""
        assert self._work.keys() == STATES - FINAL_STATES, "every state needs its work"

    # -- the work of each state -----------------------------------------------------------

    def _received(self, run: _Run) -> str:
        try:
            check_text(run.text)
        except InputError as exc:
            run.errors.append(exc)
            return "fail"
        if run.terms is not None and run.term_hits is None:
            run.term_hits = run.terms.find(run.text)
        if run.term_hits:
            run.context = dataclasses.replace(
                self.context, extras={**self.context.extras, "term_hits": run.term_hits}
            )
        if not self.chain:
            return "fall_back"
        run.path = PRIMARY
        return "prompt"

    def _prompting(self, run: _Run) -> str:
        try:
            run.messages = render_messages(
                self.spec, run.text, self.layout, terms=run.terms, term_hits=run.term_hits or ()
            )
        except Exception as exc:  # a template error at run time is the unit author's
            run.note_error(ValidationFailed(f"{self.spec.name}: prompt rendering failed: {exc}"))
            return "fall_back"
        return "decode"

    async def _decoding(self, run: _Run) -> str:
        """The model's answer from the unit's engines, tried in order within the deadline."""
        while True:
            name, engine = self.chain[run.engine_index]
            run.engine_name = name
            error = await self._generate(run, engine)
            if error is None:
                return "validate"
            run.note_error(error)
            if (
                run.engine_index + 1 < len(self.chain)
                and error.code in self.spec.policy.fallback_on
                and run.remaining_s() > 0
            ):
                run.engine_index += 1
                following = self.chain[run.engine_index][0]
                run.trace.append(TraceStep(
                    "decoding", PRIMARY, run.ms(),
                    f"engine {name}: {_detail(error)}; next engine {following}"))  # fmt: skip
                continue
            return self._route_failure(error.code)

    async def _generate(self, run: _Run, engine: Engine) -> AAUError | None:
        """One engine's answer into ``run.answer``, or the error it failed with."""
        label = self.spec.name
        if run.engine_name != DEFAULT_ENGINE:
            label += f" on engine {run.engine_name}"
        # Waiting for the engine to load (or a server to become healthy) is reported apart and
        # moves the deadline: a cold process's first runs must not time out on the model load.
        waited = time.perf_counter()
        on_start = self._early_starter(run)
        try:
            if _was_ready(engine):
                await engine.ready()
            else:
                loading = asyncio.ensure_future(engine.ready())
                await asyncio.sleep(0)
                if not loading.done() and on_start is not None:
                    # The engine is loading (seconds): the fallbacks read their tables now,
                    # beside the load, rather than beside the first forwards, which they would
                    # slow most.
                    on_start()
                await loading
                _READY.add(engine)
        except EngineError as exc:
            return exc
        except Exception as exc:  # a broken engine fails this path, never the sibling units
            return EngineUnavailable(f"{label}: the engine failed to get ready: {exc!r}")
        ready_s = time.perf_counter() - waited
        if ready_s > 0.001:
            run.timings["ready_ms"] = run.timings.get("ready_ms", 0.0) + ready_s * 1000
            run.deadline += ready_s
        # A stalled engine must leave the fallbacks their time (they answer in milliseconds).
        reserve_s = min(self.spec.policy.fallback_reserve_s, self.spec.policy.timeout_s / 2)
        deadline = run.deadline - (reserve_s if self.fallbacks else 0.0)
        if deadline - time.monotonic() <= 0:
            return EngineTimeout(f"{label}: policy.timeout_s ran out before the model could run")
        request = GenerationRequest(
            messages=run.messages,
            schema=self.schema,
            max_new_tokens=self.spec.policy.max_new_tokens,
            deadline=deadline,
            key=self.spec.key,
            terms=run.terms if engine.capabilities.merges_terms else None,
            tenant=run.tenant,
            on_start=on_start,
            # Only the unit's own text precedes the input: no document (document_first), no
            # tenant's terms in its examples.
            static_prefix=self.layout == "unit_first" and run.tenant is None,
        )
        try:
            # The deadline is the engine's to honour; this bound holds even if one does not.
            grace_s = max(0.0, deadline - time.monotonic()) + min(5.0, self.spec.policy.timeout_s)
            # In this task (``wait_for`` would wrap it in another: a hop of the loop per run).
            async with asyncio.timeout(grace_s):
                result = (await engine.generate([request]))[0]
        except TimeoutError:
            request.cancel.set()
            result = EngineTimeout(f"{label}: no answer within {grace_s:.0f} s")
        except asyncio.CancelledError:
            request.cancel.set()
            raise
        except Exception as exc:  # a broken engine fails this path, never the sibling units
            result = EngineUnavailable(f"{label}: the engine failed: {exc!r}")
        if isinstance(result, EngineError):
            if run.engine_name != DEFAULT_ENGINE:  # say which engine of the chain it was
                labelled = copy.copy(result)
                labelled.args = (f"{label}: {result}",)
                return labelled
            return result
        run.generation = result
        if result.notes:  # the engine's retries and circuits, on the next trace step
            run.note = "; ".join((f"engine {run.engine_name}", *result.notes))
        run.timings.update(
            queue_ms=run.timings.get("queue_ms", 0.0) + result.timings.queue_ms,
            prefill_ms=run.timings.get("prefill_ms", 0.0) + result.timings.prefill_ms,
            decode_ms=run.timings.get("decode_ms", 0.0) + result.timings.decode_ms,
            model_ms=run.timings.get("model_ms", 0.0) + result.model_ms,
        )
        run.tokens = {"prompt": result.prompt_tokens, "cached": result.cached_tokens,
                      "generated": result.generated_tokens}  # fmt: skip
        if result.finish_reason == "length":
            return ValidationFailed(
                f"{label}: the token budget of {self.spec.policy.max_new_tokens} ran out "
                "before the JSON was complete; raise policy.max_new_tokens")  # fmt: skip
        try:
            output = json.loads(result.text)
        except json.JSONDecodeError as exc:
            return ValidationFailed(f"{label}: model output is not JSON: {exc}")
        if not isinstance(output, dict):
            return ValidationFailed(f"{label}: model output is not a JSON object")
        output = self.model_output(output)
        run.answer = PathAnswer(output=output, confidence=primary_confidence(result))
        return None

    def _early_starter(self, run: _Run) -> Callable[[], None] | None:
        """What the engine calls when it starts on the request: the fallbacks start too.

        Scoring runs every fallback as a witness, and they need only the text: on a worker
        thread they overlap the model's forward passes (which release the GIL). Not before the
        engine has prepared the request (the two would contend for the GIL: 1.2 ms of
        preparation took 4.4), nor with many runs in flight, whose batch has the cores to
        itself (the fallbacks would only slow it).
        """
        if self.calibrator is None or not self.fallbacks or not _ACTIVE.few():
            return None
        loop = asyncio.get_running_loop()

        def start() -> None:
            if run.early is None and not run.ended and not run.asked:
                run.early = asyncio.ensure_future(self._off_loop(
                    run, "fallback paths", self._extract_all, run.text,
                    run.context or self.context, run.deadline))  # fmt: skip

        def on_start() -> None:
            try:
                loop.call_soon_threadsafe(start)
            except RuntimeError:  # the run's loop has closed: nothing left to help
                pass

        return on_start

    def model_output(self, output: dict[str, Any]) -> dict[str, Any]:
        """The model's answer with each text value in the form the unit's fallbacks write it.

        A model writes what it read ("Kč", "boxes"); the unit's schema wants what its field
        normalizers make of it (CZK, box). A text value the normalizer reads as another text
        is replaced; one it cannot read stays as written, for the checks that follow. A field
        with a grammar is checked as written: its grammar already fixes the form, and a value
        it rejects must not be repaired into one it accepts.
        """
        normalized = dict(output)
        for name, value in output.items():
            function = self._field_normalizers.get(name)
            if function is None or name in self.grammars:
                continue
            if not isinstance(value, str) or len(value) > 256:
                continue
            try:
                read = function(value)
            except Exception:  # noqa: BLE001  # a plug-in's failure leaves the value as written
                continue
            if isinstance(read, str) and read:
                normalized[name] = read
        return normalized

    def _validating(self, run: _Run) -> str:
        assert run.answer is not None
        run.outputs[run.cursor] = (run.path or "?", run.answer.output)  # a witness, valid or not
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(run.answer.output))
        if error is None:
            try:
                self._check_grammars(run.answer.output)
            except ValidationFailed as exc:
                run.note_error(exc)
                return self._route_failure(exc.code)
        if error is None and run.path == PRIMARY and self.spec.policy.require_grounding:
            try:
                spans = ground_output(
                    self.spec.name, run.text, run.answer.output,
                    max_distance=self.spec.policy.max_field_distance,
                )  # fmt: skip
            except UngroundedOutput as exc:
                run.note_error(exc)
                return self._route_failure(exc.code)
            run.answer = dataclasses.replace(run.answer, spans=spans)
        if error is None:
            return "score"
        where = "$" + "".join(f".{p}" for p in error.path)
        run.note_error(ValidationFailed(
            f"{self.spec.name}: output violates {where}: {error.message}",
            json_path=where))  # fmt: skip
        return self._route_failure("invalid_output")

    def _check_grammars(self, output: dict[str, Any]) -> None:
        for name, grammar in self.grammars.items():
            value = output.get(name)
            if not isinstance(value, str):
                continue
            parsed = grammar.parse(value)
            if not parsed.ok:
                raise ValidationFailed(
                    f"{self.spec.name}: $.{name} = {value!r} is not a valid {grammar.name}: "
                    f"{parsed.error} (at character {parsed.position})",
                    json_path=f"$.{name}", position=parsed.position,
                )  # fmt: skip

    async def _scoring(self, run: _Run) -> str:
        assert run.answer is not None
        assert run.path is not None
        if self.calibrator is not None:
            ran = await self._run_witnesses(run)
            witnesses = [o for slot, o in run.outputs.items() if slot != run.cursor]
            # The path's own confidence becomes one signal among others; the calibrated
            # P(correct) is what the threshold, the attempts and the selection see.
            evidence = PathEvidence(
                run.path, run.answer, outcome="valid", text=run.text,
                description=self.spec.description,
                generation=run.generation
                if run.path == PRIMARY and self._reads_generation.get(run.engine_name or "")
                else None,
                document=run.document, witnesses=[output for _, output in witnesses],
                normalizers=self.normalizers,
            )  # fmt: skip
            # On the event loop, unlike the paths: loading the embedding model on a worker thread
            # left transformers' global state such that a model built later did not tie its
            # weights (seen in tests/test_tiny_glm5.py). A forward pass takes tens of ms.
            scored = self._on_loop(run, "calibrator", self._calibrate, evidence)
            if isinstance(scored, AAUError):  # out of time, or a broken calibrator
                run.note_error(scored)
                return "fall_back"
            calibrated, spent = scored
            # The coherence model's forward passes are reported apart, like model_ms.
            run.timings["embed_ms"] = run.timings.get("embed_ms", 0.0) + spent
            run.answer = dataclasses.replace(run.answer, confidence=calibrated)
            run.note = self._witness_note(run.answer.output, ran, witnesses)
        run.attempts.append(
            Attempt(run.path, round(run.answer.confidence, 4), output=run.answer.output)
        )
        run.candidates.append((run.path, run.answer))
        run.final = self._selected(run, is_complete=False)
        if run.final is not None:
            return "accept"
        if run.path == PRIMARY and "low_confidence" not in self.spec.policy.fallback_on:
            run.final = (run.path, run.answer)  # the policy keeps the model's answer as it is
            return "accept"
        return "fall_back"

    def _calibrate(self, evidence: PathEvidence) -> tuple[float, float]:
        """The calibrated confidence and the ms its embeddings took (read on this thread)."""
        assert self.calibrator is not None
        before = self.calibrator.embed_ms
        confidence = self.calibrator.confidence(evidence)
        return confidence, self.calibrator.embed_ms - before

    async def _off_loop(
        self, run: _Run, what: str, work: Callable[..., _T], *args: Any
    ) -> _T | AAUError:
        """``work(*args)`` on a worker thread within the run's deadline, or the error it ends with.

        Paths are CPU work (patterns, tagging): on the event loop one slow input would stall
        every other unit run, and no deadline could interrupt it.
        ``what`` names the work in messages (``crf path``).
        """
        remaining = run.remaining_s()
        if remaining <= 0:
            return self._out_of_time(what)
        try:
            return await asyncio.wait_for(asyncio.to_thread(work, *args), remaining)
        except TimeoutError:
            return RunTimeout(f"{self.spec.name}: the {what} did not finish within {self._limit}")
        except AAUError as exc:
            return exc
        except Exception as exc:  # a broken path or calibrator must not take the unit down
            return self._crashed(what, exc)

    def _on_loop(self, run: _Run, what: str, work: Callable[..., _T], *args: Any) -> _T | AAUError:
        """``work(*args)`` here, if the run's deadline allows, or the error it ends with."""
        return self._guarded(run.deadline, what, work, *args)

    def _guarded(
        self, deadline: float, what: str, work: Callable[..., _T], *args: Any
    ) -> _T | AAUError:
        """``work(*args)`` on this thread within ``deadline``, or the error it ends with.

        ``deadline`` is a ``time.monotonic()`` time: past it, the work does not start.
        """
        if deadline - time.monotonic() <= 0:
            return self._out_of_time(what)
        try:
            return work(*args)
        except AAUError as exc:
            return exc
        except Exception as exc:  # a broken path or calibrator must not take the unit down
            return self._crashed(what, exc)

    @property
    def _limit(self) -> str:
        return f"policy.timeout_s ({self.spec.policy.timeout_s:g} s)"

    def _out_of_time(self, what: str) -> RunTimeout:
        return RunTimeout(f"{self.spec.name}: {self._limit} ran out before the {what} could run")

    def _crashed(self, what: str, exc: Exception) -> ValidationFailed:
        return ValidationFailed(f"{self.spec.name}: {what} crashed: {exc!r}")

    def _selected(self, run: _Run, *, is_complete: bool) -> tuple[str, PathAnswer] | None:
        """The answer the selection rule picks among those scored so far (see ``select``)."""
        index = select(
            [Candidate(path, answer.confidence) for path, answer in run.candidates],
            self.spec.policy.threshold,
            is_complete=is_complete,
        )
        return None if index is None else run.candidates[index]

    async def _falling_back(self, run: _Run) -> str:
        run.cursor += 1
        run.answer = None
        if run.cursor >= len(self.fallbacks):
            run.final = self._selected(run, is_complete=True)
            return "accept" if run.final is not None else "fail"
        run.path = self.fallbacks[run.cursor].name
        result = run.witnessed.pop(run.cursor, None)  # it ran already, as a witness
        if result is None:
            result = await self._extract(run, run.cursor)
        if isinstance(result, AAUError):
            run.note_error(result)
            return "fall_back"
        run.answer = result
        return "validate"

    async def _extract(self, run: _Run, index: int) -> PathAnswer | AAUError:
        """The answer of the fallback at ``index``, or the error it failed with."""
        if run.early is not None:
            answers = await run.early
            return answers if isinstance(answers, AAUError) else answers[index]
        run.asked = True  # the engine's start came late, or not at all
        path = self.fallbacks[index]
        context = run.context or self.context
        return await self._off_loop(run, f"{path.name} path", path.extract, run.text, context)

    def _extract_all(
        self, text: str, context: PathContext, deadline: float
    ) -> list[PathAnswer | AAUError]:
        """Every fallback's answer or error, in chain order (on a worker thread)."""
        answers = [self._guarded(deadline, f"{path.name} path", path.extract, text, context)
                   for path in self.fallbacks]  # fmt: skip
        if self.normalizers and time.monotonic() < deadline:
            prepare_text_signals(text, self.normalizers)  # scoring reads them next
        return answers

    async def _run_witnesses(self, run: _Run) -> list[str]:
        """Run the fallbacks after the current path that have not run yet; their names.

        Training compares every path with all the others (the labelled runs run them all), so
        scoring needs them too. Errors are kept and reported when the chain reaches the path.
        """
        ran = []
        for index in range(run.cursor + 1, len(self.fallbacks)):
            if index in run.witnessed:
                continue
            result = run.witnessed[index] = await self._extract(run, index)
            name = self.fallbacks[index].name
            if isinstance(result, AAUError):
                ran.append(f"{name} ({result.code})")
            else:
                ran.append(name)
                run.outputs[index] = (name, result.output)
        return ran

    def _witness_note(
        self, output: dict[str, Any], ran: list[str], witnesses: list[tuple[str, dict[str, Any]]]
    ) -> str:
        """The trace's account of a scoring: the witnesses it ran, and who agreed."""
        agreed = [name for name, other in witnesses if same_output(output, other, self.normalizers)]
        parts = [f"ran witnesses {', '.join(ran)}"] if ran else []
        if witnesses:
            parts.append(f"agreement {len(agreed)}/{len(witnesses)}"
                         + (f" ({', '.join(agreed)})" if agreed else ""))  # fmt: skip
        else:
            parts.append("no witnesses")
        return "; ".join(parts)

    def _accepted(self, run: _Run) -> str:
        # A custom flow may route here without the default chain's selection (e.g. accepting
        # weak answers): the selection rule over every answer seen decides, else fail.
        if run.final is None:
            run.final = self._selected(run, is_complete=True)
        return "finish" if run.final is not None else "fail"

    def _route_failure(self, code: str) -> str:
        return "fall_back" if code in self.spec.policy.fallback_on else "fail"

    # -- the loop -------------------------------------------------------------------------

    async def run(
        self, text: str, *, document: Document | None = None, terms: TermSet | None = None,
        term_hits: Sequence[TermHit] | None = None, tenant: str | None = None,
        upstream: Mapping[str, UnitResult] | None = None,
    ) -> UnitResult:  # fmt: skip
        """Run the unit over ``text``; always returns a result.

        ``document`` is what ``text`` was read from (its OCR quality is a calibration signal).
        ``terms`` is the tenant's term set and ``term_hits`` its hits in ``text`` (found here
        when not given): templates and fallbacks read the hits, the engine may merge them.
        ``tenant`` (None: the default tenant) keeps the engine's prefix cache apart per tenant.
        ``upstream`` holds the results of the units a ``derived`` unit needs, by name.
        """
        run = _Run(text=valid_text(text), document=document, terms=terms, term_hits=term_hits,
                   tenant=tenant)  # fmt: skip
        run.deadline = time.monotonic() + self.spec.policy.timeout_s
        if self.spec.kind == "derived":
            return self._derived(run, upstream or {})
        _ACTIVE.enter()
        try:
            await self._walk(run)
        except Exception as exc:  # nothing escapes a unit run: a bug here is this unit's error
            run.final = None
            run.flow_error = InputError(
                f"{self.spec.name}: the run failed unexpectedly in state "
                f"{run.trace[-1].state if run.trace else 'received'}: {exc!r}",
                code="internal_error",
            )
        finally:
            _ACTIVE.leave()
            run.ended = True
            if run.early is not None:  # a flow that ended before it needed the fallbacks
                run.early.cancel()
        return self._result(run)

    def _derived(self, run: _Run, upstream: Mapping[str, UnitResult]) -> UnitResult:
        """A derived unit's run: its computation over the results of the units it needs."""
        run.trace.append(TraceStep("received", None, 0.0, "needs " + ", ".join(self.spec.needs)))
        run.path = "derived"
        error: AAUError | None = upstream_failure(self.spec, upstream)
        if error is None:
            try:
                answer = compute_derived(self.spec, upstream)
            except AAUError as exc:
                error = exc
            except Exception as exc:  # nothing escapes a unit run
                error = InputError(f"{self.spec.name}: the computation failed: {exc!r}",
                                   code="internal_error")  # fmt: skip
        if error is not None:
            run.note_error(error)
            run.trace.append(TraceStep("failed", run.path, run.ms(), _detail(error)))
            return self._result(run)
        problem = jsonschema.exceptions.best_match(self.validator.iter_errors(answer.output))
        if problem is not None:  # e.g. a change that the schema bounds
            run.note_error(ValidationFailed(f"{self.spec.name}: output violates the schema: "
                                            f"{problem.message}"))  # fmt: skip
            run.trace.append(TraceStep("failed", run.path, run.ms(), "invalid_output"))
            return self._result(run)
        run.final = (run.path, PathAnswer(output=answer.output, confidence=answer.confidence))
        run.attempts.append(Attempt(run.path, round(answer.confidence, 4), output=answer.output))
        detail = f"confidence={answer.confidence:.3f}; {answer.detail}"
        run.trace.append(TraceStep("done", run.path, run.ms(), detail))
        return self._result(run)

    async def _walk(self, run: _Run) -> None:
        """Do each state's work and send the event it names, until the chart ends."""
        machine = RunMachine(self.spec.flow)
        run.trace.append(TraceStep(machine.state, None, 0.0))
        while not machine.is_final:
            state = machine.state
            errors_before = len(run.errors)
            outcome = self._work[state](run)
            event = await outcome if inspect.isawaitable(outcome) else outcome
            if not machine.can(event) and event != "fail" and machine.can("fail"):
                event = "fail"  # a custom flow without this route ends the run cleanly
            try:
                machine.send(event)
            except ValueError as exc:
                run.flow_error = InputError(f"{self.spec.name}: {exc}", code="flow_error")
                run.final = None
                run.trace.append(TraceStep("failed", run.path, run.ms(), "flow_error"))
                break
            is_new_error = len(run.errors) > errors_before
            failing = event in {"fall_back", "fail"} and is_new_error
            detail = _detail(run.errors[-1]) if failing else None
            if event == "score" and run.answer is not None:  # the path's own, before calibration
                detail = f"path confidence={run.answer.confidence:.3f}"
            if event == "accept" and run.answer is not None:
                detail = f"confidence={run.answer.confidence:.3f}"
            if run.note is not None:  # what the scoring just done ran and compared
                detail, run.note = "; ".join(d for d in (detail, run.note) if d), None
            # Once an answer is chosen, the steps name its path, not the last one tried.
            shown = run.final[0] if run.final is not None else run.path
            run.trace.append(TraceStep(machine.state, shown, run.ms(), detail))

    def _result(self, run: _Run) -> UnitResult:
        timings = {k: round(v, 3) for k, v in {**zero_timings(), **run.timings}.items()}
        timings["total_ms"] = run.ms()
        common: dict[str, Any] = {
            "unit": self.spec.name,
            "version": self.spec.version,
            "timings": timings,
            "trace": tuple(run.trace),
            "attempts": tuple(run.attempts),
            "tokens": run.tokens,
            "engine": run.engine_name,
        }
        if run.final is not None:
            path, answer = run.final
            return UnitResult(
                output=answer.output,
                confidence=round(answer.confidence, 4),
                path=path,
                error=None,
                spans=dict(answer.spans),
                **common,
            )
        if run.flow_error is not None:
            error = UnitError(run.flow_error.code, str(run.flow_error))
        elif not run.errors:
            error = UnitError("flow_error", f"{self.spec.name}: the flow ended without an answer")
        elif len(run.errors) == 1:
            error = UnitError(run.errors[0].code, str(run.errors[0]))
        else:
            group = FallbacksExhausted(f"{self.spec.name}: every path failed", run.errors)
            detail = "; ".join(f"{a.path}: {a.error.code}" for a in run.attempts if a.error)
            error = UnitError(group.code, f"{group.message} ({detail})")
        return UnitResult(output=None, confidence=0.0, path=None, error=error, **common)
