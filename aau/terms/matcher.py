"""Finding dictionary terms in text with one Aho-Corasick automaton (pyahocorasick).

Matching rules, in order:

* **Case folding.** Text and terms are lower-cased; where lower-casing would change the length
  of the text (a handful of characters such as ``İ``), those characters are kept as they are, so
  offsets into the folded text are offsets into the original.
* **Whitespace.** Newlines and tabs match a space, so a term broken across lines by OCR or
  layout is still found. Runs of spaces are not merged.
* **Longest leftmost.** The automaton reports, from left to right, the longest term starting at
  each position; overlapping candidates lose to the one that starts first, then to the longer.
  Ties cannot happen: each folded surface belongs to exactly one entry.
* **Word boundaries** for scripts that separate words with spaces: a match may not begin or end
  inside a word. Chinese, Japanese, Thai and other scripts written without spaces have no such
  boundaries, so their terms match anywhere.

The scan itself runs in C (pyahocorasick); the boundary checks run on all candidates at once
(numpy), so Python never loops over the text or over each candidate.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

import ahocorasick
import numpy as np

from aau.terms.dictionary import Term, TermDictionary, fold_surface

__all__ = ["TermEntry", "TermHit", "TermMatcher", "fold_text"]

_GC_PAUSE_HITS = 10_000

# Whitespace the folded text reads as a space (same length, so offsets hold).
_SPACES = ("\n", "\t", "\r", "\f", "\v", "\xa0")


@dataclass(frozen=True, slots=True)
class TermEntry:
    """A surface form the automaton knows, and the dictionary row it comes from."""

    surface: str
    term: Term
    dictionary: str


class TermHit(NamedTuple):
    """One term found in a text (a tuple: millions are made per second of scanning).

    Attributes:
        start, end: character offsets into the text that was matched (``text[start:end]``).
        text: the matched text as written.
        entry: the dictionary entry it matched.
    """

    start: int
    end: int
    text: str
    entry: TermEntry

    @property
    def surface(self) -> str:
        """The dictionary's surface form that matched."""
        return self.entry.surface

    @property
    def canonical(self) -> str:
        """The term's canonical form."""
        return self.entry.term.canonical

    @property
    def category(self) -> str:
        """The term's category."""
        return self.entry.term.category

    @property
    def dictionary(self) -> str:
        """The name of the dictionary that holds it."""
        return self.entry.dictionary

    def as_dict(self) -> dict[str, str | int]:
        """A JSON-ready form (for templates, results and logs)."""
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "canonical": self.canonical,
            "category": self.category,
            "dictionary": self.dictionary,
        }


def fold_text(text: str) -> str:
    """Lower case and spaces for other whitespace, with the length (and so offsets) kept."""
    folded = text.lower()
    if len(folded) != len(text):  # rare: a character whose lower case is longer
        folded = "".join(ch if len(low := ch.lower()) != 1 else low for ch in text)
    # str.replace per character, not str.translate: translate leaves its fast path on any
    # non-ASCII text and then costs ~40 ms per MB, replace a few ms for all six.
    for space in _SPACES:
        folded = folded.replace(space, " ")
    return folded


def _no_space_script(ch: str) -> bool:
    """Whether ``ch`` belongs to a script written without spaces between words."""
    code = ord(ch)
    return (
        0x0E00 <= code <= 0x0FFF  # Thai, Lao, Tibetan
        or 0x1000 <= code <= 0x109F  # Myanmar
        or 0x1780 <= code <= 0x17FF  # Khmer
        or 0x2E80 <= code <= 0x9FFF  # CJK radicals, kana, ideographs
        or 0xA000 <= code <= 0xA4CF  # Yi
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables (spaced, but terms often attach)
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # half- and full-width forms
        or 0x20000 <= code <= 0x3FFFF  # CJK extensions
    )


def _word_char(ch: str) -> bool:
    """A character of a spaced script that continues a word (so a term cannot stop there)."""
    return (ch.isalnum() or ch == "_") and not _no_space_script(ch)


def _word_codes(codes: np.ndarray) -> np.ndarray:
    """``_word_char`` of each code point, by table for ASCII and once per other code point."""
    out = np.zeros(len(codes), dtype=bool)
    ascii_ = codes < 128
    out[ascii_] = _ASCII_WORD[codes[ascii_]]
    other = ~ascii_
    if other.any():
        unique, inverse = np.unique(codes[other], return_inverse=True)
        out[other] = np.array([_word_char(chr(code)) for code in unique.tolist()])[inverse]
    return out


class Spans(NamedTuple):
    """Matches as three aligned integer arrays, in text order."""

    starts: np.ndarray
    ends: np.ndarray
    entries: np.ndarray

    def __len__(self) -> int:  # type: ignore[override]  # matches, not fields
        return len(self.starts)


# Root children of the automaton, most frequent characters first (see ``TermMatcher``).
_ROOT_ORDER = (
    " etaoinsrhldcumfpgwyb,.vk0x1j2q-z3549876:/()'\";!?%&+*#@$€£¥§=[]_|~`^{}\\äöüéèàçñßøåæ"
)
_ASCII_WORD = np.array([_word_char(chr(code)) for code in range(128)], dtype=bool)
_LENGTH_BITS = 8  # stored value: entry index << 8 | key length (keys are at most 80 characters)


class TermMatcher:
    """An automaton over the surface forms of some dictionaries.

    pyahocorasick looks a character up among a node's children one by one, in the order they
    were added; at the root, which has a child for every first character of every term (a few
    hundred once Chinese and Japanese terms are in), that lookup dominated the scan. So the
    root's first children are dummy keys (a character and NUL, which text never holds) for the
    most frequent characters, in frequency order: 1.9x on the benchmark's text.

    Args:
        dictionaries: in priority order: when two dictionaries hold the same surface form, the
            later one wins (a tenant's uploads come after the shipped dictionaries).
    """

    def __init__(self, dictionaries: Sequence[TermDictionary]) -> None:
        self.dictionaries = tuple(dictionaries)
        entries: dict[str, TermEntry] = {}
        for dictionary in self.dictionaries:
            for surface, term in dictionary.surfaces():
                entries[fold_surface(surface)] = TermEntry(surface, term, dictionary.name)
        automaton = ahocorasick.Automaton()
        for ch in _ROOT_ORDER:
            automaton.add_word(ch + "\x00", -1)
        self.entries: list[TermEntry] = []
        # ASCII-initial terms first: their root children come before the other scripts'.
        for key, entry in sorted(entries.items(), key=lambda item: not item[0][0].isascii()):
            automaton.add_word(key, (len(self.entries) << _LENGTH_BITS) | len(key))
            self.entries.append(entry)
        automaton.make_automaton()
        self._automaton = automaton
        self._longest = max((len(fold_surface(e.surface)) for e in self.entries), default=0)
        # Per entry, what a rejected candidate (the entry's key, as matched) can still hide:
        # (starts with a word character, ends with one, has a boundary inside where another
        # term could start, has a shorter key as a prefix ending at a boundary).
        edges: list[tuple[bool, bool, bool, bool]] = []
        for key in (fold_surface(e.surface) for e in self.entries):
            flags = [_word_char(ch) for ch in key]
            # Another term can start at i only after a boundary, or if it begins with a character
            # that needs none (CJK, punctuation).
            inner = any(not flags[i - 1] or not flags[i] for i in range(1, len(key)))
            prefixed = any(
                not flags[i] or not flags[i - 1]
                for i in range(1, len(key))
                if automaton.exists(key[:i])
            )
            edges.append((flags[0], flags[-1], inner, prefixed))
        self._edges = edges
        table = np.array(edges, dtype=bool).reshape(-1, 4)
        self._head, self._tail, self._inner, self._prefixed = table.T.copy()
        digest = hashlib.sha256()
        for dictionary in self.dictionaries:
            digest.update(f"{dictionary.name}:{dictionary.sha256};".encode())
        self.fingerprint = digest.hexdigest()[:16]
        """Changes whenever any dictionary's content or the order changes."""

    def __len__(self) -> int:
        """Surface forms known."""
        return len(self.entries)

    def find(self, text: str) -> list[TermHit]:
        """Every term in ``text``: non-overlapping, left to right, longest first."""
        if not self.entries or not text:
            return []
        entries = self.entries
        spans = self.spans(fold_text(text))
        # Hundreds of thousands of small tuples would trigger the cyclic collector over and
        # over (a third of the time on 10 MB); none of them can form a cycle.
        pause = len(spans) > _GC_PAUSE_HITS and gc.isenabled()
        if pause:
            gc.disable()
        try:
            return [
                TermHit(start, end, text[start:end], entries[index])
                for start, end, index in zip(
                    spans.starts.tolist(),
                    spans.ends.tolist(),
                    spans.entries.tolist(),
                    strict=True,
                )
            ]
        finally:
            if pause:
                gc.enable()

    def spans(self, folded: str) -> Spans:
        """Every match in already folded text (``fold_text``), as arrays.

        One pass of ``iter_long`` in C finds, after each match, the leftmost position where any
        term starts and the longest term there. The word-boundary checks run on all candidates
        at once (numpy). A rejected candidate rarely hides a valid match (a shorter term at its
        start, or one starting after a boundary inside it, both known per entry); only those
        positions are searched again, in a window of the text.
        """
        empty = np.zeros(0, dtype=np.int64)
        if not self.entries or not folded:
            return Spans(empty, empty, empty)
        flat = np.fromiter(chain.from_iterable(self._automaton.iter_long(folded)), np.int64)
        last, value = flat[0::2], flat[1::2]
        real = value >= 0  # the root-ordering dummies match only text holding NUL
        last, value = last[real], value[real]
        index = value >> _LENGTH_BITS
        start = last - (value & 0xFF) + 1
        end = last + 1
        codes = np.frombuffer(folded.encode("utf-32-le"), dtype=np.uint32)
        size = len(codes)
        word_before = _word_codes(codes[np.maximum(start - 1, 0)]) & (start > 0)
        word_after = _word_codes(codes[np.minimum(end, size - 1)]) & (end < size)
        left = ~(self._head[index] & word_before)
        right = ~(self._tail[index] & word_after)
        accept = left & right
        search = ~accept & (self._inner[index] | (left & self._prefixed[index]))
        starts, ends, entries = start[accept], end[accept], index[accept]
        if not search.any():
            return Spans(starts, ends, entries)
        return self._with_searched(folded, starts, ends, entries, start[search], end[search])

    def _with_searched(
        self, folded: str, starts: np.ndarray, ends: np.ndarray, entries: np.ndarray,
        search_starts: np.ndarray, search_ends: np.ndarray,
    ) -> Spans:  # fmt: skip
        """Add the valid matches hidden by rejected candidates, and drop what they overlap."""
        extra: list[tuple[int, int, int]] = []
        dropped = np.zeros(len(starts), dtype=bool)
        covered = 0
        for first, stop in zip(search_starts.tolist(), search_ends.tolist(), strict=True):
            if stop <= covered:
                continue
            reach = self._search(folded, max(first, covered), stop, extra)
            # A match found here may run past the candidate, over accepted ones.
            position = int(np.searchsorted(starts, stop))
            while position < len(starts) and starts[position] < reach:
                dropped[position] = True
                if ends[position] > reach:
                    reach = self._search(folded, reach, int(ends[position]), extra)
                position += 1
            covered = max(covered, reach)
        keep = ~dropped
        starts, ends, entries = starts[keep], ends[keep], entries[keep]
        if extra:
            more = np.array(extra, dtype=np.int64).reshape(-1, 3)
            starts = np.concatenate([starts, more[:, 0]])
            ends = np.concatenate([ends, more[:, 1]])
            entries = np.concatenate([entries, more[:, 2]])
            order = np.argsort(starts, kind="stable")
            starts, ends, entries = starts[order], ends[order], entries[order]
        return Spans(starts, ends, entries)

    def _search(self, folded: str, first: int, stop: int, out: list[tuple[int, int, int]]) -> int:
        """Leftmost-longest valid matches starting in ``[first, stop)``; returns the new cover."""
        window = folded[first : stop + self._longest]
        by_start: dict[int, list[tuple[int, int]]] = {}
        for last, value in self._automaton.iter(window):
            if value < 0:
                continue
            length = value & 0xFF
            begin = first + last - length + 1
            if begin < stop:
                by_start.setdefault(begin, []).append((length, value >> _LENGTH_BITS))
        covered, size = stop, len(folded)
        cursor = first
        for begin in sorted(by_start):
            if begin < cursor:
                continue
            for length, index in sorted(by_start[begin], reverse=True):
                head, tail, _, _ = self._edges[index]
                finish = begin + length
                if head and begin and _word_char(folded[begin - 1]):
                    continue
                if tail and finish < size and _word_char(folded[finish]):
                    continue
                out.append((begin, finish, index))
                cursor = finish
                covered = max(covered, finish)
                break
        return covered

    def entries_for(self, categories: Iterable[str]) -> list[TermEntry]:
        """The entries of the given categories (for prompts listing a domain's terms)."""
        wanted = set(categories)
        return [entry for entry in self.entries if entry.term.category in wanted]
