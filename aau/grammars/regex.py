"""A tiny regular-expression tree: built from a grammar's ATN, simplified, rendered as text.

The rendered text uses only the subset that JSON-Schema ``pattern`` consumers such as outlines and
xgrammar accept, and that Python's ``re`` reads the same way: literals, character classes,
capturing groups, alternation and the quantifiers ``? * + {m} {m,n} {m,}``. No anchors, no
lookaround, no backreferences, no non-capturing ``(?:`` groups (not every constrained-decoding
regex front end reads them; a capturing group matches the same strings).

The smart constructors :func:`seq`, :func:`alt` and :func:`repeat` keep the tree small while it
is built: they merge runs of the same item into one counted repetition (``[0-9][0-9]?`` becomes
``[0-9]{1,2}``), fold single-character alternatives into one class, and left-factor alternatives
that share a first item (``JAN|JUN|JUL`` becomes ``J(AN|U[NL])``). Every rewrite keeps the
language exactly the same.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EMPTY", "Chars", "Node", "Repeat", "alt", "chars", "render", "repeat", "seq"]

MAX_CODE_POINT = 0x10FFFF


@dataclass(frozen=True, slots=True)
class Chars:
    """One character out of a set, kept as sorted, disjoint, inclusive code-point ranges."""

    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Seq:
    """The items one after the other; ``Seq(())`` is the empty string."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    """Any one of at least two options, none of them the empty string."""

    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    """``node`` repeated ``low`` to ``high`` times; ``high`` None means unbounded."""

    node: Node
    low: int
    high: int | None


Node = Chars | Seq | Alt | Repeat
EMPTY = Seq(())


def chars(ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> Chars:
    """Return a class of the given inclusive ranges, sorted and merged."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return Chars(tuple(merged))


def seq(items: list[Node] | tuple[Node, ...]) -> Node:
    """Concatenate items, flattening nested sequences and counting runs of the same item."""
    runs: list[tuple[Node, int, int | None]] = []
    for item in _flatten_seq(items):
        base, low, high = (
            (item.node, item.low, item.high) if isinstance(item, Repeat) else (item, 1, 1)
        )
        if runs and runs[-1][0] == base and not _is_letter_pair(runs[-1], low, high):
            # x{a,b} x{c,d} is exactly x{a+c,b+d}: both sides are runs of the same x.
            _, prev_low, prev_high = runs.pop()
            high = None if prev_high is None or high is None else prev_high + high
            low += prev_low
        runs.append((base, low, high))
    out = [repeat(base, low, high) for base, low, high in runs]
    return out[0] if len(out) == 1 else Seq(tuple(out))


def _is_letter_pair(run: tuple[Node, int, int | None], low: int, high: int | None) -> bool:
    """Keep literal text such as ``BBD`` readable (and left-factorable) rather than ``B{2}D``."""
    base = run[0]
    return (
        isinstance(base, Chars)
        and len(base.ranges) == 1
        and base.ranges[0][0] == base.ranges[0][1]
        and run[1:] == (1, 1)
        and (low, high) == (1, 1)
    )


def _flatten_seq(items: list[Node] | tuple[Node, ...]) -> list[Node]:
    flat: list[Node] = []
    for item in items:
        flat.extend(item.items if isinstance(item, Seq) else (item,))
    return flat


def repeat(node: Node, low: int, high: int | None) -> Node:
    """Return ``node{low,high}``, folding trivial and nested counts."""
    if node == EMPTY or high == 0:
        return EMPTY
    if low == 1 and high == 1:
        return node
    if isinstance(node, Repeat):
        if node.low == 0 and node.high is None and low <= 1:
            return node  # (x*)? and (x*)* are x*
        if node.low in (0, 1) and node.high is None:
            return Repeat(node.node, node.low * low, None)  # (x+)+ is x+, (x+)* is x*
        if node.low == node.high and high is not None and low == high:
            return Repeat(node.node, node.low * low, node.high * high)  # (x{2}){3} is x{6}
    return Repeat(node, low, high)


def alt(options: list[Node] | tuple[Node, ...]) -> Node:
    """Return a regex matching any option; an empty option makes the rest optional."""
    flat: list[Node] = []
    for option in options:
        for item in option.options if isinstance(option, Alt) else (option,):
            if item not in flat:
                flat.append(item)
    has_empty = EMPTY in flat
    rest = _factor([item for item in flat if item != EMPTY])
    if not rest:
        return EMPTY
    body = rest[0] if len(rest) == 1 else Alt(tuple(rest))
    return repeat(body, 0, 1) if has_empty else body


def _factor(options: list[Node]) -> list[Node]:
    """Fold single-character options into one class, then left-factor shared first items."""
    singles = [option for option in options if isinstance(option, Chars)]
    if len(singles) > 1:
        merged = chars([r for single in singles for r in single.ranges])
        first = options.index(singles[0])
        options = [o for o in options if not isinstance(o, Chars)]
        options.insert(first, merged)
    groups: dict[Node, list[Node]] = {}
    for option in options:
        head, tail = _split_head(option)
        groups.setdefault(head, []).append(tail)
    if len(groups) == len(options):
        return options
    return [
        seq([head, alt(tails)]) if len(tails) > 1 else seq([head, tails[0]])
        for head, tails in groups.items()
    ]


def _split_head(node: Node) -> tuple[Node, Node]:
    if isinstance(node, Seq):
        return node.items[0], seq(node.items[1:])
    return node, EMPTY


# -- rendering ---------------------------------------------------------------------------------

_SPECIAL = set(".^$*+?()[]{}|\\")
_CLASS_SPECIAL = set("[]\\^-")
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _char(code: int, special: set[str]) -> str:
    if code in _NAMED:
        return _NAMED[code]
    text = chr(code)
    if text in special:
        return "\\" + text
    if text == " " or (text.isprintable() and code <= 0xFFFF):
        return text
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return text  # astral characters stay literal: \U is Python-only, \u{...} is ECMA-only


def _class(node: Chars) -> str:
    ranges = node.ranges
    if ranges == ((0, MAX_CODE_POINT),):
        return "[\\s\\S]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0], _SPECIAL)
    negate = sum(high - low + 1 for low, high in ranges) > MAX_CODE_POINT // 2
    if negate:
        ranges = _complement(ranges)
    parts = []
    for low, high in ranges:
        if low == high:
            parts.append(_char(low, _CLASS_SPECIAL))
        elif high == low + 1:
            parts.append(_char(low, _CLASS_SPECIAL) + _char(high, _CLASS_SPECIAL))
        else:
            parts.append(f"{_char(low, _CLASS_SPECIAL)}-{_char(high, _CLASS_SPECIAL)}")
    return ("[^" if negate else "[") + "".join(parts) + "]"


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out, start = [], 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


def render(node: Node) -> str:
    """Return the regex text of ``node`` (matching whole values; no anchors are added)."""
    if isinstance(node, Chars):
        return _class(node)
    if isinstance(node, Alt):
        return "|".join(render(option) for option in node.options)
    if isinstance(node, Seq):
        return "".join(f"({render(i)})" if isinstance(i, Alt) else render(i) for i in node.items)
    body = render(node.node)
    if not isinstance(node.node, Chars):  # a class, escape or literal is one atom already
        body = f"({body})"
    low, high = node.low, node.high
    if (low, high) == (0, 1):
        quantifier = "?"
    elif (low, high) == (0, None):
        quantifier = "*"
    elif (low, high) == (1, None):
        quantifier = "+"
    elif high is None:
        quantifier = f"{{{low},}}"
    elif low == high:
        quantifier = f"{{{low}}}"
    else:
        quantifier = f"{{{low},{high}}}"
    return body + quantifier
