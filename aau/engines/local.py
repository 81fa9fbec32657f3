"""The in-process transformers engine: any HF causal LM (GGUF included), CPU or GPU, shared.

One engine object serves every unit run of every pipeline in the process. Callers submit
requests from any thread or event loop; one worker thread owns the model and runs the
continuous batch (``aau.engines.batching``): between two decode steps it admits waiting
requests — each prefilled on top of the longest cached prefix of its prompt
(``aau.engines.prefix_cache``) — and stacks them into the running batch.

Admission is bounded twice: by rows (``max_batch_size``) and by the positions the rows in
flight reserve (``max_batch_tokens``: prompt plus token budget each), which bounds the batch's
KV memory. A request that does not fit waits, ahead of later arrivals. A long new prompt part
is prefilled in chunks (``prefill_chunk_tokens``) with a decode step of the running rows after
each, so one new document does not stall every row being decoded.

A tenant's request reads and fills that tenant's part of the prefix cache only. With
``term_merging`` on, a request that carries a tenant's term set is read in that tenant's
merged-token view (``aau.terms.merge``), built once per term set on the caller's thread; its
prefix KV and compiled constraints are kept apart from every other term set's.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import queue
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from aau.decoding.constraints import ConstraintCompiler
from aau.engines import kv
from aau.engines.base import EngineCapabilities, Generation, GenerationRequest, notify_start
from aau.engines.batching import Cancelled, DecodeBatch, HeadInput, PrefilledGroup, Row
from aau.engines.prefix_cache import BLOCK, PrefixCache
from aau.engines.prefix_store import PrefixStore, model_identity
from aau.engines.prompt_tokens import PromptTokens
from aau.engines.registry import EngineConfig
from aau.errors import AAUError, EngineError, EngineTimeout, EngineUnavailable

__all__ = ["ContextTooLong", "TransformersEngine"]


class ContextTooLong(EngineUnavailable):
    """The prompt plus the token budget does not fit the model's context window."""

    code = "context_too_long"
    retryable = False


class TransformersEngine:
    """Shared in-process engine. Weights load on first use (or ``warmup``)."""

    name = "transformers"

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()
        self.capabilities = EngineCapabilities(
            token_logprobs=True,
            merges_terms=self.config.term_merging,
            prefix_cache=self.config.prefix_cache_mb > 0,
        )
        self.model: Any = None
        self.tokenizer: Any = None
        self.compiler: ConstraintCompiler | None = None
        self.model_path: Path | None = None
        self.load_s: float | None = None
        self.prefix_cache = PrefixCache(self.config.prefix_cache_mb * 2**20)
        self._load_lock = threading.Lock()
        self._load_lock_guard = threading.Lock()  # guards _loading, never held while loading
        self._loading: concurrent.futures.Future[None] | None = None
        self._queue: queue.SimpleQueue[Row] = queue.SimpleQueue()  # C: cheap between steps
        # Prepared requests waiting for room in the batch, or for an earlier prefill that will
        # give them a longer cached prefix; admitted before anything still in the queue.
        self._deferred: deque[_Prepared] = deque()
        self._chunked: _Chunked | None = None  # the long prefill in progress, one chunk a step
        self._worker: threading.Thread | None = None
        self._closing = threading.Event()
        self._stop_ids: frozenset[int] = frozenset()
        self._namespace = ""
        self._max_rows = self.config.max_batch_size
        self.step_rows: Counter[int] = Counter()
        """Decode steps run with each number of rows, since start (what the service's batch
        size metric reads)."""
        self._head: HeadInput | None = None
        self._prompt_tokens: PromptTokens | None = None
        self._cache_dir: Path | None = None
        self._prefix_store: PrefixStore | None = None
        # Merged-term views and their constraint compilers, by term-set fingerprint.
        self._views: OrderedDict[str, tuple[Any, ConstraintCompiler]] = OrderedDict()
        self._views_lock = threading.Lock()
        self.max_views = 8

    # -- loading --------------------------------------------------------------------------

    def load(self) -> None:
        """Load weights and tokenizer and start the worker (idempotent, thread-safe)."""
        with self._load_lock:
            if self.model is not None:
                return
            # torch and transformers load with the weights: building an engine costs nothing.
            import torch

            from aau.engines.glm5 import make_indexer_ties_deterministic
            from aau.engines.models import device_dtype, load_model_and_tokenizer

            started = time.perf_counter()
            if self.config.threads:
                torch.set_num_threads(self.config.threads)
            device = self.config.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            dtype = device_dtype(self.config.dtype, device)
            cache_dir = Path(self.config.cache_dir or Path.home() / ".cache" / "aau")
            model, tokenizer, self.model_path = load_model_and_tokenizer(
                self.config.model, dtype=dtype, device=device, cache_dir=cache_dir
            )
            make_indexer_ties_deterministic(model)
            self._head = HeadInput(model)
            self._cache_dir = cache_dir
            vocab_rows = model.get_output_embeddings().weight.shape[0]
            self.compiler = ConstraintCompiler(
                tokenizer, vocab_rows, model=model, backend=self.config.constraint_backend,
                cache_dir=cache_dir / "grammars",
            )  # fmt: skip
            eos = model.generation_config.eos_token_id
            eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
            self._stop_ids = frozenset(eos_ids | {tokenizer.eos_token_id})
            # Prefix KV depends on the weights and on what token ids mean (tenant term sets
            # add tokens): both are in the namespace.
            self._namespace = f"{self.model_path}|{len(tokenizer)}"
            self._prompt_tokens = PromptTokens(tokenizer)
            if self.config.prefix_cache_mb and self.config.prefix_disk_mb:
                identity = model_identity(self.model_path, model, len(tokenizer))
                self._prefix_store = PrefixStore(
                    cache_dir / "prefixes", identity, self.config.prefix_disk_mb * 2**20
                )
            self.model, self.tokenizer = model, tokenizer
            self._closing.clear()
            self._worker = threading.Thread(target=self._work, name="aau-engine", daemon=True)
            self._worker.start()
            # Stop the worker between steps at exit: killed inside a torch op, it aborts noisily.
            atexit.register(self._stop_worker)
            self.load_s = time.perf_counter() - started

    async def ready(self) -> None:
        """Load the weights (off the event loop) unless they are loaded already.

        Every run waiting at once shares one load on one thread: a cold batch's first runs do
        not each hold a worker thread blocked on the load.
        """
        if self.model is not None:
            return
        with self._load_lock_guard:
            if self._loading is None or (self._loading.done() and self.model is None):
                self._loading = concurrent.futures.Future()
                threading.Thread(target=self._load_into, args=(self._loading,),
                                 name="aau-engine-load", daemon=True).start()  # fmt: skip
            loading = self._loading
        timeout_s = self.config.ready_timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(loading)), timeout_s)
        except TimeoutError:
            raise EngineUnavailable(f"the model did not load within {timeout_s:g} s") from None
        except EngineError:
            raise
        except Exception as exc:
            raise EngineUnavailable(f"model failed to load: {exc}") from exc

    def _load_into(self, future: concurrent.futures.Future[None]) -> None:
        try:
            self.load()
        except BaseException as exc:  # handed to every waiting run
            future.set_exception(exc)
        else:
            future.set_result(None)

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Load weights, compile ``schemas`` and run one real probe generation."""
        await self.ready()
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

    def _stop_worker(self) -> None:
        self._closing.set()
        if self._worker is not None:
            self._worker.join(timeout=30)
        self._worker = None

    def close(self) -> None:
        """Stop the worker and drop the model and caches."""
        with self._load_lock:
            self._stop_worker()
            atexit.unregister(self._stop_worker)
            self.model = self.tokenizer = self.compiler = None
            self.prefix_cache.clear()
            self._views.clear()
            if self._prefix_store is not None:
                self._prefix_store.flush()

    # -- submitting -----------------------------------------------------------------------

    def submit(
        self, request: GenerationRequest, *, submitted: float | None = None
    ) -> concurrent.futures.Future[Generation | EngineError]:
        """Queue one request from any thread; the future holds a Generation or an EngineError.

        ``submitted`` (``time.perf_counter()``) is when the caller asked, if earlier than now:
        the request's ``queue_ms`` counts from it (waiting for the weights to load included).
        """
        future: concurrent.futures.Future[Generation | EngineError] = concurrent.futures.Future()
        submitted = time.perf_counter() if submitted is None else submitted
        try:
            self.load()
        except EngineError as exc:
            future.set_result(exc)
            return future
        except Exception as exc:  # an unloadable model must not crash the caller's batch
            future.set_result(EngineUnavailable(f"model failed to load: {exc}"))
            return future
        row = Row(request, future, submitted)
        if self.config.term_merging and request.terms is not None and len(request.terms):
            try:
                row.view, row.compiler = self.term_view(request.terms)
            except AAUError as exc:
                future.set_result(_as_engine_error(exc))
                return future
        self._queue.put(row)
        return future

    def term_view(self, term_set: Any) -> tuple[Any, ConstraintCompiler]:
        """The merged-token view of ``term_set`` and its constraint compiler (built once)."""
        from aau.terms.merge import MergedVocabulary

        self.load()
        key = term_set.fingerprint
        with self._views_lock:
            hit = self._views.get(key)
            if hit is not None:
                self._views.move_to_end(key)
                return hit
            view = MergedVocabulary(term_set, self.tokenizer, self.model)
            compiler = ConstraintCompiler(
                self.tokenizer, view.base_size, backend="xgrammar", extra_tokens=view.strings,
                cache_dir=self._cache_dir / "grammars" if self._cache_dir else None,
            )  # fmt: skip
            self._views[key] = (view, compiler)
            if len(self._views) > self.max_views:
                self._views.popitem(last=False)
            return view, compiler

    async def generate(
        self, requests: Sequence[GenerationRequest]
    ) -> list[Generation | EngineError]:
        """Run the requests (batched with everything else in flight); failures in their slot."""
        submitted = time.perf_counter()
        try:  # the one shared load, off the event loop: other coroutines keep running
            await self.ready()
        except EngineError as exc:  # a model that cannot load fails each request in its slot
            return [exc for _ in requests]
        futures = [self.submit(r, submitted=submitted) for r in requests]
        try:
            if len(futures) == 1:  # a unit run's request: no gather, one hop fewer
                return [await asyncio.wrap_future(futures[0])]
            return list(await asyncio.gather(*(asyncio.wrap_future(f) for f in futures)))
        except asyncio.CancelledError:
            for request in requests:  # the worker drops these rows at the next token
                request.cancel.set()
            raise

    # -- the worker -----------------------------------------------------------------------

    def _work(self) -> None:
        import torch

        # No autograd anywhere in serving; inference mode also skips version counters.
        batch = DecodeBatch(self.model, self.tokenizer, self._stop_ids, self._head,
                            self.config.jump_forward_positions)  # fmt: skip
        try:
            with torch.inference_mode():
                self._serve(batch)
        finally:
            batch.close()

    def _serve(self, batch: DecodeBatch) -> None:
        while not self._closing.is_set():
            try:
                self._admit(batch)
                self._prefill_next_chunk(batch)
                if len(batch):
                    self.step_rows[len(batch)] += 1
                    batch.step()
            except Exception as exc:  # keep serving: fail the batch in flight, not the process
                batch.fail_all(EngineUnavailable(f"engine step failed: {exc!r}"))
        closed = EngineUnavailable("the engine was closed")
        waiting = [prep.row for prep in self._deferred]
        if self._chunked is not None:
            waiting.append(self._chunked.prep.row)
        for row in waiting:
            if not row.future.done():
                row.future.set_result(closed)
        self._deferred.clear()
        self._chunked = None

    def _admit(self, batch: DecodeBatch) -> None:
        """Prefill waiting requests and join them to the batch (wait briefly when it is empty).

        Requests that arrive together and continue cached prefixes are prefilled in one forward:
        a few dozen new tokens per row cost about what one row's do, as the weights are read
        once (16 rows of 21 tokens on 385 cached: 0.55 s together, 1.2 s one by one).
        """
        prepared = self._take(batch)
        arrivals: list[tuple[Row, Any, int]] = []
        groups: list[PrefilledGroup] = []
        while prepared:
            # A request that shares more of its prompt with an earlier one of this round (or
            # with the chunked prefill in progress) than the cache holds, as many units over
            # one new document do, waits for that prefill and looks the cache up again.
            now: list[_Prepared] = []
            later: list[_Prepared] = []
            for prep in prepared:
                if self._chunked is not None and _shares_more(prep, self._chunked.prep):
                    self._deferred.append(prep)
                elif any(_shares_more(prep, earlier) for earlier in now):
                    later.append(prep)
                else:
                    now.append(prep)
            together = [p for p in now if p.hit is not None and p.row.view is None
                        and len(p.tokens) - p.hit.length <= _TOGETHER_MAX_NEW]  # fmt: skip
            alone = [p for p in now if p not in together]
            if len(together) > 1:
                try:
                    groups.append(self._prefill_together(together, batch))
                except Exception:  # e.g. a cache layout that cannot be stacked: one at a time
                    alone += together
            else:
                alone += together
            for prep in alone:
                if self._is_long(prep) and (len(batch) or arrivals or groups or self._chunked):
                    if self._chunked is None:  # rows are decoding: prefill it between steps
                        self._chunked = _Chunked(prep, prep.hit.kv if prep.hit else None,
                                                 prep.hit.length if prep.hit else 0)  # fmt: skip
                    else:
                        self._deferred.append(prep)
                    continue
                with _failing_alone(prep.row):
                    arrivals.append(self._prefill_one(prep, batch))
            prepared = [prep._replace(hit=self._lookup(prep.namespace, prep.tokens))
                        for prep in later]  # fmt: skip
        batch.join(arrivals, groups)

    def _take(self, batch: DecodeBatch) -> list[_Prepared]:
        """The requests to admit now: deferred ones first, then the queue's, while they fit.

        A request fits while the rows stay within ``max_batch_size`` and their reserved
        positions within ``max_batch_tokens``; the first that does not waits at the head, so a
        large request is not overtaken for ever. With nothing else in flight any request fits.
        """
        in_flight = len(batch) + (self._chunked is not None)
        if in_flight and not self._deferred and self._queue.empty():
            return []  # the common case between two decode steps: nothing to look at
        reserved = batch.reserved_positions() + (
            _reservation(self._chunked.prep) if self._chunked is not None else 0
        )
        taken: list[_Prepared] = []
        while in_flight + len(taken) < self._max_rows:
            if self._deferred:
                prep = self._deferred.popleft()
                with _failing_alone(prep.row):
                    taken_now = self._refreshed(prep)
                if prep.row.future.done():
                    continue
            else:
                try:
                    idle = not in_flight and not taken
                    row = self._queue.get(timeout=0.05) if idle else self._queue.get_nowait()
                except queue.Empty:
                    if idle:  # nothing came for a while: the emptied batch's KV can go
                        batch.free_retired()
                    break
                with _failing_alone(row):
                    taken_now = self._prepare(row)
                if row.future.done():
                    continue
            need = _reservation(taken_now)
            if reserved + need > self.config.max_batch_tokens and (in_flight or taken):
                self._deferred.appendleft(taken_now)
                break
            reserved += need
            taken.append(taken_now)
        return taken

    def _refreshed(self, prep: _Prepared) -> _Prepared:
        """A deferred request, checked again: still wanted, and its cached prefix looked up anew."""
        _still_wanted(prep.row.request, "while queued")
        return prep._replace(hit=self._lookup(prep.namespace, prep.tokens))

    def _is_long(self, prep: _Prepared) -> bool:
        chunk = self.config.prefill_chunk_tokens
        return bool(chunk) and len(prep.tokens) - (prep.hit.length if prep.hit else 0) > chunk

    def _prompt_ids(self, row: Row) -> tuple[list[int], int]:
        """The prompt's ids and how many lead them that come from the static messages alone."""
        messages = list(row.request.messages)
        if row.view is not None:
            text = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False
            )
            return row.view.encode(text, _content_regions(text, messages), row.written), 0
        assert self._prompt_tokens is not None
        return self._prompt_tokens.ids_and_head(messages)

    def _prepare(self, row: Row) -> _Prepared:
        """Everything before a request's prefill forward: constraint, prompt ids, cached prefix."""
        request = row.request
        row.started = time.perf_counter()
        compiler = row.compiler or self.compiler
        assert compiler is not None
        if request.schema is not None:
            row.constraint = compiler.compile(request.schema, unit=request.key or "<request>")
        tokens, head = self._prompt_ids(row)
        namespace = self._namespace
        if request.tenant is not None:
            # Tenants never share prefix KV: a hit (``cached_tokens``) would tell one tenant
            # that another recently sent the same prompt prefix (a document, document_first).
            namespace = f"{namespace}|tenant:{request.tenant}"
        if row.view is not None:
            namespace = f"{namespace}|terms:{row.view.fingerprint}"
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit and len(tokens) + request.max_new_tokens > limit:
            raise ContextTooLong(
                f"{request.key or 'request'}: prompt of {len(tokens)} tokens plus a budget of "
                f"{request.max_new_tokens} exceeds the model's context of {limit} tokens"
            )
        # The static part is stored on disk, or read from there, only when the caller says it
        # is the unit's own text and nothing here makes it a tenant's.
        stored = head if (request.static_prefix and namespace == self._namespace) else 0
        hit = self._lookup(namespace, tokens)
        if stored >= BLOCK and (hit is None or hit.length < stored):
            hit = self._restored(namespace, tokens, stored, request.key) or hit
        if request.deadline is not None and time.monotonic() > request.deadline:
            raise EngineTimeout(f"{request.key or 'request'}: deadline passed while queued")
        return _Prepared(row, tokens, namespace, hit, stored)

    def _restored(self, namespace: str, tokens: list[int], head: int, tag: str) -> Any:
        """The prefix cache's hit once the static part is read back from disk, or None."""
        store = self._prefix_store
        if store is None or head * _MIN_REUSE_FRACTION < len(tokens) - head:
            return None  # the prefix would not be continued (see _lookup)
        cache = store.load(tokens[:head], self.model.config, self.model.device)
        if cache is None:
            return None
        self.prefix_cache.insert(namespace, tokens[:head], cache, tag=tag)
        return self._lookup(namespace, tokens)

    def _lookup(self, namespace: str, tokens: list[int]) -> Any:
        """The cached prefix worth continuing, or None.

        A short prefix before a long new part is not: a prefill on top of a cache runs with an
        explicit attention mask, ~13% slower than a causal one from scratch (2,045 tokens on a
        35-token prefix: 4.0-4.3 s, against 3.5-3.7 s for all 2,080), which outweighs what the
        prefix saves unless it is at least a sixth of the new part.
        """
        if not self.prefix_cache.max_bytes:
            return None
        hit = self.prefix_cache.lookup(namespace, tokens)
        if hit is not None and hit.length * _MIN_REUSE_FRACTION < len(tokens) - hit.length:
            return None
        return hit

    def _prefill_one(self, prep: _Prepared, batch: DecodeBatch) -> tuple[Row, Any, int]:
        start = prep.hit.length if prep.hit else 0
        forward_started = time.perf_counter()
        cache = self._forward_span(
            prep, prep.hit.kv if prep.hit else None, start, len(prep.tokens), batch
        )
        self._prefilled(prep, cache, (time.perf_counter() - forward_started) * 1000)
        return prep.row, cache, len(prep.tokens)

    def _prefill_next_chunk(self, batch: DecodeBatch) -> None:
        """One chunk of the long prefill in progress; its row joins the batch after the last."""
        chunked = self._chunked
        if chunked is None:
            return
        prep, row = chunked.prep, chunked.prep.row
        end = min(len(prep.tokens), chunked.done + self.config.prefill_chunk_tokens)
        with _failing_alone(row):
            _still_wanted(row.request, "in prefill")
            started = time.perf_counter()
            chunked.cache = self._forward_span(prep, chunked.cache, chunked.done, end, batch)
            chunked.model_ms += (time.perf_counter() - started) * 1000
            chunked.done = end
        if row.future.done():  # failed or cancelled: the chunks done are dropped
            self._chunked = None
        elif end == len(prep.tokens):
            self._chunked = None
            self._prefilled(prep, chunked.cache, chunked.model_ms)
            batch.join([(row, chunked.cache, len(prep.tokens))])

    def _forward_span(
        self, prep: _Prepared, cache: Any, start: int, end: int, batch: DecodeBatch
    ) -> Any:
        """Prefill ``prep.tokens[start:end]`` on top of ``cache`` (its first ``start`` positions).

        Returns the cache of all ``end`` positions; after the last span the row's next-token
        logits are set. The row's mask is made beside the forward (``batch``'s helper).
        """
        import torch

        row, tokens = prep.row, prep.tokens
        ids = torch.tensor([tokens[start:end]], device=self.model.device)
        inputs = {"input_ids": ids}
        last = end == len(tokens)
        if row.view is not None:
            inputs = {"inputs_embeds": row.view.embed(ids, self.model.get_input_embeddings())}
            assert self._head is not None
            self._head.clear()
        positions = torch.arange(start, end, device=self.model.device)[None]
        _announce(row)
        out = batch.beside_prefill([row], lambda: self.model(
            **inputs,
            position_ids=positions,
            cache=cache,
            use_cache=True,
            logits_to_keep=1,  # the next token's only: the head over every position cost a quarter
        ))  # fmt: skip
        if last:
            row.logits = out.logits[0, -1].float().cpu().numpy()
            if row.view is not None:
                self._head.extend(row, 0)  # type: ignore[union-attr]
        if not kv.is_batchable(out.cache):
            self._max_rows = 1  # an unsupported cache layout: one request at a time
        return out.cache

    def _prefill_together(self, preps: list[_Prepared], batch: DecodeBatch) -> PrefilledGroup:
        """One forward for several requests, each continuing its own cached prefix.

        Row ``r`` holds ``[padding][its cached prefix][padding][its new tokens]``: cached
        prefixes left-padded to the longest, new tokens right-aligned, the padding masked out,
        position ids per row, so each row computes what it would alone (up to float summation
        order). The rows join the batch on that cache and mask as they are; each row's own KV
        is cut out without the padding only for the prefix cache.
        """
        import torch

        cached = [p.hit.length for p in preps]
        fresh = [len(p.tokens) - c for p, c in zip(preps, cached, strict=True)]
        width_cached, width_fresh = max(cached), max(fresh)
        stacked = kv.stack_left_padded([(p.hit.kv, width_cached - c)
                                        for p, c in zip(preps, cached, strict=True)])  # fmt: skip
        ids = torch.zeros((len(preps), width_fresh), dtype=torch.long)
        positions = torch.zeros((len(preps), width_fresh), dtype=torch.long)
        mask = torch.zeros((len(preps), width_cached + width_fresh), dtype=torch.long)
        for r, (prep, c, n) in enumerate(zip(preps, cached, fresh, strict=True)):
            ids[r, width_fresh - n :] = torch.tensor(prep.tokens[c:])
            positions[r, width_fresh - n :] = torch.arange(c, c + n)
            mask[r, width_cached - c : width_cached] = 1
            mask[r, width_cached + width_fresh - n :] = 1
        device = self.model.device
        for prep in preps:
            _announce(prep.row)
        forward_started = time.perf_counter()
        out = batch.beside_prefill([p.row for p in preps], lambda: self.model(
            input_ids=ids.to(device), attention_mask=mask.to(device),
            position_ids=positions.to(device), cache=stacked, use_cache=True,
            logits_to_keep=1,
        ))  # fmt: skip
        share = (time.perf_counter() - forward_started) * 1000 / len(preps)
        logits = out.logits[:, -1].float().cpu().numpy()
        for r, (prep, c, n) in enumerate(zip(preps, cached, fresh, strict=True)):
            own = kv.row_without_padding(
                out.cache, r, [(width_cached - c, c), (width_cached + width_fresh - n, n)]
            ) if self.prefix_cache.max_bytes else None  # fmt: skip
            prep.row.logits = logits[r]
            self._prefilled(prep, own, share)
        return PrefilledGroup([p.row for p in preps], out.cache, mask)

    def _prefilled(self, prep: _Prepared, cache: Any, model_ms: float) -> None:
        """A row's bookkeeping once its prompt is in ``cache`` and its first logits are set.

        ``cache`` (the prompt's KV alone) goes to the prefix cache; None when it keeps none.
        """
        row, tokens = prep.row, prep.tokens
        if row.mask_owed:  # not made beside the prefill
            row.mask = row.constraint.new_mask()
        row.model_ms = model_ms
        row.prefill_ms = (time.perf_counter() - row.started) * 1000
        row.prompt_tokens, row.cached_tokens = len(tokens), prep.hit.length if prep.hit else 0
        row.last_token, row.position = tokens[-1], len(tokens)
        if self.prefix_cache.max_bytes:
            self.prefix_cache.insert(prep.namespace, tokens, cache, tag=row.request.key)
        store, head = self._prefix_store, prep.stored
        if store is not None and cache is not None and head >= BLOCK and row.cached_tokens < head:
            store.save(tokens[:head], kv.truncate(cache, head))  # for the next process


class _Prepared(NamedTuple):
    """A request ready for its prefill forward."""

    row: Row
    tokens: list[int]
    namespace: str
    hit: Any  # the prefix cache's PrefixHit, or None
    stored: int = 0  # leading tokens that may be kept on disk (the static messages)


@dataclass(eq=False)
class _Chunked:
    """A long prefill in progress: its cache holds the first ``done`` prompt positions."""

    prep: _Prepared
    cache: Any
    done: int
    model_ms: float = 0.0


def _announce(row: Row) -> None:
    """Tell the caller, once, that its request's first forward starts.

    Its side work then overlaps the forwards, which release the GIL, rather than the
    preparation on this thread.
    """
    if not row.announced:
        row.announced = True
        notify_start(row.request)


def _still_wanted(request: GenerationRequest, where: str) -> None:
    """Raise if the caller cancelled ``request`` or its deadline passed (``where`` it waits)."""
    if request.cancel.is_set():
        raise Cancelled(f"{request.key or 'request'}: cancelled by the caller")
    if request.deadline is not None and time.monotonic() > request.deadline:
        raise EngineTimeout(f"{request.key or 'request'}: deadline passed {where}")


def _reservation(prep: _Prepared) -> int:
    """Positions a request may come to hold: its prompt plus its token budget."""
    return len(prep.tokens) + prep.row.request.max_new_tokens


_MIN_REUSE_FRACTION = 6  # a cached prefix is used when at least 1/6 of the new part
_WORTH_WAITING = 32  # tokens of prompt an earlier request of the round would save
# Prefilling together pays where a row's new tokens are few (the forward is bound by reading
# the weights); long ones are bound by compute, and padding them to one another only adds.
_TOGETHER_MAX_NEW = 128


def _shares_more(prep: _Prepared, earlier: _Prepared) -> bool:
    """Whether ``earlier``'s prompt, once prefilled, would give ``prep`` a longer cached prefix."""
    if prep.namespace != earlier.namespace:
        return False
    reach = (prep.hit.length if prep.hit else 0) + _WORTH_WAITING
    return len(prep.tokens) > reach and prep.tokens[:reach] == earlier.tokens[:reach]


@contextlib.contextmanager
def _failing_alone(row: Row) -> Iterator[None]:
    """Any error while preparing or prefilling ``row`` answers that request only."""
    try:
        yield
    except AAUError as exc:
        row.future.set_result(exc if isinstance(exc, EngineError) else _as_engine_error(exc))
    except Exception as exc:  # one bad request fails alone
        row.future.set_result(EngineUnavailable(f"prefill failed: {exc!r}"))


def _content_regions(text: str, messages: Sequence[dict[str, str]]) -> list[tuple[int, int]]:
    """Where each message's content sits in the rendered prompt (found in order).

    Terms merge only there, never in role headers or special tokens; a content the template
    changed (and so cannot be found) merges nothing.
    """
    regions, position = [], 0
    for message in messages:
        content = message.get("content") or ""
        found = text.find(content, position) if content else -1
        if found >= 0:
            regions.append((found, found + len(content)))
            position = found + len(content)
    return regions


def _as_engine_error(exc: AAUError) -> EngineError:
    wrapped = EngineUnavailable(str(exc))
    wrapped.code = exc.code
    return wrapped
