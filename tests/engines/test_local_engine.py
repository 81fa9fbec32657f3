"""The transformers engine on the embedded default model (SmolLM2-135M), and its configuration.

Tests marked ``slow`` share one loaded engine (the session's ``default_engine``) and run the
model only a few times; the rest check configuration and failure paths without weights.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aau.decoding.json_schema import bound_schema
from aau.engines.base import Generation, GenerationRequest
from aau.engines.local import ContextTooLong, TransformersEngine
from aau.engines.registry import EngineConfig, available_engines, build_engine
from aau.errors import EngineError, EngineTimeout, EngineUnavailable, SpecError
from aau.pipeline import Pipeline, UnitResult, load_unit
from aau.prompts.render import render_messages
from aau.spec.model import UnitSpec
from tests.conftest import UNITS_DIR, assert_result_contract

PRICE_TEXT = "Invoice 2024-117. Total due: EUR 1,250.00 by 30 April."


@pytest.fixture(scope="module")
def price_unit() -> UnitSpec:
    return load_unit(UNITS_DIR / "extract_price.yaml")


def request_for(spec: UnitSpec, text: str, **changes: Any) -> GenerationRequest:
    fields: dict[str, Any] = {
        "messages": render_messages(spec, text),
        "schema": bound_schema(spec.output, max_string_length=spec.policy.max_string_length),
        "max_new_tokens": spec.policy.max_new_tokens,
        "key": spec.key,
    }
    return GenerationRequest(**{**fields, **changes})


# -- configuration and failures without weights -------------------------------------------------


def test_transformers_engine_is_registered_by_name() -> None:
    assert "transformers" in available_engines()


def test_unknown_engine_name_lists_the_available_ones() -> None:
    with pytest.raises(
        EngineUnavailable, match=r"^Unknown engine 'vlm'\. Available: .*transformers"
    ):
        build_engine(EngineConfig(backend="vlm"))


def test_engine_config_merges_file_then_environment_then_overrides(tmp_path: Path) -> None:
    file = tmp_path / "engine.yaml"
    file.write_text("device: cuda\ndtype: bfloat16\nthreads: 2\n", encoding="utf-8")
    env = {"AAU_DTYPE": "float16", "AAU_THREADS": "3", "AAU_MODEL": "/models/a",
           "AAU_JUMP_FORWARD_POSITIONS": "0", "AAU_PREFIX_DISK_MB": "0"}  # fmt: skip

    config = EngineConfig.from_sources(file, env=env, model="/models/b", device=None)

    assert config.device == "cuda"  # file
    assert config.dtype == "float16"  # environment over file
    assert config.threads == 3
    assert config.jump_forward_positions == 0
    assert config.prefix_disk_mb == 0
    assert config.model == "/models/b"  # explicit override over environment
    assert EngineConfig.from_sources(env={}) == EngineConfig()


def test_engine_config_file_with_a_bad_value_names_file_line_and_field(tmp_path: Path) -> None:
    file = tmp_path / "engine.yaml"
    file.write_text("device: cpu\ndtype: float8\n", encoding="utf-8")

    with pytest.raises(SpecError) as caught:
        EngineConfig.from_sources(file, env={})

    error = caught.value
    assert (error.file, error.line, error.field, error.spec_code) == (str(file), 2, "dtype", "S060")


def test_missing_model_is_an_engine_unavailable_result_not_a_crash() -> None:
    engine = TransformersEngine(EngineConfig(model="/nonexistent/model.gguf"))
    request = GenerationRequest(messages=[{"role": "user", "content": "hi"}], schema={})

    (result,) = asyncio.run(engine.generate([request]))

    assert isinstance(result, EngineUnavailable)
    assert str(result) == "model not found: /nonexistent/model.gguf"


def test_unit_on_an_engine_without_its_model_answers_from_its_fallbacks(
    price_unit: UnitSpec,
) -> None:
    engine = TransformersEngine(EngineConfig(model="/nonexistent/model.gguf"))
    result = Pipeline([price_unit], engine=engine).run(PRICE_TEXT)["extract_price"]

    assert result.path in {fallback.kind for fallback in price_unit.fallbacks}
    assert result.output == {"amount": 1250.0, "currency": "EUR"}
    assert result.attempts[0].error.code == "engine_unavailable"


def test_context_too_long_is_an_engine_unavailable_that_retrying_cannot_fix() -> None:
    error = ContextTooLong("too long")

    assert isinstance(error, EngineUnavailable)
    assert error.code == "context_too_long"
    assert error.retryable is False


# -- the real default model ---------------------------------------------------------------------


class RecordingEngine:
    """Forwards to a real engine and keeps every (request, result) pair."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.name, self.capabilities = engine, engine.name, engine.capabilities
        self.calls: list[tuple[GenerationRequest, Generation | EngineError]] = []

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        results = await self.engine.generate(requests)
        self.calls.extend(zip(requests, results, strict=True))
        return results

    async def ready(self) -> None:
        await self.engine.ready()

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        await self.engine.warmup(schemas)

    def close(self) -> None:
        """The shared engine outlives this wrapper."""


@pytest.fixture(scope="module")
def price_run(
    default_engine: Any, price_unit: UnitSpec
) -> tuple[UnitResult, list[tuple[GenerationRequest, Any]]]:
    """One real run of ``extract_price``, with the engine's raw generation."""
    recorder = RecordingEngine(default_engine)
    result = Pipeline([price_unit], engine=recorder).run(PRICE_TEXT)["extract_price"]
    return result, recorder.calls


@pytest.mark.slow
def test_unit_on_the_default_model_returns_valid_output_or_a_coded_fallback(
    price_run: tuple[UnitResult, list[Any]], price_unit: UnitSpec
) -> None:
    result, calls = price_run

    assert_result_contract(result, price_unit)
    assert len(calls) == 1
    assert result.states[:3] == ["received", "prompting", "decoding"]
    assert result.states[-1] in {"done", "failed"}
    assert result.attempts[0].path == "primary"
    if result.path != "primary":  # the model's answer was refused: the reason is recorded
        assert result.attempts[0].error is not None or result.attempts[0].confidence is not None
    assert result.timings["prefill_ms"] > 0
    assert result.timings["decode_ms"] > 0
    assert result.tokens["prompt"] > 100  # system text and few-shot turns
    assert result.tokens["generated"] > 0


@pytest.mark.slow
def test_default_model_writes_compact_schema_valid_json_and_stops(
    price_run: tuple[UnitResult, list[Any]],
) -> None:
    _, [(request, generation)] = price_run

    assert isinstance(generation, Generation), generation
    assert generation.finish_reason == "stop"
    parsed = json.loads(generation.text)
    jsonschema.validate(parsed, request.schema)
    outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', generation.text)
    assert not re.search(r"\s", outside_strings), generation.text


@pytest.mark.slow
def test_default_model_reports_one_signal_per_generated_token(
    price_run: tuple[UnitResult, list[Any]],
) -> None:
    _, [(_, generation)] = price_run
    count = generation.generated_tokens

    assert count > 0
    assert len(generation.token_logprobs) == len(generation.token_entropies) == count
    assert len(generation.forced) == count
    assert all(lp <= 0 for lp in generation.token_logprobs)
    assert all(h >= 0 for h in generation.token_entropies)
    assert any(generation.forced), "property names are forced by the schema"
    assert not all(generation.forced), "the values are the model's choice"


@pytest.mark.slow
def test_requests_past_their_deadline_or_cancelled_fail_in_their_own_slot(
    default_engine: Any, price_unit: UnitSpec
) -> None:
    late = request_for(price_unit, PRICE_TEXT, deadline=time.monotonic() - 1)
    cancelled = request_for(price_unit, PRICE_TEXT)
    cancelled.cancel.set()

    results = asyncio.run(default_engine.generate([late, cancelled]))

    assert len(results) == 2
    assert all(isinstance(r, EngineTimeout) for r in results), results
    late_error, cancelled_error = map(str, results)
    assert late_error.startswith(f"{price_unit.key}: ")
    assert "deadline" in late_error
    assert cancelled_error == f"{price_unit.key}: cancelled by the caller"
    assert results[0].retryable


@pytest.mark.slow
def test_prompt_longer_than_the_context_falls_back_and_still_answers(
    default_engine: Any, price_unit: UnitSpec
) -> None:
    # Far past the model's context, and within the input limit (LIMITS.text_chars).
    filler = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 17600)[:999_000]
    text = filler + " Total due: EUR 99.00."

    result = Pipeline([price_unit], engine=default_engine).run(text)["extract_price"]

    primary = result.attempts[0]
    assert (primary.path, primary.error.code) == ("primary", "context_too_long")
    context = default_engine.model.config.max_position_embeddings
    assert f"exceeds the model's context of {context} tokens" in primary.error.message
    assert result.path in {fallback.kind for fallback in price_unit.fallbacks}
    assert result.output == {"amount": 99.0, "currency": "EUR"}
    assert result.timings["decode_ms"] == 0.0  # refused before any generation


@pytest.mark.slow
def test_warmup_compiles_the_given_schemas(
    default_engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = {
        "type": "object",
        "properties": {"warmup_probe_field": {"type": "integer", "minimum": 0, "maximum": 9}},
        "required": ["warmup_probe_field"],
        "additionalProperties": False,
    }
    compile_ = default_engine.compiler.compile
    compiled: list[tuple[dict[str, Any], Any]] = []

    def spy(schema: dict[str, Any], **kwargs: Any) -> Any:
        constraint = compile_(schema, **kwargs)
        compiled.append((schema, constraint))
        return constraint

    monkeypatch.setattr(default_engine.compiler, "compile", spy)
    asyncio.run(default_engine.warmup([schema]))

    assert compiled[0][0] == schema
    monkeypatch.undo()
    assert default_engine.compiler.compile(schema) is compiled[0][1]
