"""Pipelines as DAGs: derived units run after the units they need; a failure stays where it is."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from aau.cli.main import main
from aau.errors import EngineUnavailable, SpecError
from aau.pipeline import Pipeline
from aau.spec.model import UnitSpec
from aau.spec.pipelines import PipelineSpec
from aau.testing import FunctionEngine
from tests.conftest import TOTAL_ANSWER, RunUnit

TEXT = "Invoice 7. Deposit: 100.00 EUR paid. Total: 120.50 EUR, due in 30 days."


def _amount_unit(unit_data: dict[str, Any], name: str, label: str) -> dict[str, Any]:
    data = copy.deepcopy(unit_data)
    data["name"] = name
    data["fallbacks"][0]["keywords"] = []
    data["fallbacks"][0]["patterns"] = [{
        "regex": label + r":\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<currency>[A-Z]{3})",
        "strength": 0.9,
    }]  # fmt: skip
    return data


def _derived(**compute: Any) -> dict[str, Any]:
    compute = {"op": "within_ratio", "a": "find_total.amount", "b": "find_deposit.amount",
               "tolerance": 0.25, **compute}  # fmt: skip
    return {
        "name": "total_near_deposit",
        "version": 1,
        "kind": "derived",
        "description": "Whether the total is within 25% of the deposit.",
        "needs": ["find_total", "find_deposit"],
        "compute": compute,
        "output": {
            "type": "object",
            "properties": {
                "within": {"type": ["boolean", "null"]},
                "change": {"type": ["number", "null"]},
            },
            "required": ["within", "change"],
            "additionalProperties": False,
        },
    }


@pytest.fixture
def units(unit_data: dict[str, Any]) -> list[UnitSpec]:
    total = _amount_unit(unit_data, "find_total", "Total")
    deposit = _amount_unit(unit_data, "find_deposit", "Deposit")
    return [UnitSpec.from_dict(d) for d in (_derived(), total, deposit)]


def test_a_derived_unit_computes_from_the_units_it_needs(
    run_unit: RunUnit, units: list[UnitSpec]
) -> None:
    result = run_unit(Pipeline(units, engine=False), TEXT)

    total, deposit, derived = (result[n] for n in ("find_total", "find_deposit",
                                                   "total_near_deposit"))  # fmt: skip
    assert total.output == {"amount": 120.5, "currency": "EUR"}
    assert deposit.output == {"amount": 100.0, "currency": "EUR"}
    assert derived.error is None
    assert derived.output == {"within": True, "change": pytest.approx(0.205)}
    assert derived.path == "derived"
    assert derived.confidence == pytest.approx(total.confidence * deposit.confidence, abs=1e-4)
    assert derived.states == ["received", "done"]
    assert "find_total" in (derived.trace[-1].detail or "")
    assert result.graph == {
        "total_near_deposit": ("find_total", "find_deposit"),
        "find_total": (),
        "find_deposit": (),
    }
    assert result.to_dict()["graph"]["total_near_deposit"] == ["find_total", "find_deposit"]


def test_a_failed_upstream_unit_fails_its_dependents_and_no_sibling(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    total = _amount_unit(unit_data, "find_total", "Total")
    deposit = _amount_unit(unit_data, "find_deposit", "Deposit")
    deposit["policy"]["fallback_on"] = []  # the model's failure ends this unit's run
    specs = [UnitSpec.from_dict(d) for d in (total, deposit, _derived())]
    # Fault injection: the engine is down for find_deposit only.
    engine = FunctionEngine(
        lambda r: EngineUnavailable("down") if r.key.startswith("find_deposit") else TOTAL_ANSWER
    )

    result = run_unit(Pipeline(specs, engine=engine), TEXT)

    assert result["find_deposit"].error.code == "engine_unavailable"
    derived = result["total_near_deposit"]
    assert derived.output is None
    assert derived.error.code == "upstream_failed"
    assert "find_deposit (engine_unavailable)" in derived.error.message
    assert derived.states == ["received", "failed"]
    assert result["find_total"].error is None
    assert result["find_total"].output == {"amount": 120.5, "currency": "EUR"}


def test_an_input_without_a_value_gives_null_results_with_the_inputs_confidence(
    run_unit: RunUnit, units: list[UnitSpec]
) -> None:
    result = run_unit(Pipeline(units, engine=False), "Total: 120.50 EUR. No deposit was paid.")

    derived = result["total_near_deposit"]
    assert result["find_deposit"].output == {"amount": None, "currency": None}
    assert derived.output == {"within": None, "change": None}
    assert derived.confidence == pytest.approx(
        result["find_total"].confidence * result["find_deposit"].confidence, abs=1e-4
    )


def test_fields_that_must_agree_and_differ_are_incomparable(
    run_unit: RunUnit, unit_data: dict[str, Any]
) -> None:
    same = [["find_total.currency", "find_deposit.currency"]]
    specs = [
        UnitSpec.from_dict(_derived(same=same)),
        UnitSpec.from_dict(_amount_unit(unit_data, "find_total", "Total")),
        UnitSpec.from_dict(_amount_unit(unit_data, "find_deposit", "Deposit")),
    ]

    result = run_unit(Pipeline(specs, engine=False), "Deposit: 100 USD. Total: 120 EUR.")

    assert result["total_near_deposit"].error.code == "incomparable_inputs"
    assert "USD" in result["total_near_deposit"].error.message


@pytest.mark.parametrize(
    ("op", "extra", "expected"),
    [
        ("difference", {}, {"difference": 20.5}),
        ("ratio", {}, {"ratio": 1.205}),
        ("compare", {"tolerance": 0.0}, {"relation": "greater"}),
        ("compare", {"tolerance": 0.5}, {"relation": "equal"}),
        ("within_ratio", {"tolerance": 0.1}, {"within": False}),
        ("range_check", {"b": None, "minimum": 0, "maximum": 100}, {"within": False}),
        ("range_check", {"b": None, "minimum": 100}, {"within": True}),
    ],
)
def test_each_operation(
    run_unit: RunUnit, units: list[UnitSpec], op: str, extra: dict[str, Any], expected: Any
) -> None:
    data = _derived(op=op, **extra)
    if data["compute"].get("b") is None:
        del data["compute"]["b"]
    data["output"]["properties"] = {
        name: {"type": ["boolean" if name == "within" else
                        "string" if name == "relation" else "number", "null"]}
        for name in expected
    }  # fmt: skip
    data["output"]["required"] = list(expected)
    specs = [UnitSpec.from_dict(data), *units[1:]]

    output = run_unit(Pipeline(specs, engine=False), TEXT)["total_near_deposit"].output

    assert output == pytest.approx(expected)


def test_running_a_derived_unit_alone_runs_what_it_needs(units: list[UnitSpec]) -> None:
    result = Pipeline(units, engine=False).run(TEXT, units=["total_near_deposit"])

    assert set(result.units) == {"total_near_deposit", "find_total", "find_deposit"}
    assert result["total_near_deposit"].output["within"] is True


def test_a_pipeline_refuses_missing_needs_and_cycles(units: list[UnitSpec]) -> None:
    with pytest.raises(ValueError, match="needs find_total, find_deposit, which the pipeline"):
        Pipeline(units[:1], engine=False)
    first, second = _derived(), _derived()
    second["name"] = "other"
    first["needs"] = ["other", "find_total"]
    first["compute"]["b"] = "other.change"
    second["needs"] = ["total_near_deposit", "find_total"]
    second["compute"]["b"] = "total_near_deposit.change"
    cyclic = [UnitSpec.from_dict(first), UnitSpec.from_dict(second), units[1]]
    with pytest.raises(ValueError, match="cycle"):
        Pipeline(cyclic, engine=False)


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        ({"prompt": {"system": "x"}}, "S090", "prompt"),
        ({"needs": []}, "S091", "needs"),
        ({"compute": None}, "S092", "compute"),
        ({"compute": {"op": "difference", "a": "nowhere.amount", "b": "find_total.amount"}},
         "S093", "compute"),
        ({"output": {"type": "object", "properties": {"total": {"type": "number"}}}},
         "S094", "output.properties.total"),
        ({"output": {"type": "object", "properties": {"within": {"type": "number"}}}},
         "S095", "output.properties.within.type"),
    ],
)  # fmt: skip
def test_derived_unit_checks(change: dict[str, Any], code: str, field: str) -> None:
    data = {**_derived(), **change}
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(data)
    assert caught.value.check == code
    assert caught.value.field == field


def test_range_check_needs_a_bound() -> None:
    data = _derived(op="range_check")
    del data["compute"]["b"]
    with pytest.raises(SpecError, match="minimum, maximum or both"):
        UnitSpec.from_dict(data)


def test_kind_checks(unit_data: dict[str, Any]) -> None:
    classify = {**unit_data, "kind": "classify"}
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(classify)
    assert (caught.value.check, caught.value.field) == ("S100", "output.properties.amount")
    records = {**unit_data, "kind": "records"}
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(records)
    assert caught.value.check == "S101"
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict({**unit_data, "needs": ["find_sum"]})
    assert caught.value.check == "S099"
    without_prompt = {k: v for k, v in unit_data.items() if k != "prompt"}
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_dict(without_prompt)
    assert caught.value.check == "S098"


def _write_units(root: Path, unit_data: dict[str, Any]) -> None:
    import yaml  # the test writes the files a user would

    units = root / "units"
    (units / "pipelines").mkdir(parents=True)
    total = _amount_unit(unit_data, "find_total", "Total")
    deposit = _amount_unit(unit_data, "find_deposit", "Deposit")
    # A CRF path whose model was never trained: this unit fails on every input.
    deposit["fallbacks"] = [{"kind": "crf", "labels": ["AMOUNT", "CURRENCY"], "fields": {
        "amount": {"label": "AMOUNT", "normalize": "amount"},
        "currency": {"label": "CURRENCY", "normalize": "currency"}},
        "examples": "find_deposit.annotated.jsonl", "model": "find_deposit.crf"}]  # fmt: skip
    example = {"text": "Deposit: 5 EUR", "spans": [
        {"start": 9, "end": 10, "label": "AMOUNT", "value": "5"},
        {"start": 11, "end": 14, "label": "CURRENCY", "value": "EUR"}]}  # fmt: skip
    (units / "find_deposit.annotated.jsonl").write_text(json.dumps(example) + "\n")
    for data in (total, deposit, _derived()):
        (units / f"{data['name']}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    (units / "pipelines" / "review.yaml").write_text(
        "name: review\nunits: [find_total, total_near_deposit]\n", encoding="utf-8"
    )


def test_a_yaml_pipeline_runs_from_the_cli_with_a_failing_upstream_isolated(
    tmp_path: Path, unit_data: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _write_units(tmp_path, unit_data)
    pipeline_file = tmp_path / "units" / "pipelines" / "review.yaml"

    code = main(["run", str(pipeline_file), "--text", TEXT, "--no-model", "--json",
                 "--terms-store", str(tmp_path / "terms")])  # fmt: skip

    assert code == 0
    line = json.loads(capsys.readouterr().out)
    units = line["units"]
    assert set(units) == {"find_total", "find_deposit", "total_near_deposit"}  # needs added
    assert units["find_deposit"]["error"]["code"] == "crf_model_missing"
    assert units["total_near_deposit"]["error"]["code"] == "upstream_failed"
    assert units["find_total"]["output"] == {"amount": 120.5, "currency": "EUR"}
    assert line["graph"]["total_near_deposit"] == ["find_total", "find_deposit"]


def test_a_pipeline_file_is_checked_and_located(tmp_path: Path, unit_data: dict[str, Any]) -> None:
    _write_units(tmp_path, unit_data)
    folder = tmp_path / "units" / "pipelines"
    bad = folder / "bad.yaml"
    bad.write_text("name: bad\nunits: [find_total]\nroute: true\nextra: 1\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        PipelineSpec.from_file(bad)
    assert (caught.value.line, caught.value.field) == (4, "extra")
    missing = folder / "missing.yaml"
    missing.write_text("name: missing\nunits: [find_total, nowhere]\n", encoding="utf-8")
    with pytest.raises(SpecError, match="unit 'nowhere' not found") as caught:
        Pipeline.from_file(missing, engine=False)
    assert caught.value.check == "P004"
    escape = folder / "escape.yaml"
    escape.write_text("name: escape\nunits: ['../../etc/passwd']\n", encoding="utf-8")
    with pytest.raises(SpecError, match="String should match pattern"):
        PipelineSpec.from_file(escape)


def test_the_shipped_pipeline_file_schema_equals_the_generated_one() -> None:
    from aau.spec.pipelines import pipeline_file_schema_text
    from tests.conftest import UNITS_DIR

    shipped = UNITS_DIR / "pipelines" / "pipeline.schema.json"
    assert shipped.read_text(encoding="utf-8") == pipeline_file_schema_text(), (
        f"{shipped} is stale; regenerate it with: aau schema --pipeline > {shipped}"
    )
