r"""Unit-declared regexes that cannot hang: Python's syntax and meaning, matched by RE2.

A unit file may come from an attacker, and a backtracking engine spends exponential time on a
pattern such as ``(a+)+$``. Heuristic patterns and keywords therefore run on Google RE2, whose
matching time is linear in the text. RE2 reads a slightly different language than Python's
``re`` (``\b``, ``\w``, ``\d`` and ``\s`` are ASCII-only there, ``$`` ignores a final newline,
case folding differs in corners), so a pattern is not handed to RE2 as written: it is parsed with
Python's own parser and rewritten over a small alphabet of character classes.

Each character the pattern can tell apart from another (by its literals, classes, ``.``, word
characters for ``\b``, the newline for anchors) falls into one class, decided by Python's engine
itself on that single character, so ``IGNORECASE``, Unicode digits and ``²`` counting as a word
character are exactly Python's. Each class is one byte: word classes get ASCII word bytes, so
RE2's ``\b`` on the bytes is Python's ``\b`` on the text; the final newline gets ``\n`` and
every other newline another byte, so RE2's ``(?m:$)`` is Python's ``$``. The text is translated
to those bytes (one byte per character, so offsets are unchanged) and RE2 runs on them with
Python's leftmost-first priorities. Classes are learnt lazily from the texts seen; the patterns
of one path (``compile_patterns``) share an alphabet, so a text is translated once for all of
them, and keywords (``KeywordSet``) are one RE2 set.

What RE2 cannot express — lookaround, backreferences, conditional, atomic or possessive groups,
``^``/``$`` both with and without ``(?m)``, more distinct characters than bytes, patterns over
RE2's size limits, syntax only the ``regex`` module reads — runs on the backtracking ``regex``
module instead, with ``LIMITS.regex_timeout_s`` per text: a timeout raises ``PatternTimeout``
(code ``pattern_timeout``), never a hang. ``Pattern.needs_backtracking`` names the reason, which
``aau validate`` reports.

One difference from ``re.finditer`` remains: after an empty match at a position, the next
search starts one character later, where Python would first try a longer match at the same
position (only patterns that can match the empty text are concerned; an empty match gives a
heuristic no value anyway).
"""

from __future__ import annotations

import re
import re._constants as _sre  # Python's own parser: the syntax and meaning unit authors write
import re._parser as _sre_parse
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import re2
import regex

from aau.errors import UnitRunError
from aau.limits import LIMITS

__all__ = [
    "KeywordSet",
    "Match",
    "Pattern",
    "PatternError",
    "PatternSyntaxError",
    "PatternTimeout",
    "compile_pattern",
    "compile_patterns",
]


class PatternError(UnitRunError):
    """A unit's pattern could not be matched against a text."""

    code = "pattern_error"


class PatternTimeout(PatternError):
    """A pattern on the backtracking engine ran past ``LIMITS.regex_timeout_s`` on one text."""

    code = "pattern_timeout"


class PatternSyntaxError(ValueError):
    """A pattern that neither engine can compile (the message is Python's, or ``regex``'s)."""


class Match(Protocol):
    """The part of ``re.Match`` the heuristic path reads."""

    def start(self, group: int | str = 0) -> int:
        """Where the match (or a group) starts; -1 for a group that did not take part."""
        ...

    def span(self, group: int | str = 0) -> tuple[int, int]:
        """Start and end of the match or of a group (``(-1, -1)`` when it did not take part)."""
        ...

    def groupdict(self) -> dict[str, str | None]:
        """Named groups' texts (None for those that did not take part)."""
        ...


# -- the alphabet: one byte per class of characters the patterns tell apart -------------------

_WORD_BYTES = tuple(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
_NL = 0x0A
"""The newline's byte; RE2's ``(?m:$)`` matches before it, ``(?m:^)`` after it."""
_NL_INNER = 0x0B
"""A newline other than the last character, where a single-line ``$`` must not match."""
_OTHER_BYTES = tuple(b for b in range(256) if b not in _WORD_BYTES and b not in (_NL, _NL_INNER))
_MAX_PREDICATES = 250
_MAX_KNOWN_CHARS = 1 << 16
"""Characters whose byte an alphabet remembers; others are classified again in each text."""

_Vector = tuple[bool, ...]


class _Overflow(Exception):
    """More classes than bytes: the characters need the backtracking engine."""


class _Alphabet:
    r"""Classes of characters under a list of single-character predicates, each class a byte.

    Predicate 0 is "word character" (for ``\b``) and predicate 1 "newline"; the rest come
    from the patterns' atoms. A character's class is the vector of the predicates it satisfies,
    evaluated by Python's ``re`` on that character. ``encode`` maps a text to bytes; ``version``
    grows whenever a class (and so a byte) is added, so that programs re-render.
    """

    def __init__(self, word: str, atoms: Sequence[str], newline: str | None) -> None:
        self._predicates = [re.compile(source) for source in (word, "\n", *atoms)]
        self.newline = newline
        """``final``: only a final newline gets ``_NL``; ``lines``/None: every newline does."""
        self.classes: dict[_Vector, int] = {}
        self._table: dict[int, int] = {}
        """Character (``ord``) -> byte; only grows (up to ``_MAX_KNOWN_CHARS``)."""
        self._known: set[str] = set()
        """The characters in ``_table``, added after them."""
        self._lock = threading.Lock()
        self.version = 0
        seeds = {chr(c) for c in range(128)}
        for atom in atoms:  # the literal characters of each atom and their case variants
            for code in re.findall(r"\\U([0-9a-f]{8})", atom):
                char = chr(int(code, 16))
                seeds |= {char, char.lower(), char.upper(), char.casefold(), char.swapcase()}
        self._learn({c for c in seeds if len(c) == 1})

    def bytes_of(self, predicate: int) -> list[int]:
        """The bytes of every class whose characters satisfy ``predicate``."""
        out = []
        for vector, byte in list(self.classes.items()):  # a snapshot: other threads may learn
            if vector[predicate]:
                out.append(byte)
                if byte == _NL:
                    out.append(_NL_INNER)
        return out

    def _learn(self, chars: set[str]) -> dict[int, int]:
        """Classify ``chars`` (adding classes as needed) and remember them while there is room.

        Returns their bytes. Raises ``_Overflow``, changing nothing, when a new class has no
        byte left.
        """
        with self._lock:
            ordered = sorted(chars)
            sample = "".join(ordered)
            hits = [{m.start() for m in p.finditer(sample)} for p in self._predicates]
            words = sum(1 for v in self.classes if v[0] and not v[1])
            others = sum(1 for v in self.classes if not v[0] and not v[1])
            added: dict[_Vector, int] = {}
            codes: dict[int, int] = {}
            for index, char in enumerate(ordered):
                vector = tuple(index in hit for hit in hits)
                byte = self.classes.get(vector, added.get(vector))
                if byte is None:
                    if vector[1]:
                        byte = _NL
                    elif vector[0]:
                        if words >= len(_WORD_BYTES):
                            raise _Overflow
                        byte, words = _WORD_BYTES[words], words + 1
                    else:
                        if others >= len(_OTHER_BYTES):
                            raise _Overflow
                        byte, others = _OTHER_BYTES[others], others + 1
                    added[vector] = byte
                codes[ord(char)] = _NL_INNER if byte == _NL and self.newline == "final" else byte
            if added:
                self.classes.update(added)
                self.version += 1
            if len(self._table) + len(codes) <= _MAX_KNOWN_CHARS:
                self._table.update(codes)  # before _known: a known character has its byte
                self._known.update(chars)
            return codes

    def encode(self, text: str) -> bytes:
        """``text`` as class bytes (raises ``_Overflow`` when a class has no byte left)."""
        table: dict[int, int] = self._table
        if not text.isascii():
            unknown = set(text).difference(self._known)
            if unknown:
                table = _Overlay(self._learn(unknown), self._table)
        data = text.translate(table)
        if self.newline == "final" and data.endswith("\x0b"):
            data = data[:-1] + "\n"  # the final newline, before which `$` matches
        return data.encode("latin-1")


class _Overlay(dict[int, int]):
    """One text's bytes for characters the shared table had no room for, over that table."""

    def __init__(self, extra: dict[int, int], base: dict[int, int]) -> None:
        super().__init__(extra)
        self._base = base

    def __missing__(self, key: int) -> int:
        return self._base[key]


# -- rewriting a parsed Python pattern into RE2 syntax over the alphabet ---------------------


class _NeedsBacktracking(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_CATEGORIES = {
    _sre.CATEGORY_DIGIT: r"\d", _sre.CATEGORY_NOT_DIGIT: r"\D",
    _sre.CATEGORY_SPACE: r"\s", _sre.CATEGORY_NOT_SPACE: r"\S",
    _sre.CATEGORY_WORD: r"\w", _sre.CATEGORY_NOT_WORD: r"\W",
}  # fmt: skip
_UNSUPPORTED = {
    _sre.ASSERT: "lookaround", _sre.ASSERT_NOT: "lookaround",
    _sre.GROUPREF: "backreference", _sre.GROUPREF_EXISTS: "conditional group",
    _sre.ATOMIC_GROUP: "atomic group", _sre.POSSESSIVE_REPEAT: "possessive quantifier",
}  # fmt: skip
_ATOM_FLAGS = ((re.IGNORECASE, "i"), (re.DOTALL, "s"), (re.ASCII, "a"))


def _char(code: int) -> str:
    return f"\\U{code:08x}"


def _atom_source(op: Any, av: Any, flags: int) -> str:
    """A Python pattern matching the one character ``(op, av)`` matches, under ``flags``."""
    if op is _sre.LITERAL:
        body = _char(av)
    elif op is _sre.NOT_LITERAL:
        body = f"[^{_char(av)}]"
    elif op is _sre.ANY:
        body = "."
    elif op is _sre.CATEGORY:
        body = _CATEGORIES[av]
    else:  # IN
        parts = []
        for item_op, item in av:
            if item_op is _sre.NEGATE:
                parts.append("^")
            elif item_op is _sre.LITERAL:
                parts.append(_char(item))
            elif item_op is _sre.RANGE:
                parts.append(f"{_char(item[0])}-{_char(item[1])}")
            elif item_op is _sre.CATEGORY:
                parts.append(_CATEGORIES[item])
            else:
                raise _NeedsBacktracking(f"character class item {item_op}")
        body = f"[{''.join(parts)}]"
    letters = "".join(letter for flag, letter in _ATOM_FLAGS if flags & flag)
    return f"(?{letters}:{body})" if letters else body


class _Rewriter:
    """Collects a pattern's atoms and anchors and writes its RE2 form as tokens.

    A token is RE2 syntax (``str``) or the index of an atom (``int``), which the program renders
    as the byte class of that atom once the alphabet is known (and again when it grows).
    """

    def __init__(self) -> None:
        self.atoms: list[str] = []
        self._atom_index: dict[str, int] = {}
        self.newline: set[str] = set()
        self.word_ascii: set[bool] = set()

    def atom(self, source: str) -> int:
        index = self._atom_index.get(source)
        if index is None:
            if len(self.atoms) >= _MAX_PREDICATES:
                raise _NeedsBacktracking("more distinct characters than the linear-time engine")
            index = self._atom_index[source] = len(self.atoms)
            self.atoms.append(source)
        return index + 2  # after the word and newline predicates

    def rewrite(self, items: Iterable[tuple[Any, Any]], flags: int) -> list[str | int]:
        out: list[str | int] = []
        for op, av in items:
            if op in _UNSUPPORTED:
                raise _NeedsBacktracking(_UNSUPPORTED[op])
            if op in (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN, _sre.CATEGORY):
                out.append(self.atom(_atom_source(op, av, flags)))
            elif op is _sre.BRANCH:
                out.append("(?:")
                for index, branch in enumerate(av[1]):
                    out += (["|"] if index else []) + self.rewrite(branch, flags)
                out.append(")")
            elif op is _sre.SUBPATTERN:
                group, add, remove, body = av
                out.append("(" if group is not None else "(?:")
                out += self.rewrite(body, (flags | add) & ~remove)
                out.append(")")
            elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
                low, high, body = av
                out += ["(?:", *self.rewrite(body, flags), ")", _quantifier(low, high)]
                if op is _sre.MIN_REPEAT:
                    out.append("?")
            elif op is _sre.AT:
                out.append(self._anchor(av, flags))
            else:
                raise _NeedsBacktracking(f"unsupported construct {op}")
        return out

    def _anchor(self, at: Any, flags: int) -> str:
        multiline = bool(flags & re.MULTILINE)
        if at is _sre.AT_BEGINNING:
            if multiline:
                self.newline.add("lines")
                return "(?m:^)"
            return r"\A"
        if at is _sre.AT_END:
            self.newline.add("lines" if multiline else "final")
            return "(?m:$)"
        if at is _sre.AT_BEGINNING_STRING:
            return r"\A"
        if at is _sre.AT_END_STRING:
            return r"\z"
        if at in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY):
            self.word_ascii.add(bool(flags & re.ASCII))
            return r"\b" if at is _sre.AT_BOUNDARY else r"\B"
        raise _NeedsBacktracking(f"unsupported anchor {at}")


def _quantifier(low: int, high: int) -> str:
    unbounded = high is _sre.MAXREPEAT
    if (low, unbounded) == (0, True):
        return "*"
    if (low, unbounded) == (1, True):
        return "+"
    if unbounded:
        return f"{{{low},}}"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _render(tokens: Sequence[str | int], alphabet: _Alphabet) -> bytes:
    out = []
    for token in tokens:
        if isinstance(token, str):
            out.append(token)
            continue
        codes = sorted(alphabet.bytes_of(token))
        if not codes:
            out.append(r"[^\x00-\xff]")  # an atom no character seen so far satisfies
            continue
        ranges = []
        start = prev = codes[0]
        for code in [*codes[1:], -1]:
            if code == prev + 1:
                prev = code
                continue
            ranges.append(f"\\x{start:02x}" + (f"-\\x{prev:02x}" if prev > start else ""))
            start = prev = code
        out.append(f"[{''.join(ranges)}]")
    return "".join(out).encode("ascii")


def _options() -> re2.Options:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    return options


class _Re2Program:
    """Python patterns rewritten for RE2 over one shared alphabet (re-rendered as it grows)."""

    def __init__(self, sources: Sequence[str], flags: int) -> None:
        rewriter = _Rewriter()
        self.tokens: list[list[str | int]] = []
        self.groupindex: list[dict[str, int]] = []
        for source in sources:
            parsed = _sre_parse.parse(source, flags)
            self.tokens.append(rewriter.rewrite(parsed, parsed.state.flags))
            self.groupindex.append(dict(parsed.state.groupdict))
        if len(rewriter.newline) > 1:
            raise _NeedsBacktracking("^ or $ both with and without (?m)")
        if len(rewriter.word_ascii) > 1:
            raise _NeedsBacktracking(r"\b both with and without (?a)")
        word = r"(?a:\w)" if True in rewriter.word_ascii else r"\w"
        newline = next(iter(rewriter.newline), None)
        try:
            self.alphabet = _Alphabet(word, rewriter.atoms, newline)
        except _Overflow:
            raise _NeedsBacktracking(
                "more distinct characters than the linear-time engine"
            ) from None
        self._lock = threading.Lock()
        self._version = -1
        self._compiled: list[Any] = []
        self._last: tuple[str, bytes] | None = None
        """The last text encoded and its bytes: the patterns of one path share them."""
        self._compile()

    def _compile(self) -> list[Any]:
        with self._lock:
            if self._version != self.alphabet.version:
                version = self.alphabet.version
                try:
                    compiled = [
                        re2.compile(_render(t, self.alphabet), _options()) for t in self.tokens
                    ]
                except re2.error as exc:
                    raise _NeedsBacktracking(f"beyond RE2's limits ({exc})") from None
                self._compiled, self._version = compiled, version
            return self._compiled

    def encode(self, text: str) -> tuple[bytes, list[Any]]:
        """The text's bytes and the programs current for them.

        Raises ``_Overflow`` when the text needs more classes than bytes, or a grown alphabet
        makes a program RE2 cannot compile.
        """
        last = self._last
        if last is not None and last[0] is text:
            data = last[1]
        else:
            data = self.alphabet.encode(text)  # may learn classes: read the programs after it
            self._last = (text, data)
        if self._version != self.alphabet.version:
            try:
                return data, self._compile()
            except _NeedsBacktracking:
                raise _Overflow from None
        return data, self._compiled


class _Re2Match:
    """A match found on class bytes, read against the original text (same offsets)."""

    __slots__ = ("_groupindex", "_match", "_text")

    def __init__(self, text: str, match: Any, groupindex: dict[str, int]) -> None:
        self._text, self._match, self._groupindex = text, match, groupindex

    def _index(self, group: int | str) -> int:
        return self._groupindex[group] if isinstance(group, str) else group

    def start(self, group: int | str = 0) -> int:
        return int(self._match.span(self._index(group))[0])

    def span(self, group: int | str = 0) -> tuple[int, int]:
        start, end = self._match.span(self._index(group))
        return int(start), int(end)

    def groupdict(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for name, index in self._groupindex.items():
            start, end = self._match.span(index)
            out[name] = None if start < 0 else self._text[start:end]
        return out


class Pattern:
    """One compiled unit pattern: ``finditer`` like ``re``'s, on RE2 or under a time limit."""

    def __init__(self, source: str, flags: int) -> None:
        self.source = source
        self.needs_backtracking: str | None = None
        """Why the pattern runs on the backtracking engine (None: it runs on RE2)."""
        self._program: _Re2Program | None = None
        self._index = 0
        """This pattern's program in ``_program`` (patterns compiled together share one)."""
        self._backtracking: Any = None
        try:
            re.compile(source, flags)
        except re.error as exc:
            python_error: re.error | None = exc
        else:
            python_error = None
            try:
                self._program = _Re2Program([source], flags)
            except _NeedsBacktracking as exc:
                self.needs_backtracking = exc.reason
        if self._program is not None:
            self.groupindex = self._program.groupindex[0]
        else:
            try:
                self._backtracking = regex.compile(source, flags | regex.VERSION0)
            except regex.error as exc:
                raise PatternSyntaxError(str(python_error or exc)) from None
            if python_error is not None:
                self.needs_backtracking = f"syntax beyond Python's re: {python_error}"
            self.groupindex = dict(self._backtracking.groupindex)
        self._flags = flags

    def finditer(self, text: str) -> Iterator[Match]:
        """Every match in ``text``, leftmost first (see the module notes on empty matches).

        Raises:
            PatternTimeout: on the backtracking engine, the search ran past
                ``LIMITS.regex_timeout_s``.
        """
        if self._program is None:
            return self._finditer_backtracking(self._backtracking, text)
        try:
            data, compiled = self._program.encode(text)
        except _Overflow:  # this text brings more kinds of characters than there are bytes
            return self._finditer_backtracking(self._backtracking_fallback(), text)
        return self._finditer_re2(compiled[self._index], data, text)

    def _finditer_re2(self, compiled: Any, data: bytes, text: str) -> Iterator[Match]:
        pos, size, groupindex = 0, len(data), self.groupindex
        while pos <= size:
            found = compiled.search(data, pos)
            if found is None:
                return
            start, end = found.span()
            yield _Re2Match(text, found, groupindex)
            pos = end if end > start else end + 1

    def _backtracking_fallback(self) -> Any:
        if self._backtracking is None:
            try:
                self._backtracking = regex.compile(self.source, self._flags | regex.VERSION0)
            except regex.error as exc:
                raise PatternError(f"pattern {self.source!r}: {exc}") from None
        return self._backtracking

    def _finditer_backtracking(self, compiled: Any, text: str) -> Iterator[Match]:
        limit = LIMITS.regex_timeout_s
        try:
            yield from compiled.finditer(text, timeout=limit)
        except TimeoutError:
            raise PatternTimeout(
                f"pattern {_shown(self.source)} ran past its {limit} s time limit on a text of "
                f"{len(text)} characters (it needs backtracking: {self.needs_backtracking})"
            ) from None


def _shown(source: str) -> str:
    return repr(source if len(source) <= 80 else source[:77] + "...")


class KeywordSet:
    r"""Words matched case-insensitively between word boundaries (``\bword\b``), all at once.

    ``found(text)`` gives the indices of the words that occur in ``text``; it is one RE2 set
    match over the text's class bytes. Keywords are literals, so should they ever need more
    classes than bytes they are matched with Python's ``re``, which cannot backtrack on them.
    """

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self._sources = [rf"\b{re.escape(word)}\b" for word in self.words]
        self._python = [re.compile(source, re.IGNORECASE) for source in self._sources]
        self._program: _Re2Program | None = None
        self._set: Any = None
        self._version = -1
        self._lock = threading.Lock()
        if self.words:
            try:
                self._program = _Re2Program(self._sources, re.IGNORECASE)
            except _NeedsBacktracking:
                self._program = None

    def _current_set(self) -> Any:
        assert self._program is not None
        alphabet = self._program.alphabet
        with self._lock:
            if self._version != alphabet.version:
                version = alphabet.version
                matcher = re2.Set.SearchSet(_options())
                for tokens in self._program.tokens:
                    matcher.Add(_render(tokens, alphabet))
                matcher.Compile()
                self._set, self._version = matcher, version
            return self._set

    def encode(self, text: str) -> bytes | None:
        """``text`` in this set's bytes, to slice windows from (None: matched as text)."""
        if self._program is None:
            return None
        try:
            return self._program.alphabet.encode(text)
        except _Overflow:
            return None

    def found(self, text: str, data: bytes | None) -> list[int]:
        """Indices of the words in ``text``; ``data`` is ``text`` as ``encode`` gave it."""
        if not self.words:
            return []
        if data is None:
            return [i for i, rx in enumerate(self._python) if rx.search(text)]
        matcher = self._current_set()
        return sorted(matcher.Match(data) or ())


def compile_pattern(source: str, flags: int = re.IGNORECASE) -> Pattern:
    """Compile a unit's pattern (Python syntax) for the engine that can run it safely.

    Raises:
        PatternSyntaxError: neither engine can compile it.
    """
    return Pattern(source, flags)


def compile_patterns(sources: Sequence[str], flags: int = re.IGNORECASE) -> list[Pattern]:
    """Compile patterns that run over the same texts (one heuristic path's).

    Those on RE2 share one alphabet where they can, so that each text is translated once for
    all of them; each pattern matches exactly as ``compile_pattern`` would make it match.

    Raises:
        PatternSyntaxError: neither engine can compile one of them.
    """
    patterns = [Pattern(source, flags) for source in sources]
    linear = [p for p in patterns if p._program is not None]
    if len(linear) > 1:
        try:
            program = _Re2Program([p.source for p in linear], flags)
        except _NeedsBacktracking:  # together they need more classes, or mix anchor modes
            return patterns
        for index, pattern in enumerate(linear):
            pattern._program, pattern._index = program, index
    return patterns
