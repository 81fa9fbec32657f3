"""Regressions for behaviour settled after the core suite's review of edge cases."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import aau
from aau.cli.batch import parse_line
from aau.decoding import bound_schema
from aau.engines.base import EngineCapabilities, Generation, GenerationRequest
from aau.errors import InputError, SpecError
from tests.conftest import FIND_TOTAL_YAML


def test_batch_id_that_is_null_or_a_list_is_a_coded_line_error() -> None:
    for bad in (None, [1], True):
        raw = json.dumps({"id": bad, "text": "5 EUR"}).encode()
        with pytest.raises(InputError, match="'id' must be a string or an integer") as info:
            parse_line(raw, 4)
        assert info.value.code == "invalid_input"
        assert "line 4" in str(info.value)


def test_free_form_object_field_stays_free_when_bounded() -> None:
    schema = {"type": "object", "properties": {"meta": {"type": "object"}}}
    bounded = bound_schema(schema, max_string_length=16)
    assert bounded["additionalProperties"] is False  # the declared object is closed
    assert "additionalProperties" not in bounded["properties"]["meta"]  # the free one is not


def test_schema_the_decoder_cannot_compile_is_refused_at_load() -> None:
    data = aau.UnitSpec.from_text(FIND_TOTAL_YAML).model_dump()
    data["output"]["properties"]["tags"] = {"type": "array", "minItems": 1}
    data["prompt"]["examples"] = []
    with pytest.raises(SpecError, match=r"(?s)cannot compile this schema.*\[S014\]"):
        aau.UnitSpec.from_dict(data)


class HangingEngine:
    """Fault injection: an engine that ignores the request deadline and never answers."""

    name = "hanging"
    capabilities = EngineCapabilities(token_logprobs=False)

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def ready(self) -> None:
        """Nothing to load."""

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing to release."""


def test_engine_that_ignores_the_deadline_times_out_and_the_unit_falls_back(tmp_path: Path) -> None:
    data = aau.UnitSpec.from_text(FIND_TOTAL_YAML).model_dump()
    data["policy"]["timeout_s"] = 0.2
    unit = aau.UnitSpec.from_dict(data)
    result = aau.Pipeline([unit], engine=HangingEngine()).run("Total: EUR 12.50")[unit.name]
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.code == "engine_timeout"
    # A hang guard, not a speed figure: the engine sleeps an hour and the default timeout is 60 s,
    # so ending well inside 10 s shows the unit's own 0.2 s timeout was the one that cut it off.
    assert result.timings["total_ms"] < 10_000
