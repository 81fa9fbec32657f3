"""Derive a whole-value regex from a generated parser and lexer by walking their ATNs.

The ANTLR tool serializes each recognizer's augmented transition network (ATN) into the
generated code; the Python runtime deserializes it as ``Parser.atn`` / ``Lexer.atn``. The ATN
keeps the shape of the grammar's rules: every ``( ... | ... )`` is a block start state whose
alternatives all meet at its block end, ``x*`` and ``x+`` are loop entry and loop back states
around such a block, and a rule reference is a rule transition to the rule's start state. This
module walks that structure, rule by rule, into a :mod:`aau.grammars.regex` tree:

* a parser rule becomes a regex over token types, and each token type is replaced by the regex
  of the lexer rule(s) producing it (fragments inlined the same way);
* tokens the lexer skips or hides (``-> skip``, ``-> channel(HIDDEN)``) may appear before any
  token and at the end, so each token ``T`` becomes ``(skipped)*T``;
* recursion (a rule reached again while it is being converted), semantic predicates, lexer modes
  and ``more`` make the language possibly non-regular or context dependent: the result is then
  None with the reason.

The regex describes the token-level language: it admits every value the parser accepts, and
possibly a few that the lexer's longest match splits into other tokens (a keyword where the
parser wanted letters). The shipped grammars are written to have none: tests/grammars/
test_regex.py compares regex and parser on thousands of mutated values. Validation by the real
parser stays the guarantee.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from antlr4.atn.ATN import ATN
from antlr4.atn.ATNState import (
    ATNState,
    BasicBlockStartState,
    LoopEndState,
    PlusBlockStartState,
    PlusLoopbackState,
    RuleStopState,
    StarBlockStartState,
    StarLoopEntryState,
)
from antlr4.atn.LexerAction import LexerActionType
from antlr4.atn.Transition import (
    AbstractPredicateTransition,
    ActionTransition,
    AtomTransition,
    NotSetTransition,
    RangeTransition,
    RuleTransition,
    SetTransition,
    Transition,
    WildcardTransition,
)
from antlr4.Token import Token

from aau.grammars.regex import EMPTY, MAX_CODE_POINT, Node, alt, chars, render, repeat, seq

__all__ = ["NotRegular", "derive_regex"]

MAX_REGEX_CHARS = 16_384
"""Longer regexes are reported as unavailable: decoders compile them slowly, if at all."""


class NotRegular(Exception):
    """The ATN cannot be turned into a regex; the message says why."""


def derive_regex(parser_cls: Any, lexer_cls: Any, start_rule: str) -> tuple[str | None, str | None]:
    """Return ``(regex, None)`` for the start rule's language, or ``(None, reason)``.

    Args:
        parser_cls: the generated parser class (its ``atn``, ``ruleNames``).
        lexer_cls: the generated lexer class (its ``atn``, ``ruleNames``).
        start_rule: the parser rule a whole value must match.
    """
    try:
        tokens = _TokenRegexes(lexer_cls.atn, lexer_cls.ruleNames)
        walker = _Walker(parser_cls.atn, parser_cls.ruleNames, tokens.for_parser_label)
        node = walker.rule(parser_cls.ruleNames.index(start_rule))
    except NotRegular as exc:
        return None, str(exc)
    text = render(node)
    if len(text) > MAX_REGEX_CHARS:
        return None, f"the regex would be {len(text)} characters (limit {MAX_REGEX_CHARS})"
    return text, None


class _Walker:
    """Converts the rules of one ATN; ``terminal`` turns a transition label into a node."""

    def __init__(self, atn: ATN, rule_names: list[str], terminal: Callable[[int], Node]) -> None:
        self.atn, self.rule_names, self.terminal = atn, rule_names, terminal
        self.max_label = atn.maxTokenType if atn.grammarType == 1 else MAX_CODE_POINT
        self._done: dict[int, Node] = {}
        self._active: list[int] = []

    def rule(self, index: int) -> Node:
        """The regex of rule ``index``, with the rules it references inlined."""
        if index in self._done:
            return self._done[index]
        if index in self._active:
            cycle = " -> ".join(
                self.rule_names[i] for i in self._active[self._active.index(index) :]
            )
            raise NotRegular(
                f"rule '{self.rule_names[index]}' is recursive ({cycle} -> "
                f"{self.rule_names[index]})"
            )
        self._active.append(index)
        node = self._walk(self.atn.ruleToStartState[index], self.atn.ruleToStopState[index])
        self._active.pop()
        self._done[index] = node
        return node

    def _walk(self, state: ATNState, stop: ATNState) -> Node:
        """The sequence matched from ``state`` up to (not including) ``stop``."""
        items: list[Node] = []
        while state is not stop:
            if isinstance(state, RuleStopState):
                raise NotRegular(f"unexpected end of rule '{self.rule_names[state.ruleIndex]}'")
            if isinstance(state, StarLoopEntryState):
                if state.isPrecedenceDecision:
                    raise NotRegular(f"rule '{self.rule_names[state.ruleIndex]}' is left-recursive")
                items.append(repeat(self._block(_target(state, StarBlockStartState)), 0, None))
                state = _single(_target(state, LoopEndState))
            elif isinstance(state, PlusBlockStartState):
                items.append(repeat(self._block(state), 1, None))
                loop_back = _single(state.endState)
                if not isinstance(loop_back, PlusLoopbackState):
                    raise NotRegular("malformed (...)+ loop in the ATN")
                state = _single(_target(loop_back, LoopEndState))
            elif isinstance(state, BasicBlockStartState):
                items.append(self._block(state))
                state = _single(state.endState)
            else:
                if len(state.transitions) != 1:
                    raise NotRegular(
                        f"unstructured decision in rule '{self.rule_names[state.ruleIndex]}'"
                    )
                state, item = self._step(state.transitions[0])
                if item is not None:
                    items.append(item)
        return seq(items)

    def _block(self, start: ATNState) -> Node:
        end = start.endState  # every block start state has one
        return alt([self._walk(t.target, end) for t in start.transitions])

    def _step(self, transition: Transition) -> tuple[ATNState, Node | None]:
        if isinstance(transition, RuleTransition):
            return transition.followState, self.rule(transition.ruleIndex)
        if isinstance(transition, AbstractPredicateTransition):
            raise NotRegular("the grammar uses semantic predicates")
        if isinstance(transition, ActionTransition):
            return transition.target, None  # actions do not change the matched language
        if isinstance(transition, AtomTransition):
            return transition.target, self.terminal(transition.label_)
        if isinstance(transition, RangeTransition):
            return transition.target, self._labels([(transition.start, transition.stop)])
        if isinstance(transition, NotSetTransition):
            ranges = [(r.start, r.stop - 1) for r in transition.label.intervals]
            return transition.target, self._labels(_invert(ranges, self.max_label))
        if isinstance(transition, SetTransition):
            ranges = [(r.start, r.stop - 1) for r in transition.label.intervals]
            return transition.target, self._labels(ranges)
        if isinstance(transition, WildcardTransition):
            return transition.target, self._labels(
                [(0 if self.max_label == MAX_CODE_POINT else 1, self.max_label)]
            )
        return transition.target, None  # epsilon

    def _labels(self, ranges: list[tuple[int, int]]) -> Node:
        if self.max_label == MAX_CODE_POINT:  # lexer: labels are characters
            return chars(ranges)
        return alt([self.terminal(label) for low, high in ranges for label in range(low, high + 1)])


def _invert(ranges: list[tuple[int, int]], top: int) -> list[tuple[int, int]]:
    out, start = [], 0
    for low, high in sorted(ranges):
        if low > start:
            out.append((start, low - 1))
        start = max(start, high + 1)
    if start <= top:
        out.append((start, top))
    return out


def _single(state: ATNState) -> ATNState:
    if len(state.transitions) != 1:
        raise NotRegular("malformed block end in the ATN")
    return state.transitions[0].target


def _target(state: ATNState, kind: type) -> ATNState:
    """The target of ``state``'s transition to a state of ``kind`` (loop decisions have one)."""
    for transition in state.transitions:
        if isinstance(transition.target, kind):
            return transition.target
    raise NotRegular("malformed loop in the ATN")


class _TokenRegexes:
    """The regex of each token type, from the lexer rules that produce it."""

    def __init__(self, atn: ATN, rule_names: list[str]) -> None:
        if len(atn.modeToStartState) > 1:
            raise NotRegular("the lexer has more than one mode")
        self.walker = _Walker(atn, rule_names, lambda code: chars([(code, code)]))
        token_rules = {t.target.ruleIndex for t in atn.modeToStartState[0].transitions}
        emitted: dict[int, int | None] = {r: atn.ruleToTokenType[r] for r in token_rules}
        for state in atn.states:
            for transition in state.transitions:
                if (
                    not isinstance(transition, ActionTransition)
                    or transition.ruleIndex not in emitted
                ):
                    continue
                action = atn.lexerActions[transition.actionIndex]
                kind = action.actionType
                if kind in (LexerActionType.SKIP, LexerActionType.CHANNEL):
                    emitted[transition.ruleIndex] = None  # the parser never sees it
                elif kind == LexerActionType.TYPE:
                    emitted[transition.ruleIndex] = action.type
                elif kind != LexerActionType.CUSTOM:
                    raise NotRegular(
                        f"lexer rule '{rule_names[transition.ruleIndex]}' changes "
                        f"modes or uses 'more'"
                    )
        self.rules_of: dict[int, list[int]] = {}
        for rule, token_type in emitted.items():
            self.rules_of.setdefault(-1 if token_type is None else token_type, []).append(rule)
        hidden = [self.walker.rule(r) for r in sorted(self.rules_of.get(-1, []))]
        self.skipped = repeat(alt(hidden), 0, None) if hidden else EMPTY
        self._cache: dict[int, Node] = {}

    def for_parser_label(self, token_type: int) -> Node:
        """The regex of one parser-side token, with skipped text allowed before it."""
        if token_type == Token.EOF:
            return self.skipped  # trailing whitespace and comments, when the lexer skips any
        if token_type not in self._cache:
            rules = self.rules_of.get(token_type)
            if not rules:
                raise NotRegular(f"token type {token_type} has no lexer rule")
            self._cache[token_type] = seq(
                [self.skipped, alt([self.walker.rule(r) for r in sorted(rules)])]
            )
        return self._cache[token_type]
