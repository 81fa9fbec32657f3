"""The engine seam: what a generation request and its answer are, and the ``Engine`` protocol.

Every backend (in-process transformers, an OpenAI-compatible server…) takes the same requests:
chat messages plus the JSON Schema the answer must follow, and returns the text with the
per-token signals the confidence needs. Backends fail per request (an ``EngineError`` in that
request's slot), never for the whole batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from aau.errors import EngineError

if TYPE_CHECKING:
    from aau.terms.store import TermSet

__all__ = [
    "BatchStats",
    "BreakerStates",
    "Engine",
    "EngineCapabilities",
    "Generation",
    "GenerationRequest",
    "Timings",
    "notify_start",
]


@dataclass(frozen=True, slots=True)
class EngineCapabilities:
    """What a backend gives; the runner reads these, never the backend's name.

    Every engine honours a request's JSON Schema or fails the request, and the runner validates
    every answer either way, so that is not a capability.
    """

    token_logprobs: bool
    """Returns per-token log-probabilities and entropies: the calibrator reads them as signals of
    the model's answer (without them it scores that answer on its other signals)."""
    merges_terms: bool = False
    """Reads tenants' dictionary terms as single merged tokens (else terms only annotate)."""
    logprobs_after_mask: bool = False
    """The log-probabilities are taken after the constraint mask (vLLM's are), not from the raw
    distribution: a calibrator fitted on one kind must not read the other's."""
    prefix_cache: bool = False
    """Reuses the KV of prompt prefixes it has seen (``Generation.cached_tokens`` tells hits)."""


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One generation: chat messages, the schema to follow, and limits.

    Attributes:
        messages: chat turns (``role``/``content``), rendered by the model's chat template.
        schema: the bounded JSON Schema the output must follow; None generates freely.
        max_new_tokens: token budget.
        deadline: ``time.monotonic()`` after which the request fails with ``EngineTimeout``.
        key: cache namespace, e.g. ``extract_price@1`` (unit name and version).
        cancel: set by the caller to abandon the request at the next token.
        tenant: whose request this is (None: the default tenant). A prefix-caching engine
            keeps each tenant's cached prefixes apart, so one tenant's ``cached_tokens`` never
            tells of another's prompts.
        terms: the tenant's term set; an engine that merges terms (``term_merging``) reads the
            prompt in that tenant's merged-token view, others ignore it.
        on_start: called, from any thread, when the engine starts computing the request (its
            prompt prepared, its first forward or HTTP call next): the caller may then start
            work of its own beside the generation. A retrying engine may call it again; an
            engine may also never call it.
        static_prefix: every message but the last is the unit's own text (its instructions
            and examples, the same for every input; no document, no tenant's terms): an
            engine may keep their KV beyond the process (``aau.engines.prefix_store``).
    """

    messages: Sequence[dict[str, str]]
    schema: dict[str, Any] | None
    max_new_tokens: int = 96
    deadline: float | None = None
    key: str = ""
    cancel: threading.Event = field(default_factory=threading.Event, compare=False)
    terms: TermSet | None = field(default=None, compare=False)
    tenant: str | None = None
    on_start: Callable[[], None] | None = field(default=None, compare=False)
    static_prefix: bool = False


def notify_start(request: GenerationRequest) -> None:
    """Tell the caller its request is being computed (a failing callback is the caller's)."""
    if request.on_start is not None:
        try:
            request.on_start()
        except Exception:  # noqa: BLE001, S110  # the caller's side work must not fail the request
            pass


@dataclass(frozen=True, slots=True)
class Timings:
    """Milliseconds spent waiting, reading the prompt and generating."""

    queue_ms: float = 0.0
    prefill_ms: float = 0.0
    decode_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Generation:
    """A finished generation and the signals the confidence is computed from.

    Attributes:
        text: the generated text (JSON when the request was constrained).
        finish_reason: ``stop`` (the grammar completed) or ``length`` (budget spent).
        token_logprobs: log-probability of each chosen token under the raw distribution
            (before the constraint mask), so the model's own belief is kept. A forced token
            may read 0.0, its probability under the mask: the in-process engine does not
            compute what no signal reads (``aau.calibration`` leaves forced tokens out).
        token_entropies: entropy (nats) of each step's raw distribution (0.0 where forced, as
            above).
        forced: per token, whether the constraint left exactly one choice.
        prompt_tokens: tokens read; ``cached_tokens`` of them came from a prefix cache.
        model_ms: time in model forward passes spent on this request (a batched step counts
            for each row by its share), so the rest of its time is framework overhead.
        timings: where the request's time went.
    """

    text: str
    finish_reason: Literal["stop", "length"]
    token_logprobs: tuple[float, ...] = ()
    token_entropies: tuple[float, ...] = ()
    forced: tuple[bool, ...] = ()
    prompt_tokens: int = 0
    cached_tokens: int = 0
    model_ms: float = 0.0
    timings: Timings = Timings()
    notes: tuple[str, ...] = ()
    """What the engine had to do to get the answer (retries, replicas whose circuit is not
    closed), for the run's trace."""

    @property
    def generated_tokens(self) -> int:
        """How many tokens were generated."""
        return len(self.token_logprobs)


@runtime_checkable
class Engine(Protocol):
    """A model backend shared by every unit run of a process."""

    name: str
    capabilities: EngineCapabilities

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """One result per request, in order; a failed request holds its ``EngineError``."""
        ...

    async def ready(self) -> None:
        """Return once the engine can serve: weights loaded, or a server healthy.

        Cheap once ready (every unit run calls it). The runner does not charge this wait to a
        run's deadline and reports it apart (``ready_ms``): a cold process's first runs must
        not time out on the model load.

        Raises:
            EngineUnavailable: the engine could not become ready within its own bound
                (``EngineConfig.ready_timeout_s``).
        """
        ...

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Load weights and compile ``schemas`` so the first real request is fast."""
        ...

    def close(self) -> None:
        """Release the model and its caches."""
        ...


@runtime_checkable
class BatchStats(Protocol):
    """An engine that batches rows in its own decode loop and counts the batch sizes."""

    step_rows: Mapping[int, int]
    """Decode steps run with each number of rows, since start."""


@runtime_checkable
class BreakerStates(Protocol):
    """An engine whose replicas sit behind circuit breakers (``aau.engines.resilience``)."""

    def breaker_states(self) -> dict[str, str]:
        """Each replica's breaker state (``closed``, ``open``, ``half_open``), by URL."""
        ...
