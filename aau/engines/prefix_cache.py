"""A token-prefix KV cache: any prompt prefix computed once is reused by later requests.

Entries are whole prompts' KV caches. Lookup finds the stored prompt sharing the longest token
prefix with the request — a unit's static prefix (chat-template head, system text, few-shot
turns) across its requests, or one document across the many units run over it — and returns a
view of that entry cropped to the shared length. Matching uses chained hashes of 16-token
blocks (as vLLM's automatic prefix caching does) for the bulk and a token-by-token compare for
the tail, so a lookup costs microseconds however many entries there are.

Namespaces separate what must never mix: the model and the tenant's term set (a merged-token
vocabulary changes what a token id means). Entries are tagged with the unit key
(``name@version``) that stored them. A byte cap bounds memory; least recently used goes first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aau.engines.kv import cache_bytes, truncate

__all__ = ["PrefixCache", "PrefixHit"]

BLOCK = 16


@dataclass(slots=True)
class _Entry:
    tokens: tuple[int, ...]
    kv: Any
    nbytes: int
    hashes: list[int]
    tag: str
    namespace: str


@dataclass(frozen=True, slots=True)
class PrefixHit:
    """A reusable prefix: ``kv`` holds the first ``length`` tokens of the request."""

    kv: Any
    length: int
    tag: str


def _block_hashes(namespace: str, tokens: Sequence[int]) -> list[int]:
    hashes, current = [], hash(namespace)
    for start in range(0, len(tokens) - len(tokens) % BLOCK, BLOCK):
        current = hash((current, tuple(tokens[start : start + BLOCK])))
        hashes.append(current)
    return hashes


class PrefixCache:
    """LRU store of prompt KV caches, looked up by longest shared token prefix.

    Args:
        max_bytes: memory cap of the stored KV tensors.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._by_block: dict[int, OrderedDict[int, None]] = {}
        self._exact: dict[tuple[str, tuple[int, ...]], int] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, namespace: str, tokens: Sequence[int]) -> PrefixHit | None:
        """The longest stored prefix of ``tokens``, or None.

        At most ``len(tokens) - 1`` tokens long, so the request still computes logits for its
        last token.
        """
        with self._lock:
            hashes = _block_hashes(namespace, tokens)
            depth, candidates = 0, None
            for index, block_hash in enumerate(hashes):
                found = self._by_block.get(block_hash)
                if not found:
                    break
                depth, candidates = index + 1, found
            if candidates is None:
                self.misses += 1
                return None
            entry_id = next(reversed(candidates))  # the most recently stored of the matches
            entry = self._entries[entry_id]
            length = depth * BLOCK
            limit = min(len(entry.tokens), len(tokens) - 1)
            while length < limit and entry.tokens[length] == tokens[length]:
                length += 1
            length = min(length, len(tokens) - 1)
            if length <= 0:
                self.misses += 1
                return None
            self._entries.move_to_end(entry_id)
            self.hits += 1
            return PrefixHit(truncate(entry.kv, length), length, entry.tag)

    def insert(self, namespace: str, tokens: Sequence[int], kv: Any, *, tag: str = "") -> None:
        """Store a prompt's KV (a batch-1 cache of exactly ``len(tokens)`` positions)."""
        nbytes = cache_bytes(kv)
        if nbytes > self.max_bytes or len(tokens) < BLOCK:
            return
        with self._lock:
            existing = self._exact.get((namespace, tuple(tokens)))
            if existing is not None:  # the same prompt again: keep the stored one fresh
                self._entries.move_to_end(existing)
                return
            entry_id = self._next_id
            self._next_id += 1
            entry = _Entry(
                tuple(tokens), kv, nbytes, _block_hashes(namespace, tokens), tag, namespace
            )
            self._entries[entry_id] = entry
            self._exact[(namespace, entry.tokens)] = entry_id
            for block_hash in entry.hashes:
                self._by_block.setdefault(block_hash, OrderedDict())[entry_id] = None
            self.nbytes += nbytes
            while self.nbytes > self.max_bytes and len(self._entries) > 1:
                self._evict(next(iter(self._entries)))

    def _evict(self, entry_id: int) -> None:
        entry = self._entries.pop(entry_id)
        self._exact.pop((entry.namespace, entry.tokens), None)
        self.nbytes -= entry.nbytes
        for block_hash in entry.hashes:
            holders = self._by_block.get(block_hash)
            if holders is not None:
                holders.pop(entry_id, None)
                if not holders:
                    del self._by_block[block_hash]

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            for entry_id in list(self._entries):
                self._evict(entry_id)
