"""Safe, bounded YAML reading that remembers where every value came from.

Unit files and YAML term dictionaries (which may come from an attacker) are read by one loader,
a ``SafeLoader`` subclass that

* keeps ``on``/``off``/``yes``/``no`` as strings (YAML 1.1 would turn them into booleans, and
  python-statemachine uses ``on`` as a key);
* parses once: it composes the node graph, checking it as it goes, then constructs the data from
  that same graph;
* refuses, with a located ``SpecError``, what would let a document exhaust the process or
  silently lose content: a document over the size cap (S009), nesting deeper than
  ``LIMITS.yaml_depth`` (S007, counted through aliases too, and found while composing, before
  Python's recursion limit), aliases that would add more than ``LIMITS.yaml_nodes`` nodes
  once expanded, or that expand into themselves (S008: the "billion laughs" bomb, measured
  from each anchored node's size, computed once, without expanding anything), and a key given
  twice in one mapping (S006, at the line of the second);
* builds, while composing, a map from JSON paths (``("prompt", "template")``) to 1-based line
  numbers, so that pydantic errors can be reported as ``file:line: field``. Each node is
  recorded once, at its first occurrence: an alias's path maps to the alias's line, and paths
  through an alias are not listed (``line_of`` falls back to the alias).

``read_bounded`` reads a regular file with a size cap: never a directory, FIFO or device (a
FIFO is never opened blocking), never more than the cap + 1 bytes. ``nesting_depth`` and
``path_past_depth`` measure parsed data iteratively, for the checks that must come before
recursive validators (pydantic, jsonschema) see it: the unit's output schema, batch lines.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from yaml.events import AliasEvent, NodeEvent, ScalarEvent
from yaml.nodes import Node, ScalarNode, SequenceNode

from aau.errors import SpecError
from aau.limits import LIMITS, Limits

__all__ = [
    "FileRefused",
    "LineMap",
    "line_of",
    "nesting_depth",
    "path_past_depth",
    "read_bounded",
    "read_yaml",
    "read_yaml_file",
]

LineMap = dict[tuple[str | int, ...], int]
"""JSON path (keys and list indexes) -> 1-based line in the YAML text."""

_MERGE = "tag:yaml.org,2002:merge"


class _Open:
    """What the loader tracks of one collection while composing it."""

    __slots__ = ("height", "keys", "nodes", "path")

    def __init__(self, path: tuple[str | int, ...] | None) -> None:
        self.path = path  # None: not in the line map (under a complex key)
        self.nodes = 0  # nodes below it, aliases expanded
        self.height = 0  # greatest height of a child collection, aliases expanded
        self.keys: dict[tuple[str, str], int] = {}  # a mapping's (tag, key) so far -> line


class _UnitLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans whose composer checks the document against bounds.

    Booleans are only ``true``/``false``. While composing, it counts the nesting depth and each
    node's expanded size and height (memoised per anchored node, so an alias costs one lookup),
    refuses duplicate keys, and records the line map.
    """

    def __init__(self, text: str, *, source: str, max_depth: int, max_alias_nodes: int) -> None:
        super().__init__(text)
        self.source = source
        self.max_depth = max_depth
        self.max_alias_nodes = max_alias_nodes
        self.lines: LineMap = {}
        self.alias_nodes = 0  # nodes the aliases add once expanded
        self.last_line = 1  # the line of the last collection opened (for a RecursionError)
        self._open: list[_Open] = [_Open(None)]  # the document root's tally, then the open ones
        self._measured: dict[Node, tuple[int, int]] = {}  # anchored node -> (nodes, height)

    def _refuse(self, message: str, mark: Any, check: str) -> SpecError:
        return SpecError(message, file=self.source, line=_line(mark), check=check)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """Compose one node (PyYAML's composer), checking it and recording its line."""
        event = cast(NodeEvent, self.peek_event())  # the composer is only called at a node
        line = _line(event.start_mark)
        frame = self._open[-1]
        path: tuple[str | int, ...] | None
        if parent is None:
            path = ()
        elif frame.path is None:
            path = None
        elif isinstance(parent, SequenceNode):
            path = (*frame.path, index)
        elif isinstance(index, ScalarNode):  # a mapping's value: the line of its key
            line = _line(index.start_mark)
            path = (*frame.path, index.value)
            if index.tag != _MERGE:
                first = frame.keys.get((index.tag, index.value))
                if first is not None:
                    raise self._refuse(
                        f"duplicate key {_short(index.value)} (first on line {first}): YAML keeps "
                        "only the last; remove one",
                        index.start_mark,
                        "S006",
                    )
                frame.keys[(index.tag, index.value)] = line
        else:
            path = None  # a key, or the value of a complex key
        if path is not None:
            self.lines[path] = line
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)  # the anchored node (or undefined alias)
            anchor = _short(event.anchor, quote=False)
            measured = self._measured.get(node) if node is not None else None
            if measured is None:
                raise self._refuse(
                    f"alias *{anchor} refers to a node that contains it: it would expand forever",
                    event.start_mark,
                    "S008",
                )
            nodes, height = measured
            self.alias_nodes += nodes
            if self.alias_nodes > self.max_alias_nodes:
                raise self._refuse(
                    f"aliases expand to more than {self.max_alias_nodes:,} nodes (an alias "
                    f"bomb?); *{anchor} alone is {nodes:,}",
                    event.start_mark,
                    "S008",
                )
            if len(self._open) - 1 + height > self.max_depth:
                raise self._refuse(
                    f"nested deeper than {self.max_depth} levels (through *{anchor})",
                    event.start_mark,
                    "S007",
                )
        elif isinstance(event, ScalarEvent):
            node = super().compose_node(parent, index)
            nodes, height = 1, 0
        else:  # a sequence or a mapping
            if len(self._open) > self.max_depth:
                raise self._refuse(
                    f"nested deeper than {self.max_depth} levels of mappings and sequences",
                    event.start_mark,
                    "S007",
                )
            self.last_line = line
            self._open.append(_Open(path))
            node = super().compose_node(parent, index)
            done = self._open.pop()
            nodes, height = 1 + done.nodes, 1 + done.height
        frame.nodes += nodes
        frame.height = max(frame.height, height)
        if event.anchor is not None and node is not None and not isinstance(event, AliasEvent):
            self._measured[node] = (nodes, height)
        return node

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        """Construct one node; a scalar its type refuses (``2024-13-45``) is a YAML error."""
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError) as exc:
            raise self._unreadable(node, f": {exc}") from None
        except (KeyError, AttributeError, TypeError, IndexError):
            # PyYAML's scalar constructors fail on a value its explicit tag refuses with whatever
            # they happen to raise (``!!bool maybe``: KeyError; ``!!timestamp x``: AttributeError).
            raise self._unreadable(node, "") from None

    @staticmethod
    def _unreadable(node: Node, detail: str) -> yaml.constructor.ConstructorError:
        return yaml.constructor.ConstructorError(
            None, None, f"cannot read {_short(node.value)} as {_kind(node.tag)}{detail}",
            node.start_mark,
        )  # fmt: skip


def _line(mark: Any) -> int:
    return int(mark.line) + 1 if mark is not None else 1


def _kind(tag: str) -> str:
    return tag.removeprefix("tag:yaml.org,2002:")


def _short(value: Any, *, quote: bool = True) -> str:
    """``value`` for a message: quoted, and cut to 40 characters (keys and values may be huge)."""
    text = value if isinstance(value, str) else str(value)
    cut = text if len(text) <= 40 else text[:40] + "…"
    return repr(cut) if quote else cut


_UnitLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UnitLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _amount(size: int) -> str:
    return f"{size / 2**20:.1f} MB" if size >= 2**20 else f"{size:,} bytes"


def read_yaml(
    text: str, *, source: str = "<string>", max_bytes: int | None = None,
    limits: Limits | None = None,
) -> tuple[Any, LineMap]:  # fmt: skip
    """Parse YAML text safely and within bounds; return the data and a JSON-path -> line map.

    Args:
        text: the document.
        source: the file name for messages.
        max_bytes: the size cap of the document in UTF-8; default ``limits.unit_bytes``.
        limits: the bounds (``yaml_depth``, ``yaml_nodes``); default ``LIMITS``.

    Raises:
        SpecError: the text is not valid YAML (S001, with the parser's line), a key is given
            twice (S006), it nests too deep (S007), its aliases expand too far (S008), or it
            is over the size cap (S009).
    """
    limits = limits if limits is not None else LIMITS
    cap = limits.unit_bytes if max_bytes is None else max_bytes
    if len(text) > cap // 4:  # below that even 4-byte characters cannot reach the cap
        size = len(text) if len(text) > cap else len(text.encode("utf-8", "surrogatepass"))
        if size > cap:
            raise SpecError(
                f"{_amount(size)} is over the limit of {_amount(cap)} for one document",
                file=source,
                check="S009",
            )
    try:
        loader = _UnitLoader(  # the reader checks the characters here
            text, source=source, max_depth=limits.yaml_depth, max_alias_nodes=limits.yaml_nodes
        )
    except yaml.YAMLError as exc:
        raise SpecError(f"not valid YAML: {exc}", file=source, check="S001") from None
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError(
            f"not valid YAML: {exc.problem}", file=source, line=line, check="S001"
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"not valid YAML: {exc}", file=source, check="S001") from None
    except RecursionError:  # only with a yaml_depth raised past what Python's stack allows
        raise SpecError(
            "nested too deep to read (lower AAU_MAX_YAML_DEPTH)",
            file=source,
            line=loader.last_line,
            check="S007",
        ) from None
    finally:
        loader.dispose()
    return data, loader.lines


class FileRefused(Exception):
    """A file ``read_bounded`` does not read; ``reason`` says why, ``message`` in words.

    Reasons: ``missing``, ``directory``, ``special`` (a FIFO, device or socket), ``too_big``
    (``size`` is its size, or at least the cap + 1), ``unreadable`` (permissions, I/O).
    """

    def __init__(
        self,
        reason: Literal["missing", "directory", "special", "too_big", "unreadable"],
        message: str,
        *,
        size: int | None = None,
    ) -> None:
        super().__init__(message)
        self.reason, self.message, self.size = reason, message, size


def _not_regular(mode: int) -> FileRefused | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return FileRefused("directory", "is a directory")
    kind = (
        "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
        else "a character device" if stat.S_ISCHR(mode)
        else "a block device" if stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "not a regular file"
    )  # fmt: skip
    return FileRefused("special", f"is {kind}, not a regular file")


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_OPEN_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_bounded(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; never reads more than that + 1.

    The path is checked with ``os.stat`` first and the open file with ``os.fstat`` (it is
    opened non-blocking, so a FIFO swapped in between cannot block either); a file that grows
    while read, or reports no size (``/proc``), is cut at the cap and refused.

    Raises:
        FileRefused: missing, a directory, a FIFO/device/socket, over the cap, or unreadable.
    """
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileRefused("missing", "file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise FileRefused("unreadable", f"cannot read: {_reason(exc)}") from None
    refused = _not_regular(info.st_mode)
    if refused is not None:
        raise refused
    if info.st_size > max_bytes:
        raise FileRefused("too_big", _over(info.st_size, max_bytes), size=info.st_size)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise FileRefused("missing", "file not found") from None
    except OSError as exc:
        raise FileRefused("unreadable", f"cannot read: {_reason(exc)}") from None
    try:
        opened = os.fstat(fd)
        refused = _not_regular(opened.st_mode)
        if refused is not None:
            raise refused
        chunks: list[bytes] = []
        total, limit = 0, max_bytes + 1
        while total < limit:
            want = min(limit - total, max(opened.st_size - total + 1, 1 << 16))
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise FileRefused("unreadable", f"cannot read: {_reason(exc)}") from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise FileRefused("too_big", _over(total, max_bytes, grew=True), size=total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _over(size: int, cap: int, *, grew: bool = False) -> str:
    if grew:  # larger than its stat said: growing, or a /proc file
        return f"holds more than the limit of {_amount(cap)}"
    return f"{_amount(size)} is over the limit of {_amount(cap)}"


def read_yaml_file(
    path: Path, *, max_bytes: int | None = None, limits: Limits | None = None
) -> tuple[Any, LineMap, str]:
    """Read a YAML file within bounds; returns data, line map and the text.

    Args:
        path: the file (a regular file).
        max_bytes: its size cap; default ``limits.unit_bytes`` (``AAU_MAX_UNIT_BYTES``).
        limits: the bounds; default ``LIMITS``.

    Raises:
        SpecError: the file is missing, a directory, a FIFO or device, or unreadable (S002),
            over the size cap (S009), not UTF-8 (S003), or not YAML or out of bounds (see
            ``read_yaml``).
    """
    limits = limits if limits is not None else LIMITS
    cap = limits.unit_bytes if max_bytes is None else max_bytes
    try:
        raw = read_bounded(path, cap)
    except FileRefused as exc:
        if exc.reason == "too_big":
            raise SpecError(
                f"{exc.message} for one unit file (AAU_MAX_UNIT_BYTES)",
                file=str(path),
                check="S009",
            ) from None
        message = "is a directory, expected a unit YAML file" if exc.reason == "directory" else (
            exc.message
        )  # fmt: skip
        raise SpecError(message, file=str(path), check="S002") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            f"not UTF-8 text (byte {exc.start})", file=str(path), line=line, check="S003"
        ) from None
    data, lines = read_yaml(text, source=str(path), max_bytes=cap, limits=limits)
    return data, lines, text


def line_of(lines: LineMap, loc: tuple[str | int, ...]) -> int | None:
    """Best line for a pydantic error location: the deepest known prefix of ``loc``."""
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


# -- nesting of parsed data ---------------------------------------------------------------

_CONTAINERS = (dict, list, tuple)


def _items(container: Any) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def _measure(value: object, limit: int) -> tuple[int, tuple[Any, ...] | None]:
    """``value``'s nesting depth, or ``limit + 1`` and the path where it passes ``limit``.

    Iterative post-order walk; a container reached twice (shared) is measured once, and one
    that contains itself counts as too deep.
    """
    if not isinstance(value, _CONTAINERS):
        return 0, None
    if limit < 1:
        return limit + 1, ()
    heights: dict[int, int] = {}  # id -> height of the containers measured
    frames: list[tuple[Any, Iterator[tuple[Any, Any]], Any]] = [(value, _items(value), None)]
    best = [0]  # per frame: greatest height of its children so far
    on_path = {id(value)}
    while frames:
        container, items, _ = frames[-1]
        depth = len(frames)
        for key, child in items:
            if not isinstance(child, _CONTAINERS):
                continue
            known = heights.get(id(child))
            if known is not None:
                if depth + known > limit:
                    return limit + 1, (*(f[2] for f in frames[1:]), key)
                best[-1] = max(best[-1], known)
                continue
            if depth >= limit or id(child) in on_path:
                return limit + 1, (*(f[2] for f in frames[1:]), key)
            frames.append((child, _items(child), key))
            best.append(0)
            on_path.add(id(child))
            break
        else:
            frames.pop()
            on_path.discard(id(container))
            height = best.pop() + 1
            heights[id(container)] = height
            if not best:
                return height, None
            best[-1] = max(best[-1], height)
    raise AssertionError("unreachable")  # pragma: no cover


def nesting_depth(value: object, limit: int) -> int:
    """How deep dicts, lists and tuples nest in ``value``: 0 for a scalar, 1 for ``[1]``.

    Stops at ``limit + 1``: anything deeper than ``limit`` (or holding itself) returns that.
    Iterative, linear in the number of distinct containers, so safe on untrusted data.
    """
    return _measure(value, limit)[0]


def path_past_depth(value: object, limit: int) -> tuple[Any, ...] | None:
    """The keys and indexes leading to the first container nested deeper than ``limit``.

    ``None`` when ``value`` nests ``limit`` levels or fewer (see ``nesting_depth``).
    """
    return _measure(value, limit)[1]
