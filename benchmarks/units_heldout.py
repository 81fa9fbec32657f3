"""Accuracy and calibration of units on their held-out labelled texts (never used to train).

    python benchmarks/units_heldout.py units/detect_complaint.yaml [more units] [--no-model]
        [--part dev|test]

For each unit given, it reads ``<name>.heldout.jsonl`` beside the unit (``--part test``:
``<name>.heldout.test.jsonl``, a second held-out file written later and apart, for the figure
alone; choices are made on the first) (lines
``{"text": ..., "output": {...}}``, the labelled-examples format) and prints, per way of
answering, how many texts, the accuracy (``correct``: the whole output equal to the expected
one) and the ECE (10 equal-width confidence bins, ``aau.calibration.report``):

- ``classifier``: the unit's classifier path alone (its own calibrated probability), when the
  unit has one;
- ``fallbacks``: the whole unit through ``aau.Pipeline([...], engine=False)`` (no model: the
  fallbacks in order, as the policy selects them), with the pipeline's default calibrator (the
  unit's own, ``<name>.calibration.json``, where it has one, else the shipped one) and with none
  (``raw``, the paths' own confidences);
- ``model``: the whole unit through ``aau.Pipeline([...])``, the embedded model on this machine
  (slow on a CPU), unless ``--no-model``.

A unit without a valid answer counts as wrong at confidence 0. Right means what the unit's
calibration fitting means by it (``aau.fitting.unit_calibration.answer_correct``): a records list
compared as records (any order, ``records_equal``), fields of a CRF path through its
normalizers, anything else as JSON values. A derived unit has no file of its own: its held-out
texts are those every unit it needs has in its held-out file, its expected output the
computation over their expected outputs (texts whose inputs cannot be compared are left out),
and it runs in one pipeline with those units. The last line printed is one JSON object with
every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from aau import Pipeline  # noqa: E402
from aau.answers import PathContext  # noqa: E402
from aau.calibration.report import expected_calibration_error  # noqa: E402
from aau.errors import InputError  # noqa: E402
from aau.fallbacks.classifier import ClassifierFallback  # noqa: E402
from aau.fallbacks.labelled import LabelledExample, load_labelled  # noqa: E402
from aau.fitting.unit_calibration import answer_correct  # noqa: E402
from aau.results import UnitResult  # noqa: E402
from aau.runner.derived import compute_derived  # noqa: E402
from aau.spec.model import UnitSpec  # noqa: E402

Answer = tuple[Mapping[str, Any] | None, float]
"""An output (None: no valid answer) and its confidence."""


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, 1 is 1.0.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def correct(unit: UnitSpec, output: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """Whether ``output`` is the expected answer (see the module docstring)."""
    if output is None:
        return False
    if unit.kind == "derived":
        return all(_same(output.get(name), value) for name, value in expected.items())
    return answer_correct(unit, output, expected)


PARTS = {"dev": ".heldout.jsonl", "test": ".heldout.test.jsonl"}
"""The held-out files: ``dev`` for choices, ``test`` (where a unit has one) for the figure only."""


def _own_heldout(unit: UnitSpec, part: str = "dev") -> list[LabelledExample]:
    path = unit.base_dir / f"{unit.name}{PARTS[part]}"
    if not path.is_file():
        return []
    fields = list(unit.output.get("properties", {}))
    return load_labelled(path, unit.output, fields, max_chars=1_000_000)


def needed_units(unit: UnitSpec) -> list[UnitSpec]:
    """The units a derived unit needs, read from its folder."""
    return [UnitSpec.from_file(unit.base_dir / f"{name}.yaml") for name in unit.needs]


def heldout_of(unit: UnitSpec, part: str = "dev") -> list[LabelledExample]:
    """The unit's held-out labelled texts of ``part`` (its own file, or its needs', derived)."""
    if unit.kind != "derived":
        return _own_heldout(unit, part)
    per_need = [{e.text: e.output for e in _own_heldout(need, part)}
                for need in needed_units(unit)]  # fmt: skip
    examples = []
    for text, first in per_need[0].items():
        if not all(text in outputs for outputs in per_need[1:]):
            continue
        upstream = {
            name: UnitResult(name, "1", outputs[text] if i else first, 1.0, "gold", None, {})
            for i, (name, outputs) in enumerate(zip(unit.needs, per_need, strict=True))
        }
        try:
            expected = compute_derived(unit, upstream).output
        except InputError:  # inputs that do not compare (two currencies): no expected output
            continue
        examples.append(LabelledExample(text=text, output=expected, line=len(examples) + 1))
    return examples


def score(
    unit: UnitSpec, examples: Sequence[LabelledExample], answer: Callable[[str], Answer]
) -> dict[str, Any]:
    """Accuracy and ECE of ``answer`` over ``examples``, with its time per text."""
    confidences, right = [], []
    started = time.perf_counter()
    for example in examples:
        output, confidence = answer(example.text)
        confidences.append(confidence if output is not None else 0.0)
        right.append(correct(unit, output, example.output))
    seconds = time.perf_counter() - started
    count = len(examples) or 1
    return {
        "n": len(examples),
        "accuracy": round(sum(right) / count, 4),
        "mean_confidence": round(sum(confidences) / count, 4),
        "ece": round(expected_calibration_error(confidences, right, bins=10), 4),
        "ms_per_text": round(1000 * seconds / count, 1),
    }


def classifier_answer(unit: UnitSpec) -> Callable[[str], Answer] | None:
    """The unit's classifier path alone, or None when it has none."""
    spec = next((f for f in unit.fallbacks if isinstance(f, ClassifierFallback)), None)
    if spec is None:
        return None
    path = spec.build(unit)
    context = PathContext(unit.name, unit.output)

    def answer(text: str) -> Answer:
        result = path.extract(text, context)
        return result.output, result.confidence

    return answer


def pipeline_answer(pipeline: Pipeline, unit: UnitSpec) -> Callable[[str], Answer]:
    """The whole unit through ``pipeline``."""

    def answer(text: str) -> Answer:
        result = pipeline.run(text).units[unit.name]
        return (result.output if result.error is None else None), result.confidence

    return answer


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures of every unit given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("units", nargs="+", type=Path, help="unit files (units/<name>.yaml)")
    parser.add_argument("--no-model", action="store_true", help="skip the embedded-model run")
    parser.add_argument(
        "--part", choices=sorted(PARTS), default="dev",
        help="dev: <name>.heldout.jsonl (for choices); test: <name>.heldout.test.jsonl (written "
        "apart, later, by someone who saw neither the training data nor the dev figures)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    figures: dict[str, dict[str, Any]] = {}
    for path in args.units:
        unit = UnitSpec.from_file(path)
        examples = heldout_of(unit, args.part)
        if not examples:
            print(f"{unit.name}: no {args.part} held-out texts", flush=True)
            continue
        ways: dict[str, Callable[[str], Answer]] = {}
        alone = classifier_answer(unit)
        if alone is not None:
            ways["classifier"] = alone
        members = [unit, *needed_units(unit)] if unit.kind == "derived" else [unit]
        ways["fallbacks"] = pipeline_answer(Pipeline(members, engine=False), unit)
        ways["fallbacks_raw"] = pipeline_answer(
            Pipeline(members, engine=False, calibrator=False), unit
        )
        if not args.no_model:
            ways["model"] = pipeline_answer(Pipeline(members), unit)
        figures[unit.name] = {}
        for way, answer in ways.items():
            row = score(unit, examples, answer)
            figures[unit.name][way] = row
            print(f"{unit.name:24} {way:14} n={row['n']:4} accuracy={row['accuracy']:.3f} "
                  f"ece={row['ece']:.3f} mean_conf={row['mean_confidence']:.3f} "
                  f"{row['ms_per_text']:.1f} ms/text", flush=True)  # fmt: skip
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
