"""Pipelines: several units over one input on one engine, each unit's failure kept to itself."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import aau
from aau.decoding.json_schema import bound_schema
from aau.engines.base import EngineCapabilities, Generation, GenerationRequest
from aau.errors import EngineTimeout, EngineUnavailable, InputError, SpecError
from aau.pipeline import Pipeline, PipelineResult
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import (
    FIND_TOTAL_YAML,
    PRICE_UNIT,
    TOTAL_ANSWER,
    TOTAL_TEXT,
    RunUnit,
    assert_result_contract,
)

CONTRACT_KEYS = {"unit", "version", "output", "confidence", "path", "error", "timings", "trace"}


@pytest.fixture
def find_sum(unit_data: dict[str, Any]) -> UnitSpec:
    """A sibling of ``find_total``: same schema and paths, another name."""
    unit_data["name"] = "find_sum"
    return UnitSpec.from_dict(unit_data)


def answer_by_unit(answers: dict[str, Any]) -> FunctionEngine:
    """An engine double answering each unit (``name@version``) its own way."""
    return FunctionEngine(lambda request: answers[request.key.split("@")[0]])


def test_a_failing_unit_does_not_affect_its_sibling(
    run_unit: RunUnit, find_total: UnitSpec, unit_data: dict[str, Any]
) -> None:
    unit_data["name"] = "find_sum"
    unit_data["policy"]["fallback_on"] = []  # any primary failure ends this unit's run
    doomed = UnitSpec.from_dict(unit_data)
    engine = answer_by_unit({"find_total": TOTAL_ANSWER, "find_sum": EngineUnavailable("down")})

    together = run_unit(Pipeline([doomed, find_total], engine=engine), TOTAL_TEXT)
    alone = run_unit(Pipeline([find_total], engine=engine), TOTAL_TEXT)["find_total"]

    assert together["find_sum"].error.code == "engine_unavailable"
    assert together["find_sum"].states[-1] == "failed"
    sibling = together["find_total"]
    assert sibling.error is None
    assert (sibling.output, sibling.path, sibling.confidence, sibling.states) == (
        alone.output,
        alone.path,
        alone.confidence,
        alone.states,
    )


def test_a_unit_whose_every_path_fails_leaves_its_sibling_answering(
    run_unit: RunUnit, find_total: UnitSpec, find_sum: UnitSpec
) -> None:
    engine = answer_by_unit({"find_total": EngineTimeout("late"), "find_sum": "not json"})
    pipeline = Pipeline([find_total, find_sum], engine=engine)
    pipeline.runners[0].fallbacks.clear()  # find_total has the model path only

    result = run_unit(pipeline, TOTAL_TEXT)

    assert result["find_total"].error.code == "engine_timeout"
    assert result["find_sum"].path == "heuristic"
    assert result["find_sum"].output == {"amount": 120.5, "currency": "EUR"}


def test_an_engine_raising_for_one_unit_does_not_take_down_its_sibling(
    run_unit: RunUnit, find_total: UnitSpec, find_sum: UnitSpec
) -> None:
    def answer(request: GenerationRequest) -> str:
        if request.key.startswith("find_sum@"):
            raise RuntimeError("CUDA error: device-side assert triggered")
        return TOTAL_ANSWER

    result = run_unit(Pipeline([find_total, find_sum], engine=FunctionEngine(answer)), TOTAL_TEXT)

    assert result["find_total"].path == "primary"
    assert result["find_sum"].attempts[0].error is not None


class RendezvousEngine:
    """Answers only once every expected request is in flight at the same time."""

    name = "rendezvous"
    capabilities = EngineCapabilities(token_logprobs=True)

    def __init__(self, expected: int) -> None:
        self.expected, self.arrived = expected, 0
        self.everyone: asyncio.Event | None = None

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        self.everyone = self.everyone or asyncio.Event()
        self.arrived += 1
        if self.arrived == self.expected:
            self.everyone.set()
        try:
            await asyncio.wait_for(self.everyone.wait(), timeout=10)
        except TimeoutError:
            return [EngineTimeout("the units ran one after another") for _ in requests]
        return [Generation(TOTAL_ANSWER, "stop", (-0.01,), (0.0,), (False,)) for _ in requests]

    async def ready(self) -> None: ...

    async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None: ...

    def close(self) -> None: ...


def test_units_of_a_pipeline_run_concurrently(
    run_unit: RunUnit, find_total: UnitSpec, find_sum: UnitSpec
) -> None:
    pipeline = Pipeline([find_total, find_sum], engine=RendezvousEngine(2), calibrator=False)
    result = run_unit(pipeline, TOTAL_TEXT)

    assert [u.path for u in result.units.values()] == ["primary", "primary"]


def test_pipeline_result_keeps_unit_order_and_id(find_total: UnitSpec, find_sum: UnitSpec) -> None:
    pipeline = Pipeline([find_sum, find_total], engine=False)
    result = pipeline.run(TOTAL_TEXT, id="doc-1")

    assert result.id == "doc-1"
    assert list(result.units) == ["find_sum", "find_total"]
    assert [u.name for u in pipeline.units] == ["find_sum", "find_total"]


def test_pipeline_refuses_two_units_with_the_same_name(find_total: UnitSpec) -> None:
    with pytest.raises(ValueError, match="units must have distinct names; repeated: find_total"):
        Pipeline([find_total, find_total], engine=False)


def test_pipeline_loads_units_from_paths(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML, encoding="utf-8")

    pipeline = Pipeline([path, str(PRICE_UNIT)], engine=False)

    assert [u.name for u in pipeline.units] == ["find_total", PRICE_UNIT.stem]
    assert pipeline.units[0].source == path.resolve()


def test_pipeline_with_a_bad_unit_file_raises_a_located_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML.replace("threshold: 0.6", "threshold: 7"), encoding="utf-8")

    with pytest.raises(SpecError, match=r"find_total\.yaml:\d+: policy\.threshold: "):
        Pipeline([path], engine=False)


def test_runner_is_reusable_and_keeps_no_state_between_inputs(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    pipeline = Pipeline([find_total], engine=False)

    first = run_unit(pipeline, TOTAL_TEXT)["find_total"]
    other = run_unit(pipeline, "Total: 7 USD")["find_total"]
    again = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert other.output == {"amount": 7.0, "currency": "USD"}
    assert (again.output, again.states, again.attempts) == (
        first.output,
        first.states,
        first.attempts,
    )


def test_result_to_dict_has_the_contract_keys_and_is_json(find_total: UnitSpec) -> None:
    engine = FunctionEngine(lambda request: "not json")
    data = Pipeline([find_total], engine=engine).run(TOTAL_TEXT, id="7").to_dict()

    assert set(data) == {"id", "units"}
    assert data["id"] == "7"
    unit = data["units"]["find_total"]
    assert set(unit) >= CONTRACT_KEYS | {"attempts", "spans", "tokens"}
    assert unit["path"] == "heuristic"
    assert unit["error"] is None
    assert unit["spans"] == {"amount": [18, 24], "currency": [25, 28]}
    assert unit["trace"][0] == {"state": "received", "path": None, "at_ms": 0.0, "detail": None}
    assert unit["attempts"][0]["error"]["code"] == "invalid_output"
    json.dumps(data, allow_nan=False)  # plain JSON, no NaN or infinities


def test_failed_input_gives_every_unit_the_input_error(
    find_total: UnitSpec, find_sum: UnitSpec
) -> None:
    pipeline = Pipeline([find_total, find_sum], engine=False)
    result = pipeline.failed(InputError("line 3: not JSON"), id="x")

    assert result.id == "x"
    for spec in (find_total, find_sum):
        unit = result[spec.name]
        assert_result_contract(unit, spec)
        assert unit.error.code == "invalid_input"
        assert unit.error.message == "line 3: not JSON"
        assert unit.version == "3"


def test_warmup_hands_the_engine_every_bounded_schema(find_total: UnitSpec) -> None:
    warmed: list[dict[str, Any]] = []

    class WarmEngine(FunctionEngine):
        async def warmup(self, schemas: Sequence[dict[str, Any]] = ()) -> None:
            warmed.extend(schemas)

    pipeline = Pipeline([find_total], engine=WarmEngine(lambda r: TOTAL_ANSWER))
    asyncio.run(pipeline.warmup())

    assert warmed == [bound_schema(find_total.output, max_string_length=128)]


def test_warmup_without_an_engine_runs_each_unit_once(find_total: UnitSpec) -> None:
    pipeline = Pipeline([find_total], engine=False)
    runner = pipeline.runners[0]
    seen: list[str] = []
    real_run = runner.run

    async def counted(text: str, **kwargs: Any) -> Any:
        seen.append(text)
        return await real_run(text, **kwargs)

    runner.run = counted  # type: ignore[method-assign]
    asyncio.run(pipeline.warmup())

    assert seen == ["warm-up probe"]  # the fallbacks' models and the calibrator load now


def test_run_function_builds_a_pipeline_and_runs_one_text(find_total: UnitSpec) -> None:
    result = aau.run([find_total], TOTAL_TEXT, engine=FunctionEngine(lambda r: TOTAL_ANSWER))

    assert isinstance(result, PipelineResult)
    assert result["find_total"].path == "primary"
    assert result["find_total"].output == {"amount": 120.5, "currency": "EUR"}


async def test_arun_runs_inside_a_running_event_loop(find_total: UnitSpec) -> None:
    pipeline = Pipeline([find_total], engine=FunctionEngine(lambda r: TOTAL_ANSWER))

    results = await asyncio.gather(*(pipeline.arun(TOTAL_TEXT, id=str(i)) for i in range(3)))

    assert [r.id for r in results] == ["0", "1", "2"]
    assert all(r["find_total"].path == "primary" for r in results)
