"""Shared fixtures: the repository's units, a small self-contained test unit, run modes, models.

``find_total`` is a unit written for the tests alone, so the state-machine and pipeline tests do
not move when a shipped unit is tuned. Its heuristic finds ``<number> <ISO code>`` and is
confident when a ``total`` keyword precedes the match; its schema only admits EUR and USD, so a
text naming another currency makes the heuristic's answer invalid (a path that fails on demand).

The embedded default model (SmolLM2-135M) and its tokenizer are loaded at most once per session,
and only by tests that ask for them.

Tests marked ``gpu`` are opt-in: they are skipped unless pytest runs with ``--gpu``.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from aau.pipeline import Pipeline, PipelineResult, UnitResult
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec

REPO = Path(__file__).resolve().parents[1]
UNITS_DIR = REPO / "units"
UNIT_FILES = sorted(p for p in UNITS_DIR.glob("*.yaml") if "." not in p.stem)
"""Every shipped unit file (``<name>.yaml``; ``<name>.golden.yaml`` and the like sit beside)."""
PROMPTED_UNIT_FILES = [p for p in UNIT_FILES if UnitSpec.from_file(p).prompt is not None]
"""The shipped units that ask the model (all but the derived ones)."""
SERVED_UNIT_FILES = [UNITS_DIR / f"{name}.yaml" for name in
                     ("extract_date", "extract_price", "extract_quantity")]  # fmt: skip
"""The units the service tests serve: the service is under test there, not the units (each
unit has tests of its own), and a model request per unit per call is what their time goes on."""
PRICE_UNIT = UNITS_DIR / "extract_price.yaml"
"""One shipped unit, for tests that need any real one."""


@functools.cache
def annotated_generator() -> ModuleType:
    """``units/make_annotated.py`` loaded as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("make_annotated", UNITS_DIR / "make_annotated.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIND_TOTAL_YAML = """\
name: find_total
version: 3
description: The total amount of an invoice and its currency.
output:
  type: object
  properties:
    amount:
      type: [number, "null"]
    currency:
      type: [string, "null"]
      enum: [EUR, USD, null]
  required: [amount, currency]
  additionalProperties: false
prompt:
  system: Reply with the invoice total as JSON.
  template: "Text: {{ text }}"
  examples:
    - input: "Total: 10 USD"
      output: {amount: 10, currency: USD}
    - input: "See you on Monday."
      output: {amount: null, currency: null}
fallbacks:
  - kind: heuristic
    keywords: [total]
    patterns:
      - regex: '(?P<amount>\\d+(?:\\.\\d+)?)\\s*(?P<currency>[A-Z]{3})'
        strength: 0.9
    fields:
      amount: {group: amount, normalize: amount}
      currency: {group: currency, normalize: currency}
    confidence: 0.9
policy:
  threshold: 0.6
  timeout_s: 30
  max_new_tokens: 32
"""
"""The test unit as a unit author would write it (file stem must be ``find_total``)."""

TOTAL_TEXT = "Invoice 7. Total: 120.50 EUR, due in 30 days."
"""A text both paths can answer: the model double says so, the heuristic finds it."""

TOTAL_ANSWER = '{"amount":120.5,"currency":"EUR"}'
"""The model double's correct answer for ``TOTAL_TEXT`` (compact, as the decoder writes)."""

RunUnit = Callable[[Pipeline, str], PipelineResult]

GPU_SKIP_REASON = "needs a GPU; pass --gpu to run it"
"""Why a ``gpu``-marked test was skipped (the marker is declared in pyproject.toml)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--gpu`` opts in to the tests marked ``gpu``."""
    parser.addoption(
        "--gpu",
        action="store_true",
        default=False,
        help="include tests marked gpu (they need a CUDA device)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``gpu``-marked test unless ``--gpu`` was given."""
    if config.getoption("--gpu"):
        return
    skip_gpu = pytest.mark.skip(reason=GPU_SKIP_REASON)
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip_gpu)


@pytest.fixture
def unit_data() -> dict[str, Any]:
    """A fresh, mutable parsed copy of the ``find_total`` unit."""
    data, _ = read_yaml(FIND_TOTAL_YAML)
    return copy.deepcopy(data)


@pytest.fixture
def find_total() -> UnitSpec:
    """The ``find_total`` unit, loaded."""
    return UnitSpec.from_text(FIND_TOTAL_YAML)


@pytest.fixture(params=["sync", "async"])
def run_unit(request: pytest.FixtureRequest) -> RunUnit:
    """Runs a pipeline over one text through the blocking API or by awaiting ``arun``.

    Tests using it are plain functions: ``Pipeline.run`` starts its own event loop, which it
    cannot do inside a running one.
    """
    if request.param == "sync":
        return lambda pipeline, text: pipeline.run(text)

    def run_async(pipeline: Pipeline, text: str) -> PipelineResult:
        async def main() -> PipelineResult:
            return await pipeline.arun(text)

        return asyncio.run(main())

    return run_async


def assert_result_contract(result: UnitResult, spec: UnitSpec) -> None:
    """The unit-result contract of DESIGN.md, for any run outcome."""
    assert 0.0 <= result.confidence <= 1.0
    assert set(result.timings) >= {"queue_ms", "prefill_ms", "decode_ms", "total_ms"}
    assert all(value >= 0 for value in result.timings.values()), result.timings
    if result.output is not None:
        jsonschema.validate(result.output, spec.output)
        assert result.error is None
        assert result.path is not None
    else:
        assert result.error is not None, "a unit without output must say why"
        assert result.error.code
        assert result.path is None
        assert result.confidence == 0.0


@pytest.fixture(autouse=True, scope="session")
def _isolated_term_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Tests never read or write the user's term store (``AAU_TERMS_DIR``)."""
    import os

    previous = os.environ.get("AAU_TERMS_DIR")
    os.environ["AAU_TERMS_DIR"] = str(tmp_path_factory.mktemp("terms-store"))
    yield
    if previous is None:
        os.environ.pop("AAU_TERMS_DIR", None)
    else:
        os.environ["AAU_TERMS_DIR"] = previous


@pytest.fixture(scope="session")
def default_engine() -> Any:
    """The transformers engine on the embedded default model, loaded once per session."""
    from aau.engines.local import TransformersEngine
    from aau.engines.registry import EngineConfig

    engine = TransformersEngine(EngineConfig())
    engine.load()
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def smollm2_tokenizer() -> Any:
    """The default model's tokenizer, read from its GGUF file."""
    from transformers import AutoTokenizer

    from aau.engines.models import default_model_path

    gguf = default_model_path()
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)


def within(seconds: float, work: Callable[[], Any]) -> BaseException | None:
    """Run ``work`` in a daemon thread; fail unless it ends within ``seconds``.

    Returns what it raised (None if nothing): the hang guard of the hostile-input tests.
    """
    _, raised = _in_thread(seconds, work)
    return raised


def value_within(seconds: float, work: Callable[[], Any]) -> Any:
    """Like ``within``, but returns what ``work`` returned, or what it raised."""
    value, raised = _in_thread(seconds, work)
    return value if raised is None else raised


def _in_thread(seconds: float, work: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    outcome: list[tuple[Any, BaseException | None]] = []

    def target() -> None:
        try:
            outcome.append((work(), None))
        except BaseException as exc:  # noqa: BLE001  # handed to the test
            outcome.append((None, exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return outcome[0]
