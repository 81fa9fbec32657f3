"""Load-time checks of a unit that pydantic's field types cannot express.

Each check yields ``(location, message, code)``; ``UnitSpec.from_dict`` turns the first into a
located ``SpecError``. Codes are stable (S0xx) so tools can group them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jinja2
import jinja2.meta
import jsonschema

from aau.decoding.json_schema import bound_schema, json_path_to_loc, unsupported_keywords
from aau.fallbacks.normalize import NORMALIZERS, is_normalizer
from aau.spec.model import HeuristicFallback, UnitSpec

__all__ = ["TEMPLATE_VARIABLES", "check_unit"]

Issue = tuple[tuple[str | int, ...], str, str]

TEMPLATE_VARIABLES = frozenset({"text", "unit", "terms"})
"""Variables a prompt template may use."""


def _check_output_schema(spec: UnitSpec) -> Iterator[Issue]:
    schema = spec.output
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        loc = ("output", *exc.path)
        yield loc, f"not a valid JSON Schema: {exc.message}", "S011"
        return
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        yield ("output",), "must be an object schema with properties (type: object)", "S012"
        return
    problems = list(unsupported_keywords(schema))
    if not problems:
        yield from _check_compiles(spec)
    for path, keyword in problems:
        loc: tuple[str | int, ...] = ("output", *json_path_to_loc(path))
        yield (
            (*loc, keyword),
            f"JSON-Schema keyword {keyword!r} at {path} is not enforced by the constrained "
            "decoder; remove it or express it with enforced keywords (type, enum, pattern, "
            "minimum/maximum, maxLength…)",
            "S013",
        )


def _check_compiles(spec: UnitSpec) -> Iterator[Issue]:
    """The decoder can build a grammar from the (bounded) schema: found at load, not at 3 a.m."""
    import xgrammar

    bounded = bound_schema(spec.output, max_string_length=spec.policy.max_string_length)
    try:
        xgrammar.Grammar.from_json_schema(
            json.dumps(bounded), any_whitespace=False, separators=(",", ":"), strict_mode=True
        )
    except Exception as exc:  # xgrammar raises RuntimeError/ValueError variants
        yield ("output",), f"the constrained decoder cannot compile this schema: {exc}", "S014"


def _check_template(spec: UnitSpec) -> Iterator[Issue]:
    env = jinja2.Environment(autoescape=False)  # noqa: S701  # prompts are not HTML
    for field in ("system", "template"):
        source = getattr(spec.prompt, field)
        try:
            parsed = env.parse(source)
            env.from_string(source)  # compiling finds unknown filters and tests
        except jinja2.TemplateSyntaxError as exc:
            yield (
                ("prompt", field),
                f"template syntax error on its line {exc.lineno}: {exc.message}",
                "S020",
            )
            continue
        except jinja2.TemplateError as exc:
            yield ("prompt", field), f"template error: {exc}", "S020"
            continue
        unknown = jinja2.meta.find_undeclared_variables(parsed) - TEMPLATE_VARIABLES
        for name in sorted(unknown):
            yield (
                ("prompt", field),
                f"unknown template variable {name!r}. "
                f"Available: {', '.join(sorted(TEMPLATE_VARIABLES))}",
                "S021",
            )


def _check_examples(spec: UnitSpec) -> Iterator[Issue]:
    validator = jsonschema.Draft202012Validator(spec.output)
    for index, example in enumerate(spec.prompt.examples):
        error = jsonschema.exceptions.best_match(validator.iter_errors(example.output))
        if error is not None:
            where = "$" + "".join(f".{p}" for p in error.path)
            yield (
                ("prompt", "examples", index, "output"),
                f"example output violates the output schema at {where}: {error.message}",
                "S022",
            )


def _check_heuristic(index: int, fallback: HeuristicFallback, spec: UnitSpec) -> Iterator[Issue]:
    base: tuple[str | int, ...] = ("fallbacks", index)
    groups: set[str] = set()
    all_compiled = True
    for p_index, pattern in enumerate(fallback.patterns):
        try:
            groups |= set(re.compile(pattern.regex).groupindex)
        except re.error as exc:
            all_compiled = False
            yield (*base, "patterns", p_index, "regex"), f"invalid regex: {exc}", "S031"
    properties = spec.output.get("properties", {})
    for field, mapping in fallback.fields.items():
        loc = (*base, "fields", field)
        if field not in properties:
            yield (
                loc,
                f"field {field!r} is not in the output schema. Available: {', '.join(properties)}",
                "S032",
            )
        if mapping.group and all_compiled and mapping.group not in groups:
            yield (*loc, "group"), f"no pattern has a group named {mapping.group!r}", "S033"
        if not is_normalizer(mapping.normalize):
            yield (
                (*loc, "normalize"),
                f"unknown normalizer {mapping.normalize!r}. "
                f"Available: {', '.join(sorted(NORMALIZERS))}",
                "S034",
            )


def _check_fields(spec: UnitSpec) -> Iterator[Issue]:
    from aau.grammars import GrammarNotFound, load_grammar

    properties = spec.output.get("properties", {})
    for name, field in spec.fields.items():
        loc: tuple[str | int, ...] = ("fields", name)
        prop = properties.get(name)
        if prop is None:
            yield (
                loc,
                f"field {name!r} is not in the output schema. Available: {', '.join(properties)}",
                "S035",
            )
            continue
        kinds = prop.get("type", [])
        if "string" not in ([kinds] if isinstance(kinds, str) else kinds):
            yield (
                loc,
                f"field {name!r} has a grammar but is not a string in the output schema",
                "S036",
            )
        if "pattern" in prop:
            yield loc, f"field {name!r} has both a grammar and a pattern; keep one", "S037"
        try:
            load_grammar(field.grammar)
        except GrammarNotFound as exc:
            yield (*loc, "grammar"), str(exc), "S038"
        except Exception as exc:  # a generated parser that does not import is broken
            yield (*loc, "grammar"), f"grammar {field.grammar!r} is broken: {exc}", "S039"


def _check_flow(spec: UnitSpec) -> Iterator[Issue]:
    if spec.flow is None:
        return
    from aau.fsm.machine import flow_problems

    for problem in flow_problems(spec.flow):
        yield ("flow",), problem, "S040"


def check_unit(spec: UnitSpec) -> Iterator[Issue]:
    """Every problem of ``spec``, in file order."""
    yield from _check_output_schema(spec)
    yield from _check_template(spec)
    yield from _check_examples(spec)
    for index, fallback in enumerate(spec.fallbacks):
        if isinstance(fallback, HeuristicFallback):
            yield from _check_heuristic(index, fallback, spec)
        checker: Any = getattr(fallback, "check", None)
        if callable(checker):  # kinds may check themselves (files exist, labels match…)
            for loc, message, code in checker(spec):
                yield ("fallbacks", index, *loc), message, code
    yield from _check_fields(spec)
    yield from _check_flow(spec)
