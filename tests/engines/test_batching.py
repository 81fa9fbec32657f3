"""The shared engine: batched, prefix-cached generation gives the same tokens as one at a time.

Most tests use the tiny random-weight GLM-5 (fast, and its sparse-attention indexer is exactly
where batching used to change outputs); one slow test repeats the equality on the real default
model. Faults (cancel, context overflow, an uncompilable schema) fail their own row only.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aau
from aau.decoding import bound_schema
from aau.decoding.constraints import CompiledConstraint, TokenMask
from aau.engines.base import Generation, GenerationRequest
from aau.engines.local import TransformersEngine
from aau.prompts import render_messages
from tests._tiny_glm5 import build_tiny_glm5

ROOT = Path(__file__).resolve().parents[2]
UNITS = [aau.load_unit(ROOT / "units" / f"{n}.yaml")
         for n in ("extract_price", "extract_date", "extract_quantity")]  # fmt: skip
TEXTS = [
    "Invoice 7: 12 boxes delivered on 3 March 2024, total due EUR 1,250.50.",
    "Please ship 500 kg by June 5, 2025; the agreed price is USD 18,400 for the lot.",
    "Nothing to see here, just a short note about the weather.",
]


def requests(texts: list[str] = TEXTS, budget: int = 24) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            messages=render_messages(unit, text),
            schema=bound_schema(unit.output, max_string_length=32),
            max_new_tokens=budget,
            key=unit.key,
        )  # fmt: skip
        for text in texts
        for unit in UNITS
    ]


@pytest.fixture(scope="module")
def glm5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_glm5(tmp_path_factory.mktemp("glm5"))


def make_engine(model: Path | None, **options: int) -> TransformersEngine:
    engine = TransformersEngine(aau.EngineConfig(model=str(model) if model else None, threads=1,
                                                 **options))  # fmt: skip
    engine.load()
    return engine


def run_all(engine: TransformersEngine, reqs: list[GenerationRequest], *, batched: bool) -> list:
    async def go() -> list:
        if batched:
            return await engine.generate(reqs)
        return [(await engine.generate([r]))[0] for r in reqs]

    try:
        return asyncio.run(go())
    finally:
        engine.close()


def texts_of(results: list) -> list[str]:
    assert all(isinstance(r, Generation) for r in results), results
    return [r.text for r in results]


def test_tiny_glm5_batched_and_prefix_cached_outputs_equal_single_runs(glm5_dir: Path) -> None:
    alone = run_all(make_engine(glm5_dir, max_batch_size=1, prefix_cache_mb=0), requests(),
                    batched=False)  # fmt: skip
    batched = run_all(make_engine(glm5_dir, prefix_cache_mb=0), requests(), batched=True)
    cached_engine = make_engine(glm5_dir)
    warm = asyncio.run(cached_engine.generate(requests()[:3]))  # fills the unit prefixes
    assert all(isinstance(w, Generation) for w in warm)
    # Arriving together on cached prefixes, the rows are prefilled in one padded forward.
    cached = run_all(cached_engine, requests(), batched=True)
    assert texts_of(batched) == texts_of(alone)
    assert texts_of(cached) == texts_of(alone)
    assert all(r.cached_tokens > 0 for r in cached), [r.cached_tokens for r in cached]
    assert all(r.cached_tokens == 0 for r in alone)
    for a, c in zip(alone, cached, strict=True):
        assert a.token_logprobs == pytest.approx(c.token_logprobs, abs=1e-3)


@pytest.mark.slow
def test_default_model_batched_and_prefix_cached_outputs_equal_single_runs() -> None:
    reqs = requests(TEXTS[:2], budget=40)
    alone = run_all(make_engine(None, max_batch_size=1, prefix_cache_mb=0), reqs, batched=False)
    cached_engine = make_engine(None)
    asyncio.run(cached_engine.generate(requests(TEXTS[2:], budget=2)))  # the unit prefixes
    # Arriving together on cached prefixes, the rows are prefilled in one padded forward.
    cached = run_all(cached_engine, requests(TEXTS[:2], budget=40), batched=True)
    assert texts_of(cached) == texts_of(alone)
    assert all(r.cached_tokens > 0 for r in cached)


def test_cancelled_row_fails_alone_and_others_finish_untouched(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    reqs = requests(TEXTS[:1])
    reqs[1] = GenerationRequest(
        messages=reqs[1].messages, schema=reqs[1].schema, max_new_tokens=24, key=reqs[1].key,
        cancel=threading.Event(),
    )  # fmt: skip
    reqs[1].cancel.set()
    reference = run_all(make_engine(glm5_dir, max_batch_size=1), requests(TEXTS[:1]), batched=False)
    results = run_all(engine, reqs, batched=True)
    assert getattr(results[1], "code", None) == "cancelled"
    assert [results[0].text, results[2].text] == [reference[0].text, reference[2].text]


@pytest.mark.slow
@pytest.mark.parametrize("positions", [1, 10_000], ids=["a-token-a-step", "together"])
def test_jump_forward_gives_the_step_by_step_tokens_and_signals(
    positions: int,
) -> None:
    # The real model: a forced run is fed in the tokenization xgrammar picks (the longest
    # tokens), which a trained model picks too; a random-weight one may spell it otherwise.
    reqs = requests(TEXTS[:2], budget=40)
    jumping = make_engine(None, prefix_cache_mb=0, jump_forward_positions=positions)
    jumped = run_all(jumping, reqs, batched=True)
    stepping = make_engine(None, max_batch_size=1, prefix_cache_mb=0, jump_forward_positions=0)
    stepped = run_all(stepping, reqs, batched=False)

    assert texts_of(jumped) == texts_of(stepped)
    for j, s in zip(jumped, stepped, strict=True):
        assert j.forced == s.forced
        assert j.token_logprobs == pytest.approx(s.token_logprobs, abs=1e-3)
        assert j.token_entropies == pytest.approx(s.token_entropies, abs=1e-3)
        assert j.finish_reason == s.finish_reason
    tokens = sum(len(s.forced) for s in stepped)
    assert all(s.finish_reason == "stop" for s in stepped)
    assert sum(stepping.step_rows.values()) == tokens  # a step a token, the stop's included
    row_steps = sum(n * rows for rows, n in jumping.step_rows.items())
    if positions == 1:  # forced tokens fed a step each, but a forced stop takes none
        assert row_steps == tokens - len(stepped)
    else:  # fed together with the token before them: no steps of their own
        assert row_steps < tokens - 2 * len(stepped)


class DeadEndMask:
    """Fault injection: a real token mask that allows no token at all from the third step on."""

    def __init__(self, real: TokenMask) -> None:
        self.real, self.steps = real, 0

    def fill(self) -> None:
        self.steps += 1
        self.real.fill()

    def only(self) -> int | None:
        return None if self.steps >= 3 else self.real.only()

    def allows(self, token: int) -> bool:
        return self.steps < 3 and self.real.allows(token)

    def allowed(self) -> np.ndarray:
        allowed = self.real.allowed()
        return allowed & False if self.steps >= 3 else allowed

    def accept(self, token: int) -> None:
        self.real.accept(token)

    def jump(self) -> list[int]:
        return [] if self.steps >= 3 else self.real.jump()

    def may_end(self) -> bool:
        return self.real.may_end()


def test_a_row_whose_constraint_dead_ends_fails_alone_with_a_code(
    glm5_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reqs = requests(TEXTS[:1])
    reference = run_all(make_engine(glm5_dir, max_batch_size=1), requests(TEXTS[:1]), batched=False)
    real_new_mask = CompiledConstraint.new_mask

    def new_mask(self: CompiledConstraint) -> Any:
        mask = real_new_mask(self)
        return DeadEndMask(mask) if self.schema == reqs[1].schema else mask

    monkeypatch.setattr(CompiledConstraint, "new_mask", new_mask)
    results = run_all(make_engine(glm5_dir), reqs, batched=True)

    assert getattr(results[1], "code", None) == "constraint_not_honored"
    assert "allows no token" in str(results[1])
    assert [results[0].text, results[2].text] == [reference[0].text, reference[2].text]


def test_context_overflow_and_bad_schema_fail_their_row_only(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    reqs = requests(TEXTS[:1])
    huge = GenerationRequest(messages=[{"role": "user", "content": "word " * 200_000}],
                             schema=reqs[0].schema, max_new_tokens=8, key="huge@1")  # fmt: skip
    broken = GenerationRequest(messages=reqs[0].messages, schema={"type": "no-such-type"},
                               max_new_tokens=8, key="broken@1")  # fmt: skip
    results = run_all(engine, [reqs[0], huge, broken, reqs[1]], batched=True)
    assert getattr(results[1], "code", None) == "context_too_long"
    assert "exceeds the model's context" in str(results[1])
    assert isinstance(results[2], Exception)
    assert "cannot be compiled" in str(results[2])
    assert isinstance(results[0], Generation)
    assert isinstance(results[3], Generation)


def test_prefix_cache_evicts_least_recently_used_to_stay_within_its_cap(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    try:
        first = asyncio.run(engine.generate(requests()[:1]))
        assert isinstance(first[0], Generation)
        one_entry = engine.prefix_cache.nbytes
        assert one_entry > 0
        engine.prefix_cache.max_bytes = int(one_entry * 2.5)
        results = asyncio.run(engine.generate(requests()))
        assert all(isinstance(r, Generation) for r in results)
        assert engine.prefix_cache.nbytes <= engine.prefix_cache.max_bytes
        assert len(engine.prefix_cache) == 2  # nine prompts stored, the oldest seven evicted
    finally:
        engine.close()


def test_tenants_do_not_share_prefix_kv(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    prompt = requests(TEXTS[:1])[0]

    def as_tenant(tenant: str | None) -> GenerationRequest:
        return GenerationRequest(messages=prompt.messages, schema=prompt.schema,
                                 max_new_tokens=4, key=prompt.key, tenant=tenant)  # fmt: skip

    async def go() -> list:
        tenants = ("acme", "acme", "globex", None, None)
        return [(await engine.generate([as_tenant(t)]))[0] for t in tenants]

    try:
        acme, acme_again, globex, default, default_again = asyncio.run(go())
    finally:
        engine.close()

    assert acme.cached_tokens == 0
    assert acme_again.cached_tokens > 0  # a tenant reuses its own prefixes
    assert globex.cached_tokens == default.cached_tokens == 0  # and no one else's
    assert default_again.cached_tokens > 0
    assert globex.text == acme.text == default.text


def test_a_request_that_waits_for_the_weights_counts_the_wait_as_queue_time(
    glm5_dir: Path,
) -> None:
    engine = TransformersEngine(aau.EngineConfig(model=str(glm5_dir), threads=1))  # not loaded
    try:
        (result,) = asyncio.run(engine.generate(requests(TEXTS[:1], budget=2)[:1]))
    finally:
        engine.close()

    assert isinstance(result, Generation)
    assert engine.load_s is not None
    assert result.timings.queue_ms >= engine.load_s * 1000


def test_requests_arriving_together_over_one_new_document_reuse_its_prefill(
    glm5_dir: Path,
) -> None:
    document = " ".join(TEXTS * 8)  # several hundred tokens, never seen before
    reqs = [
        GenerationRequest(
            messages=[
                {"role": "user", "content": document},
                {"role": "assistant", "content": "Read."},
                {"role": "user", "content": f"Question {i}: what is due?"},
            ],
            schema=requests()[0].schema,
            max_new_tokens=4,
            key=f"q{i}@1",
        )  # fmt: skip
        for i in range(4)
    ]
    alone = run_all(make_engine(glm5_dir, max_batch_size=1, prefix_cache_mb=0), reqs,
                    batched=False)  # fmt: skip
    together = run_all(make_engine(glm5_dir), reqs, batched=True)

    assert together[0].cached_tokens == 0
    assert all(r.cached_tokens > 300 for r in together[1:]), [r.cached_tokens for r in together]
    assert texts_of(together) == texts_of(alone)


def test_a_short_cached_prefix_before_a_long_new_part_is_not_continued(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    opening = [{"role": "system", "content": "You answer questions about business documents."}]

    def asking(text: str) -> GenerationRequest:
        return GenerationRequest(messages=[*opening, {"role": "user", "content": text}],
                                 schema=None, max_new_tokens=2, key="probe@1")  # fmt: skip

    async def go() -> list:
        first = (await engine.generate([asking("Short question one?")]))[0]
        short = (await engine.generate([asking("Short question two?")]))[0]
        long = (await engine.generate([asking("Short question three? " + " ".join(TEXTS * 12))]))[0]
        return [first, short, long]

    try:
        first, short, long = asyncio.run(go())
    finally:
        engine.close()

    assert first.cached_tokens == 0
    assert short.cached_tokens > 0  # the shared opening is most of this prompt: continued
    assert long.prompt_tokens > 6 * short.cached_tokens
    assert long.cached_tokens == 0  # a prefill from scratch is faster than continuing it


def _long_request(key: str, budget: int = 6) -> GenerationRequest:
    document = " ".join(TEXTS * 10)  # several hundred tokens
    return GenerationRequest(messages=[{"role": "user", "content": document}], schema=None,
                             max_new_tokens=budget, key=key)  # fmt: skip


def test_a_long_prompt_is_prefilled_in_chunks_while_running_rows_keep_decoding(
    glm5_dir: Path,
) -> None:
    short, long = requests(TEXTS[:1], budget=8)[0], _long_request("doc@1")
    alone = run_all(make_engine(glm5_dir, max_batch_size=1, prefix_cache_mb=0), [short, long],
                    batched=False)  # fmt: skip
    engine = make_engine(glm5_dir, prefill_chunk_tokens=32, prefix_cache_mb=0)
    # The short request is prefilled first; the long one then comes in 32-token chunks, each
    # followed by a decode step of the short row.
    together = run_all(engine, [short, long], batched=True)

    assert texts_of(together) == texts_of(alone)
    first, second = together
    assert second.prompt_tokens > 10 * 32
    # The short row finished while the long prompt was still being prefilled.
    finished = first.timings.queue_ms + first.timings.prefill_ms + first.timings.decode_ms
    assert finished < second.timings.queue_ms + second.timings.prefill_ms
    assert engine.step_rows[1] >= 6  # its steps ran alone, between the chunks


def test_requests_past_the_token_budget_wait_and_then_run_in_arrival_order(
    glm5_dir: Path,
) -> None:
    reqs = [_long_request(f"doc{i}@1", budget=4) for i in range(3)]
    alone = run_all(make_engine(glm5_dir, max_batch_size=1, prefix_cache_mb=0), reqs,
                    batched=False)  # fmt: skip
    one_fits = alone[0].prompt_tokens + 4 + 10  # one prompt and its budget, not two
    engine = make_engine(glm5_dir, max_batch_tokens=one_fits, prefix_cache_mb=0)
    bounded = run_all(engine, reqs, batched=True)

    assert texts_of(bounded) == texts_of(alone)
    assert all(r.prompt_tokens == alone[0].prompt_tokens for r in bounded)
    assert set(engine.step_rows) == {1}  # never two rows at once
    waits = [r.timings.queue_ms for r in bounded]
    assert waits == sorted(waits)


def test_the_engine_tells_the_caller_when_it_starts_on_a_request(glm5_dir: Path) -> None:
    engine = make_engine(glm5_dir)
    started: list[str] = []
    reqs = [GenerationRequest(messages=r.messages, schema=r.schema, max_new_tokens=8,
                              key=r.key, on_start=lambda k=r.key: started.append(k))
            for r in requests(TEXTS[:1])]  # fmt: skip

    done = run_all(engine, reqs, batched=True)

    assert sorted(started) == sorted(r.key for r in reqs)  # each request once
    assert all(isinstance(g, Generation) for g in done)


@pytest.mark.parametrize("jumping", [True, False], ids=["jump-forward", "step-by-step"])
def test_forced_tokens_skip_their_statistics_and_free_ones_keep_the_raw_distributions(
    glm5_dir: Path, jumping: bool
) -> None:
    # Step by step, every token is its own step, so the mask alone forces some.
    engine = make_engine(glm5_dir, jump_forward_positions=16 if jumping else 0)
    (generation,) = run_all(engine, requests(TEXTS[:1])[:1], batched=True)

    assert isinstance(generation, Generation)
    assert jumping or any(generation.forced)
    assert not all(generation.forced)
    for logprob, entropy, forced in zip(generation.token_logprobs, generation.token_entropies,
                                        generation.forced, strict=True):  # fmt: skip
        if forced:
            assert (logprob, entropy) == (0.0, 0.0)  # the mask left one token: probability 1
        else:  # jumped tokens too: read from the forward that fed them
            assert entropy > 0.0  # random weights: a spread distribution over the vocabulary
            assert logprob < 0.0


def test_rows_prefilled_together_join_a_decoding_batch_with_the_same_tokens(
    glm5_dir: Path,
) -> None:
    first, *group = requests()  # the group continues the unit prefixes the first run cached
    long_first = GenerationRequest(messages=first.messages, schema=None, max_new_tokens=48,
                                   key=first.key)  # fmt: skip
    alone = run_all(make_engine(glm5_dir, max_batch_size=1, prefix_cache_mb=0),
                    [long_first, *group], batched=False)  # fmt: skip
    engine = make_engine(glm5_dir)

    async def staggered() -> list:
        await engine.generate(requests()[:3])  # caches each unit's prefix
        engine.step_rows.clear()
        decoding = asyncio.ensure_future(engine.generate([long_first]))
        while not engine.step_rows:  # the long row is decoding
            await asyncio.sleep(0.001)
        joined = await engine.generate(group)
        return [(await decoding)[0], *joined]

    try:
        late_first, *late_group = asyncio.run(staggered())
    finally:
        engine.close()
    assert all(r.cached_tokens > 0 for r in late_group)  # prefilled together on their prefixes
    assert max(engine.step_rows) > len(group)  # and decoded beside the long row
    assert texts_of([late_first, *late_group]) == texts_of(alone)


def test_an_emptied_batch_frees_its_kv_beside_the_next_forward_or_when_idle(
    glm5_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last row's caller is woken before its batch's KV is freed, never at the cost of
    holding it for long: the next forward frees it, or the engine's next idle moment."""
    import gc
    import weakref

    from aau.engines import batching

    built: list[weakref.ref] = []
    with_room = batching.kv.with_room

    def spied(cache: Any) -> Any:  # the real function, its results watched
        out = with_room(cache)
        built.append(weakref.ref(out))
        return out

    monkeypatch.setattr(batching.kv, "with_room", spied)
    engine = make_engine(glm5_dir, prefix_cache_mb=0)
    first, second = requests(TEXTS[:1], budget=6)[:2]

    async def go() -> None:
        assert isinstance((await engine.generate([first]))[0], Generation)
        kept = [ref for ref in built if ref() is not None]
        assert kept  # the emptied batch's cache is still held, not freed before waking us
        assert isinstance((await engine.generate([second]))[0], Generation)  # at once
        gc.collect()
        assert all(ref() is None for ref in kept)  # freed beside the second's forwards
        third_built = len(built)
        await asyncio.sleep(0.3)  # the engine idles past its poll
        gc.collect()
        assert all(ref() is None for ref in built[third_built - 1 :])

    try:
        asyncio.run(go())
    finally:
        engine.close()


def test_masks_are_made_beside_the_prefill_and_made_again_where_that_failed(
    glm5_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper thread makes each row's mask while its prefill forward runs; a mask it
    failed to make is made on the engine's thread, where a lasting fault fails its row only."""
    reqs = requests(TEXTS[:1])
    reference = run_all(make_engine(glm5_dir, max_batch_size=1), requests(TEXTS[:1]), batched=False)
    real_new_mask = CompiledConstraint.new_mask
    threads: list[str] = []

    def new_mask(self: CompiledConstraint) -> Any:  # fault injection, by schema and thread
        thread = threading.current_thread().name
        threads.append(thread)
        if self.schema == reqs[1].schema and thread == "aau-engine-helper":
            raise RuntimeError("injected: the helper could not make this mask")
        if self.schema == reqs[2].schema:
            raise RuntimeError("injected: this mask cannot be made")
        return real_new_mask(self)

    monkeypatch.setattr(CompiledConstraint, "new_mask", new_mask)
    results = run_all(make_engine(glm5_dir, max_batch_size=1), reqs, batched=False)

    assert results[0].text == reference[0].text
    assert results[1].text == reference[1].text  # made again on the engine's thread
    assert isinstance(results[2], Exception)
    assert "cannot be made" in str(results[2])
    assert threads[0] == "aau-engine-helper"  # beside the prefill
    assert threads.count("aau-engine") == 2  # the second row's retry, the third row's retry
