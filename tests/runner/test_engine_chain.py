"""A unit's engine chain (``engines: [a, b]``) and the engine readiness kept out of the deadline.

The engines are test doubles (``FunctionEngine``, ``SlowToLoad``) that inject the faults; the
chain against a real server and a fault injector is in ``tests/remote``.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from aau.engines.base import GenerationRequest
from aau.errors import EngineOverloaded, EngineUnavailable, SpecError
from aau.pipeline import Pipeline
from aau.spec.model import UnitSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, TOTAL_TEXT, RunUnit


def with_engines(spec: UnitSpec, engines: list[str], **policy: object) -> UnitSpec:
    data = spec.model_dump()
    data["engines"] = engines
    data["policy"].update(policy)
    return UnitSpec.from_dict(data)


def down(request: GenerationRequest) -> EngineUnavailable:
    return EngineUnavailable("http://glm5:8000: ConnectError: connection refused")


def test_the_next_engine_answers_when_the_first_is_down(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    first, second = FunctionEngine(down), FunctionEngine(lambda r: TOTAL_ANSWER)
    spec = with_engines(find_total, ["glm5", "local"])
    pipeline = Pipeline([spec], engine=False, engines={"glm5": first, "local": second},
                        calibrator=False)  # fmt: skip

    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert result.error is None
    assert (result.path, result.engine) == ("primary", "local")
    assert result.output == {"amount": 120.5, "currency": "EUR"}
    assert len(first.requests) == len(second.requests) == 1
    steps = [s.detail for s in result.trace if s.state == "decoding"]
    assert steps == [None, "engine glm5: engine_unavailable; next engine local"]
    assert [(a.path, a.error.code if a.error else None) for a in result.attempts] == [
        ("primary", "engine_unavailable"), ("primary", None)]  # fmt: skip
    assert "on engine glm5" in result.attempts[0].error.message


def test_when_every_engine_fails_the_fallbacks_answer(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    busy = FunctionEngine(lambda r: EngineOverloaded("429 too many requests"))
    spec = with_engines(find_total, ["glm5", "local"])
    pipeline = Pipeline([spec], engine=False, engines={"glm5": busy, "local": FunctionEngine(down)},
                        calibrator=False)  # fmt: skip

    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert result.path == "heuristic"
    assert result.output == {"amount": 120.5, "currency": "EUR"}
    assert result.engine == "local"
    codes = [a.error.code for a in result.attempts if a.error]
    assert codes == ["engine_overloaded", "engine_unavailable"]


def test_an_engine_failure_outside_fallback_on_ends_the_chain(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    second = FunctionEngine(lambda r: TOTAL_ANSWER)
    spec = with_engines(find_total, ["glm5", "local"], fallback_on=["invalid_output"])
    pipeline = Pipeline([spec], engine=False,
                        engines={"glm5": FunctionEngine(down), "local": second},
                        calibrator=False)  # fmt: skip

    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert result.error is not None
    assert result.error.code == "engine_unavailable"
    assert second.requests == []


def test_the_default_engine_is_named_default(run_unit: RunUnit, find_total: UnitSpec) -> None:
    spec = with_engines(find_total, ["glm5", "default"])
    pipeline = Pipeline([spec], engine=FunctionEngine(lambda r: TOTAL_ANSWER),
                        engines={"glm5": FunctionEngine(down)}, calibrator=False)  # fmt: skip

    result = run_unit(pipeline, TOTAL_TEXT)["find_total"]

    assert (result.path, result.engine) == ("primary", "default")


def test_a_unit_naming_an_engine_the_pipeline_lacks_is_refused(find_total: UnitSpec) -> None:
    spec = with_engines(find_total, ["glm5"])
    with pytest.raises(ValueError, match=r"engines glm5 are not among the pipeline's engines"):
        Pipeline([spec], engine=FunctionEngine(lambda r: TOTAL_ANSWER), calibrator=False)


def test_engine_names_in_a_unit_file_are_checked() -> None:
    with pytest.raises(SpecError, match="engines"):
        UnitSpec.from_dict({
            "name": "x", "version": 1, "description": "d", "engines": ["GLM 5!"],
            "output": {"type": "object", "properties": {}}, "prompt": {"template": "{{ text }}"},
        })  # fmt: skip


class SlowToLoad(FunctionEngine):
    """A double whose ``ready`` takes ``load_s`` the first time, like weights being loaded."""

    def __init__(self, load_s: float) -> None:
        super().__init__(lambda r: TOTAL_ANSWER)
        self.load_s, self.loaded = load_s, False

    async def ready(self) -> None:
        if not self.loaded:
            await asyncio.sleep(self.load_s)
            self.loaded = True


def test_waiting_for_the_engine_to_load_is_not_charged_to_the_deadline(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    spec = with_engines(find_total, [], timeout_s=0.5)
    engine = SlowToLoad(load_s=1.2)
    started = time.perf_counter()

    result = run_unit(Pipeline([spec], engine=engine, calibrator=False), TOTAL_TEXT)["find_total"]

    assert result.error is None
    assert result.path == "primary"
    assert result.timings["ready_ms"] >= 1200
    assert result.timings["total_ms"] >= result.timings["ready_ms"]
    assert time.perf_counter() - started >= 1.2


def test_an_engine_that_cannot_get_ready_moves_on_to_the_fallbacks(
    run_unit: RunUnit, find_total: UnitSpec
) -> None:
    class NeverReady(FunctionEngine):
        async def ready(self) -> None:
            raise EngineUnavailable("no replica was ready within 900 s")

    engine = NeverReady(lambda r: TOTAL_ANSWER)

    result = run_unit(Pipeline([find_total], engine=engine, calibrator=False), TOTAL_TEXT)[
        "find_total"
    ]

    assert result.path == "heuristic"
    assert result.attempts[0].error.code == "engine_unavailable"
    assert engine.requests == []
