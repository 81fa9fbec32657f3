"""``UnitSpec``: the pydantic model of a unit YAML file, and its load-time checks.

A unit file declares what to extract (``output``, a JSON Schema), how to ask the model
(``prompt``), what to do when the model fails (``fallbacks``, in order) and when to accept an
answer (``policy``). Everything that can be checked without running is checked here, so a broken
unit fails at load with ``file:line: field: message`` instead of at 3 a.m. in a batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from aau.errors import SpecError
from aau.spec.loader import LineMap, line_of, read_yaml, read_yaml_file

__all__ = [
    "FewShotExample",
    "FieldMapping",
    "FieldSpec",
    "HeuristicFallback",
    "HeuristicPattern",
    "Locale",
    "Policy",
    "PromptSpec",
    "UnitSpec",
]

_NAME = r"^[a-z][a-z0-9_]{0,63}$"
FallbackTrigger = Literal[
    "invalid_output", "ungrounded_output", "low_confidence", "engine_unavailable",
    "engine_timeout", "context_too_long", "constraint_not_honored",
]  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FewShotExample(_Strict):
    """One demonstration shown to the model before the real input."""

    input: str
    """The example text, rendered through the same template as real inputs."""
    output: dict[str, Any]
    """The answer, which must be valid against the unit's output schema."""


class PromptSpec(_Strict):
    """How the model is asked."""

    system: str
    """System message: the unit's instructions."""
    template: str = "{{ text }}"
    """Jinja2 template of the user message. Variables: ``text``, ``unit``."""
    examples: list[FewShotExample] = []
    """Few-shot examples, rendered as user/assistant turns before the input."""


class FieldMapping(_Strict):
    """How a heuristic match fills one output field."""

    group: str | None = None
    """Named regex group whose text fills the field."""
    value: Any = None
    """A constant, used when ``group`` is absent or did not match."""
    normalize: str = "text"
    """Normalizer name (see ``aau.fallbacks.normalize.NORMALIZERS``)."""


class HeuristicPattern(_Strict):
    """One regular expression that may find the answer."""

    regex: str
    """Python regex with named groups; matched case-insensitively."""
    strength: float = Field(0.7, ge=0, le=1)
    """How much a match of this pattern is trusted, before context."""


class HeuristicFallback(_Strict):
    """Patterns, normalizers and a ranking: the last-resort path, no model needed."""

    kind: Literal["heuristic"]
    patterns: list[HeuristicPattern] = Field(min_length=1)
    fields: dict[str, FieldMapping]
    """Output field -> how a match fills it. Unmapped fields are null."""
    keywords: list[str] | dict[str, float] = []
    """Context words (``total``, ``due``…) that make a nearby match rank higher; as a mapping,
    each word's own bonus (``{total: 0.35, price: 0.1}``), else 0.25 each."""
    window: int = Field(48, ge=0, le=1000)
    """How many characters before a match are searched for keywords."""
    prefer: Literal["first", "last"] = "first"
    """Among equally ranked matches, the earliest or the latest in the text."""
    confidence: float = Field(0.55, ge=0, le=1)
    """Prior confidence of a matched answer (scaled by pattern strength and context)."""
    no_match_confidence: float = Field(0.35, ge=0, le=1)
    """Confidence of the all-null answer when nothing matches."""


class FieldSpec(_Strict):
    """Extra rules for one output field."""

    grammar: str
    """A field-format grammar (``grammars/<name>.g4``): the model's value is constrained by its
    pattern when the grammar is regular, and every path's value must parse."""


class Locale(_Strict):
    """How ambiguous written values are read (instead of guessing)."""

    date_order: Literal["DMY", "MDY", "YMD"] | None = None
    """Order of numeric dates such as ``03/04/2024``; None reports them as ambiguous."""
    decimal: Literal[".", ","] | None = None
    """Decimal separator of amounts such as ``1,250``; None reports them as ambiguous."""


def _fallback_union() -> Any:
    """The discriminated union of every fallback kind known to the package."""
    from aau.fallbacks.registry import fallback_spec_types

    return Annotated[fallback_spec_types(), Field(discriminator="kind")]


class Policy(_Strict):
    """When an answer is accepted and how much the model may spend."""

    threshold: float = Field(0.5, ge=0, le=1)
    """Accept the first path whose confidence reaches this."""
    timeout_s: float = Field(60.0, gt=0)
    """Wall-clock limit of the model path (queue and generation)."""
    max_new_tokens: int = Field(96, ge=8, le=4096)
    """Token budget of one generation."""
    max_field_distance: int | None = Field(80, ge=0)
    """The model's fields must be found within this many characters of each other (one place in
    the text, not a value here and a unit there); None turns the check off."""
    max_string_length: int = Field(128, ge=1, le=4096)
    """``maxLength`` added to output strings that declare none, so a weak model cannot ramble."""
    require_grounding: bool = True
    """The model's values must be found in the text (not copied from the few-shot examples)."""
    fallback_on: list[FallbackTrigger] = [
        "invalid_output", "ungrounded_output", "low_confidence", "engine_unavailable",
        "engine_timeout", "context_too_long", "constraint_not_honored",
    ]  # fmt: skip
    """Which primary-path outcomes move the run to the fallbacks."""


class UnitSpec(_Strict):
    """A declared atomic analysis unit. Build with ``from_file``/``from_text``/``from_dict``."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=_NAME)
    """Unit id; equals the file stem."""
    version: Annotated[str, WithJsonSchema({"type": ["string", "integer"]})]
    """Part of every cache key and result; bump it when behaviour changes (``1``, ``"1.2"``)."""
    description: str
    """What the unit extracts, in one or two sentences."""
    output: dict[str, Any]
    """JSON Schema (an object) of the unit's answer."""
    prompt: PromptSpec
    fallbacks: list[Any] = []
    """Ordered non-model paths (``crf``, ``heuristic``)."""
    policy: Policy = Policy()
    fields: dict[str, FieldSpec] = {}
    """Per output field: the grammar its value must follow."""
    locale: Locale = Locale()
    flow: dict[str, Any] | None = None
    """Optional state chart (python-statemachine's YAML format) replacing the default chain."""
    source: Path | None = Field(None, exclude=True)
    """The file the unit was loaded from (relative paths resolve against its folder)."""

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _typed_fallbacks(cls, value: Any) -> Any:
        from pydantic import TypeAdapter

        return TypeAdapter(list[_fallback_union()]).validate_python(value)

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
                line=1, code="S004",
            )  # fmt: skip
        try:
            spec = cls.model_validate({**data, "source": source})
        except ValidationError as exc:
            raise _spec_error_from(exc, where, lines) from None
        from aau.spec.checks import check_unit

        for loc, message, code in check_unit(spec):
            raise SpecError(message, file=where, line=line_of(lines, loc), field=_dotted(loc),
                            code=code)  # fmt: skip
        if source is not None and spec.name != source.stem:
            raise SpecError(
                f"name {spec.name!r} differs from the file stem {source.stem!r}; rename one",
                file=where, line=line_of(lines, ("name",)), field="name", code="S005",
            )  # fmt: skip
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


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _spec_error_from(exc: ValidationError, where: str, lines: LineMap) -> SpecError:
    """The first pydantic error as a located ``SpecError`` (S010); the rest as notes."""
    errors = exc.errors(include_url=False)

    def clean(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
        # Discriminated unions add the tag ('heuristic') to the location; drop it.
        return tuple(p for p in loc if not (isinstance(p, str) and p in {"heuristic", "crf"}))

    def describe(err: Any) -> str:
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "missing":
            msg = "required field is missing"
        got = err.get("input")
        if err["type"] not in {"missing", "extra_forbidden"} and not isinstance(got, dict | list):
            msg += f" (got {got!r})"
        return msg

    first = errors[0]
    loc = clean(first["loc"])
    error = SpecError(describe(first), file=where, line=line_of(lines, loc), field=_dotted(loc),
                      code="S010")  # fmt: skip
    for other in errors[1:]:
        oloc = clean(other["loc"])
        error.add_note(f"{where}:{line_of(lines, oloc)}: {_dotted(oloc)}: {describe(other)}")
    return error
