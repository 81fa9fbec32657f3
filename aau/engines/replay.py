"""Recorded model generations, and an engine that answers from them: deterministic offline runs.

``RecordingEngine`` wraps a real engine and keeps each answered request's ``Generation`` (text,
token log-probabilities and entropies, forced flags, finish reason, token counts) under the
digest of the request (``request_digest``: the chat messages, the JSON Schema and the unit key).
``Recording`` writes them as JSONL (a header line, then one line per generation) and reads such a
file back, bounded and checked, since a recording is a file beside a unit and as untrusted as
the unit. ``ReplayEngine`` answers each request from a recording, its generations marked as
replayed (the engine is named ``replay``, each generation notes ``replayed``); a request the
recording lacks fails with ``not_recorded``: a replay never runs a model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aau.engines.base import Engine, EngineCapabilities, Generation, GenerationRequest
from aau.errors import EngineError, SpecError
from aau.files import write_replacing
from aau.spec.loader import FileRefused, read_bounded

__all__ = [
    "RECORDING_FORMAT",
    "NotRecorded",
    "Recording",
    "RecordingEngine",
    "ReplayEngine",
    "request_digest",
]

RECORDING_FORMAT = "aau.recorded-generations/1"
"""The ``format`` of a recording's header line."""

MAX_RECORDING_BYTES = 32 * 2**20
"""The largest recording read (a few hundred generations take well under 1 MB)."""

_MAX_TOKENS = 65_536
_MAX_TEXT = 1_000_000


def request_digest(request: GenerationRequest) -> str:
    """The identity of a request in a recording: its messages, schema and unit key."""
    canonical = json.dumps(
        {"key": request.key, "messages": [dict(m) for m in request.messages],
         "schema": request.schema},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
    )  # fmt: skip
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class NotRecorded(EngineError):
    """A replayed run sent a request its recording does not hold (re-record with ``--record``)."""

    code = "not_recorded"


class _Recorded(BaseModel):
    """One recorded generation, as a recording line holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    text: str = Field(max_length=_MAX_TEXT)
    finish_reason: Literal["stop", "length"]
    token_logprobs: list[float] = Field([], max_length=_MAX_TOKENS)
    token_entropies: list[float] = Field([], max_length=_MAX_TOKENS)
    forced: list[bool] = Field([], max_length=_MAX_TOKENS)
    prompt_tokens: int = Field(0, ge=0, le=10**8)
    cached_tokens: int = Field(0, ge=0, le=10**8)

    def generation(self) -> Generation:
        return Generation(
            text=self.text,
            finish_reason=self.finish_reason,
            token_logprobs=tuple(self.token_logprobs),
            token_entropies=tuple(self.token_entropies),
            forced=tuple(self.forced),
            prompt_tokens=self.prompt_tokens,
            cached_tokens=self.cached_tokens,
            notes=("replayed",),
        )


class _Header(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    format: Literal["aau.recorded-generations/1"]
    fingerprint: str = Field(max_length=200)
    engine: str = Field(max_length=200)
    capabilities: dict[str, bool] = {}


def _line(digest: str, generation: Generation) -> dict[str, Any]:
    # Floats round-trip exactly through JSON (repr), so a replay reads what the engine gave.
    return {
        "digest": digest,
        "text": generation.text,
        "finish_reason": generation.finish_reason,
        "token_logprobs": list(generation.token_logprobs),
        "token_entropies": list(generation.token_entropies),
        "forced": list(generation.forced),
        "prompt_tokens": generation.prompt_tokens,
        "cached_tokens": generation.cached_tokens,
    }


@dataclass
class Recording:
    """Generations by request digest, with what they were recorded from.

    Attributes:
        fingerprint: what the requests were made from (the caller's: unit and cases), so a
            caller can tell a recording made from other inputs.
        engine: the recorded engine's name.
        capabilities: the recorded engine's capabilities (the replay has the same).
        generations: by ``request_digest``.
        info: further header fields (the model, the unit key), kept as read.
    """

    fingerprint: str
    engine: str
    capabilities: EngineCapabilities
    generations: dict[str, Generation] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        """Write the recording (header line, then generations in digest order) atomically."""
        header = {
            "format": RECORDING_FORMAT,
            "fingerprint": self.fingerprint,
            "engine": self.engine,
            "capabilities": {
                "token_logprobs": self.capabilities.token_logprobs,
                "merges_terms": self.capabilities.merges_terms,
                "logprobs_after_mask": self.capabilities.logprobs_after_mask,
                "prefix_cache": self.capabilities.prefix_cache,
            },
            **self.info,
        }
        lines = [json.dumps(header, sort_keys=True, ensure_ascii=False)]
        lines += [
            json.dumps(_line(digest, self.generations[digest]), ensure_ascii=False)
            for digest in sorted(self.generations)
        ]
        write_replacing(path, "\n".join(lines) + "\n")

    @classmethod
    def load(cls, path: Path) -> Recording:
        """Read a recording, bounded and checked.

        Raises:
            SpecError: the file is unreadable or over ``MAX_RECORDING_BYTES`` (G010), a line is
                not JSON (G010), the header is not a recording's (G011) or a generation line is
                malformed (G012), each located by line.
        """
        where = str(path)
        try:
            raw = read_bounded(path, MAX_RECORDING_BYTES)
            text = raw.decode("utf-8")
        except FileRefused as exc:
            raise SpecError(exc.message, file=where, check="G010") from None
        except UnicodeDecodeError as exc:
            raise SpecError(f"not UTF-8 text (byte {exc.start})", file=where,
                            check="G010") from None  # fmt: skip
        rows: list[tuple[int, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except (json.JSONDecodeError, RecursionError) as exc:
                raise SpecError(f"not a JSON line: {exc}", file=where, line=number,
                                check="G010") from None  # fmt: skip
        if not rows:
            raise SpecError("empty recording", file=where, line=1, check="G011")
        try:
            header = _Header.model_validate(rows[0][1])
        except ValidationError as exc:
            raise SpecError(f"not a recording header ({RECORDING_FORMAT}): "
                            f"{exc.errors(include_url=False)[0]['msg']}", file=where,
                            line=rows[0][0], check="G011") from None  # fmt: skip
        generations: dict[str, Generation] = {}
        for number, data in rows[1:]:
            try:
                recorded = _Recorded.model_validate(data)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                spot = ".".join(str(p) for p in first["loc"])
                raise SpecError(first["msg"], file=where, line=number, field=spot or None,
                                check="G012") from None  # fmt: skip
            generations[recorded.digest] = recorded.generation()
        known = {"format", "fingerprint", "engine", "capabilities"}
        return cls(
            fingerprint=header.fingerprint,
            engine=header.engine,
            capabilities=EngineCapabilities(**{
                k: v for k, v in header.capabilities.items()
                if k in EngineCapabilities.__dataclass_fields__
            }) if "token_logprobs" in header.capabilities else EngineCapabilities(True),
            generations=generations,
            info={k: v for k, v in (header.model_extra or {}).items() if k not in known},
        )  # fmt: skip


class RecordingEngine:
    """A real engine whose every answered request is kept for a ``Recording``.

    It has the wrapped engine's name and capabilities, so a run through it is that engine's
    run (the same calibrator reads it). Closing it leaves the wrapped engine open: it is shared.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.name = engine.name
        self.capabilities = engine.capabilities
        self.generations: dict[str, Generation] = {}

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """The wrapped engine's answers; each generation is kept under its request's digest."""
        results = await self.engine.generate(requests)
        for request, result in zip(requests, results, strict=True):
            if isinstance(result, Generation):
                self.generations[request_digest(request)] = result
        return results

    async def ready(self) -> None:
        """The wrapped engine's readiness."""
        await self.engine.ready()

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Warm the wrapped engine."""
        await self.engine.warmup(schemas)

    def close(self) -> None:
        """Nothing: the wrapped engine is its owner's to close."""


class ReplayEngine:
    """Answers requests from a ``Recording``; never runs a model."""

    name = "replay"

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.capabilities = recording.capabilities
        self.replayed = 0
        """Requests answered from the recording so far."""

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """The recorded generation of each request, or ``NotRecorded`` in its slot."""
        results: list[Generation | EngineError] = []
        for request in requests:
            generation = self.recording.generations.get(request_digest(request))
            if generation is None:
                results.append(NotRecorded(
                    f"{request.key}: this request is not in the recording (the prompt, schema "
                    "or input changed since it was made); record again with --record"))  # fmt: skip
            else:
                self.replayed += 1
                results.append(generation)
        return results

    async def ready(self) -> None:
        """Always ready."""

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing to release."""
