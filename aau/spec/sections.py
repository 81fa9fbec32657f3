"""The sections of a unit file that stand alone: prompt, policy, field rules and locale.

``UnitSpec`` (``aau.spec.model``) is made of these plus the output schema and the fallbacks;
none of them refers back to the unit, so they sit below it. Their numbers must be finite
(``.nan`` and ``.inf`` are refused).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FallbackTrigger", "FewShotExample", "FieldSpec", "Locale", "Policy", "PromptSpec"]

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
