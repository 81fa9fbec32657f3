"""Every shipped unit (``units/*.yaml``): it loads, renders, teaches valid examples, its heuristic
agrees with its own examples, and it runs end to end on the default model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aau.answers import PathAnswer, PathContext
from aau.decoding.json_schema import bound_schema
from aau.fallbacks.heuristic import HeuristicFallback
from aau.pipeline import Pipeline
from aau.prompts import render_messages
from aau.prompts.render import compact_json
from aau.spec.model import UnitSpec
from tests.conftest import PROMPTED_UNIT_FILES, assert_result_contract

pytestmark = pytest.mark.parametrize("unit_file", PROMPTED_UNIT_FILES, ids=lambda p: p.stem)

DOCUMENT = "Delivery note 88: 40 boxes shipped on 21 March 2024, total due EUR 312.00."
"""A text every shipped unit has an answer in, and that none of their examples contains."""


def load(unit_file: Path) -> UnitSpec:
    return UnitSpec.from_file(unit_file)


def test_unit_loads_with_its_file_stem_as_name(unit_file: Path) -> None:
    spec = load(unit_file)

    assert spec.name == unit_file.stem
    assert spec.key == f"{spec.name}@{spec.version}"
    assert spec.description.strip()
    assert spec.source == unit_file.resolve()


def test_unit_renders_system_few_shot_turns_then_the_input(unit_file: Path) -> None:
    spec = load(unit_file)
    text = "Odd input with {{ braces }} and {% tags %} kept as written."

    messages = render_messages(spec, text)

    assert [m["role"] for m in messages] == (
        ["system"] + ["user", "assistant"] * len(spec.prompt.examples) + ["user"]
    )
    assert messages[0]["content"].strip()
    assert text in messages[-1]["content"]
    for index, example in enumerate(spec.prompt.examples):
        assert example.input in messages[1 + 2 * index]["content"]
        assert messages[2 + 2 * index]["content"] == compact_json(example.output)


def test_unit_prompt_prefix_is_the_same_for_every_input(unit_file: Path) -> None:
    spec = load(unit_file)

    first = render_messages(spec, "first document")
    second = render_messages(spec, "a second, longer document")

    assert first[:-1] == second[:-1]  # a shared prefix the engine can cache


def test_unit_examples_are_valid_against_the_output_and_the_bounded_schema(
    unit_file: Path,
) -> None:
    spec = load(unit_file)
    bounded = bound_schema(spec.output, max_string_length=spec.policy.max_string_length)

    assert spec.prompt.examples, "a unit teaches its answer format by example"
    for example in spec.prompt.examples:
        jsonschema.validate(example.output, spec.output)
        jsonschema.validate(example.output, bounded)
        assert json.loads(compact_json(example.output)) == example.output


def test_unit_heuristic_answers_its_own_examples(unit_file: Path) -> None:
    spec = load(unit_file)
    heuristics = [f for f in spec.fallbacks if isinstance(f, HeuristicFallback)]
    if not heuristics:
        pytest.skip(f"{spec.name} declares no heuristic fallback")
    path = heuristics[0].build(spec)
    context = PathContext(unit_name=spec.name, output_schema=spec.output)

    misses: list[str] = []
    for example in spec.prompt.examples:
        answer: PathAnswer = path.extract(example.input, context)
        jsonschema.validate(answer.output, spec.output)
        if answer.output != example.output:
            misses.append(f"{example.input!r}: expected {example.output}, got {answer.output}")
        if any(v is not None for v in example.output.values()):
            assert answer.confidence > heuristics[0].no_match_confidence
        for field, (start, end) in answer.spans.items():
            assert 0 <= start < end <= len(example.input), field

    assert not misses, f"{spec.name}'s heuristic misses its own examples:\n" + "\n".join(misses)


@pytest.mark.slow
def test_unit_runs_end_to_end_on_the_default_model(unit_file: Path, default_engine: Any) -> None:
    spec = load(unit_file)

    result = Pipeline([spec], engine=default_engine).run(DOCUMENT)[spec.name]

    assert_result_contract(result, spec)
    assert result.states[:3] == ["received", "prompting", "decoding"]
    assert result.attempts[0].path == "primary"
    assert result.states[-1] == "done", result.error  # the heuristic always has an answer


def _texts_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_held_out_parts_are_apart_from_the_training_texts_and_each_other(unit_file: Path) -> None:
    spec = load(unit_file)
    dev = spec.base_dir / f"{spec.name}.heldout.jsonl"
    test = spec.base_dir / f"{spec.name}.heldout.test.jsonl"
    if not test.is_file():
        pytest.skip("no test part")
    trained = {
        row["text"]
        for fallback in spec.fallbacks
        if isinstance(getattr(fallback, "examples", None), str)
        for row in _texts_of(spec.base_dir / fallback.examples)
    }
    dev_texts = {row["text"] for row in _texts_of(dev)} if dev.is_file() else set()
    rows = _texts_of(test)

    assert len(rows) >= 40
    assert not {row["text"] for row in rows} & (trained | dev_texts)
    for row in rows:
        jsonschema.validate(row["output"], spec.output)


def test_a_units_own_calibrator_is_current(unit_file: Path) -> None:
    from aau.calibration.unit_calibrator import (
        load_unit_calibrator,
        stale_reason,
        unit_calibration_path,
    )

    spec = load(unit_file)
    path = unit_calibration_path(spec)
    if not path.is_file():
        pytest.skip("scored by the shared calibrator")
    calibrator = load_unit_calibrator(path)

    assert stale_reason(calibrator.data, spec) is None
    assert calibrator.data.report["apart_texts"] >= 40  # rescaled on real wording
