"""Fitting the calibrator on a small set, and judging path answers against gold outputs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aau.calibration.calibrator import load_calibrator
from aau.calibration.features import PathObservation
from aau.calibration.report import expected_calibration_error
from aau.fallbacks.crf_training import crf_spec_of
from aau.spec.model import UnitSpec
from calibration.runs import is_correct
from calibration.train import TrainingSettings, fit_calibrator, split_texts

UNITS = Path(__file__).resolve().parents[2] / "units"
SMALL = TrainingSettings(epochs=80, patience=20, hidden=(16, 8), members=2)


def overconfident_set(count: int, seed: int) -> tuple[list[PathObservation], list[bool]]:
    """Paths whose own confidence overstates how often they are right (P = confidence ** 3)."""
    rng = random.Random(seed)
    observations, labels = [], []
    for _ in range(count):
        confidence = rng.random()
        path = rng.choice(["primary", "crf", "heuristic"])
        signals = {"confidence": confidence}
        if rng.random() < 0.5:
            signals["ocr_quality"] = rng.uniform(0.6, 1.0)
        observations.append(PathObservation(path, "valid", signals))
        labels.append(rng.random() < confidence**3)
    return observations, labels


def test_fitting_on_a_small_set_makes_overconfident_scores_honest(tmp_path: Path) -> None:
    observations, labels = overconfident_set(800, seed=1)
    groups = [f"text{i // 2}" for i in range(len(observations))]
    calibrator = fit_calibrator(observations, labels, groups, SMALL, version="test")
    test_obs, test_labels = overconfident_set(1500, seed=2)
    raw = [o.signals["confidence"] for o in test_obs]
    calibrated = calibrator.score_many(test_obs)
    assert expected_calibration_error(calibrated, test_labels) < expected_calibration_error(
        raw, test_labels
    )
    # more confident paths stay more likely to be right
    low = calibrator.score(PathObservation("crf", "valid", {"confidence": 0.2}))
    high = calibrator.score(PathObservation("crf", "valid", {"confidence": 0.95}))
    assert low < high
    calibrator.save(tmp_path / "small.pt", hidden=SMALL.hidden)
    assert load_calibrator(tmp_path / "small.pt").score_many(test_obs[:5]) == pytest.approx(
        calibrated[:5]
    )


def test_fitting_is_deterministic() -> None:
    observations, labels = overconfident_set(200, seed=3)
    groups = [str(i) for i in range(len(observations))]
    first = fit_calibrator(observations, labels, groups, SMALL).score_many(observations[:10])
    second = fit_calibrator(observations, labels, groups, SMALL).score_many(observations[:10])
    assert first == second


def test_fitting_needs_one_label_and_group_per_observation() -> None:
    observations, labels = overconfident_set(10, seed=4)
    with pytest.raises(ValueError, match="one label and one group per observation"):
        fit_calibrator(observations, labels[:5], ["g"] * 10)


def test_split_keeps_a_text_on_one_side_and_is_stable() -> None:
    keys = [f"k{i}" for i in range(1000)]
    held = split_texts(keys, seed=7, share=0.25)
    assert 150 < len(held) < 350
    assert held == split_texts(list(reversed(keys)), seed=7, share=0.25)
    assert split_texts(keys[:500], seed=7, share=0.25) == {k for k in held if k in keys[:500]}


def test_unknown_training_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown training settings"):
        TrainingSettings.from_mapping({"epochz": 3})


def test_answers_are_judged_after_the_units_normalization() -> None:
    price = crf_spec_of(UnitSpec.from_file(UNITS / "extract_price.yaml"))
    gold = {"amount": 1250.0, "currency": "EUR"}
    assert is_correct({"amount": 1250, "currency": "EUR"}, gold, price)  # numbers as floats
    assert is_correct({"amount": 1250.0, "currency": "eur"}, gold, price)  # normalized: EUR
    assert not is_correct({"amount": 1250.01, "currency": "EUR"}, gold, price)
    assert not is_correct({"amount": None, "currency": None}, gold, price)
    assert is_correct({"amount": None, "currency": None}, dict.fromkeys(gold), price)


def test_strings_compare_case_sensitively_after_normalization() -> None:
    quantity = crf_spec_of(UnitSpec.from_file(UNITS / "extract_quantity.yaml"))
    gold = {"value": 12, "unit": "boxes"}
    assert is_correct({"value": 12.0, "unit": "box"}, gold, quantity)  # the unit normalizer
    date = crf_spec_of(UnitSpec.from_file(UNITS / "extract_date.yaml"))
    assert not is_correct({"date": "2024-03-15"}, {"date": "2024-03-14"}, date)
