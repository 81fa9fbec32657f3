"""The one exception hierarchy of AAU, split by whose fault an error is.

```
AAUError
├── SpecError            a unit author's mistake, raised at load time (codes S001…)
├── InputError           a caller's bad document or batch line (code invalid_input)
├── TermDictionaryError  a customer's bad term dictionary or upload (codes T001…)
│   └── UnknownTenant          unknown_tenant
├── EngineError          .retryable; the model backend could not answer
│   ├── EngineUnavailable      engine_unavailable (server down, every circuit open)
│   │   └── EngineOverloaded   engine_overloaded (429 until the retries ran out)
│   ├── EngineTimeout          engine_timeout
│   ├── EngineBadResponse      invalid_output (an answer that is no completion)
│   └── ConstraintNotHonored   constraint_not_honored
├── UnitRunError         a path of a unit run produced nothing usable
│   ├── ValidationFailed       invalid_output
│   │   └── UngroundedOutput   ungrounded_output
│   ├── RunTimeout             run_timeout (policy.timeout_s spent before the path answered)
│   └── FallbacksExhausted     fallbacks_exhausted (an ExceptionGroup, one entry per path)
└── CalibrationError
```

Every error carries a stable ``code`` that lands in unit results, so callers can branch on it
without parsing messages. An error located in a file someone wrote (a unit, a dictionary) also
names the ``check`` that failed (``S014``, ``T008``): the code says what kind of error it is,
the check which rule it broke. Messages say what went wrong and where; hints go in
``add_note``.
"""

from __future__ import annotations

__all__ = [
    "AAUError",
    "CalibrationError",
    "ConstraintNotHonored",
    "EngineBadResponse",
    "EngineError",
    "EngineOverloaded",
    "EngineTimeout",
    "EngineUnavailable",
    "FallbacksExhausted",
    "InputError",
    "RunTimeout",
    "SpecError",
    "TermDictionaryError",
    "UngroundedOutput",
    "UnitRunError",
    "UnknownTenant",
    "ValidationFailed",
]


class AAUError(Exception):
    """Base of every error AAU raises on purpose."""

    code: str = "internal_error"


class _LocatedError(AAUError):
    """An error in a file someone wrote, located as ``file:line: field: message [check]``.

    Attributes:
        file: the file, if known.
        line: 1-based line in that file, if known.
        field: the offending field, column or key, if known.
        check: the stable id of the check that failed (``S014``…).
        message: the message without the location.
    """

    default_check = "X000"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        check: str | None = None,
    ) -> None:
        self.file, self.line, self.field = file, line, field
        self.check = check or self.default_check
        where = ""
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        what = f"{field}: " if field else ""
        super().__init__(f"{where}{what}{message} [{self.check}]")
        self.message = message


class SpecError(_LocatedError):
    """A unit file (or a file it names) is wrong; raised when the unit is loaded.

    ``spec_code`` is the check's code (``S001``…), ``field`` a dotted path such as
    ``prompt.template``.
    """

    code = "spec_error"
    default_check = "S000"

    @property
    def spec_code(self) -> str:
        """The failed check's stable code (``S001``…)."""
        return self.check


class InputError(AAUError):
    """A document or batch line that cannot be analysed (empty, binary, not JSON…)."""

    code = "invalid_input"

    def __init__(self, message: str, *, code: str = "invalid_input") -> None:
        super().__init__(message)
        self.code = code


class TermDictionaryError(_LocatedError):
    """A term dictionary (or an upload of one) is wrong; nothing of the upload was applied.

    ``term_code`` is the check's code (``T001``…), ``field`` the column or key (``term``).
    """

    code = "invalid_term_dictionary"
    default_check = "T000"

    @property
    def term_code(self) -> str:
        """The failed check's stable code (``T001``…)."""
        return self.check


class UnknownTenant(TermDictionaryError):
    """A request or upload names a tenant the term store does not know."""

    code = "unknown_tenant"


class EngineError(AAUError):
    """The generation backend failed; ``retryable`` says whether trying again may help."""

    code = "engine_error"
    retryable: bool = False


class EngineUnavailable(EngineError):
    """The engine cannot serve (model missing, server down, context too long)."""

    code = "engine_unavailable"
    retryable = True


class EngineTimeout(EngineError):
    """Generation ran past the unit's ``policy.timeout_s`` or was cancelled."""

    code = "engine_timeout"
    retryable = True


class EngineOverloaded(EngineUnavailable):
    """The server kept answering 429 (too many requests) until the retries or the time ran out."""

    code = "engine_overloaded"


class EngineBadResponse(EngineError):
    """The server answered, but not with a completion that can be read: the next path runs."""

    code = "invalid_output"


class ConstraintNotHonored(EngineError):
    """The engine returned text that breaks the constraint it was given."""

    code = "constraint_not_honored"


class UnitRunError(AAUError):
    """One path of a unit run produced nothing usable."""

    code = "unit_run_error"


class RunTimeout(UnitRunError):
    """The unit's ``policy.timeout_s`` ran out before this path answered."""

    code = "run_timeout"


class ValidationFailed(UnitRunError):
    """A path's output does not parse or violates the unit's schema or validators.

    Attributes:
        json_path: where in the output the violation is, e.g. ``$.amount``.
        position: for a grammar failure, where in the value parsing stopped.
    """

    code = "invalid_output"

    def __init__(self, message: str, *, json_path: str = "$", position: int | None = None) -> None:
        super().__init__(message)
        self.json_path = json_path
        self.position = position
        """Character position of a grammar parse error in the field's value."""


class UngroundedOutput(ValidationFailed):
    """A value the model returned does not occur in the text (e.g. copied from an example)."""

    code = "ungrounded_output"


class FallbacksExhausted(ExceptionGroup, UnitRunError):
    """Every path of a unit failed; one entry per path, in the order tried."""

    code = "fallbacks_exhausted"


class CalibrationError(AAUError):
    """A calibrator artifact is missing, corrupt, or was fitted for another feature spec."""

    code = "calibration_error"
