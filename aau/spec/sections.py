"""The sections of a unit file that stand alone: prompt, policy, field rules, locale, tables.

``UnitSpec`` (``aau.spec.model``) is made of these plus the output schema and the fallbacks;
none of them refers back to the unit, so they sit below it. Their numbers must be finite
(``.nan`` and ``.inf`` are refused).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

__all__ = [
    "COMPUTE_RESULTS",
    "TABLE_MAX_ENTRIES",
    "TABLE_MAX_TEXT",
    "ComputeOp",
    "ComputeSpec",
    "FallbackTrigger",
    "FewShotExample",
    "FieldSpec",
    "Locale",
    "NormalizerTable",
    "Policy",
    "PromptSpec",
    "Routing",
    "TableValue",
    "UnitKind",
]

UnitKind = Literal["extract", "classify", "records", "derived"]
"""What a unit answers: ``extract`` one object of values found in the text; ``classify``
booleans and labels (enums, or arrays of them for several labels); ``records`` a list of
objects, each found in its own place of the text; ``derived`` a computation over the outputs
of the units it ``needs``, without reading the text."""

FallbackTrigger = Literal[
    "invalid_output", "ungrounded_output", "low_confidence", "engine_unavailable",
    "engine_timeout", "engine_overloaded", "context_too_long", "constraint_not_honored",
]  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


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
    """Jinja2 template of the user message, rendered in a sandbox. Variables: ``text``,
    ``unit``, ``terms``; the one function is ``range``."""
    examples: list[FewShotExample] = []
    """Few-shot examples, rendered as user/assistant turns before the input."""


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


class Policy(_Strict):
    """When an answer is accepted and how much the model may spend."""

    threshold: float = Field(0.5, ge=0, le=1)
    """Accept the first path whose confidence reaches this."""
    timeout_s: float = Field(60.0, gt=0)
    """Wall-clock limit of the model path (queue and generation)."""
    fallback_reserve_s: float = Field(1.0, ge=0)
    """Of ``timeout_s``, the time kept for the fallback paths: the model's request must end this
    much earlier, so a stalled engine leaves the fallbacks time to answer (when there are any)."""
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
        "engine_timeout", "engine_overloaded", "context_too_long", "constraint_not_honored",
    ]  # fmt: skip
    """Which primary-path outcomes move the run to the fallbacks."""


TABLE_MAX_ENTRIES = 10_000
"""Entries one normalizer table may hold."""
TABLE_MAX_TEXT = 256
"""Characters of one key, or of one text value, of a normalizer table."""


def _table_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a table value must be a finite number")
        return value
    if isinstance(value, str):
        if len(value) > TABLE_MAX_TEXT:
            raise ValueError(f"a table value is at most {TABLE_MAX_TEXT} characters")
        return value
    raise ValueError(
        f"a table value is a text, a number, a boolean or null, not {type(value).__name__}"
    )


TableValue = Annotated[
    Any,
    PlainValidator(_table_value),
    WithJsonSchema({"type": ["string", "number", "boolean", "null"], "maxLength": TABLE_MAX_TEXT}),
]
"""What a table maps a word to: a text, a number, a boolean, or null (the path skips it)."""


class NormalizerTable(_Strict):
    """A unit's own normalizer: words looked up in a table (``months: month``).

    Fields name it like any normalizer (``normalize: period_unit``). The text is first read by
    ``base`` (a registered normalizer); what that gives is looked up in ``map`` (casefolded
    unless ``case_sensitive``; a number or boolean is looked up by its JSON text, ``3``,
    ``true``). A value the table does not hold normalizes to None (the path skips that match),
    or, with ``unknown: keep``, stays as the base gave it.
    """

    base: Annotated[str, StringConstraints(min_length=1, max_length=128)] = "text"
    """The registered normalizer applied first (``text``: outer spaces off, inner runs
    collapsed)."""
    map: dict[Annotated[str, StringConstraints(min_length=1, max_length=TABLE_MAX_TEXT)],
              TableValue] = Field(min_length=1, max_length=TABLE_MAX_ENTRIES)  # fmt: skip
    """Word -> the value it stands for (``{months: month, mois: month, monate: month}``)."""
    unknown: Literal["keep"] | None = None
    """A word the table does not hold: null (default) normalizes it to None; ``keep`` keeps
    the base's value."""
    case_sensitive: bool = False
    """Match keys exactly instead of casefolded."""

    @field_validator("map", mode="before")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        # Before each entry is validated: a hostile table costs its length, not its work.
        if isinstance(value, dict) and len(value) > TABLE_MAX_ENTRIES:
            raise ValueError(
                f"a table holds at most {TABLE_MAX_ENTRIES} entries, this one {len(value)}"
            )
        return value

    @model_validator(mode="after")
    def _one_value_per_key(self) -> NormalizerTable:
        if self.case_sensitive:
            return self
        seen: dict[str, tuple[str, Any]] = {}
        for key, value in self.map.items():
            folded = key.casefold()
            other = seen.setdefault(folded, (key, value))
            if other[0] != key and not _same(other[1], value):
                raise ValueError(
                    f"keys {other[0]!r} and {key!r} are one key when case is ignored but map to "
                    f"{other[1]!r} and {value!r}; keep one, or set case_sensitive: true"
                )
        return self


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


_Text = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


class Routing(_Strict):
    """What tells the router a request is for this unit, besides its description and examples."""

    keywords: list[Annotated[str, StringConstraints(min_length=2, max_length=64)]] = Field(
        [], max_length=64
    )
    """Words whose presence in a request points at this unit (``penalty``, ``Vertragsstrafe``)."""
    requests: list[_Text] = Field([], max_length=200)
    """Questions or requests a user would send that this unit answers."""
    not_for: list[_Text] = Field([], max_length=200)
    """Requests near this unit that it does not answer (a deductible, for a price unit), and
    texts it has nothing to find in: the router learns them as this unit's sure negatives."""


ComputeOp = Literal["difference", "ratio", "change", "compare", "within_ratio", "range_check"]

COMPUTE_RESULTS: dict[str, frozenset[str]] = {
    "difference": frozenset({"difference"}),
    "ratio": frozenset({"ratio"}),
    "change": frozenset({"change", "difference"}),
    "compare": frozenset({"relation", "difference"}),
    "within_ratio": frozenset({"within", "change", "difference"}),
    "range_check": frozenset({"within"}),
}
"""The results each operation gives, by name: a derived unit's output properties are some of
them (``within``: a boolean; ``relation``: ``greater``, ``less`` or ``equal``; the rest numbers)."""

_FieldRef = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}\.[A-Za-z_][A-Za-z0-9_]{0,63}$"),
]


class ComputeSpec(_Strict):
    """A derived unit's computation over the fields of the units it needs.

    ``a`` and ``b`` name fields as ``unit.field``. ``difference`` is a - b; ``ratio`` a / b;
    ``change`` (a - b) / |b|; ``compare`` says whether a is ``greater``, ``less`` or ``equal``
    to b (equal within ``tolerance``, relative to |b|); ``within_ratio`` whether |a - b| is at
    most ``tolerance`` × |b|; ``range_check`` whether ``minimum`` <= a <= ``maximum``.
    """

    op: ComputeOp
    a: _FieldRef
    b: _FieldRef | None = None
    """The second operand (every operation but ``range_check``)."""
    tolerance: float = Field(0.0, ge=0, le=1e6)
    minimum: float | None = None
    maximum: float | None = None
    same: list[list[_FieldRef]] = Field([], max_length=8)
    """Groups of fields that must be equal for the computation to mean anything (the two
    amounts' currencies: ``[[rev_q3.currency, rev_q2.currency]]``); when two of them hold
    different values the run fails with ``incomparable_inputs`` (a null differs from none)."""

    @model_validator(mode="after")
    def _operands(self) -> ComputeSpec:
        if self.op == "range_check":
            if self.b is not None:
                raise ValueError("range_check reads one field (a); remove b")
            if self.minimum is None and self.maximum is None:
                raise ValueError("range_check needs minimum, maximum or both")
            if (
                self.minimum is not None
                and self.maximum is not None
                and self.minimum > self.maximum
            ):
                raise ValueError("minimum is above maximum")
        elif self.b is None:
            raise ValueError(f"{self.op} needs two fields, a and b")
        return self

    @property
    def fields(self) -> list[str]:
        """Every ``unit.field`` the computation reads."""
        return [self.a, *([self.b] if self.b else []), *(f for group in self.same for f in group)]
