"""The in-process transformers engine: any HF causal LM (GGUF included) on CPU or GPU.

Generation is a hand-written greedy decode loop over the model's forward pass with a KV cache,
so that each step can (1) read the raw distribution for the confidence signals, (2) apply the
request's own constraint mask, and (3) stop at the request's deadline or cancellation. One model
serves every caller: requests are serialized on a lock, and the time spent waiting for it is the
request's queue time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aau.decoding.constraints import ConstraintCompiler
from aau.engines.base import EngineCapabilities, Generation, GenerationRequest, Timings
from aau.engines.registry import EngineConfig, register_engine
from aau.errors import AAUError, EngineError, EngineTimeout, EngineUnavailable

__all__ = ["ContextTooLong", "TransformersEngine"]


class ContextTooLong(EngineUnavailable):
    """The prompt plus the token budget does not fit the model's context window."""

    code = "context_too_long"
    retryable = False


@register_engine("transformers")
class TransformersEngine:
    """Shared in-process engine. Weights load on first use (or ``warmup``)."""

    name = "transformers"
    capabilities = EngineCapabilities(constrained_json=True, token_logprobs=True, in_process=True)

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self.model: Any = None
        self.tokenizer: Any = None
        self.compiler: ConstraintCompiler | None = None
        self.model_path: Path | None = None
        self.load_s: float | None = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._stop_ids: frozenset[int] = frozenset()

    # -- loading --------------------------------------------------------------------------

    def load(self) -> None:
        """Load weights and tokenizer (idempotent, thread-safe)."""
        with self._load_lock:
            if self.model is not None:
                return
            import torch

            from aau.engines.models import load_model_and_tokenizer

            started = time.perf_counter()
            if self.config.threads:
                torch.set_num_threads(self.config.threads)
            device = self.config.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            dtype = "auto" if self.config.dtype == "auto" else getattr(torch, self.config.dtype)
            cache_dir = Path(self.config.cache_dir or Path.home() / ".cache" / "aau")
            self.model, self.tokenizer, self.model_path = load_model_and_tokenizer(
                self.config.model, dtype=dtype, device=device, cache_dir=cache_dir
            )
            vocab_rows = self.model.get_output_embeddings().weight.shape[0]
            self.compiler = ConstraintCompiler(
                self.tokenizer, vocab_rows, model=self.model, backend=self.config.constraint_backend
            )
            eos = self.model.generation_config.eos_token_id
            eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
            self._stop_ids = frozenset(eos_ids | {self.tokenizer.eos_token_id})
            self.load_s = time.perf_counter() - started

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Load weights, compile ``schemas`` and run one real probe generation."""
        await asyncio.to_thread(self.load)
        assert self.compiler is not None
        for schema in schemas:
            self.compiler.compile(schema)
        probe = GenerationRequest(
            messages=[{"role": "user", "content": "Reply with an empty JSON object."}],
            schema={"type": "object", "properties": {}, "additionalProperties": False},
            max_new_tokens=4,
        )
        result = (await self.generate([probe]))[0]
        if isinstance(result, Exception):
            raise result

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        with self._load_lock:
            self.model = self.tokenizer = self.compiler = None

    # -- generation -----------------------------------------------------------------------

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """Run each request; failures are returned in their slot, not raised."""
        results: list[Generation | EngineError] = []
        for request in requests:
            submitted = time.perf_counter()
            try:
                results.append(await asyncio.to_thread(self._generate_one, request, submitted))
            except asyncio.CancelledError:
                request.cancel.set()  # the worker thread stops at its next token
                raise
            except EngineError as exc:
                results.append(exc)
            except AAUError as exc:
                results.append(_as_engine_error(exc))
        return results

    def _prompt_ids(self, request: GenerationRequest) -> Any:
        encoded = self.tokenizer.apply_chat_template(
            list(request.messages), add_generation_prompt=True, return_tensors="pt",
            return_dict=True,
        )  # fmt: skip
        return encoded["input_ids"].to(self.model.device)

    def _generate_one(self, request: GenerationRequest, submitted: float) -> Generation:
        try:
            self.load()
        except EngineError:
            raise
        except Exception as exc:  # an unloadable model must not crash the caller's batch
            raise EngineUnavailable(f"model failed to load: {exc}") from exc
        assert self.compiler is not None
        constraint = self.compiler.compile(request.schema, unit=request.key or "<request>")
        with self._run_lock:
            started = time.perf_counter()
            return self._decode(request, constraint.new_processor(), submitted, started)

    def _decode(
        self, request: GenerationRequest, processor: Any, submitted: float, started: float
    ) -> Generation:
        import torch

        input_ids = self._prompt_ids(request)
        prompt_tokens = int(input_ids.shape[1])
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit and prompt_tokens + request.max_new_tokens > limit:
            raise ContextTooLong(
                f"{request.key or 'request'}: prompt of {prompt_tokens} tokens plus a budget of "
                f"{request.max_new_tokens} exceeds the model's context of {limit} tokens"
            )
        logprobs: list[float] = []
        entropies: list[float] = []
        forced: list[bool] = []
        generated: list[int] = []
        finish = "length"
        prefill_ms = 0.0
        with torch.inference_mode():
            out = self.model(input_ids=input_ids, use_cache=True)
            prefill_ms = (time.perf_counter() - started) * 1000
            cache = out.cache  # transformers 5 renamed past_key_values to cache
            sequence = input_ids
            for _ in range(request.max_new_tokens):
                self._check_limits(request)
                raw = out.logits[:, -1, :].float()
                log_probs = torch.log_softmax(raw, dim=-1)
                masked = processor(sequence, raw.clone())
                allowed = int(torch.isfinite(masked).sum()) if masked.dtype.is_floating_point else 0
                token = int(torch.argmax(masked, dim=-1))
                logprobs.append(float(log_probs[0, token]))
                entropies.append(float(-(log_probs.exp() * log_probs).nan_to_num().sum()))
                forced.append(allowed == 1)
                if token in self._stop_ids:
                    finish = "stop"
                    break
                generated.append(token)
                next_id = torch.tensor([[token]], device=sequence.device)
                sequence = torch.cat([sequence, next_id], dim=1)
                out = self.model(input_ids=next_id, cache=cache, use_cache=True)
                cache = out.cache
        finished = time.perf_counter()
        return Generation(
            text=self.tokenizer.decode(generated, skip_special_tokens=True),
            finish_reason=finish,  # type: ignore[arg-type]  # a Literal, set above
            token_logprobs=tuple(logprobs),
            token_entropies=tuple(entropies),
            forced=tuple(forced),
            prompt_tokens=prompt_tokens,
            timings=Timings(
                queue_ms=(started - submitted) * 1000,
                prefill_ms=prefill_ms,
                decode_ms=(finished - started) * 1000 - prefill_ms,
            ),
        )

    @staticmethod
    def _check_limits(request: GenerationRequest) -> None:
        if request.cancel.is_set():
            raise EngineTimeout(f"{request.key or 'request'}: cancelled by the caller")
        if request.deadline is not None and time.monotonic() > request.deadline:
            raise EngineTimeout(f"{request.key or 'request'}: generation passed its deadline")


def _as_engine_error(exc: AAUError) -> EngineError:
    wrapped = EngineUnavailable(str(exc))
    wrapped.code = exc.code
    return wrapped
