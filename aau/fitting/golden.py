"""Golden cases: inputs kept beside a unit with the output it must give, run and scored.

``units/<name>.golden.yaml`` holds the cases::

    cases:
      - input: "Total due: EUR 1,250.00"
        expected: {amount: 1250.0, currency: EUR}
        tolerance: {amount: 0.01}     # optional: absolute, per number field (dotted when nested)
        note: the total, not the subtotal   # optional

The file is read like a unit (bounded, located errors); each ``expected`` must be valid against
the unit's output schema and each tolerance must name a number field of it, so a case that no
run could pass is refused at load (G001–G003). A case passes when the unit's output equals
``expected``: numbers within the tolerance (else 1e-9), strings exactly after the unit's field
normalizer (the one its fallbacks declare for the field: ``EUR`` and ``€`` are one currency),
arrays element by element, objects field by field, booleans, enums and nulls exactly.

``run_golden`` runs a unit's cases through a ``Pipeline`` (with the units it ``needs``) in one of
three modes: ``model`` (the real engine), ``record`` (the real engine, its generations kept in
``<name>.golden.recorded.jsonl``), ``replay`` (answered from that recording by
``aau.engines.replay.ReplayEngine``: deterministic and offline). The report gives per unit the
cases passed, accuracy, mean confidence, expected calibration error (10 bins) and Brier score,
and each failing case with what differs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aau.calibration.report import brier_score, expected_calibration_error
from aau.engines.base import Engine
from aau.engines.replay import Recording, RecordingEngine, ReplayEngine
from aau.errors import SpecError
from aau.fallbacks.normalize import normalizer_for
from aau.limits import LIMITS
from aau.pipeline import Pipeline
from aau.results import UnitResult
from aau.spec.loader import line_of, read_yaml_file
from aau.spec.model import UnitSpec
from aau.spec.problems import UnitProblems

__all__ = [
    "CaseOutcome",
    "Difference",
    "GoldenCase",
    "Mode",
    "UnitReport",
    "choose_mode",
    "compare",
    "fingerprint",
    "golden_path",
    "load_cases",
    "recording_path",
    "run_golden",
]

Mode = Literal["model", "record", "replay"]

MAX_CASES = 500
ABS_TOLERANCE = 1e-9
"""How far two numbers may be apart and still be equal, when a case gives no tolerance."""


class GoldenCase(BaseModel):
    """One golden case: an input and the output the unit must give for it."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    input: str = Field(min_length=1, max_length=LIMITS.text_chars)
    expected: dict[str, Any]
    tolerance: dict[str, float] = Field({}, max_length=64)
    """Absolute tolerance per number field (``amount``; ``clauses.amount`` for a nested one)."""
    note: str | None = Field(None, max_length=2000)
    """Why the case is there."""
    known_failure: str | None = Field(None, min_length=1, max_length=2000)
    """Why the unit does not give ``expected`` yet (like pytest's xfail): the case still runs
    and counts against the accuracy, but does not fail ``aau test``; if it passes, the report
    says so, and the marker should go."""


class _GoldenFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cases: list[GoldenCase] = Field(min_length=1, max_length=MAX_CASES)


def golden_path(spec: UnitSpec) -> Path:
    """``<name>.golden.yaml`` beside the unit file."""
    return spec.base_dir / f"{spec.name}.golden.yaml"


def recording_path(spec: UnitSpec) -> Path:
    """``<name>.golden.recorded.jsonl`` beside the unit file."""
    return spec.base_dir / f"{spec.name}.golden.recorded.jsonl"


# -- loading ------------------------------------------------------------------------------------


def _schema_at(schema: Any, dotted: str) -> Any:
    """The sub-schema of a dotted field path (through arrays' items), or None."""
    for part in dotted.split("."):
        while isinstance(schema, dict) and "items" in schema and "properties" not in schema:
            schema = schema["items"]
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or part not in properties:
            return None
        schema = properties[part]
    return schema


def _is_number_schema(schema: Any) -> bool:
    kinds = schema.get("type", []) if isinstance(schema, dict) else []
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return bool({"number", "integer"} & set(kinds))


def _case_problems(
    spec: UnitSpec, cases: Sequence[GoldenCase]
) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    validator = jsonschema.Draft202012Validator(spec.output)
    for index, case in enumerate(cases):
        error = jsonschema.exceptions.best_match(validator.iter_errors(case.expected))
        if error is not None:
            where = "$" + "".join(f".{p}" for p in error.path)
            yield (("cases", index, "expected"),
                   f"expected output violates the unit's output schema at {where}: "
                   f"{error.message}", "G002")  # fmt: skip
        for name, value in case.tolerance.items():
            if value < 0 or not math.isfinite(value):
                yield ("cases", index, "tolerance", name), "a tolerance is a number >= 0", "G003"
            elif not _is_number_schema(_schema_at(spec.output, name)):
                yield (("cases", index, "tolerance", name),
                       f"{name!r} is not a number field of the output schema", "G003")  # fmt: skip


def load_cases(spec: UnitSpec, path: Path | None = None) -> list[GoldenCase]:
    """The unit's golden cases (``golden_path`` unless ``path``).

    Raises:
        SpecError: the file is missing, unreadable or out of bounds (see ``read_yaml_file``),
            not the golden format (G001), or a case no run could pass (G002, G003); several
            problems are one ``UnitProblems``.
    """
    path = path or golden_path(spec)
    where = str(path)
    data, lines, _ = read_yaml_file(path)
    try:
        cases = _GoldenFile.model_validate(data).cases
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            dotted = ".".join(str(p) for p in loc) or None
            message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(SpecError(message, file=where, line=line_of(lines, loc) or 1,
                                      field=dotted, check="G001"))  # fmt: skip
        raise UnitProblems(problems) if len(problems) > 1 else problems[0] from None
    found = [
        SpecError(
            message,
            file=where,
            line=line_of(lines, loc),
            field=".".join(str(p) for p in loc),
            check=check,
        )  # fmt: skip
        for loc, message, check in _case_problems(spec, cases)
    ]
    if found:
        raise UnitProblems(found) if len(found) > 1 else found[0]
    return cases


def fingerprint(spec: UnitSpec, cases: Sequence[GoldenCase]) -> str:
    """What a recording's requests are made from: the unit's prompt, output and limits, the inputs.

    A threshold, a fallback or an expected output may change without making a recording stale.
    """
    shaping = {
        "key": spec.key,
        "output": spec.output,
        "prompt": spec.prompt.model_dump(mode="json") if spec.prompt is not None else None,
        "fields": {k: v.model_dump(mode="json") for k, v in spec.fields.items()},
        "max_new_tokens": spec.policy.max_new_tokens,
        "max_string_length": spec.policy.max_string_length,
        "inputs": [case.input for case in cases],
    }
    text = json.dumps(shaping, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- comparing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the output differs from the expected one."""

    path: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return f"{self.path or '$'}: expected {self.expected!r}, got {self.got!r}"


def _plain(path: str) -> str:
    """``clauses[0].amount`` -> ``clauses.amount``: the path a tolerance or normalizer names."""
    out, depth = [], 0
    for char in path:
        depth += char == "["
        if not depth:
            out.append(char)
        depth -= char == "]"
    return "".join(out)


def compare(
    got: Any,
    expected: Any,
    *,
    tolerance: Mapping[str, float] | None = None,
    normalizers: Mapping[str, Callable[[str], Any]] | None = None,
    path: str = "",
) -> list[Difference]:
    """Where ``got`` differs from ``expected`` (see the module docstring); empty when equal."""
    tolerance, normalizers = tolerance or {}, normalizers or {}
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [Difference(path, expected, got)]
        return [
            difference
            for key in [*expected, *(k for k in got if k not in expected)]
            for difference in compare(
                got.get(key),
                expected.get(key),
                tolerance=tolerance,
                normalizers=normalizers,
                path=f"{path}.{key}" if path else key,
            )  # fmt: skip
        ]
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return [Difference(path, expected, got)]
        return [
            difference
            for index, (g, e) in enumerate(zip(got, expected, strict=True))
            for difference in compare(
                g, e, tolerance=tolerance, normalizers=normalizers, path=f"{path}[{index}]"
            )  # fmt: skip
        ]
    if _same(got, expected, tolerance, normalizers, _plain(path)):
        return []
    return [Difference(path, expected, got)]


def _same(
    got: Any,
    expected: Any,
    tolerance: Mapping[str, float],
    normalizers: Mapping[str, Callable[[str], Any]],
    name: str,
) -> bool:
    if expected is None or got is None or isinstance(expected, bool) or isinstance(got, bool):
        return got is expected
    if isinstance(expected, int | float) and isinstance(got, int | float):
        allowed = tolerance.get(name, ABS_TOLERANCE)
        return abs(float(got) - float(expected)) <= allowed + 1e-12
    normalize = normalizers.get(name) or normalizers.get(name.rsplit(".", 1)[-1])
    if isinstance(expected, str) and isinstance(got, str) and normalize is not None:
        got_n, expected_n = normalize(got), normalize(expected)
        got = got if got_n is None else got_n
        expected = expected if expected_n is None else expected_n
    return bool(got == expected) and type(got) is type(expected)


def field_normalizers(spec: UnitSpec) -> dict[str, Callable[[str], Any]]:
    """Each output field's normalizer: the one the unit's first fallback filling it declares.

    A records unit's fallback declares its record fields (``amount``), which ``compare`` finds
    by a path's last name.
    """
    found: dict[str, Callable[[str], Any]] = {}
    for fallback in spec.fallbacks:
        fields = getattr(fallback, "fields", None)
        if not isinstance(fields, Mapping):  # a kind whose fields are not declared mappings
            continue
        for name, mapping in fields.items():
            normalizer = getattr(mapping, "normalize", None)
            if isinstance(normalizer, str) and name not in found:
                found[name] = normalizer_for(normalizer, spec)
    return found


# -- running ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """One case's run and verdict."""

    index: int
    case: GoldenCase
    result: UnitResult
    differences: tuple[Difference, ...]

    @property
    def passed(self) -> bool:
        """The run gave an output, equal to the expected one."""
        return self.result.output is not None and not self.differences

    def explain(self) -> str:
        """Why it failed, in one line (empty when it passed)."""
        if self.passed:
            return ""
        if self.result.output is None:
            error = self.result.error
            return f"no output: {error.code}: {error.message}" if error else "no output"
        return "; ".join(str(d) for d in self.differences)


@dataclass(frozen=True, slots=True)
class UnitReport:
    """A unit's golden cases, run: the outcomes and their figures."""

    unit: str
    mode: Mode
    outcomes: tuple[CaseOutcome, ...]

    @property
    def total(self) -> int:
        """How many cases ran."""
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        """How many cases passed."""
        return sum(o.passed for o in self.outcomes)

    @property
    def unexpected_failures(self) -> int:
        """Failing cases not marked ``known_failure``: each one fails ``aau test``."""
        return sum(not o.passed and o.case.known_failure is None for o in self.outcomes)

    @property
    def known_failures(self) -> int:
        """Failing cases marked ``known_failure``."""
        return sum(not o.passed and o.case.known_failure is not None for o in self.outcomes)

    @property
    def fixed(self) -> list[int]:
        """Cases marked ``known_failure`` that pass now (their marker is stale)."""
        return [o.index for o in self.outcomes if o.passed and o.case.known_failure is not None]

    @property
    def accuracy(self) -> float:
        """The share of cases passed."""
        return self.passed / self.total if self.total else 0.0

    @property
    def mean_confidence(self) -> float:
        """The mean confidence of the runs (0 for a run without output)."""
        return sum(o.result.confidence for o in self.outcomes) / self.total if self.total else 0.0

    @property
    def ece(self) -> float:
        """Expected calibration error over the cases (10 equal-width bins)."""
        return expected_calibration_error(*self._pairs(), bins=10)

    @property
    def brier(self) -> float:
        """Brier score of the confidences against the cases' verdicts."""
        return brier_score(*self._pairs())

    def _pairs(self) -> tuple[list[float], list[bool]]:
        return [o.result.confidence for o in self.outcomes], [o.passed for o in self.outcomes]

    def to_dict(self) -> dict[str, Any]:
        """The figures and the failing cases, JSON-ready."""
        return {
            "unit": self.unit, "mode": self.mode, "passed": self.passed, "total": self.total,
            "accuracy": round(self.accuracy, 4),
            "mean_confidence": round(self.mean_confidence, 4),
            "ece": round(self.ece, 4), "brier": round(self.brier, 4),
            "known_failures": self.known_failures, "fixed": self.fixed,
            "failures": [{"case": o.index, "input": o.case.input, "why": o.explain(),
                          "path": o.result.path, "confidence": o.result.confidence,
                          "known_failure": o.case.known_failure}
                         for o in self.outcomes if not o.passed],
        }  # fmt: skip


def pipeline_units(spec: UnitSpec) -> list[UnitSpec]:
    """``spec`` after the units it needs (found beside it as ``<name>.yaml``), upstream first."""
    ordered: dict[str, UnitSpec] = {}

    def visit(unit: UnitSpec, chain: tuple[str, ...]) -> None:
        for need in getattr(unit, "needs", []):
            if need in ordered or need in chain:
                continue
            visit(UnitSpec.from_file(unit.base_dir / f"{need}.yaml"), (*chain, need))
        ordered.setdefault(unit.name, unit)

    visit(spec, (spec.name,))
    return list(ordered.values())


def choose_mode(spec: UnitSpec, cases: Sequence[GoldenCase], *, record: bool,
                replay: bool) -> tuple[Mode, str | None]:  # fmt: skip
    """The mode a run takes, and why when it is not the one the flags or the files suggest.

    ``--record`` records; ``--replay`` replays; neither replays a recording that is there and
    current (made from the same prompt, output and inputs), else runs the model.
    """
    if record:
        return "record", None
    path = recording_path(spec)
    if replay:
        return "replay", None
    if not path.is_file():
        return "model", None
    if Recording.load(path).fingerprint != fingerprint(spec, cases):
        return "model", (f"the recording {path.name} is stale (the prompt, output or inputs "
                         "changed): running the model; record again with --record")  # fmt: skip
    return "replay", None


def _replay_calibrator(recording: Recording) -> Any:
    """The calibrator the recorded engine's runs had: its own artifact when there is one."""
    from aau.calibration.calibrator import IN_PROCESS_ENGINE, engine_artifact_path

    if recording.engine == IN_PROCESS_ENGINE:
        return None  # the shipped one, as for an in-process run
    own = engine_artifact_path(recording.engine)
    return own if own.is_file() else None


def run_golden(
    spec: UnitSpec,
    cases: Sequence[GoldenCase],
    mode: Mode,
    *,
    engine: Callable[[], Engine] | None = None,
    terms: Any = None,
) -> UnitReport:
    """Run ``cases`` of ``spec`` in ``mode`` and judge them.

    ``engine`` gives the real engine (``model`` and ``record``: called once, shared); a
    recording is written in ``record`` mode and read in ``replay`` mode.

    Raises:
        SpecError: replaying without a recording, or a malformed one.
    """
    engine_used: Engine
    calibrator: Any = None
    if mode == "replay":
        recording = Recording.load(recording_path(spec))
        engine_used = ReplayEngine(recording)
        calibrator = _replay_calibrator(recording)
    else:
        if engine is None:
            raise ValueError(f"mode {mode} needs an engine")
        engine_used = RecordingEngine(engine()) if mode == "record" else engine()
    units = pipeline_units(spec)
    pipeline = Pipeline(units, engine=engine_used, calibrator=calibrator, terms=terms)
    normalizers = field_normalizers(spec)
    outcomes = []
    for index, case in enumerate(cases):
        result = pipeline.run(case.input).units[spec.name]
        differences = () if result.output is None else tuple(
            compare(result.output, case.expected, tolerance=case.tolerance,
                    normalizers=normalizers)
        )  # fmt: skip
        outcomes.append(CaseOutcome(index, case, result, differences))
    if isinstance(engine_used, RecordingEngine):
        inner = engine_used.engine
        model = getattr(inner, "model_path", None)
        Recording(
            fingerprint=fingerprint(spec, cases),
            engine=inner.name,
            capabilities=inner.capabilities,
            generations=engine_used.generations,
            info={"unit": spec.key, **({"model": Path(model).name} if model else {})},
        ).save(recording_path(spec))
    return UnitReport(spec.name, mode, tuple(outcomes))
