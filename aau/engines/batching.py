"""Iteration-level (continuous) batching of constrained generations over one model.

Requests join the running batch at a token boundary — each is prefilled alone (on top of the
longest cached prefix of its prompt) and its KV rows are stacked into the batch cache — and leave
the moment they finish, so no slot idles on a finished row. Every row carries its own token mask
(its own unit's JSON schema), applied to its row of the step's logits.

Per step and row (``aau.engines.sampling``, in numpy on the row's logits), the mask picks the
token and the raw distribution (before the mask) gives its log-probability and the entropy that
confidence and calibration need. Choosing is on the way to the next forward; the statistics
are not, so a helper thread computes them while that forward runs (a row that finishes has
its own computed at once), and fills each row's mask for the step after it (the tokens it
depends on are accepted before the forward), unless a stop may come next: whether to finish
the row is then decided before the forward. Work between two forwards runs with the CPU's
caches emptied by the weights just read, several times slower than the same work warm, so
the step keeps it short: input tensors and the mask's buffer are reused, nothing is asked
twice.

Jump-forward: after a row's token, the tokens its constraint forces next (``amount`` after
``{"``, ``currency":"`` after ``,"``) are queued without a choice of the model, and a row whose
constraint then allows only a stop token finishes without another forward. While the batch is
small (``jump_positions``), a forward is bound by reading the weights, so a row's queue is
fed in the same forward as its token: the step's input is several positions wide, a row with
fewer left-padded there, the padding masked out as in a joined group. In a larger batch every
padded position is computed, so queued tokens are fed one a step instead (still without a
choice). Either way each is reported as its own step would report it: forced where its mask
allowed it alone, otherwise with its raw log-probability and entropy at the position before it.

The batch cache is left-padded: row ``i`` of ``mask`` is 0 over its padding. Position ids are
per row, so a row computes exactly what it would alone, up to float summation order.

A row may read and write in a tenant's merged-term view (``aau.terms.merge``): its ids past the
model's vocabulary are embedded by the view, its logits extended by the view's rows (from the
output head's input, captured by ``HeadInput``).
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch

from aau.engines import kv
from aau.engines.base import Generation, GenerationRequest, Timings
from aau.engines.sampling import choose, distribution_stats
from aau.errors import ConstraintNotHonored, EngineError, EngineTimeout, EngineUnavailable

__all__ = ["Cancelled", "DecodeBatch", "HeadInput", "PrefilledGroup", "Row"]

_MASK_ROOM = 64  # positions the mask's buffer grows by beyond what a step needs

_T = TypeVar("_T")


class HeadInput:
    """Keeps the input of the model's output head (the final hidden states) of the last forward.

    Merged-term rows need it to score their extra tokens; a pre-hook costs microseconds.
    """

    def __init__(self, model: Any) -> None:
        self.last: torch.Tensor | None = None
        model.get_output_embeddings().register_forward_pre_hook(self._keep)

    def _keep(self, _module: Any, args: tuple[Any, ...]) -> None:
        self.last = args[0][:, -1]  # the last position only: nothing more is read

    def clear(self) -> None:
        """Forget the last forward's states (call before a forward whose states are read)."""
        self.last = None

    def extend(self, row: Row, index: int) -> None:
        """Append the merged-token logits of ``row`` (row ``index`` of the last forward)."""
        assert self.last is not None, "the output head did not run in the last forward"
        extra = row.view.extra_logits(self.last[index]).float().cpu().numpy()
        row.logits = np.concatenate([row.logits, extra])


class Cancelled(EngineTimeout):
    """The caller stopped waiting (cancelled its task) while the request was in the batch."""

    code = "cancelled"


@dataclass(eq=False)
class PrefilledGroup:
    """Rows prefilled in one forward: the cache as that forward left it, and its mask.

    The positions a row does not hold (padding before a shorter cached prefix, and between it
    and the row's new tokens) are masked out, so the batch decodes on this cache as it is.
    """

    rows: list[Row]
    cache: Any
    mask: torch.Tensor  # [rows, positions], long: 1 where the row holds a position


@dataclass(eq=False)
class Row:
    """One request in flight."""

    request: GenerationRequest
    future: concurrent.futures.Future[Generation | EngineError]
    submitted: float
    mask: Any = None  # the request's TokenMask (None: unconstrained)
    constraint: Any = None  # its CompiledConstraint: the mask is made beside the prefill
    view: Any = None  # the tenant's MergedVocabulary, when its terms are merged tokens
    compiler: Any = None  # the view's ConstraintCompiler (None: the engine's)
    written: dict[int, str] = field(default_factory=dict)  # merged id -> the prompt's text
    prompt_tokens: int = 0
    cached_tokens: int = 0
    started: float = 0.0
    prefill_ms: float = 0.0
    model_ms: float = 0.0
    logits: np.ndarray | None = None  # next-token logits, float32 [vocab]
    last_token: int = 0
    position: int = 0  # real tokens so far (the next token's position id)
    generated: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    entropies: list[float] = field(default_factory=list)
    forced: list[bool] = field(default_factory=list)
    # Forced tokens the constraint has accepted, not yet fed: (token, the mask allowed it alone).
    pending: deque[tuple[int, bool]] = field(default_factory=deque)
    done: bool = False  # finished; its slot is dropped at the next compaction
    announced: bool = False  # the caller was told its first forward started

    @property
    def mask_owed(self) -> bool:
        """Whether the row is constrained and its mask not made yet (it is made at prefill)."""
        return self.mask is None and self.constraint is not None

    def result(self, finish: str, text: str) -> Generation:
        """The finished generation."""
        now = time.perf_counter()
        return Generation(
            text=text,
            finish_reason=finish,  # type: ignore[arg-type]  # "stop" | "length", set by the batch
            token_logprobs=tuple(self.logprobs),
            token_entropies=tuple(self.entropies),
            forced=tuple(self.forced),
            prompt_tokens=self.prompt_tokens,
            cached_tokens=self.cached_tokens,
            model_ms=self.model_ms,
            timings=Timings(
                queue_ms=(self.started - self.submitted) * 1000,
                prefill_ms=self.prefill_ms,
                decode_ms=(now - self.started) * 1000 - self.prefill_ms,
            ),
        )


class DecodeBatch:
    """The rows being decoded together and their shared, left-padded KV cache."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        stop_ids: frozenset[int],
        head: HeadInput | None = None,
        jump_positions: int = 16,
    ) -> None:
        self.model, self.tokenizer, self.stop_ids = model, tokenizer, stop_ids
        self.head = head
        # Queued forced tokens are fed together while rows x width stays within this; 0: no
        # jump-forward (``EngineConfig.jump_forward_positions``).
        self.jump_positions = jump_positions
        self.rows: list[Row] = []
        self.cache: Any = None
        self.mask: torch.Tensor | None = None  # [rows, positions], long
        self._mask_room: torch.Tensor | None = None  # the buffer ``mask`` may be a view of
        # One-token steps' input and position ids, reused, with numpy views to write them.
        self._step_inputs: tuple[torch.Tensor, torch.Tensor, np.ndarray, np.ndarray] | None = None
        self.device = model.device  # a property that walks the parameters: read once
        self._on_cpu = self.device.type == "cpu"
        # Statistics owed: (row, step, the logits that predicted its token, the token).
        self._owed: list[tuple[Row, int, np.ndarray, int]] = []
        self._helper = _Helper("aau-engine-helper")  # work beside each forward
        self._scratch = np.empty(0, dtype=np.float32)  # this thread's, for finishing rows
        self._worker_scratch = np.empty(0, dtype=np.float32)  # the helper thread's
        # The cache of a batch that emptied, freed beside the next forward: freeing it (a
        # millisecond holding the GIL) before its last caller wakes would delay that caller.
        self._retired: list[Any] = []

    def __len__(self) -> int:
        """Rows still generating (finished rows awaiting compaction do not count)."""
        return sum(not row.done for row in self.rows)

    def reserved_positions(self) -> int:
        """Positions the rows still generating may come to hold (prompt plus token budget)."""
        return sum(row.prompt_tokens + row.request.max_new_tokens
                   for row in self.rows if not row.done)  # fmt: skip

    # -- joining --------------------------------------------------------------------------

    def join(
        self, arrivals: list[tuple[Row, Any, int]], groups: Sequence[PrefilledGroup] = ()
    ) -> None:
        """Stack prefilled rows into the batch at once.

        ``arrivals``: single rows, each cache holding its prompt length; ``groups``: rows
        prefilled together, taken with their cache and mask as they are. One stack per
        admission round: joining rows one by one would copy the whole batch cache once per
        row. A group joining an empty batch becomes its cache without a copy.
        """
        if not arrivals and not groups:
            return
        self._compact()
        width = max([length for _, _, length in arrivals] + [self.width]
                    + [int(group.mask.shape[1]) for group in groups])  # fmt: skip
        parts, masks = [], []
        if self.cache is not None and self.mask is not None:
            parts.append((self.cache, width - self.width))
            masks.append(torch.cat([self.mask.new_zeros((len(self.rows), width - self.width)),
                                    self.mask], 1))  # fmt: skip
        for group in groups:
            padding = width - int(group.mask.shape[1])
            parts.append((group.cache, padding))
            masks.append(torch.cat([group.mask.new_zeros((len(group.rows), padding)),
                                    group.mask], 1))  # fmt: skip
            self.rows.extend(group.rows)
        for row, row_cache, length in arrivals:
            parts.append((row_cache, width - length))
            mask = torch.ones((1, width), dtype=torch.long)
            mask[0, : width - length] = 0
            masks.append(mask)
            self.rows.append(row)
        if len(parts) == 1:
            # Own layer objects: a row's cache may also be stored in the prefix cache, and
            # decoding rebinds layer tensors.
            cache, padding = parts[0]
            joined = kv.left_pad(kv.own_layers(cache), padding)
        else:
            joined = kv.stack_left_padded(parts)  # new tensors and layer objects
        # The batch's own cache appends in place: nothing else holds its buffers.
        self.cache = kv.with_room(joined)
        self.mask = torch.cat(masks, 0)

    @property
    def width(self) -> int:
        """Positions held per row (padding included)."""
        return 0 if self.mask is None else int(self.mask.shape[1])

    # -- one step -------------------------------------------------------------------------

    def step(self) -> None:
        """Choose one token for every row, retire finished rows, run one batched forward."""
        finished: list[tuple[Row, Generation | EngineError]] = []
        for row in self.rows:
            if row.done:
                continue
            try:
                outcome = self._choose(row)
            except RuntimeError as exc:  # its constraint refused the token or allowed none
                outcome = ConstraintNotHonored(f"{row.request.key or 'request'}: {exc}")
            except Exception as exc:  # any other fault in one row's step fails that row only
                outcome = EngineUnavailable(f"{row.request.key or 'request'}: {exc!r}")
            if outcome is not None:
                row.done = True
                finished.append((row, outcome))
        try:
            # Removing a row copies the whole cache; a finished row left in place only costs
            # its share of the next forward. Compact once a quarter of the rows are finished.
            if 4 * sum(row.done for row in self.rows) >= len(self.rows):
                self._compact()
        finally:
            # Callers wake only now (freeing the finished rows' KV holds the GIL for a
            # millisecond or more, which a woken caller would wait on), and even if it failed.
            for row, outcome in finished:
                if not row.future.done():
                    row.future.set_result(outcome)
        if self.rows:
            self._forward()

    def _choose(self, row: Row) -> Generation | EngineError | None:
        request = row.request
        if request.cancel.is_set():
            return Cancelled(f"{request.key or 'request'}: cancelled by the caller")
        if request.deadline is not None and time.monotonic() > request.deadline:
            return EngineTimeout(f"{request.key or 'request'}: generation passed its deadline")
        assert row.logits is not None
        if row.pending:  # a forced token queued by a jump, fed one a step in a large batch
            token, alone = row.pending.popleft()
            self._note(row, token, alone, row.logits)
            row.last_token = token
            return None
        token, forced = choose(row.logits, row.mask)
        if token in self.stop_ids:
            self._note(row, token, forced, row.logits, stop=True)
            return self._finish(row, "stop")
        if row.mask is not None:
            row.mask.accept(token)
        self._note(row, token, forced, row.logits)
        if len(row.logprobs) >= request.max_new_tokens:
            return self._finish(row, "length")
        if self.jump_positions and row.mask is not None and row.view is None:  # merged ids: none
            return self._jump(row)
        return None

    def _jump(self, row: Row) -> Generation | None:
        """Queue the tokens the row's constraint forces next; finish it if only a stop can follow.

        One step is always left to the model within the token budget. A queued token's
        statistics are read when it is fed, unless the mask allowed it alone (forced, as a step
        would report it); so a row finishes here only when every queued token is such.
        """
        mask = row.mask
        room = row.request.max_new_tokens - len(row.logprobs) - 1
        for token in mask.jump()[: max(0, room)]:
            mask.fill()
            row.pending.append((token, mask.only() is not None))
            mask.accept(token)
        if not all(alone for _, alone in row.pending):
            return None
        if not mask.may_end():  # no stop can come next: filled beside the forward (ahead)
            return None
        mask.fill()
        if mask.only() not in self.stop_ids:
            return None
        while row.pending:
            self._note(row, row.pending.popleft()[0], True, None)
        self._note(row, 0, True, None, stop=True)  # forced, as its own step would report it
        return self._finish(row, "stop")

    def _note(
        self, row: Row, token: int, forced: bool, logits: np.ndarray | None, *, stop: bool = False
    ) -> None:
        """Append a step: ``token`` (``stop``: a stop token, not part of the text), its statistics.

        ``logits`` are those that predicted it; a forced token's are never read (the model had
        no choice). The others are owed: computed on the helper thread while the next
        forward runs (they are not needed to choose the next token), or when the row finishes.
        """
        row.logprobs.append(0.0)
        row.entropies.append(0.0)
        row.forced.append(forced)
        if not forced and logits is not None:
            self._owed.append((row, len(row.logprobs) - 1, logits, token))
        if not stop:
            row.generated.append(token)
            row.last_token = token

    def _finish(self, row: Row, reason: str) -> Generation:
        """The finished row's generation, its owed statistics computed first."""
        mine = [owed for owed in self._owed if owed[0] is row]
        if mine:
            self._owed = [owed for owed in self._owed if owed[0] is not row]
            self._scratch = _settle(mine, self._scratch)
        return row.result(reason, self._decode(row))

    def _decode(self, row: Row) -> str:
        if row.view is not None:
            return row.view.decode(row.generated, skip_special_tokens=True, written=row.written)
        return self.tokenizer.decode(row.generated, skip_special_tokens=True)

    def _compact(self) -> None:
        """Drop finished rows from the batch and the padding no remaining row needs."""
        keep = [i for i, row in enumerate(self.rows) if not row.done]
        if len(keep) == len(self.rows):
            return
        self.rows = [self.rows[i] for i in keep]
        if not self.rows:
            self._retired.append(self.cache)
            self.cache = self.mask = None
            return
        assert self.mask is not None
        index = torch.tensor(keep)
        self.cache = kv.with_room(kv.select_rows(self.cache, index))
        self.mask = self.mask.index_select(0, index)
        # Padding that every remaining row has is dead weight in every later step.
        common = int((self.mask.cumsum(1) == 0).sum(1).min())
        if common:
            self.cache = kv.trim_left(self.cache, common)
            self.mask = self.mask[:, common:]

    def _forward(self) -> None:
        assert self.mask is not None
        queued = [len(row.pending) for row in self.rows if not row.done]
        width = 1 + max(queued, default=0)
        if width * len(queued) > self.jump_positions:
            width = 1  # padded positions would cost more than the steps saved
        feeds = [[row.last_token] + ([token for token, _ in row.pending]
                                     if width > 1 and not row.done else [])
                 for row in self.rows]  # fmt: skip
        if width == 1:
            input_ids, position_ids = self._one_token_inputs()
        else:
            input_ids, position_ids = self._wide_inputs(width, feeds)
        self._extend_mask(width, feeds)
        viewed = [index for index, row in enumerate(self.rows) if row.view is not None]
        owed, self._owed = [owed for owed in self._owed if not owed[0].done], []
        # The next step's masks depend on tokens already accepted: filled beside the forward.
        masks = [row.mask for row in self.rows if not row.done and row.mask is not None]
        retired, self._retired = self._retired, []
        side = bool(owed or masks or retired)
        if side:  # the helper thread keeps its own buffer
            self._helper.start(_beside_forward, owed, self._worker_scratch, masks, retired)
        started = time.perf_counter()
        inputs: dict[str, Any] = {"input_ids": self._on_device(input_ids)}
        if viewed:
            inputs = {"inputs_embeds": self._embed(input_ids, viewed)}
            assert self.head is not None
            self.head.clear()
        if width > 1:
            inputs["logits_to_keep"] = width  # a queued token's statistics read its position
        try:
            out = self.model(
                **inputs,
                attention_mask=self._on_device(self.mask),
                position_ids=self._on_device(position_ids),
                cache=self.cache,
                use_cache=True,
            )
            share = (time.perf_counter() - started) * 1000 / max(1, len(self))
        finally:
            if side:  # long done: a few passes over the vocabulary per row
                self._worker_scratch = self._helper.result()
        self.cache = out.cache
        every = out.logits
        if every.dtype != torch.float32 or every.device.type != "cpu":
            every = every.float().cpu()
        every = every.numpy()  # a view for float32 CPU models
        logits = every[:, -1]
        for index, (row, feed) in enumerate(zip(self.rows, feeds, strict=True)):
            row.logits = logits[index]
            row.position += len(feed)
            if not row.done:
                row.model_ms += share
            first = width - len(feed)
            for j in range(len(feed) - 1):  # queued token j was predicted at feed position j
                token, alone = row.pending.popleft()
                self._note(row, token, alone, every[index, first + j])
        for index in viewed:
            self.head.extend(self.rows[index], index)  # type: ignore[union-attr]

    def _one_token_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Input and position ids ``[rows, 1]`` of a step of one token per row.

        Written through numpy into tensors kept while the batch's size holds (the forward that
        read them is over): two new tensors a step cost tens of microseconds.
        """
        if self._step_inputs is None or len(self._step_inputs[2]) != len(self.rows):
            ids = torch.empty((len(self.rows), 1), dtype=torch.long)
            positions = torch.empty((len(self.rows), 1), dtype=torch.long)
            self._step_inputs = (ids, positions, ids.numpy()[:, 0], positions.numpy()[:, 0])
        ids, positions, ids_written, positions_written = self._step_inputs
        ids_written[:] = [row.last_token for row in self.rows]
        positions_written[:] = [row.position for row in self.rows]
        return ids, positions

    def _wide_inputs(self, width: int, feeds: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Input and position ids ``[rows, width]`` of a step that feeds queued tokens.

        Each row's feed is right-aligned, the padding before it 0 (masked out). Written in numpy
        and wrapped without a copy: a torch op per row cost a hundred microseconds a step.
        """
        ids = np.zeros((len(feeds), width), dtype=np.int64)
        positions = np.zeros((len(feeds), width), dtype=np.int64)
        for index, (row, feed) in enumerate(zip(self.rows, feeds, strict=True)):
            start = width - len(feed)
            ids[index, start:] = feed
            positions[index, start:] = range(row.position, row.position + len(feed))
        return torch.from_numpy(ids), torch.from_numpy(positions)

    def _extend_mask(self, width: int, feeds: list[list[int]]) -> None:
        """Append ``width`` positions to the mask: 1 where a row feeds a token, 0 before.

        The mask is a view of a buffer with room that holds 1 beyond the mask's width, so a
        step of one token per row costs a slice: every torch call between two forwards runs
        with the CPU's caches emptied by the last (tens of microseconds each).
        """
        assert self.mask is not None
        rows, held = self.mask.shape
        room = self._mask_room
        if (room is None or room.data_ptr() != self.mask.data_ptr() or room.shape[0] != rows
                or room.shape[1] < held + width):  # fmt: skip
            room = self.mask.new_ones((rows, held + width + _MASK_ROOM))
            room[:, :held] = self.mask
            self._mask_room = room
        for index, feed in enumerate(feeds):
            if len(feed) < width:
                room[index, held : held + width - len(feed)] = 0
        self.mask = room[:, : held + width]

    def _on_device(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor if self._on_cpu else tensor.to(self.device)

    def _embed(self, input_ids: torch.Tensor, viewed: list[int]) -> torch.Tensor:
        """Input embeddings of a step whose rows include merged-term views."""
        embedding = self.model.get_input_embeddings()
        ids = self._on_device(input_ids)
        vectors = embedding(ids.clamp(max=embedding.weight.shape[0] - 1))
        for index in viewed:  # each view embeds its own row (merged ids included)
            vectors[index] = self.rows[index].view.embed(ids[index : index + 1], embedding)[0]
        return vectors

    def beside_prefill(self, rows: Sequence[Row], forward: Callable[[], _T]) -> _T:
        """``forward()`` (the rows' prefill) here while the helper thread makes their masks.

        Each mask is also filled for the row's first step. One the helper could not make is
        left None, for the engine to make on its own thread (where its error fails the row).
        """
        wanted = [row for row in rows if row.mask_owed]
        if not wanted:
            return forward()
        self._helper.start(_new_masks, wanted)
        try:
            return forward()
        finally:
            self._helper.result()

    def free_retired(self) -> None:
        """Free the cache of a batch that emptied (the engine calls it when idle)."""
        self._retired.clear()

    def close(self) -> None:
        """Stop the helper thread (the batch is not used after)."""
        self._helper.close()

    def fail_all(self, error: EngineError) -> None:
        """Resolve every row with ``error`` and empty the batch (after an unexpected fault)."""
        for row in self.rows:
            if not row.future.done():
                row.future.set_result(error)
        self.rows, self.cache, self.mask, self._owed, self._retired = [], None, None, [], []


class _Helper:
    """A thread that runs one job at a time beside its caller (statistics, during a forward).

    Two C queues hand the job over and the result back; a pool's futures cost tens of
    microseconds a step.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def start(self, job: Callable[..., Any], *args: Any) -> None:
        """Run ``job(*args)``; collect it with ``result()`` before starting another."""
        self._jobs.put((job, args))

    def result(self) -> Any:
        """The started job's return value (waits for it); re-raises what it raised."""
        ok, value = self._results.get()
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """End the thread (after the job in progress)."""
        self._jobs.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, args = item
            try:
                self._results.put((True, job(*args)))
            except BaseException as exc:  # handed to the caller, which raises it
                self._results.put((False, exc))


def _beside_forward(
    owed: list[tuple[Row, int, np.ndarray, int]],
    scratch: np.ndarray,
    masks: list[Any],
    retired: list[Any],
) -> np.ndarray:
    """The work a forward does not wait for; returns the scratch buffer.

    Frees ``retired`` caches, settles ``owed`` statistics, fills ``masks`` for the next step.
    """
    retired.clear()
    scratch = _settle(owed, scratch)
    for mask in masks:
        _filled(mask)
    return scratch


def _filled(mask: Any) -> Any:
    """``mask`` filled, with ``only()`` answered: what the next step's choice reads of it."""
    mask.fill()
    mask.only()
    return mask


def _new_masks(rows: list[Row]) -> None:
    """Each row's mask from its constraint, filled for its first step (beside a prefill)."""
    for row in rows:
        try:
            mask = _filled(row.constraint.new_mask())
        except Exception:  # noqa: BLE001, S112
            continue  # made again on the engine's thread, where its error fails the row
        row.mask = mask


def _settle(owed: list[tuple[Row, int, np.ndarray, int]], scratch: np.ndarray) -> np.ndarray:
    """Compute owed statistics into their rows; returns the scratch buffer (grown if needed)."""
    for row, step, logits, token in owed:
        if len(scratch) < 2 * len(logits):
            scratch = np.empty(2 * len(logits), dtype=np.float32)
        row.logprobs[step], row.entropies[step] = distribution_stats(logits, token, scratch)
    return scratch
