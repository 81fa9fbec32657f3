"""``UnitSpec``: the pydantic model of a unit YAML file, and its load-time checks.

A unit file declares what to extract (``output``, a JSON Schema), how to ask the model
(``prompt``), what to do when the model fails (``fallbacks``, in order) and when to accept an
answer (``policy``). Everything that can be checked without running is checked here, so a broken
unit fails at load with ``file:line: field: message`` instead of at 3 a.m. in a batch.

The stand-alone sections (prompt, policy, field rules, locale, normalizer tables) are
``aau.spec.sections``. The fallbacks are the one open part: ``FallbackSpec`` is their common
base, each kind a subclass declared in the ``aau.fallbacks`` entry-point group
(``FALLBACK_KINDS``) and defined in its own module above this layer. The checks
(``check_unit``) yield ``(location, message, code)``; the first becomes a located
``SpecError``. Codes are stable (S0xx) so tools can group them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from functools import cache, reduce
from pathlib import Path
from typing import Annotated, Any

import jsonschema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from aau.answers import FallbackPath
from aau.decoding.constraints import schema_compile_problem
from aau.decoding.json_schema import json_path_to_loc, unsupported_keywords
from aau.errors import SpecError
from aau.fsm.machine import flow_problems
from aau.grammars import GrammarNotFound, load_grammar
from aau.limits import LIMITS
from aau.registry import Registry
from aau.spec.decoding_schema import decoding_schema, field_grammars
from aau.spec.loader import LineMap, line_of, path_past_depth, read_yaml, read_yaml_file
from aau.spec.problems import UnitProblems, did_you_mean, every_problem
from aau.spec.sections import (
    COMPUTE_RESULTS,
    ComputeSpec,
    FieldSpec,
    Locale,
    NormalizerTable,
    Policy,
    PromptSpec,
    Routing,
    UnitKind,
)
from aau.spec.templates import render_problem, template_problems

__all__ = [
    "FALLBACK_KINDS",
    "TEMPLATE_VARIABLES",
    "FallbackSpec",
    "Issue",
    "UnitSpec",
    "check_unit",
    "fallback_union",
]

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
"""What a unit, normalizer table or engine may be called."""


Issue = tuple[tuple[str | int, ...], str, str]
"""A load-time problem: its location in the unit file, the message and the check's code."""

TEMPLATE_VARIABLES = frozenset({"text", "unit", "terms"})
"""Variables a prompt template may use."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FallbackSpec(_Strict):
    """A declared non-model path; each kind subclasses it in its own module.

    A kind is one module (``aau.fallbacks.crf``, ``aau.fallbacks.heuristic``) holding its
    subclass, with ``kind: Literal["<name>"]``, its load check and the live path it builds; it is
    declared in the ``aau.fallbacks`` entry-point group (``FALLBACK_KINDS``), so unit files can
    name it and ``UnitSpec.fallbacks`` is the union of every declared kind, discriminated by
    ``kind``.
    """

    kind: str

    def check(self, unit: UnitSpec) -> Iterator[Issue]:
        """Problems of this declaration within ``unit``, located relative to it; none here."""
        return iter(())

    def check_shared(self, unit: UnitSpec) -> Iterator[Issue]:
        """Problems of the unit-level declarations this kind's paths use, located from the root.

        The normalizer tables (``normalizers``) are checked here, by the layer that knows the
        registered normalizers; ``check_unit`` reports each problem once, however many of the
        unit's fallbacks find it, before the kinds' own checks. None here.
        """
        return iter(())

    def data_problems(self, unit: UnitSpec) -> list[SpecError]:
        """Problems of the files this path reads (``aau validate``: slower than loading)."""
        return []

    def notes(self, unit: UnitSpec) -> list[str]:
        """What ``aau validate`` should tell the author that is not an error, located."""
        return []

    def build(self, unit: UnitSpec) -> FallbackPath:
        """The live path of this declaration in ``unit``."""
        raise NotImplementedError(f"fallback kind {self.kind!r} does not build a path")

    def train(self, unit: UnitSpec) -> str | None:
        """Train this path's model from the unit's data and write it (``aau train``).

        Returns a printable report of the held-out scores, or None when the kind has nothing
        to train.
        """
        return None


FALLBACK_KINDS: Registry[type[FallbackSpec]] = Registry("fallback kind", "aau.fallbacks")
"""Fallback kinds by the ``kind`` unit files give."""


def fallback_union() -> Any:
    """The discriminated union of every registered fallback kind (for validation and schema)."""
    kinds = tuple(spec for _, spec in FALLBACK_KINDS.items())
    return _union_of(kinds)


@cache
def _union_of(kinds: tuple[type[FallbackSpec], ...]) -> Any:
    union = reduce(operator.or_, kinds) if len(kinds) > 1 else kinds[0]
    return Annotated[union, Field(discriminator="kind")]


@cache
def _fallbacks_adapter(union: Any) -> TypeAdapter[list[FallbackSpec]]:
    return TypeAdapter(list[union])


class UnitSpec(_Strict):
    """A declared atomic analysis unit. Build with ``from_file``/``from_text``/``from_dict``."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=NAME_PATTERN)
    """Unit id; equals the file stem."""
    version: Annotated[str, WithJsonSchema({"type": ["string", "integer"]})]
    """Part of every cache key and result; bump it when behaviour changes (``1``, ``"1.2"``)."""
    kind: UnitKind = "extract"
    """What the unit answers (``aau.spec.sections.UnitKind``): ``extract``, ``classify``,
    ``records`` or ``derived``."""
    description: str
    """What the unit extracts, in one or two sentences."""
    output: dict[str, Any]
    """JSON Schema (an object) of the unit's answer."""
    prompt: PromptSpec | None = None
    """How the model is asked; every kind but ``derived`` has one."""
    needs: list[Annotated[str, Field(pattern=NAME_PATTERN)]] = Field([], max_length=16)
    """The units whose outputs a ``derived`` unit computes from; a pipeline runs them first."""
    compute: ComputeSpec | None = None
    """A ``derived`` unit's computation over the fields of the units it needs."""
    routing: Routing = Routing()
    """What points the router at this unit, besides its description and examples."""
    fallbacks: list[SerializeAsAny[FallbackSpec]] = []
    """Ordered non-model paths (``crf``, ``heuristic``, any registered kind)."""
    policy: Policy = Policy()
    engines: list[Annotated[str, Field(pattern=NAME_PATTERN)]] = Field([], max_length=8)
    """The model path's engines in order, by the names a pipeline gives its engines
    (``[glm5, local]``): when one fails (down, overloaded, timed out, a bad response) the next is
    tried within the same deadline, then the fallbacks. Empty: the pipeline's default engine."""
    fields: dict[str, FieldSpec] = {}
    """Per output field: the grammar its value must follow."""
    locale: Locale = Locale()
    normalizers: dict[Annotated[str, Field(pattern=NAME_PATTERN)], NormalizerTable] = Field(
        {}, max_length=64
    )
    """The unit's own normalizers, by name: tables of words and the values they stand for
    (``period_unit: {map: {months: month, mois: month}}``); fallback fields name them like a
    registered normalizer (``normalize: period_unit``), and a name may not shadow one."""
    flow: dict[str, Any] | None = None
    """Optional state chart (python-statemachine's YAML format) replacing the default chain."""
    source: Path | None = Field(None, exclude=True)
    """The file the unit was loaded from (relative paths resolve against its folder)."""

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("version must be a finite number or a text such as '1.2'")
        return str(value) if isinstance(value, int | float) else value

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _typed_fallbacks(cls, value: Any) -> Any:
        return _fallbacks_adapter(fallback_union()).validate_python(value)

    @property
    def key(self) -> str:
        """``name@version``: the unit's identity in caches and results."""
        return f"{self.name}@{self.version}"

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in the unit resolve against."""
        return self.source.parent if self.source else Path.cwd()

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls, data: Any, *, source: Path | None = None, lines: LineMap | None = None
    ) -> UnitSpec:
        """Validate a parsed unit; raise ``SpecError`` naming file, line and field."""
        where = str(source) if source else "<unit>"
        lines = lines or {}
        if not isinstance(data, dict):
            raise SpecError(
                f"a unit file must be a mapping, got {type(data).__name__}", file=where,
                line=1, check="S004",
            )  # fmt: skip
        # Bounds before pydantic and jsonschema, which recurse: deep data must not reach them.
        for value, prefix, limit, what, check in (
            (data.get("output"), ("output",), LIMITS.json_depth, "the output schema", "S015"),
            (data, (), LIMITS.yaml_depth, "the unit", "S007"),
        ):
            too_deep = path_past_depth(value, limit)
            if too_deep is not None:
                loc = (*prefix, *(p if isinstance(p, str | int) else str(p) for p in too_deep))
                raise SpecError(f"{what} is nested deeper than {limit} levels", file=where,
                                line=line_of(lines, loc), field=_dotted(loc) or None,
                                check=check)  # fmt: skip
        try:
            spec = cls.model_validate({**data, "source": source})
        except ValidationError as exc:
            raise _spec_error_from(exc, where, lines) from None
        problems: list[SpecError] = []
        try:
            for loc, message, check in check_unit(spec):
                problems.append(SpecError(message, file=where, line=line_of(lines, loc),
                                          field=_dotted(loc), check=check))  # fmt: skip
                if check in _BASE_CHECKS:
                    break
        except Exception:
            if not problems:
                raise
            # A later check tripped over a problem already found: those found are the report.
        if source is not None and spec.name != source.stem:
            problems.append(SpecError(
                f"name {spec.name!r} differs from the file stem {source.stem!r}; rename one",
                file=where, line=line_of(lines, ("name",)), field="name", check="S005",
            ))  # fmt: skip
        if problems:  # the first raised, every one in ``UnitProblems.problems``
            raise UnitProblems(problems) if len(problems) > 1 else problems[0]
        return spec

    @classmethod
    def from_text(cls, text: str, *, source: Path | None = None) -> UnitSpec:
        """Parse and validate unit YAML text."""
        data, lines = read_yaml(text, source=str(source) if source else "<unit>")
        return cls.from_dict(data, source=source, lines=lines)

    @classmethod
    def from_file(cls, path: str | Path) -> UnitSpec:
        """Read, parse and validate a unit file."""
        path = Path(path)
        data, lines, _ = read_yaml_file(path)
        return cls.from_dict(data, source=path.resolve(), lines=lines)

    @classmethod
    def problems_of_file(cls, path: str | Path) -> list[SpecError]:
        """Every problem of a unit file, each located (empty when it loads)."""
        try:
            cls.from_file(path)
        except SpecError as exc:
            return every_problem(exc)
        return []


_BASE_CHECKS = frozenset({"S011", "S012"})
"""Checks whose problem ends the checking: the later checks read the output schema they refused.
Past any other problem the checks go on, so a file's every problem is told at once."""


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _spec_error_from(exc: ValidationError, where: str, lines: LineMap) -> SpecError:
    """Every pydantic error as a located ``SpecError`` (S010): the first raised, the rest notes.

    An unknown key says which field of that level it may have meant (difflib).
    """
    errors = exc.errors(include_url=False)
    kinds = dict(FALLBACK_KINDS.items())

    def clean(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
        # Discriminated unions add the tag ('heuristic') to the location; drop it.
        # A mapping's key that fails its own rule adds "[key]" after it; drop it too.
        tags = {*kinds, "[key]"}
        return tuple(p for p in loc if not (isinstance(p, str) and p in tags))

    def describe(err: Any) -> str:
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            hint = did_you_mean(UnitSpec, err["loc"], kinds)
            msg = f"unknown field; {hint}" if hint else "unknown field"
        elif err["type"] == "missing":
            msg = "required field is missing"
        got = err.get("input")
        if err["type"] not in {"missing", "extra_forbidden"} and not isinstance(got, dict | list):
            msg += f" (got {got!r})"
        return msg

    problems = [
        SpecError(
            describe(err), file=where, line=line_of(lines, loc), field=_dotted(loc), check="S010"
        )  # fmt: skip
        for err in errors
        for loc in [clean(err["loc"])]
    ]
    return UnitProblems(problems) if len(problems) > 1 else problems[0]


# -- load-time checks: what pydantic's field types cannot express ------------------------


def _check_output_schema(spec: UnitSpec) -> Iterator[Issue]:
    schema = spec.output
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        yield ("output", *exc.path), f"not a valid JSON Schema: {exc.message}", "S011"
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
    """The decoder can build a grammar from the schema it will decode: found at load, not at 3 a.m.

    The schema is the run's own (``decoding_schema``: grammar patterns added, strings bounded).
    """
    try:
        bounded = decoding_schema(
            spec.output, field_grammars(spec.fields), spec.policy.max_string_length
        )
    except Exception:  # a missing or broken grammar: the field check names it (S038, S039)
        return
    problem = schema_compile_problem(bounded)  # the default backend, xgrammar
    if problem is not None:
        yield ("output",), f"the constrained decoder cannot compile this schema: {problem}", "S014"


def _check_template(spec: UnitSpec) -> Iterator[Issue]:
    """Each prompt template, in the sandbox it renders in (``aau.spec.templates``).

    Refused, naming the field and the line inside the template: syntax errors (S020), unknown
    variables and globals (S021), ``_`` attributes and items (S023), unknown filters (S024) and
    tests (S025), statements other than if/for/set/with (S026), calls other than ``range`` and
    reading methods (S027), constant loops over the loop limit (S028); then a template that
    fails rendered as every run renders it (S029, see ``_check_rendering``).
    """
    if spec.prompt is None:
        return
    clean = True
    for field in ("system", "template"):
        source = getattr(spec.prompt, field)
        for message, check in template_problems(source, TEMPLATE_VARIABLES):
            clean = False
            yield ("prompt", field), message, check
    if clean:
        yield from _check_rendering(spec)


_PROBE_TEXT = "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April 2024."
"""A sample input: a template that breaks a limit or sandbox rule on it breaks on any input."""


def _check_rendering(spec: UnitSpec) -> Iterator[Issue]:
    """Render the templates as every run does, to find those that fail at run time.

    The system text with no input and the template for each few-shot input (any error counts:
    every run renders them), then the template once for a sample input (a broken limit or
    sandbox rule only: another input could avoid any other error).
    """
    prompt = spec.prompt
    assert prompt is not None  # _check_template returns first without one
    cases = [("system", "", "with no input", True)]
    cases += [
        ("template", example.input, f"for few-shot example {index}", True)
        for index, example in enumerate(prompt.examples)
    ]
    cases.append(("template", _PROBE_TEXT, "for a sample input", False))
    for field, text, what, strict in cases:
        problem = render_problem(
            getattr(prompt, field), strict=strict, text=text, unit=spec, terms=[]
        )
        if problem is not None:
            yield ("prompt", field), f"rendering it {what} fails: {problem}", "S029"
            return


def _check_examples(spec: UnitSpec) -> Iterator[Issue]:
    if spec.prompt is None:
        return
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


def _check_fields(spec: UnitSpec) -> Iterator[Issue]:
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
    for problem in flow_problems(spec.flow):
        yield ("flow",), problem, "S040"


def _types(schema: Any) -> set[str]:
    kinds = schema.get("type", []) if isinstance(schema, dict) else []
    return {kinds} if isinstance(kinds, str) else set(kinds)


def _is_label(schema: Any) -> bool:
    """A classification answer: a boolean, or a string out of an ``enum`` (null allowed)."""
    if not isinstance(schema, dict):
        return False
    kinds = _types(schema) - {"null"}
    return kinds == {"boolean"} or (kinds == {"string"} and isinstance(schema.get("enum"), list))


_RESULT_TYPES = {"within": "boolean", "relation": "string"}
"""The JSON type of each computed result that is not a number."""


def _check_kind(spec: UnitSpec) -> Iterator[Issue]:
    """What the unit's ``kind`` asks of its other sections."""
    if spec.kind == "derived":
        yield from _check_derived(spec)
        return
    if spec.prompt is None:
        yield (
            ("prompt",),
            f"a {spec.kind} unit needs a prompt (only derived units have none)",
            ("S098"),
        )
    for key in ("needs", "compute"):
        if getattr(spec, key):
            yield (key,), f"only derived units have {key}; set kind: derived or remove it", "S099"
    properties = spec.output.get("properties")
    if not isinstance(properties, dict):
        return  # the output schema check reports it
    if spec.kind == "classify":
        for name, prop in properties.items():
            items = prop.get("items") if isinstance(prop, dict) else None
            if _is_label(prop) or (_types(prop) - {"null"} == {"array"} and _is_label(items)):
                continue
            yield (
                ("output", "properties", name),
                f"a classify unit answers with labels: {name!r} must be a boolean, a string "
                "with an enum, or an array of such strings",
                "S100",
            )
    elif spec.kind == "records":
        lists = [
            name for name, prop in properties.items()
            if isinstance(prop, dict) and "array" in _types(prop)
            and isinstance(prop.get("items"), dict) and "object" in _types(prop["items"])
        ]  # fmt: skip
        if len(lists) != 1:
            yield (
                ("output", "properties"),
                "a records unit's output has exactly one property that is an array of objects "
                f"(the records); found {len(lists)}" + (f": {', '.join(lists)}" if lists else ""),
                "S101",
            )


def _check_derived(spec: UnitSpec) -> Iterator[Issue]:
    for key, why in (
        ("prompt", "it reads its inputs' outputs, not the text"),
        ("fallbacks", "its computation always answers"),
        ("engines", "it runs no model"),
    ):
        if getattr(spec, key):
            yield (key,), f"a derived unit has no {key}: {why}", "S090"
    if not spec.needs:
        yield ("needs",), "a derived unit names the units it needs (needs: [unit, ...])", "S091"
    if spec.name in spec.needs:
        yield ("needs",), "a unit cannot need itself", "S091"
    compute = spec.compute
    if compute is None:
        yield ("compute",), "a derived unit declares its computation (compute: {op: ...})", "S092"
        return
    for ref in compute.fields:
        unit = ref.split(".", 1)[0]
        if unit not in spec.needs:
            yield (
                ("compute",),
                f"{ref!r} reads unit {unit!r}, which is not among needs ({', '.join(spec.needs)})",
                "S093",
            )
    results = COMPUTE_RESULTS[compute.op]
    properties = spec.output.get("properties")
    if not isinstance(properties, dict):
        return
    for name, prop in properties.items():
        if name not in results:
            yield (
                ("output", "properties", name),
                f"{compute.op} gives {', '.join(sorted(results))}; {name!r} is none of them",
                "S094",
            )
            continue
        wanted = _RESULT_TYPES.get(name, "number")
        if not (_types(prop) - {"null"}) <= (
            {wanted, "integer"} if wanted == "number" else {wanted}
        ):
            yield (
                ("output", "properties", name, "type"),
                f"{name!r} is a {wanted} (or null when an input has no value)",
                "S095",
            )


def check_unit(spec: UnitSpec) -> Iterator[Issue]:
    """Every problem of ``spec``, in file order."""
    yield from _check_kind(spec)
    yield from _check_output_schema(spec)
    yield from _check_template(spec)
    yield from _check_examples(spec)
    shared: set[Issue] = set()
    for fallback in spec.fallbacks:  # the tables the kinds' fields name, each problem once
        for issue in fallback.check_shared(spec):
            if issue not in shared:
                shared.add(issue)
                yield issue
    for index, fallback in enumerate(spec.fallbacks):  # each kind checks its own declaration
        for loc, message, code in fallback.check(spec):
            yield ("fallbacks", index, *loc), message, code
    yield from _check_fields(spec)
    yield from _check_flow(spec)
