"""GLM-5's architecture (``glm_moe_dsa``) runs through the same engine and unit run as any model.

The model is a tiny random-weight GLM-5 built from a scaled-down config (no hub here): its
answers are noise, so the contract checked is the one that matters for such a model — every
unit result is schema-valid or a coded fallback, and nothing crashes.
"""

from __future__ import annotations

import jsonschema
import pytest

import aau
from aau.engines.local import TransformersEngine
from tests._tiny_glm5 import build_tiny_glm5
from tests.conftest import PROMPTED_UNIT_FILES

UNITS = PROMPTED_UNIT_FILES


@pytest.fixture(scope="module")
def glm5_engine(tmp_path_factory: pytest.TempPathFactory) -> TransformersEngine:
    folder = build_tiny_glm5(tmp_path_factory.mktemp("glm5"))
    engine = TransformersEngine(aau.EngineConfig(model=str(folder), threads=1))
    engine.load()
    return engine


def test_tiny_glm5_loads_as_glm_moe_dsa(glm5_engine: TransformersEngine) -> None:
    assert glm5_engine.model.config.model_type == "glm_moe_dsa"


def test_units_on_tiny_glm5_return_schema_valid_output_or_coded_fallback(
    glm5_engine: TransformersEngine,
) -> None:
    units = [aau.load_unit(p) for p in UNITS]
    pipeline = aau.Pipeline(units, engine=glm5_engine)
    text = "Invoice of 14 March 2024: 40 boxes, total due EUR 1,250.00."
    result = pipeline.run(text)
    for unit in units:
        unit_result = result[unit.name]
        assert unit_result.states[0] == "received"
        assert unit_result.states[-1] in {"done", "failed"}
        assert "decoding" in unit_result.states  # the model path really ran
        primary = unit_result.attempts[0]
        assert primary.path == "primary"
        if unit_result.output is not None:
            jsonschema.validate(unit_result.output, unit.output)
        else:
            assert unit_result.error is not None
            assert unit_result.error.code


def test_tiny_glm5_generation_is_compact_json_under_the_constraint(
    glm5_engine: TransformersEngine,
) -> None:
    import asyncio
    import json

    from aau.engines.base import GenerationRequest

    schema = {
        "type": "object",
        "properties": {"date": {"type": ["string", "null"], "maxLength": 12}},
        "required": ["date"],
        "additionalProperties": False,
    }
    request = GenerationRequest(
        messages=[{"role": "user", "content": "Date of 14 March 2024?"}], schema=schema,
        max_new_tokens=40,
    )  # fmt: skip
    generation = asyncio.run(glm5_engine.generate([request]))[0]
    assert not isinstance(generation, Exception)
    if generation.finish_reason == "stop":
        jsonschema.validate(json.loads(generation.text), schema)
    assert (
        len(generation.token_logprobs) == len(generation.forced) == len(generation.token_entropies)
    )


def test_warmup_fills_the_prefix_cache_that_the_first_request_reads(
    glm5_engine: TransformersEngine,
) -> None:
    import asyncio

    unit = aau.load_unit(UNITS[0])
    pipeline = aau.Pipeline([unit], engine=glm5_engine)
    glm5_engine.prefix_cache.clear()
    asyncio.run(pipeline.warmup())

    result = pipeline.run("A first real request, never seen before: 3 boxes.")[unit.name]

    assert result.tokens["cached"] > 0
