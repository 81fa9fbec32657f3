"""Finding dictionary terms in text with one Aho-Corasick automaton (pyahocorasick).

Matching rules, in order:

* **Case folding.** Text and terms are lower-cased; where lower-casing would change the length
  of the text (a handful of characters such as ``İ``), those characters are kept as they are, so
  offsets into the folded text are offsets into the original.
* **Whitespace.** Newlines and tabs match a space, so a term broken across lines by OCR or
  layout is still found. Runs of spaces are not merged.
* **Longest leftmost.** Of the terms that occur (with valid boundaries), the one that starts
  first wins, then the longer; a term overlapping a winner is dropped. Ties cannot happen:
  each folded surface belongs to exactly one entry.
* **Word boundaries** for scripts that separate words with spaces: a match may not begin or end
  inside a word. Chinese, Japanese, Thai and other scripts written without spaces have no such
  boundaries, so their terms match anywhere.

The scan itself runs in C (pyahocorasick); the boundary checks run on all candidates at once
(numpy), so Python never loops over the text or over each candidate.
"""

from __future__ import annotations

import gc
import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

import ahocorasick
import numpy as np

from aau.terms.dictionary import Term, TermDictionary, fold_surface, fold_text

__all__ = ["TermEntry", "TermHit", "TermMatcher", "fold_text"]

_GC_PAUSE_HITS = 10_000


@dataclass(frozen=True, slots=True)
class TermEntry:
    """A surface form the automaton knows, and the dictionary row it comes from."""

    surface: str
    term: Term
    dictionary: str


class TermHit(NamedTuple):
    """One term found in a text (a tuple: a large text yields hundreds of thousands).

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
    """A character of a spaced script that continues a word (so a term cannot stop there).

    Combining marks count (Devanagari vowel signs, Arabic diacritics, decomposed accents).
    """
    if _no_space_script(ch):
        return False
    return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")


def _leftmost(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Which of these spans (sorted by start, one per start) a left-to-right scan keeps.

    A span that starts at or after every earlier span's end is kept outright; the others (a
    term inside or across a longer one) are decided in order against the last kept span.
    """
    reach = np.maximum.accumulate(end)
    contested = np.zeros(len(start), dtype=bool)
    contested[1:] = start[1:] < reach[:-1]
    keep = ~contested
    if not contested.any():
        return keep
    # End of the last uncontested span before each position (uncontested ends only grow).
    clear_end = np.maximum.accumulate(np.where(keep, end, 0))
    last_end = 0
    for position in np.flatnonzero(contested).tolist():
        last_end = max(last_end, int(clear_end[position - 1]))
        if start[position] >= last_end:
            keep[position] = True
            last_end = int(end[position])
    return keep


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

    def __len__(self) -> int:  # matches, not fields
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
        # ASCII-initial terms first: their root children come before the other scripts'.
        ordered = sorted(entries.items(), key=lambda item: not item[0][0].isascii())
        self.entries: list[TermEntry] = [entry for _, entry in ordered]
        for index, (key, _) in enumerate(ordered):
            automaton.add_word(key, (index << _LENGTH_BITS) | len(key))
        automaton.make_automaton()
        self._automaton = automaton
        # Per entry: whether its key starts and ends with a word character (then the text must
        # have a boundary there).
        self._head = np.array([_word_char(key[0]) for key, _ in ordered], dtype=bool)
        self._tail = np.array([_word_char(key[-1]) for key, _ in ordered], dtype=bool)
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

        ``Automaton.iter`` in C reports every occurrence of every term (``iter_long`` would be
        cheaper, but misses a shorter term that ends where a longer one fails, e.g. at the end
        of the text: pyahocorasick issue 133). The word-boundary checks run on all of them at
        once (numpy); of the valid ones, the longest at each start is kept, and overlaps go to
        the one that starts first, which only for overlapping runs needs a loop.
        """
        empty = np.zeros(0, dtype=np.int64)
        if not self.entries or not folded:
            return Spans(empty, empty, empty)
        flat = np.fromiter(chain.from_iterable(self._automaton.iter(folded)), np.int64)
        last, value = flat[0::2], flat[1::2]
        real = value >= 0  # the root-ordering dummies match only text holding NUL
        last, value = last[real], value[real]
        index = value >> _LENGTH_BITS
        length = value & 0xFF
        start = last - length + 1
        end = last + 1
        # surrogatepass: a lone surrogate (from JSON input) is text, not an encoding error.
        codes = np.frombuffer(folded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        size = len(codes)
        word_before = _word_codes(codes[np.maximum(start - 1, 0)]) & (start > 0)
        word_after = _word_codes(codes[np.minimum(end, size - 1)]) & (end < size)
        valid = ~(self._head[index] & word_before) & ~(self._tail[index] & word_after)
        start, end, index = start[valid], end[valid], index[valid]
        if not len(start):
            return Spans(empty, empty, empty)
        # Longest first within a start, starts in order; then the first of each start.
        order = np.lexsort((-(end - start), start))
        start, end, index = start[order], end[order], index[order]
        first = np.ones(len(start), dtype=bool)
        first[1:] = start[1:] != start[:-1]
        start, end, index = start[first], end[first], index[first]
        keep = _leftmost(start, end)
        return Spans(start[keep], end[keep], index[keep])
