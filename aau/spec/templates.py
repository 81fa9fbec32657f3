"""Prompt templates of unit files, in a sandbox: no code, bounded loops, bounded output.

A unit file may come from an attacker, and a plain ``jinja2.Environment`` runs
``{{ lipsum.__globals__.os.system(...) }}``. Unit templates are therefore compiled and rendered
by one ``ImmutableSandboxedEnvironment`` (``template_environment()``), with ``StrictUndefined``
and these limits:

- **Names.** Variables ``text``, ``unit``, ``terms``; the one global is a bounded ``range``
  (``lipsum``, ``cycler``, ``joiner``, ``namespace`` and ``dict`` are gone). Names starting with
  ``_`` cannot be read as attributes or items. Filters are a list of harmless ones (those whose
  argument can multiply their output are bounded); tests are Jinja's.
- **Calls.** Only ``range``, ``loop.cycle``/``loop.changed`` and the reading methods of strings,
  lists and dicts (``text.split()``, ``unit.output.items()``); ``str.format`` is not one.
- **Statements.** ``if``, ``for``, ``set`` and ``with``; macros, call and filter blocks, block
  ``set``, recursive loops, ``include``/``import``/``extends`` are refused (they buffer output
  out of the output bound's sight).
- **Work.** ``range`` refuses more than ``LIMITS.template_loop_items`` items, and so does the
  whole render, counting every loop step of every (nested) loop; list, tuple and dict literals
  hold at most as many items in all. ``*``, ``**``, ``+``, ``%`` and ``~`` are checked before
  they build a value, and so is what ``{{ }}`` prints.
- **Output.** ``render_template`` renders incrementally and stops as soon as the output passes
  ``LIMITS.template_output_chars`` plus the input's length (the input may be longer than that
  limit, and the prompt shows it); no value in the render may pass it either.

A broken limit raises ``jinja2.exceptions.SecurityError`` with a message naming it.
``template_problems`` is the load check (``aau validate``): the same refusals, found in the
parsed template and located on its lines, so a unit breaks at load rather than at run time;
``render_problem`` renders a template as a run would (the unit checks its few-shot inputs).
"""

from __future__ import annotations

import contextvars
import re
import types
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache, wraps
from typing import Any

import jinja2
import jinja2.filters
import jinja2.meta
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from aau.limits import LIMITS

__all__ = [
    "TEMPLATE_FUNCTIONS",
    "UnitTemplateEnvironment",
    "compiled_template",
    "render_problem",
    "render_template",
    "template_environment",
    "template_problems",
]

TEMPLATE_FUNCTIONS = frozenset({"range"})
"""The globals a unit template may use besides its variables."""

_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({
        "capitalize", "casefold", "count", "endswith", "find", "index", "isalnum", "isalpha",
        "isascii", "isdecimal", "isdigit", "islower", "isnumeric", "isspace", "istitle",
        "isupper", "lower", "lstrip", "partition", "removeprefix", "removesuffix", "rfind",
        "rindex", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith", "strip",
        "swapcase", "title", "upper",
    }),
    dict: frozenset({"get", "items", "keys", "values"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}  # fmt: skip
_LOOP_METHODS = frozenset({"cycle", "changed"})
_CALLABLE_NAMES = frozenset().union(*_METHODS.values(), _LOOP_METHODS)
_REFUSED_STATEMENTS: dict[type[nodes.Node], str] = {
    nodes.Macro: "macro", nodes.CallBlock: "call", nodes.FilterBlock: "filter",
    nodes.AssignBlock: "set … endset", nodes.Block: "block", nodes.Extends: "extends",
    nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from … import",
}  # fmt: skip
_ATTRIBUTE_FILTERS = frozenset({"selectattr", "rejectattr", "groupby"})
"""Filters whose first argument is an attribute name (others take ``attribute=``)."""


# -- the budget of one render -------------------------------------------------------------


class _Budget:
    """Loop steps left in one render (every loop draws on it) and its output limit."""

    def __init__(self, room: int = 0) -> None:
        self.steps = LIMITS.template_loop_items
        self.chars = LIMITS.template_output_chars + room
        """The most characters the render, or any value in it, may have."""

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise SecurityError(
                f"the template's loops ran more than {LIMITS.template_loop_items} steps in all "
                "(AAU_MAX_TEMPLATE_LOOP_ITEMS)"
            )


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "aau_template_budget", default=None
)


def _budget() -> _Budget:
    return _BUDGET.get() or _Budget()  # outside render_template: each loop on its own budget


def _chars() -> int:
    return _budget().chars


def _too_long(what: str, size: int) -> SecurityError:
    return SecurityError(
        f"{what} would be {size} characters, over the template output limit of {_chars()} "
        "(AAU_MAX_TEMPLATE_OUTPUT_CHARS, plus the input's length)"
    )


def _too_many(what: str, size: int) -> SecurityError:
    return SecurityError(
        f"{what} would hold {size} items, over the template limit of "
        f"{LIMITS.template_loop_items} (AAU_MAX_TEMPLATE_LOOP_ITEMS)"
    )


def _items_in(value: Any, limit: int) -> int:
    """Items in ``value`` counting nested containers, stopping once past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
    return count


def _chars_in(value: Any, limit: int) -> int:
    """A bound on the characters ``str(value)`` makes, stopping once past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        if isinstance(item, str):
            count += len(item) + 2
        elif isinstance(item, dict):
            count += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            count += 2 + 2 * len(item)
            stack.extend(item)
        else:
            count += 24
    return count


def _text(value: Any, limit: int | None = None) -> str:
    """``str(value)``, refused before it is built when it would pass ``limit`` characters."""
    limit = _chars() if limit is None else limit
    if isinstance(value, str):
        text = value
    else:
        if isinstance(value, dict | list | tuple | set | frozenset):
            estimate = _chars_in(value, 10 * limit)
            if estimate > 10 * limit:
                raise _too_long("a printed value", estimate)
        text = str(value)
    if len(text) > limit:
        raise _too_long("a printed value", len(text))
    return text


# -- functions the rewritten templates call -----------------------------------------------


def _range(*args: int) -> range:
    """``range`` that refuses more than ``LIMITS.template_loop_items`` items."""
    shown = ", ".join(map(str, args))
    try:
        items = range(*args)
        size = len(items)
    except OverflowError:
        raise _too_many(f"range({shown})", 10**18) from None
    if size > LIMITS.template_loop_items:
        raise _too_many(f"range({shown})", size)
    return items


def _iterate(iterable: Iterable[Any]) -> Iterator[Any]:
    """A loop's items, each one step of the render's budget."""
    budget = _budget()
    for item in iterable:
        budget.step()
        yield item


def _concat(*parts: Any) -> str:
    """``a ~ b ~ …``, refused before the result would pass the output limit."""
    limit = _chars()
    out: list[str] = []
    total = 0
    for part in parts:
        text = _text(part, limit - total)
        total += len(text)
        out.append(text)
    return "".join(out)


def _literal(container: Any) -> Any:
    size = _items_in(container, LIMITS.template_loop_items)
    if size > LIMITS.template_loop_items:
        raise _too_many("a list, tuple or dict literal", size)
    return container


def _list(*items: Any) -> list[Any]:
    return _literal(list(items))


def _tuple(*items: Any) -> tuple[Any, ...]:
    return _literal(tuple(items))


def _dict(*pairs: Any) -> dict[Any, Any]:
    return _literal(dict(zip(pairs[::2], pairs[1::2], strict=True)))


_INTERNAL: dict[str, Callable[..., Any]] = {
    "aau_iterate": _iterate, "aau_concat": _concat, "aau_list": _list, "aau_tuple": _tuple,
    "aau_dict": _dict,
}  # fmt: skip
_INTERNAL_IDS = frozenset(id(f) for f in (*_INTERNAL.values(), _range))


class _Bound(NodeTransformer):
    """Routes loops, ``~`` and literals of a parsed template through the bounded functions."""

    def _call(self, name: str, args: list[nodes.Expr], like: nodes.Node) -> nodes.Call:
        call = nodes.Call(nodes.EnvironmentAttribute(name), args, [], None, None)
        return call.set_lineno(like.lineno)  # type: ignore[return-value]

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = self._call("aau_iterate", [node.iter], node)  # type: ignore[list-item]
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._call("aau_concat", list(node.nodes), node)

    def visit_List(self, node: nodes.List) -> nodes.Node:
        self.generic_visit(node)
        return self._call("aau_list", list(node.items), node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        self.generic_visit(node)
        if node.ctx != "load":
            return node
        return self._call("aau_tuple", list(node.items), node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        flat: list[nodes.Expr] = []
        for pair in node.items:
            flat += [pair.key, pair.value]
        return self._call("aau_dict", flat, node)


# -- filters: the harmless ones, and bounds on those an argument can multiply --------------


def _bounded(name: str, check: Callable[..., None]) -> Callable[..., Any]:
    """Jinja's filter ``name``, with ``check`` run on its arguments first."""
    original = jinja2.filters.FILTERS[name]

    @wraps(original)
    def filter_(*args: Any, **kwargs: Any) -> Any:
        check(*args, **kwargs)
        return original(*args, **kwargs)

    return filter_


def _check_replace(
    eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None
) -> None:  # fmt: skip
    s, old, new = _text(s), str(old), str(new)
    times = s.count(old) if old else len(s) + 1
    if count is not None:
        times = min(times, max(count, 0))
    size = len(s) + times * (len(new) - len(old))
    if size > _chars():
        raise _too_long("replace()", size)


def _check_center(value: Any, width: int = 80) -> None:
    if width > _chars():
        raise _too_long("center()", width)


def _check_indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> None:
    text = _text(s)
    step = len(width) if isinstance(width, str) else width
    size = len(text) + step * (text.count("\n") + 1)
    if size > _chars():
        raise _too_long("indent()", size)


def _check_wordwrap(
    environment: Any, s: Any, width: int = 79, break_long_words: bool = True,
    wrapstring: str | None = None, break_on_hyphens: bool = True,
) -> None:  # fmt: skip
    text = _text(s)
    size = len(text) * (1 + len(wrapstring or "\n"))
    if size > 2 * _chars() + len(text):
        raise _too_long("wordwrap()", size)


def _check_count(what: str) -> Callable[..., None]:
    def check(*args: Any, **kwargs: Any) -> None:
        value = args[2] if what == "slice" else args[1]  # slice passes its eval context first
        if isinstance(value, int) and value > LIMITS.template_loop_items:
            raise _too_many(f"{what}()", value)

    return check


def _check_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> None:
    if not isinstance(start, int | float):
        raise SecurityError("sum() adds numbers only (start must be a number)")


def _check_tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> None:
    size = _chars_in(value, _chars())
    if size > _chars() or (indent or 0) > 16:
        raise _too_long("tojson()", size)


@jinja2.pass_environment
def _join(environment: Any, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    """Jinja's ``join``, refused before the result would pass the output limit."""
    if attribute is not None:
        value = map(jinja2.filters.make_attrgetter(environment, attribute), value)
    limit = _chars()
    separator = _text(d)
    out: list[str] = []
    total = 0
    for item in value:
        text = _text(item, limit - total)
        total += len(text) + (len(separator) if out else 0)
        if total > limit:
            raise _too_long("join()", total)
        out.append(text)
    return separator.join(out)


def _string(value: Any) -> str:
    """Jinja's ``string``, bounded like printing."""
    return _text(value)


_PLAIN_FILTERS = (
    "abs", "capitalize", "count", "d", "default", "dictsort", "first", "float", "groupby", "int",
    "items", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr",
    "reverse", "round", "select", "selectattr", "sort", "title", "trim", "truncate", "unique",
    "upper", "wordcount",
)  # fmt: skip


def _filters() -> dict[str, Callable[..., Any]]:
    out: dict[str, Callable[..., Any]] = {n: jinja2.filters.FILTERS[n] for n in _PLAIN_FILTERS}
    out |= {
        "replace": _bounded("replace", _check_replace),
        "center": _bounded("center", _check_center),
        "indent": _bounded("indent", _check_indent),
        "wordwrap": _bounded("wordwrap", _check_wordwrap),
        "batch": _bounded("batch", _check_count("batch")),
        "slice": _bounded("slice", _check_count("slice")),
        "sum": _bounded("sum", _check_sum),
        "tojson": _bounded("tojson", _check_tojson),
        "join": _join,
        "string": _string,
    }
    return out


# -- the environment ------------------------------------------------------------------------

_PRINTF = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


class UnitTemplateEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox unit templates compile and render in (see the module notes)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(
            undefined=jinja2.StrictUndefined, autoescape=False, finalize=_text, cache_size=0
        )
        self.globals.clear()
        self.globals["range"] = _range
        self.filters = _filters()
        for name, function in _INTERNAL.items():
            setattr(self, name, function)

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None,
        defer_init: bool = False,
    ) -> str:  # fmt: skip
        for lineno, message in _statement_problems(source):
            raise SecurityError(f"{message} (template line {lineno})")
        bounded = _Bound().visit(source)
        bounded.set_environment(self)
        return super()._generate(bounded, name, filename, defer_init)

    def is_safe_callable(self, obj: Any) -> bool:
        """Only ``range``, the loop's helpers and the reading methods of str, list and dict."""
        if id(obj) in _INTERNAL_IDS:
            return True
        if isinstance(obj, types.BuiltinMethodType):
            allowed = _METHODS.get(type(obj.__self__))
            return allowed is not None and obj.__name__ in allowed
        if isinstance(obj, types.MethodType) and isinstance(obj.__self__, LoopContext):
            return obj.__name__ in _LOOP_METHODS
        return False

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call ``obj`` if it is one of the few callables a unit template may call."""
        if not self.is_safe_callable(obj):
            name = getattr(obj, "__qualname__", None) or type(obj).__name__
            raise SecurityError(
                f"{name}() cannot be called in a unit template (only range(), loop.cycle, "
                "loop.changed and the reading methods of strings, lists and dicts)"
            )
        return context.call(obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> None:
        """No ``str.format``: its fields can reach attributes and pad without bound."""
        return None

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """``*``, ``**``, ``+`` and ``%``, refused before they would build an oversized value."""
        chars, items = _chars(), LIMITS.template_loop_items
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            if abs(left) > 1 and right > 0 and right * left.bit_length() > 1 << 16:
                raise SecurityError(f"{left} ** {right} is too large a number for a template")
        elif operator == "*":
            sequence, times = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(sequence, int) and isinstance(times, int):
                if sequence.bit_length() + times.bit_length() > 1 << 16:
                    raise SecurityError("the product is too large a number for a template")
            elif isinstance(sequence, str) and isinstance(times, int):
                if len(sequence) * times > chars:
                    raise _too_long("a repeated string", len(sequence) * times)
            elif isinstance(sequence, list | tuple) and isinstance(times, int):
                if len(sequence) * times > items:
                    raise _too_many("a repeated list", len(sequence) * times)
        elif operator == "+":
            if isinstance(left, str) and isinstance(right, str):
                if len(left) + len(right) > chars:
                    raise _too_long("a sum of strings", len(left) + len(right))
            elif isinstance(left, list | tuple) and isinstance(right, list | tuple):
                size = _items_in(left, items) + _items_in(right, items)
                if size > items:
                    raise _too_many("a sum of lists", size)
        elif operator == "%" and isinstance(left, str):
            for match in _PRINTF.finditer(left):
                for width in match.groups():
                    if width == "*" or (width is not None and int(width) > chars):
                        raise SecurityError("a %-format width or precision is too large")
            args = right if isinstance(right, tuple) else (right,)
            if not all(_is_scalar(arg) for arg in args):
                raise SecurityError("%-formatting takes numbers and strings only")
            if len(left) + sum(len(_text(arg)) for arg in args) > chars:
                raise _too_long("a %-formatted string", len(left))
        return self.binop_table[operator](left, right)


@lru_cache(maxsize=1)
def template_environment() -> UnitTemplateEnvironment:
    """The one sandbox every unit template compiles in."""
    return UnitTemplateEnvironment()


@lru_cache(maxsize=512)
def compiled_template(source: str) -> jinja2.Template:
    """``source`` compiled in the sandbox, once.

    Raises:
        jinja2.TemplateError: it does not compile (or uses a refused statement).
    """
    return template_environment().from_string(source)


def render_template(template: jinja2.Template, **variables: Any) -> str:
    """Render incrementally within the output and loop limits.

    The output limit is ``LIMITS.template_output_chars`` plus the length of ``text``: the
    input itself may be as long as ``LIMITS.text_chars``, and a prompt shows it.

    Raises:
        SecurityError: a limit or a sandbox rule was broken (the message says which).
        jinja2.TemplateError: any other template error (an undefined name…).
    """
    text = variables.get("text")
    budget = _Budget(room=len(text) if isinstance(text, str) else 0)
    token = _BUDGET.set(budget)
    try:
        limit = budget.chars
        parts: list[str] = []
        total = 0
        for part in template.generate(**variables):
            total += len(part)
            if total > limit:
                raise _too_long("the rendered template", total)
            parts.append(part)
        return "".join(parts)
    finally:
        _BUDGET.reset(token)


def render_problem(source: str, *, strict: bool, **variables: Any) -> str | None:
    """Why rendering ``source`` with ``variables`` fails, or None.

    With ``strict`` any error counts; without it only a broken limit or sandbox rule (which no
    other input would avoid), not an error this one input causes.
    """
    try:
        render_template(compiled_template(source), **variables)
    except SecurityError as exc:
        return str(exc)
    except Exception as exc:  # an undefined name, a type error: the template's own bug
        return f"{type(exc).__name__}: {exc}" if strict else None
    return None


# -- the load check ------------------------------------------------------------------------


def _statement_problems(template: nodes.Template) -> Iterator[tuple[int, str]]:
    for node in template.find_all(nodes.Stmt):
        tag = _REFUSED_STATEMENTS.get(type(node))
        if tag is None and isinstance(node, nodes.For) and node.recursive:
            tag = "for … recursive"
        if tag is not None:
            yield (
                node.lineno,
                (
                    f"{{% {tag} %}} is not allowed in a unit template "
                    "(statements: if, for, set, with)"
                ),
            )


def _private(name: Any) -> bool:
    return isinstance(name, str) and any(part.startswith("_") for part in name.split("."))


def _private_access(template: nodes.Template) -> Iterator[tuple[int, str]]:
    refusal = "names starting with '_' are private and cannot be read in a unit template"
    for node in template.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Test)):
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            yield node.lineno, f"attribute {node.attr!r}: {refusal}"
        elif isinstance(node, nodes.Getitem):
            if isinstance(node.arg, nodes.Const) and _private(node.arg.value):
                yield node.lineno, f"item {node.arg.value!r}: {refusal}"
        elif isinstance(node, nodes.Filter | nodes.Test):
            names = [kw.value for kw in node.kwargs if kw.key == "attribute"]
            if node.name in _ATTRIBUTE_FILTERS or node.name == "attr":
                names += node.args[:1]
            for arg in names:
                if isinstance(arg, nodes.Const) and _private(arg.value):
                    yield node.lineno, f"attribute {arg.value!r} (in |{node.name}): {refusal}"


def _loop_sizes(node: nodes.Node, outer: int) -> Iterator[tuple[int, int]]:
    """(line, items) of every constant ``range`` loop, nested loops multiplied."""
    for child in node.iter_child_nodes():
        size = outer
        if isinstance(child, nodes.For):
            size = outer * _constant_range(child.iter)
            if size > LIMITS.template_loop_items:
                yield child.lineno, size
                continue
        yield from _loop_sizes(child, size)


def _constant_range(node: nodes.Node) -> int:
    if not (isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name)):
        return 1
    if node.node.name != "range" or node.kwargs or node.dyn_args or node.dyn_kwargs:
        return 1
    bounds = [a.value for a in node.args if isinstance(a, nodes.Const)]
    if len(bounds) != len(node.args) or not all(isinstance(b, int) for b in bounds):
        return 1
    try:
        return len(range(*bounds))
    except (TypeError, ValueError, OverflowError):
        return 1


def template_problems(
    source: str, variables: frozenset[str]
) -> Iterator[tuple[str, str]]:  # fmt: skip
    """Why ``source`` is refused as a unit template: ``(message, check)`` pairs.

    Each message names the line inside the template. In this order: S020 syntax error, S026
    a statement not allowed, S023 a private (``_``) attribute or item, S024 an unknown filter,
    S025 an unknown test, S021 an unknown variable or global, S027 a call to anything but
    ``range`` and reading methods, S028 loops over constant ranges past the loop limit, S020
    an error compiling it.
    """
    env = template_environment()
    try:
        parsed = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        yield f"template syntax error on its line {exc.lineno}: {exc.message}", "S020"
        return
    for lineno, message in _statement_problems(parsed):
        yield f"{message} (template line {lineno})", "S026"
    for lineno, message in _private_access(parsed):
        yield f"{message} (template line {lineno})", "S023"
    for node in parsed.find_all((nodes.Filter, nodes.Test)):
        if isinstance(node, nodes.Filter) and node.name not in env.filters:
            yield (
                f"unknown filter {node.name!r}. Available: {', '.join(sorted(env.filters))} "
                f"(template line {node.lineno})",
                "S024",
            )
        elif isinstance(node, nodes.Test) and node.name not in env.tests:
            yield (
                f"unknown test {node.name!r}. Available: {', '.join(sorted(env.tests))} "
                f"(template line {node.lineno})",
                "S025",
            )
    allowed = variables | TEMPLATE_FUNCTIONS
    try:
        unknown = jinja2.meta.find_undeclared_variables(parsed) - allowed
    except jinja2.TemplateError:  # an unknown filter or test (reported above) stops the analysis
        unknown = set()
    for name in sorted(unknown):
        lineno = next(n.lineno for n in parsed.find_all(nodes.Name) if n.name == name)
        yield (
            f"unknown template variable {name!r}. Available: {', '.join(sorted(variables))}; "
            f"function: {', '.join(sorted(TEMPLATE_FUNCTIONS))} (template line {lineno})",
            "S021",
        )
    for call in parsed.find_all(nodes.Call):
        callee = call.node
        if isinstance(callee, nodes.Name) and callee.name in TEMPLATE_FUNCTIONS:
            continue
        if isinstance(callee, nodes.Getattr) and callee.attr in _CALLABLE_NAMES:
            continue
        yield (
            "only range() and the reading methods of strings, lists and dicts (split, strip, "
            f"items…) can be called in a unit template (template line {call.lineno})",
            "S027",
        )
    for lineno, size in _loop_sizes(parsed, 1):
        yield (
            f"these loops run {size} steps, over the limit of {LIMITS.template_loop_items} "
            f"(AAU_MAX_TEMPLATE_LOOP_ITEMS) (template line {lineno})",
            "S028",
        )
    try:
        compiled_template(source)  # compiling finds what the parse alone does not
    except jinja2.TemplateSyntaxError as exc:
        yield f"template syntax error on its line {exc.lineno}: {exc.message}", "S020"
    except jinja2.TemplateError as exc:
        yield f"template error: {exc}", "S020"
