"""Safe YAML reading that remembers where every value came from.

Unit files are read with a ``SafeLoader`` subclass that keeps ``on``/``off``/``yes``/``no`` as
strings (YAML 1.1 would turn them into booleans, and python-statemachine uses ``on`` as a key),
and a parallel map from JSON paths (``("prompt", "template")``) to 1-based line numbers, so that
pydantic errors can be reported as ``file:line: field``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from aau.errors import SpecError

__all__ = ["LineMap", "read_yaml"]

LineMap = dict[tuple[str | int, ...], int]


class _UnitLoader(yaml.SafeLoader):
    """SafeLoader whose booleans are only ``true``/``false`` (YAML 1.2 style)."""


_UnitLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UnitLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _walk(node: yaml.Node, path: tuple[str | int, ...], lines: LineMap) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines)
            lines[(*path, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)


def read_yaml(text: str, *, source: str = "<string>") -> tuple[Any, LineMap]:
    """Parse YAML text safely; return the data and a JSON-path -> line map.

    Raises:
        SpecError: the text is not valid YAML (code S001), with the parser's line.
    """
    try:
        node = yaml.compose(text, Loader=_UnitLoader)
        data = yaml.load(text, Loader=_UnitLoader)  # noqa: S506  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError(
            f"not valid YAML: {exc.problem}", file=source, line=line, check="S001"
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"not valid YAML: {exc}", file=source, check="S001") from None
    lines: LineMap = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def read_yaml_file(path: Path) -> tuple[Any, LineMap, str]:
    """Read a YAML file; returns data, line map and the text.

    Raises:
        SpecError: the file is missing (S002), not UTF-8 (S003) or not YAML (S001).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError("file not found", file=str(path), check="S002") from None
    except IsADirectoryError:
        raise SpecError(
            "is a directory, expected a unit YAML file", file=str(path), check="S002"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            f"not UTF-8 text (byte {exc.start})", file=str(path), line=line, check="S003"
        ) from None
    data, lines = read_yaml(text, source=str(path))
    return data, lines, text


def line_of(lines: LineMap, loc: tuple[str | int, ...]) -> int | None:
    """Best line for a pydantic error location: the deepest known prefix of ``loc``."""
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None
