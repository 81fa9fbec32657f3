"""A routed pipeline runs, per input, only the units the router says apply."""

from __future__ import annotations

import pytest

import aau
from aau.pipeline import Pipeline
from aau.routing import RouterStale
from aau.spec.model import UnitSpec
from tests.conftest import UNIT_FILES, UNITS_DIR

COMPLAINT = (
    "Dear team, I am writing to complain: my order arrived broken and nobody answered my "
    "calls. I want a refund."
)
REPORT = "Revenue for Q3 2024 rose 12% to EUR 4.2 million (Q3 2023: EUR 3.75 million)."


@pytest.fixture(scope="module")
def routed() -> Pipeline:
    return Pipeline(UNIT_FILES, engine=False, router=True)


def test_only_the_units_that_apply_run_and_the_result_says_why(routed: Pipeline) -> None:
    result = routed.run(COMPLAINT)

    assert result.route is not None
    assert result.route["applies"] == ["detect_complaint"]
    assert set(result.units) == {"detect_complaint"}
    assert result.units["detect_complaint"].output["is_complaint"] is True
    probabilities = result.route["probabilities"]
    assert set(probabilities) == {spec.name for spec in routed.units}
    assert probabilities["detect_complaint"] >= result.route["threshold"]
    assert all(
        p < result.route["threshold"] for name, p in probabilities.items()
        if name != "detect_complaint"
    )  # fmt: skip
    assert result.to_dict()["route"] == result.route


def test_a_report_routes_to_the_revenue_units_and_not_to_the_complaint(routed: Pipeline) -> None:
    result = routed.run(REPORT)

    assert result.route is not None
    assert result.route["applies"]
    revenue = {"extract_revenue_current", "extract_revenue_previous", "compare_numeric_range"}
    assert set(result.route["applies"]) <= revenue
    assert "detect_complaint" not in result.units
    if "compare_numeric_range" in result.units:  # what it needs ran too
        assert set(result.graph["compare_numeric_range"]) <= set(result.units)


def test_naming_the_units_skips_the_router(routed: Pipeline) -> None:
    result = routed.run(COMPLAINT, units=["extract_price"])

    assert result.route is None
    assert set(result.units) == {"extract_price"}


def test_an_empty_input_is_every_units_error_not_a_routing_fault(routed: Pipeline) -> None:
    result = routed.run("   ")

    assert set(result.units) == {spec.name for spec in routed.units}
    assert {u.error.code for u in result.units.values() if u.error} == {"empty_input"}


def test_a_router_fitted_on_other_unit_data_is_refused() -> None:
    spec = UnitSpec.from_file(UNITS_DIR / "detect_complaint.yaml")
    changed = spec.model_copy(update={"description": spec.description + " Also invoices."})

    with pytest.raises(RouterStale, match="changed: detect_complaint"):
        Pipeline([changed], engine=False, router=True)


def test_a_pipeline_file_with_route_true_routes() -> None:
    pipeline = Pipeline.from_file(UNITS_DIR / "pipelines" / "document_review.yaml", engine=False)

    assert pipeline.router is not None
    result = pipeline.run(COMPLAINT)
    assert result.route is not None
    assert set(result.units) == set(result.route["applies"])
    assert (
        aau.Pipeline.from_file(
            UNITS_DIR / "pipelines" / "financial_review.yaml", engine=False
        ).router
        is None
    )
