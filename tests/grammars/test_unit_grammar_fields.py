"""Unit fields that name a grammar: constrained, validated on every path, normalized."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

import aau
from aau.errors import SpecError
from aau.grammars import load_grammar
from aau.runner.runner import UnitRunner
from aau.testing import FunctionEngine
from tests._tiny_glm5 import build_tiny_glm5

ROOT = Path(__file__).resolve().parents[2]
DATE_UNIT = ROOT / "units" / "extract_date.yaml"


def test_grammar_regex_becomes_the_fields_pattern_in_the_decoding_schema() -> None:
    runner = UnitRunner(aau.load_unit(DATE_UNIT), engine=None)
    pattern = runner.schema["properties"]["date"]["pattern"]
    assert pattern == f"^({load_grammar('iso_date').regex})$"
    assert re.fullmatch(pattern[1:-1], "2024-03-14")
    assert not re.fullmatch(pattern[1:-1], "2024-13-14")


def test_validate_compiles_the_schema_the_run_decodes(monkeypatch: pytest.MonkeyPatch) -> None:
    # `aau validate` once compiled the schema without the grammar patterns the run adds, so it
    # could approve a schema that differs from the one decoded.
    from aau.decoding import constraints
    from aau.spec import model

    compiled: list[dict] = []

    def recording(schema: dict, backend: str = "xgrammar") -> str | None:
        compiled.append(schema)
        return constraints.schema_compile_problem(schema, backend)

    monkeypatch.setattr(model, "schema_compile_problem", recording)
    spec = aau.UnitSpec.from_file(DATE_UNIT)  # what `aau validate` does
    runner = UnitRunner(spec, engine=None)
    assert compiled == [runner.schema]
    assert "pattern" in compiled[0]["properties"]["date"]  # the grammar's, as decoded


def test_value_the_grammar_rejects_is_invalid_output_with_its_position_in_the_trace() -> None:
    # The fake engine stands in for a model that ignores its constraint (as a remote server may).
    engine = FunctionEngine(lambda request: '{"date":"2024-02-3x"}')
    result = aau.Pipeline([DATE_UNIT], engine=engine).run("Signed on 02/09/2023.")["extract_date"]
    primary = result.attempts[0]
    assert primary.error is not None
    assert primary.error.code == "invalid_output"
    assert "is not a valid iso_date" in primary.error.message
    assert any(step.detail == "invalid_output at $.date[9]" for step in result.trace), result.trace
    assert result.output == {"date": "2023-09-02"}  # a fallback answered, read day-first


def test_heuristic_normalizes_dates_with_the_grammar_and_the_units_locale() -> None:
    shipped = aau.load_unit(DATE_UNIT)
    heuristic_only = [f.model_dump() for f in shipped.fallbacks if f.kind == "heuristic"]
    unit = aau.UnitSpec.from_dict(
        {**shipped.model_dump(exclude={"source"}), "fallbacks": heuristic_only}
    )
    pipeline = aau.Pipeline([unit], engine=False)
    assert pipeline.run("Signed on 03/04/2024.")["extract_date"].output == {"date": "2024-04-03"}
    mdy = unit.model_copy(update={"locale": unit.locale.model_copy(update={"date_order": None})})
    ambiguous = aau.Pipeline([mdy], engine=False).run("Signed on 03/04/2024.")["extract_date"]
    assert ambiguous.output == {"date": None}  # reported as no value, never guessed


def test_unit_naming_a_missing_grammar_fails_to_load_with_the_available_names(
    tmp_path: Path,
) -> None:
    text = DATE_UNIT.read_text(encoding="utf-8").replace(
        "{grammar: iso_date}", "{grammar: isodate}"
    )
    path = tmp_path / "extract_date.yaml"
    path.write_text(text, encoding="utf-8")
    for name in ("extract_date.annotated.jsonl", "extract_date.crf", "extract_date.crf.json"):
        shutil.copy(ROOT / "units" / name, tmp_path / name)  # a link out of the folder is refused
    with pytest.raises(SpecError) as info:
        aau.load_unit(path)
    message = str(info.value)
    assert "fields.date.grammar" in message
    assert "isodate" in message
    assert "iso_date" in message  # the available grammars are listed


def test_primary_path_on_glm5_is_constrained_by_the_grammar_pattern(tmp_path: Path) -> None:
    from aau.engines.local import TransformersEngine

    engine = TransformersEngine(aau.EngineConfig(model=str(build_tiny_glm5(tmp_path)), threads=1))
    unit = aau.load_unit(DATE_UNIT)
    try:
        result = aau.Pipeline([unit], engine=engine).run("Signed on 02/09/2023.")["extract_date"]
    finally:
        engine.close()
    primary = result.attempts[0]
    # Random weights answer nonsense, but never a date the grammar rejects: the constraint
    # holds, so the primary path fails only by budget or grounding, not by the grammar.
    assert primary.error is None or "is not a valid iso_date" not in primary.error.message
    if result.output is not None:
        jsonschema.validate(result.output, unit.output)
    assert json.dumps(result.to_dict())
