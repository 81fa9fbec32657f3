"""Calibration figures and the printed report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aau.calibration.report import (
    EvaluatedAnswer,
    brier_score,
    expected_calibration_error,
    reliability_bins,
    report,
    selection_accuracy,
)


def answers() -> list[EvaluatedAnswer]:
    rows = []
    for i in range(40):
        right = i % 4 != 0  # three in four texts: the crf path is right
        rows.append(EvaluatedAnswer("u", f"t{i}", "primary", 0.9, 0.2, False))
        rows.append(EvaluatedAnswer("u", f"t{i}", "crf", 0.5, 0.75, right))
        rows.append(EvaluatedAnswer("v", f"t{i}", "heuristic", 0.4, 0.6, i % 2 == 0,
                                    is_valid=i % 5 != 0))  # fmt: skip
    return rows


def test_perfectly_calibrated_confidences_have_zero_ece() -> None:
    confidences = [0.25] * 4 + [0.75] * 4
    correct = [True, False, False, False, True, True, True, False]
    assert expected_calibration_error(confidences, correct) == pytest.approx(0.0)


def test_ece_weights_each_bin_by_its_share() -> None:
    # bin 0.9-1.0: mean 0.95, accuracy 0.5 -> gap 0.45 on half the answers
    # bin 0.1-0.2: mean 0.15, accuracy 0.0 -> gap 0.15 on the other half
    confidences = [0.95, 0.95, 0.15, 0.15]
    correct = [True, False, False, False]
    assert expected_calibration_error(confidences, correct) == pytest.approx(0.3)


def test_confidence_of_one_falls_in_the_last_bin() -> None:
    bins = reliability_bins([1.0, 0.0], [True, False], bins=10)
    assert bins[-1].count == 1
    assert bins[0].count == 1


def test_brier_score_is_the_mean_squared_error() -> None:
    assert brier_score([1.0, 0.0, 0.5], [True, True, False]) == pytest.approx((0 + 1 + 0.25) / 3)


def test_report_prints_units_and_overall_and_ends_with_json(tmp_path: Path) -> None:
    lines: list[str] = []
    figures = report(answers(), {"u": 0.6, "v": 0.6}, png=tmp_path / "r.png", json=True,
                     print_fn=lines.append)  # fmt: skip
    headline = json.loads(lines[-1])
    assert set(headline) == {"ece", "ece_raw", "brier", "selection_accuracy",
                             "best_single_path_accuracy"}  # fmt: skip
    assert any(line.startswith("u ") for line in lines)
    assert any(line.startswith("overall") for line in lines)
    assert set(figures["units"]) == {"u", "v"}
    # in unit u the crf path alone is right on 3 texts in 4; calibrated selection picks it
    assert figures["units"]["u"]["best_single_path_accuracy"] == pytest.approx(0.75)
    assert figures["units"]["u"]["selection_accuracy"] == pytest.approx(0.75)
    # raw confidences pick the (always wrong) primary path
    assert figures["units"]["u"]["selection_accuracy_raw"] == pytest.approx(0.0)


def test_report_writes_the_reliability_diagram(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    report(answers(), {}, png=tmp_path / "diagram.png", print_fn=lambda _: None)
    data = (tmp_path / "diagram.png").read_bytes()
    assert data.startswith(b"\x89PNG")
    assert len(data) > 10_000


def test_report_names_the_thresholds_selection_used() -> None:
    lines: list[str] = []
    report(answers(), {"u": 0.6, "v": 0.9}, print_fn=lines.append)
    assert "selection at the units' thresholds: u 0.60, v 0.90" in lines


def test_selection_accuracy_with_calibrated_and_raw_confidences() -> None:
    unit_u = [a for a in answers() if a.unit == "u"]
    assert selection_accuracy(unit_u, {"u": 0.6}) == pytest.approx(0.75)  # the crf, calibrated
    assert selection_accuracy(unit_u, {"u": 0.6}, raw=True) == 0.0  # the model, raw 0.9
