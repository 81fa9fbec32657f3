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

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ahocorasick

from aau.terms.dictionary import Term, TermDictionary, fold_surface

__all__ = ["TermEntry", "TermHit", "TermMatcher", "fold_text"]

# Whitespace the folded text reads as a space (same length, so offsets hold).
_SPACES = str.maketrans({"\n": " ", "\t": " ", "\r": " ", "\f": " ", "\v": " ", "\xa0": " "})


@dataclass(frozen=True, slots=True)
class TermEntry:
    """A surface form the automaton knows, and the dictionary row it comes from."""

    surface: str
    term: Term
    dictionary: str


@dataclass(frozen=True, slots=True)
class TermHit:
    """One term found in a text.

    Attributes:
        start, end: character offsets into the text that was matched (``text[start:end]``).
        text: the matched text as written.
        surface: the dictionary's surface form it matched.
        canonical, category: what the term means.
        dictionary: the name of the dictionary that holds it.
    """

    start: int
    end: int
    text: str
    surface: str
    canonical: str
    category: str
    dictionary: str

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
    return folded.translate(_SPACES)


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
        self._automaton = automaton
        digest = hashlib.sha256()
        for dictionary in self.dictionaries:
            digest.update(f"{dictionary.name}:{dictionary.sha256};".encode())
        self.fingerprint = digest.hexdigest()[:16]
        """Changes whenever any dictionary's content or the order changes."""
        self._boundary_cache: dict[str, bool] = {}

    def __len__(self) -> int:
        """Surface forms known."""
        return len(self.entries)

    def _joins(self, left: str, right: str) -> bool:
        """Whether a boundary between ``left`` and ``right`` would cut a word."""
        cache = self._boundary_cache
        a = cache.get(left)
        if a is None:
            a = cache[left] = _word_char(left)
        if not a:
            return False
        b = cache.get(right)
        if b is None:
            b = cache[right] = _word_char(right)
        return b

    def find(self, text: str) -> list[TermHit]:
        """Every term in ``text``: non-overlapping, left to right, longest first."""
        if not self.entries or not text:
            return []
        folded = fold_text(text)
        return [
            TermHit(
                start,
                end,
                text[start:end],
                e.surface,
                e.term.canonical,
                e.term.category,
                e.dictionary,
            )  # fmt: skip
            for start, end, index in self.spans(folded)
            for e in (self.entries[index],)
        ]

    def spans(self, folded: str) -> list[tuple[int, int, int]]:
        """``(start, end, entry index)`` of every match in already folded text."""
        if not self.entries:
            return []
        out: list[tuple[int, int, int]] = []
        joins, size = self._joins, len(folded)
        position = 0
        while position < size:
            restart = None
            for last, (length, index) in self._automaton.iter_long(folded, position):
                start, end = last - length + 1, last + 1
                if (start == 0 or not joins(folded[start - 1], folded[start])) and (
                    end == size or not joins(folded[end - 1], folded[end])
                ):
                    out.append((start, end, index))
                    continue
                # The longest candidate cuts a word: a shorter one at the same start may not,
                # and matches that begin inside the rejected span were skipped by iter_long.
                shorter = self._shorter_at(folded, start, end)
                if shorter is not None:
                    out.append(shorter)
                    restart = shorter[1]
                else:
                    restart = start + 1
                break
            if restart is None:
                break
            position = restart
        return out

    def _shorter_at(self, folded: str, start: int, end: int) -> tuple[int, int, int] | None:
        best = None
        size = len(folded)
        if start and self._joins(folded[start - 1], folded[start]):
            return None
        for last, (length, index) in self._automaton.iter(folded, start, end - 1):
            if last - length + 1 != start:
                continue
            stop = last + 1
            if stop == size or not self._joins(folded[stop - 1], folded[stop]):
                best = (start, stop, index)  # iter yields shorter ends first: keep the last
        return best

    def entries_for(self, categories: Iterable[str]) -> list[TermEntry]:
        """The entries of the given categories (for prompts listing a domain's terms)."""
        wanted = set(categories)
        return [entry for entry in self.entries if entry.term.category in wanted]
