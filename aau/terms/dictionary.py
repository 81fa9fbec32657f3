"""Term dictionaries: the file formats, their validation, and the parsed, checked form.

A dictionary maps surface forms (a term and its aliases) to a canonical form and a category:

* TSV or CSV, UTF-8, with a header row. Columns: ``term``, ``canonical``, ``category`` (required),
  ``aliases`` (``|``-separated, optional), ``lang`` (BCP-47, optional). Comment lines before the
  header carry metadata as ``# key: value`` (``name``, ``lang``, ``source``, ``license``).
* YAML: a mapping with the same metadata keys and ``terms:``, a list of mappings with the
  column names as keys (``aliases`` a list).

Every problem is reported with the file, the line, the column and a stable code (``T001``…),
and a dictionary with any problem is refused whole: uploads are all or nothing.

Uploads may come from an attacker, so reading is bounded: only a regular file is read (never a
FIFO or device), at most ``LIMITS.dictionary_bytes`` of it (T004), and YAML goes through the unit
loader (``aau.spec.loader.read_yaml``), which refuses duplicate keys (T020), nesting deeper
than ``LIMITS.yaml_depth`` (T021) and aliases that would expand past ``LIMITS.yaml_nodes``
nodes (T022) before any data is built.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aau.errors import SpecError, TermDictionaryError
from aau.limits import LIMITS
from aau.spec.loader import FileRefused, line_of, read_bounded, read_yaml

__all__ = [
    "MAX_DICTIONARY_BYTES",
    "MAX_TERM_CHARS",
    "MAX_TERM_WORDS",
    "Term",
    "TermDictionary",
    "fold_surface",
    "load_dictionary",
    "parse_dictionary",
]

MAX_DICTIONARY_BYTES = LIMITS.dictionary_bytes
"""Larger files are refused (T004): a dictionary is a vocabulary, not a corpus."""
MAX_TERMS = 500_000
MAX_TERM_CHARS = 80
MAX_TERM_WORDS = 8
"""Longer surface forms are sentences, not terms (T009)."""

_COLUMNS = ("term", "canonical", "category", "aliases", "lang")
_REQUIRED = ("term", "canonical", "category")
# \Z, not $: "$" also matches before a final newline, and names become file names.
_LANG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*\Z")
_CATEGORY = re.compile(r"[a-z][a-z0-9_]{0,39}\Z")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
# Anything a tokenizer might read as a special token: <|im_start|>, </s>, <TERM_x>, [CLS].
_SPECIAL_LIKE = re.compile(r"[<>]|^\[[A-Z_]+\]$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # only a YAML escape can write one (T002)
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:[A-Za-z]\.)+$|\b(?:co|inc|ltd|corp|no|art|sec)\.$", re.I)
_SPLIT_ALIASES = re.compile(r"\s*\|\s*")


# Every character ``str.split`` treats as whitespace; the folded text reads each as a space.
_SPACES = (
    "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0",
    "\u1680", *(chr(code) for code in range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f",
    "\u205f", "\u3000",
)  # fmt: skip


def fold_text(text: str) -> str:
    """Text as terms are matched in it, with its length (and so every offset) kept.

    Lower case (a character whose lower case is longer, such as ``İ``, is kept as it is),
    final sigma as sigma, and every whitespace character a space.
    """
    folded = text.lower()
    if len(folded) != len(text):  # rare: a character whose lower case is longer
        folded = "".join(ch if len(low := ch.lower()) != 1 else low for ch in text)
    # str.replace per character, not str.translate: translate leaves its fast path on any
    # non-ASCII text and then costs ~40 ms per MB; a replace that finds nothing costs little.
    for space in _SPACES:
        folded = folded.replace(space, " ")
    return folded.replace("ς", "σ")


def fold_surface(surface: str) -> str:
    """The key a surface form is matched by: folded as text is (``fold_text``), single spaces."""
    return " ".join(fold_text(surface).split())


@dataclass(frozen=True, slots=True)
class Term:
    """One dictionary row: its surface forms and what they mean.

    Attributes:
        term: the main surface form.
        canonical: the canonical form (an ISO code, a preferred spelling…).
        category: a lower-case snake_case category, e.g. ``currency`` or ``clause``.
        aliases: other surface forms with the same meaning.
        lang: BCP-47 language tag (``und`` when unknown).
        line: the line the row starts on in its file.
    """

    term: str
    canonical: str
    category: str
    aliases: tuple[str, ...] = ()
    lang: str = "und"
    line: int = 0

    @property
    def surfaces(self) -> tuple[str, ...]:
        """The term and its aliases."""
        return (self.term, *self.aliases)


@dataclass(frozen=True, slots=True, weakref_slot=True)  # the term store caches them weakly
class TermDictionary:
    """A parsed, validated dictionary.

    Attributes:
        name: the dictionary's name (from its metadata, else the file stem).
        terms: the rows, in file order.
        file: where it was read from (for messages).
        lang, source, license: metadata.
        sha256: digest of the file's bytes, so a term set's fingerprint changes with content.
    """

    name: str
    terms: tuple[Term, ...]
    file: str = "<dictionary>"
    lang: str = "und"
    source: str = ""
    license: str = ""
    sha256: str = ""
    metadata: dict[str, str] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.terms)

    def surfaces(self) -> Iterator[tuple[str, Term]]:
        """Every surface form with the row it belongs to."""
        for term in self.terms:
            for surface in term.surfaces:
                yield surface, term


def load_dictionary(path: str | Path, *, name: str | None = None) -> TermDictionary:
    """Read and validate a dictionary file (``.tsv``, ``.csv``, ``.yaml``/``.yml``).

    Raises:
        TermDictionaryError: the file is missing, too big, not UTF-8, malformed, or a row
            breaks a rule; the message names file, line and column.
    """
    path = Path(path)
    return parse_dictionary(read_dictionary_bytes(path), file=str(path), name=name)


def read_dictionary_bytes(path: Path) -> bytes:
    """A dictionary file's bytes, refused (located, coded) unless a regular file within bounds.

    Never opens a FIFO or device, never reads more than ``MAX_DICTIONARY_BYTES`` + 1 bytes.

    Raises:
        TermDictionaryError: missing, a directory, FIFO or device, unreadable (T001), or over
            ``MAX_DICTIONARY_BYTES`` (T004).
    """
    where = str(path)
    try:
        return read_bounded(path, MAX_DICTIONARY_BYTES)
    except FileRefused as exc:
        if exc.reason == "too_big":
            raise TermDictionaryError(
                f"{exc.message} for one dictionary (AAU_MAX_DICTIONARY_BYTES); split it",
                file=where,
                check="T004",
            ) from None
        message = "is a directory, not a file" if exc.reason == "directory" else exc.message
        raise TermDictionaryError(message, file=where, check="T001") from None


def parse_dictionary(
    data: bytes | str, *, file: str = "<dictionary>", name: str | None = None,
    format: str | None = None,  # noqa: A002  # the file format's name, as users say it
) -> TermDictionary:  # fmt: skip
    """Parse dictionary content; ``format`` (``tsv``/``csv``/``yaml``) defaults from ``file``."""
    fmt = (format or Path(file).suffix.lstrip(".")).lower()
    if fmt == "yml":
        fmt = "yaml"
    if fmt not in ("tsv", "csv", "yaml"):
        raise TermDictionaryError(
            f"unsupported format {fmt or '(no extension)'!r}: use .tsv, .csv or .yaml",
            file=file,
            check="T005",
        )
    text = _decode(data, file) if isinstance(data, bytes) else data
    encoded = text.encode("utf-8")
    if len(encoded) > MAX_DICTIONARY_BYTES:  # text given as str; _decode checked bytes
        raise TermDictionaryError(
            f"{len(encoded):,} bytes is over the limit of {MAX_DICTIONARY_BYTES:,} bytes",
            file=file,
            check="T004",
        )
    sha = hashlib.sha256(encoded).hexdigest()
    if fmt == "yaml":
        metadata, rows = _yaml_rows(text, file)
    else:
        metadata, rows = _table_rows(text, file, "\t" if fmt == "tsv" else ",")
    dict_name = name or metadata.get("name") or Path(file).stem
    if not _NAME.match(dict_name):
        raise TermDictionaryError(
            f"dictionary name {dict_name!r} must be letters, digits, '_', '.' or '-' (at most 64)",
            file=file,
            field="name",
            check="T006",
        )
    default_lang = metadata.get("lang", "und")
    if default_lang != "und" and not _LANG.match(default_lang):
        raise TermDictionaryError(
            f"{default_lang!r} is not a BCP-47 language tag", file=file, field="lang", check="T015"
        )
    terms = tuple(_check_rows(rows, file, default_lang))
    if not terms:
        raise TermDictionaryError("the dictionary holds no terms", file=file, check="T003")
    return TermDictionary(
        name=dict_name,
        terms=terms,
        file=file,
        lang=default_lang,
        source=metadata.get("source", ""),
        license=metadata.get("license", ""),
        sha256=sha,
        metadata=metadata,
    )


def _decode(data: bytes, file: str) -> str:
    if len(data) > MAX_DICTIONARY_BYTES:
        raise TermDictionaryError(
            f"{len(data):,} bytes is over the limit of {MAX_DICTIONARY_BYTES:,} bytes",
            file=file,
            check="T004",
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TermDictionaryError(
            "a UTF-16 file (as Excel's 'Unicode Text' saves); save it as UTF-8",
            file=file,
            line=1,
            check="T002",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TermDictionaryError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}; "
            "save the file as UTF-8",
            file=file,
            line=line,
            check="T002",
        ) from None


# Rows as (line, {column: value}) before the checks; aliases already split.
_Row = tuple[int, dict[str, Any]]


def _table_rows(text: str, file: str, delimiter: str) -> tuple[dict[str, str], list[_Row]]:
    metadata: dict[str, str] = {}
    lines = text.splitlines()
    first = 0
    while first < len(lines) and (not lines[first].strip() or lines[first].startswith("#")):
        key, sep, value = lines[first].lstrip("#").partition(":")
        if sep and key.strip():
            metadata[key.strip().lower()] = value.strip()
        first += 1
    if first == len(lines):
        raise TermDictionaryError("no header row and no terms", file=file, check="T003")
    quoting: Literal[0, 1, 2, 3] = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO("\n".join(lines[first:])), delimiter=delimiter,
                        quoting=quoting, strict=True)  # fmt: skip
    try:
        header = [column.strip().lower() for column in next(reader)]
    except csv.Error as exc:
        raise TermDictionaryError(str(exc), file=file, line=first + 1, check="T006") from None
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise TermDictionaryError(
            f"column(s) {', '.join(repeated)} appear more than once",
            file=file,
            line=first + 1,
            field="header",
            check="T006",
        )
    missing = [column for column in _REQUIRED if column not in header]
    unknown = [column for column in header if column not in _COLUMNS]
    if missing or unknown:
        problem = f"missing column(s) {', '.join(missing)}" if missing else ""
        if unknown:
            problem += ("; " if problem else "") + f"unknown column(s) {', '.join(unknown)}"
        raise TermDictionaryError(
            f"{problem} (columns: {', '.join(_COLUMNS)}; the first three required)",
            file=file,
            line=first + 1,
            field="header",
            check="T006",
        )
    rows: list[_Row] = []
    try:
        for values in reader:
            line = first + reader.line_num
            if not any(value.strip() for value in values) or values[0].startswith("#"):
                continue
            if len(values) > len(header):
                raise TermDictionaryError(
                    f"{len(values)} fields where the header has {len(header)}",
                    file=file,
                    line=line,
                    check="T006",
                )
            row: dict[str, Any] = dict(zip(header, values, strict=False))
            aliases = row.get("aliases") or ""
            row["aliases"] = [a for a in _SPLIT_ALIASES.split(aliases.strip()) if a]
            rows.append((line, row))
            if len(rows) > MAX_TERMS:
                raise TermDictionaryError(
                    f"more than {MAX_TERMS:,} terms; split the dictionary",
                    file=file,
                    line=line,
                    check="T004",
                )
    except csv.Error as exc:
        raise TermDictionaryError(
            str(exc), file=file, line=first + reader.line_num, check="T006"
        ) from None
    return metadata, rows


# The loader's checks (aau.spec.loader) as dictionary checks; any other is malformed YAML.
_YAML_CHECKS = {"S006": "T020", "S007": "T021", "S008": "T022", "S009": "T004"}


def _yaml_rows(text: str, file: str) -> tuple[dict[str, str], list[_Row]]:
    try:
        data, lines = read_yaml(text, source=file, max_bytes=MAX_DICTIONARY_BYTES)
    except SpecError as exc:
        check = _YAML_CHECKS.get(exc.check, "T006")
        raise TermDictionaryError(exc.message, file=file, line=exc.line, check=check) from None
    if not isinstance(data, dict) or not isinstance(data.get("terms"), list):
        raise TermDictionaryError(
            "a YAML dictionary is a mapping with a list under 'terms'",
            file=file,
            line=1,
            field="terms",
            check="T006",
        )
    metadata = {str(k).lower(): str(v) for k, v in data.items() if k != "terms" and v is not None}
    rows: list[_Row] = []
    for index, item in enumerate(data["terms"]):
        line = line_of(lines, ("terms", index)) or 0
        if not isinstance(item, dict):
            raise TermDictionaryError(
                "each entry of 'terms' is a mapping (term, canonical, category…)",
                file=file,
                line=line,
                field=f"terms[{index}]",
                check="T006",
            )
        unknown = [str(k) for k in item if k not in _COLUMNS]
        if unknown:
            raise TermDictionaryError(
                f"unknown key(s) {', '.join(unknown)}",
                file=file,
                line=line,
                field=f"terms[{index}]",
                check="T006",
            )
        for key in (*_REQUIRED, "lang"):
            if item.get(key) is not None and not isinstance(item[key], str | int | float):
                raise TermDictionaryError(
                    f"must be text, not a {type(item[key]).__name__}",
                    file=file,
                    line=line_of(lines, ("terms", index, key)) or line,
                    field=f"terms[{index}].{key}",
                    check="T006",
                )
        aliases = item.get("aliases") or []
        if isinstance(aliases, str):  # "a | b", as in a TSV cell
            aliases = [a for a in _SPLIT_ALIASES.split(aliases.strip()) if a]
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise TermDictionaryError(
                "aliases must be a list of texts (or one text with '|' between them)",
                file=file,
                line=line_of(lines, ("terms", index, "aliases")) or line,
                field=f"terms[{index}].aliases",
                check="T006",
            )
        row: dict[str, Any] = {
            k: "" if item.get(k) is None else str(item.get(k)) for k in _REQUIRED + ("lang",)
        }
        row["aliases"] = list(aliases)
        rows.append((line, row))
    if len(rows) > MAX_TERMS:
        raise TermDictionaryError(
            f"more than {MAX_TERMS:,} terms; split the dictionary", file=file, check="T004"
        )
    return metadata, rows


def _check_rows(rows: Sequence[_Row], file: str, default_lang: str) -> Iterable[Term]:
    seen: dict[str, tuple[int, str]] = {}  # folded surface -> (line, canonical)
    for line, row in rows:
        for column in _REQUIRED:
            if not str(row.get(column) or "").strip():
                raise TermDictionaryError(
                    "is empty", file=file, line=line, field=column, check="T007"
                )
        for column in ("canonical", "category"):  # they reach prompts and output as they are
            _check_characters(row[column], file=file, line=line, field=column)
        category = row["category"].strip()
        if not _CATEGORY.match(category):
            raise TermDictionaryError(
                f"{category!r} must be lower-case snake_case (a-z, 0-9, _; at most 40)",
                file=file,
                line=line,
                field="category",
                check="T007",
            )
        lang = (row.get("lang") or "").strip() or default_lang
        if lang != "und" and not _LANG.match(lang):
            raise TermDictionaryError(
                f"{lang!r} is not a BCP-47 language tag",
                file=file,
                line=line,
                field="lang",
                check="T015",
            )
        canonical = row["canonical"].strip()
        term = Term(
            term=row["term"],
            canonical=canonical,
            category=category,
            aliases=tuple(row["aliases"]),
            lang=lang,
            line=line,
        )
        for column, surface in [("term", term.term)] + [("aliases", a) for a in term.aliases]:
            check_surface(surface, file=file, line=line, field=column)
            key = fold_surface(surface)
            if key in seen:
                first_line, first_canonical = seen[key]
                if first_canonical == canonical:
                    raise TermDictionaryError(
                        f"{surface!r} is listed twice (first on line {first_line})",
                        file=file,
                        line=line,
                        field=column,
                        check="T011",
                    )
                raise TermDictionaryError(
                    f"{surface!r} means {canonical!r} here but {first_canonical!r} on line "
                    f"{first_line}",
                    file=file,
                    line=line,
                    field=column,
                    check="T012",
                )
            seen[key] = (line, canonical)
        yield term


def _check_characters(value: str, *, file: str, line: int | None, field: str) -> None:
    """Refuse control characters (T010) and lone surrogates, which UTF-8 cannot encode (T002)."""
    if _CONTROL.search(value):
        raise TermDictionaryError(f"{value!r} holds a tab, newline or control character",
                                  file=file, line=line, field=field, check="T010")  # fmt: skip
    surrogate = _SURROGATE.search(value)
    if surrogate:
        raise TermDictionaryError(
            f"{value!r} holds a lone surrogate (U+{ord(surrogate.group()):04X}), which is no "
            "character and cannot be written as UTF-8",
            file=file, line=line, field=field, check="T002",
        )  # fmt: skip


def check_surface(surface: str, *, file: str, line: int | None, field: str) -> None:
    """Refuse surface forms the matcher and the tokenizer cannot use as terms."""

    def fail(message: str, check: str) -> TermDictionaryError:
        return TermDictionaryError(
            f"{surface!r} {message}", file=file, line=line, field=field, check=check
        )

    if surface != surface.strip():
        raise fail("has leading or trailing whitespace", "T010")
    _check_characters(surface, file=file, line=line, field=field)
    if _SPECIAL_LIKE.search(surface):
        raise fail("looks like a special token ('<', '>' or [NAME]) and could collide with "
                   "the tokenizer's own", "T014")  # fmt: skip
    if len(surface) < 2 or not any(ch.isalnum() for ch in surface):
        raise fail("is too short to be a term (2 characters or more, with a letter or digit)",
                   "T008")  # fmt: skip
    words = surface.split()
    if len(surface) > MAX_TERM_CHARS or len(words) > MAX_TERM_WORDS:
        raise fail(f"is a sentence, not a term (at most {MAX_TERM_WORDS} words and "
                   f"{MAX_TERM_CHARS} characters)", "T009")  # fmt: skip
    if len(words) > 2 and _SENTENCE_END.search(surface) and not _ABBREVIATION.search(surface):
        raise fail("ends like a sentence", "T009")
