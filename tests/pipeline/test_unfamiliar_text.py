"""Text unlike anything the units were built for: a coded error or an honest low confidence.

Scripts no unit knows, mixed scripts, digits of other numbering systems, empty or blank input.
Runs the shipped units through their fallbacks and the shipped calibrator (no model), as a
pipeline without an engine does.
"""

from __future__ import annotations

import pytest

import aau
from tests.conftest import UNITS_DIR

UNITS = ["extract_price", "extract_date", "extract_quantity"]


@pytest.fixture(scope="module")
def pipeline() -> aau.Pipeline:
    return aau.Pipeline([aau.load_unit(UNITS_DIR / f"{n}.yaml") for n in UNITS], engine=False)


@pytest.mark.parametrize("text", ["", "   ", "\n\t \u3000"])
def test_blank_input_is_a_coded_error_for_every_unit(pipeline: aau.Pipeline, text: str) -> None:
    results = pipeline.run(text).units
    assert {r.error.code for r in results.values() if r.error} == {"empty_input"}
    assert all(r.output is None for r in results.values())


UNFAMILIAR = [
    "ꦲꦏ꧀ꦱꦫ ꦗꦮ ꦲꦶꦁ ꦏꦁ ꦏꦶꦪꦶ ꦧꦺꦴꦠꦺꦴꦤ꧀",  # Javanese script, no digits
    "ཞི་བདེ་ཡོང་བ་ཤོག། ༡༢༣ ཀྱི་ནང་དུ།",  # Tibetan, with Tibetan digits
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᎠᏂᏴᏫ ᏧᏂᎸᏫᏍᏓᏁᏗ",  # Cherokee
    "Zaměstnanci ꦲꦏ꧀ꦱꦫ 計算 ᏣᎳᎩ ١٢٣٤ ५६७८ ௧௨௩",  # mixed scripts, several digit systems
]


@pytest.mark.parametrize("text", UNFAMILIAR)
def test_unfamiliar_scripts_get_no_confident_value(pipeline: aau.Pipeline, text: str) -> None:
    for name, result in pipeline.run(text).units.items():
        if result.error is not None:
            continue  # a coded error is an honest answer
        assert result.output is not None
        stated = any(v is not None for v in result.output.values())
        if stated:  # a guessed value must not look sure
            assert result.confidence < 0.5, (name, result.output, result.confidence)
        assert 0.0 <= result.confidence <= 1.0
