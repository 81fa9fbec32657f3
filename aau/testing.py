"""Test doubles for the engine seam, named as such: for FSM and fault-injection tests only.

``FunctionEngine(fn)`` answers each request with ``fn(request)`` (text, or an exception to
return in that slot); ``FaultyEngine(engine, fault)`` wraps a real engine and injects a fault
for requests a predicate selects. Examples and the README's commands always run a real model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aau.engines.base import (
    Engine,
    EngineCapabilities,
    Generation,
    GenerationRequest,
    notify_start,
)
from aau.errors import EngineError

__all__ = ["FaultyEngine", "FunctionEngine"]

Answer = str | EngineError


class FunctionEngine:
    """A fake engine whose answers come from a function (no model, no constraint)."""

    name = "function"
    capabilities = EngineCapabilities(token_logprobs=True)

    def __init__(
        self, fn: Callable[[GenerationRequest], Answer], *, logprob: float = -0.05
    ) -> None:
        self.fn, self.logprob = fn, logprob
        self.requests: list[GenerationRequest] = []

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """Call ``fn`` for each request."""
        results: list[Generation | EngineError] = []
        for request in requests:
            self.requests.append(request)
            notify_start(request)
            answer = self.fn(request)
            if isinstance(answer, EngineError):
                results.append(answer)
                continue
            # Token signals shaped like the in-process engine's on such an answer (about one
            # token per 2.5 characters, the opening one forced), so a calibrator fitted on real
            # runs reads them as it reads a real generation's.
            count = max(4, round(len(answer) / 2.5))
            results.append(Generation(text=answer, finish_reason="stop",
                                      token_logprobs=(self.logprob,) * count,
                                      forced=(True,) + (False,) * (count - 1),
                                      token_entropies=(0.3,) * count))  # fmt: skip
        return results

    async def ready(self) -> None:
        """Always ready."""

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing to release."""


class FaultyEngine:
    """Wraps a real engine; requests chosen by ``when`` get ``fault`` instead of an answer."""

    def __init__(
        self,
        engine: Engine,
        fault: EngineError,
        when: Callable[[GenerationRequest], bool] = lambda r: True,
    ) -> None:
        self.engine, self.fault, self.when = engine, fault, when
        self.name = f"faulty({engine.name})"
        self.capabilities = engine.capabilities

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """Forward the healthy requests; fail the chosen ones."""
        healthy = [r for r in requests if not self.when(r)]
        answers = iter(await self.engine.generate(healthy)) if healthy else iter(())
        return [self.fault if self.when(r) else next(answers) for r in requests]

    async def ready(self) -> None:
        """Ready when the wrapped engine is."""
        await self.engine.ready()

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Warm the wrapped engine."""
        await self.engine.warmup(schemas)

    def close(self) -> None:
        """Close the wrapped engine."""
        self.engine.close()
