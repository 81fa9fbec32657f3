"""The in-process engine on a CUDA device (opt-in: ``pytest --gpu``; skipped without it).

The tiny random-weight GLM-5 keeps the run to seconds; the contract is the CPU tests' own: the
weights sit on the GPU, a constrained generation comes back whole, and every unit result is
schema-valid or a coded fallback.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest
import torch

import aau
from aau.decoding import bound_schema
from aau.engines.base import Generation, GenerationRequest
from aau.engines.local import TransformersEngine
from aau.prompts import render_messages
from tests._tiny_glm5 import build_tiny_glm5

pytestmark = pytest.mark.gpu

UNIT = Path(__file__).resolve().parents[2] / "units" / "extract_price.yaml"


def test_tiny_glm5_runs_a_unit_on_cuda(tmp_path: Path) -> None:
    assert torch.cuda.is_available(), "--gpu was given, but torch sees no CUDA device"
    folder = build_tiny_glm5(tmp_path / "glm5")
    engine = TransformersEngine(aau.EngineConfig(model=str(folder), device="cuda"))
    engine.load()
    try:
        assert engine.model.device.type == "cuda"
        unit = aau.load_unit(UNIT)
        text = "Invoice 7: total due EUR 1,250.50 by 3 March 2024."
        schema = bound_schema(unit.output, max_string_length=32)
        request = GenerationRequest(messages=render_messages(unit, text), schema=schema,
                                    max_new_tokens=24, key=unit.key)  # fmt: skip
        (generation,) = asyncio.run(engine.generate([request]))
        assert isinstance(generation, Generation), generation
        if generation.finish_reason == "stop":
            jsonschema.validate(json.loads(generation.text), schema)
        assert len(generation.token_logprobs) == len(generation.forced) > 0

        result = aau.Pipeline([unit], engine=engine).run(text)[unit.name]
        assert "decoding" in result.states  # the model path ran on the GPU
        if result.output is not None:
            jsonschema.validate(result.output, unit.output)
        else:
            assert result.error is not None
            assert result.error.code
    finally:
        engine.close()


def test_tiny_glm5_batched_outputs_equal_single_runs_on_cuda(tmp_path: Path) -> None:
    """The CPU tests' batching contract on the GPU: rows batched, jumped forward over forced
    JSON and prefilled together on cached prefixes give the tokens of one-at-a-time runs."""
    folder = build_tiny_glm5(tmp_path / "glm5")
    units = [aau.load_unit(UNIT.parent / f"{name}.yaml")
             for name in ("extract_price", "extract_date", "extract_quantity")]  # fmt: skip
    texts = ["Invoice 7: 12 boxes delivered on 3 March 2024, total due EUR 1,250.50.",
             "Please ship 500 kg by June 5, 2025; the agreed price is USD 18,400."]  # fmt: skip
    requests = [GenerationRequest(messages=render_messages(unit, text),
                                  schema=bound_schema(unit.output, max_string_length=32),
                                  max_new_tokens=24, key=unit.key)
                for text in texts for unit in units]  # fmt: skip

    def texts_from(batched: bool, **options: int) -> list[str]:
        engine = TransformersEngine(aau.EngineConfig(model=str(folder), device="cuda", **options))
        engine.load()

        async def go() -> list:
            if batched:
                await engine.generate(requests[:3])  # the unit prefixes, cached
                return await engine.generate(requests)
            return [(await engine.generate([r]))[0] for r in requests]

        try:
            results = asyncio.run(go())
        finally:
            engine.close()
        assert all(isinstance(r, Generation) for r in results), results
        return [r.text for r in results]

    assert texts_from(True) == texts_from(False, max_batch_size=1, prefix_cache_mb=0)
