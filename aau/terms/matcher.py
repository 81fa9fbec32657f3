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

The boundary checks run in Python for each candidate only, so the scan stays in C for the text
between terms.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import ahocorasick

from aau.terms.dictionary import Term, TermDictionary, fold_surface

__all__ = ["TermEntry", "TermHit", "TermMatcher", "fold_text"]

_GC_PAUSE_CHARS = 65_536

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


class TermMatcher:
    """An automaton over the surface forms of some dictionaries.

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
        self.entries: list[TermEntry] = []
        for key, entry in entries.items():
            automaton.add_word(key, (len(key), len(self.entries)))
            self.entries.append(entry)
        if self.entries:
            automaton.make_automaton()
        self._longest = max((len(fold_surface(e.surface)) for e in self.entries), default=0)
        # Per entry, what a rejected candidate (the entry's key, as matched) can still hide:
        # (starts with a word character, ends with one, has a boundary inside where another
        # term could start, has a shorter key as a prefix ending at a boundary).
        self._edges: list[tuple[bool, bool, bool, bool]] = []
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
            self._edges.append((flags[0], flags[-1], inner, prefixed))
        self._word: dict[str, bool] = {" ": False}
        self._automaton = automaton
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
        # Hundreds of thousands of small tuples would trigger the cyclic collector over and
        # over (a third of the time on 10 MB); none of them can form a cycle.
        pause = len(text) > _GC_PAUSE_CHARS and gc.isenabled()
        if pause:
            gc.disable()
        try:
            return [
                TermHit(start, end, text[start:end], entries[index])
                for start, end, index in self.spans(fold_text(text))
            ]
        finally:
            if pause:
                gc.enable()

    def _is_word(self, ch: str) -> bool:
        known = self._word.get(ch)
        if known is None:
            known = self._word[ch] = _word_char(ch)
        return known

    def spans(self, folded: str) -> list[tuple[int, int, int]]:
        """``(start, end, entry index)`` of every match in already folded text.

        One pass of ``iter_long`` in C finds, after each match, the leftmost position where any
        term starts and the longest term there. When that candidate cuts a word (or overlaps
        what was already taken), only the positions it hid are searched again, in a window of
        the text: restarting the automaton would convert the whole text again each time.
        """
        if not self.entries:
            return []
        out: list[tuple[int, int, int]] = []
        append = out.append
        size = len(folded)
        word = self._word
        is_word = self._is_word
        edges = self._edges
        covered = 0  # positions before this are decided
        for last, (length, index) in self._automaton.iter_long(folded):
            start = last - length + 1
            end = last + 1
            if end <= covered:
                continue
            if start >= covered:
                head, tail, inner, prefixed = edges[index]
                before = folded[start - 1] if start else " "
                after = folded[end] if end < size else " "
                left = not head or not (word[before] if before in word else is_word(before))
                right = not tail or not (word[after] if after in word else is_word(after))
                if left and right:
                    append((start, end, index))
                    covered = end
                    continue
                # Rejected: a valid match could only start inside it after a boundary in the
                # key, or at its start as a shorter key; most candidates (a short term at the
                # start of a longer word) can hide neither.
                if not (inner or (left and prefixed)):
                    covered = end
                    continue
            covered = self._search(folded, max(start, covered), end, out)
        return out

    def _search(self, folded: str, first: int, stop: int, out: list[tuple[int, int, int]]) -> int:
        """Leftmost-longest valid matches starting in ``[first, stop)``; returns the new cover."""
        window = folded[first : stop + self._longest]
        by_start: dict[int, list[tuple[int, int]]] = {}
        for last, (length, index) in self._automaton.iter(window):
            begin = first + last - length + 1
            if begin < stop:
                by_start.setdefault(begin, []).append((length, index))
        covered, size = stop, len(folded)
        is_word, edges = self._is_word, self._edges
        cursor = first
        for begin in sorted(by_start):
            if begin < cursor:
                continue
            for length, index in sorted(by_start[begin], reverse=True):
                head, tail, _, _ = edges[index]
                finish = begin + length
                if head and begin and is_word(folded[begin - 1]):
                    continue
                if tail and finish < size and is_word(folded[finish]):
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
