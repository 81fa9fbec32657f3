"""Fitting the calibrator on a small set (``aau.calibration.training``), and judging path
answers against gold outputs (``aau.fitting.runs``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aau.calibration.calibrator import load_calibrator
from aau.calibration.features import PathObservation
from aau.calibration.report import EvaluatedAnswer, expected_calibration_error
from aau.calibration.training import (
    LabelledAnswer,
    ThresholdSettings,
    TrainingSettings,
    choose_threshold,
    choose_thresholds,
    cross_validated,
    fit_calibrator,
    labelled_answers,
    split_texts,
    threshold_grid,
    unit_normalizers,
)
from aau.fallbacks.crf_training import crf_spec_of
from aau.fitting.runs import is_correct
from aau.spec.model import UnitSpec

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


# -- agreement from the labelled runs ----------------------------------------------------------


def record(outputs: dict[str, dict[str, object]]) -> dict[str, object]:
    """One labelled-run record of ``extract_quantity`` with the given path outputs."""
    rows = [{"path": path, "outcome": "valid", "output": output, "confidence": 0.5,
             "signals": {"confidence": 0.5}, "correct": True, "spans": {}}
            for path, output in outputs.items()]  # fmt: skip
    return {"unit": "extract_quantity", "key": "k", "variant": "clean", "cases": [], "rows": rows}


def test_labelled_answers_compare_each_path_with_all_the_others() -> None:
    runs = [record({"primary": {"value": 15, "unit": "boxes"},
                    "crf": {"value": 15.0, "unit": "box"},
                    "heuristic": {"value": 16, "unit": "box"}})]  # fmt: skip
    agreement = {a.observation.path: a.observation.signals["agreement"]
                 for a in labelled_answers(runs, units=UNITS)}  # fmt: skip
    # the unit's normalizer makes "box" and "boxes" one unit
    assert agreement == {"primary": 0.5, "crf": 0.5, "heuristic": 0.0}
    given = labelled_answers(runs, unit_normalizers(UNITS, ["extract_quantity"]))
    assert {a.observation.path: a.observation.signals["agreement"] for a in given} == agreement


def test_labelled_answers_need_the_normalizers_or_the_units_folder() -> None:
    with pytest.raises(ValueError, match="normalizers or the folder of their unit files"):
        labelled_answers([record({"crf": {"value": 15, "unit": "box"}})])


def test_a_path_alone_on_its_text_has_no_agreement() -> None:
    runs = [record({"crf": {"value": 15, "unit": "box"}})]
    (answer,) = labelled_answers(runs, normalizers={})
    assert "agreement" not in answer.observation.signals


# -- the threshold, chosen by cross-validation on the training texts ----------------------------


def judged(unit: str, text: str, scores: dict[str, tuple[float, bool]]) -> list[EvaluatedAnswer]:
    return [EvaluatedAnswer(unit, text, path, score, score, right)
            for path, (score, right) in scores.items()]  # fmt: skip


def test_threshold_grid_runs_from_low_to_high_inclusive() -> None:
    grid = threshold_grid(0.5, 1.0, 0.01)
    assert len(grid) == 51
    assert grid[0] == 0.5
    assert grid[-1] == 1.0
    assert grid[25] == 0.75


def test_the_most_accurate_threshold_wins() -> None:
    # the model (0.7) is wrong, the crf (0.9) right: any threshold above 0.7 passes the model by
    answers = judged("u", "t1", {"primary": (0.7, False), "crf": (0.9, True)})
    choice = choose_threshold(answers, threshold_grid(0.5, 1.0, 0.1))
    assert choice.accuracy == 1.0
    assert choice.tied == (0.8, 1.0)
    assert choice.threshold == 0.9
    assert choice.best_single_path == ("crf", 1.0)


def two_texts() -> list[EvaluatedAnswer]:
    """Right at thresholds 0.5-0.6 (the model accepted on t1) and from 0.8 (the crf on t2)."""
    return [
        *judged("u", "t1", {"primary": (0.65, True), "crf": (0.9, False)}),
        *judged("u", "t2", {"primary": (0.75, False), "crf": (0.8, True)}),
    ]


def test_ties_take_the_middle_of_the_longest_tied_run() -> None:
    choice = choose_threshold(two_texts(), threshold_grid(0.5, 1.0, 0.1))
    assert choice.accuracy == 0.5
    assert choice.tied == (0.8, 1.0)  # longer than 0.5-0.6
    assert choice.threshold == 0.9


def test_between_equally_long_tied_runs_the_lower_one_wins() -> None:
    choice = choose_threshold(two_texts(), threshold_grid(0.5, 0.9, 0.1))
    assert choice.tied == (0.5, 0.6)
    assert choice.threshold == 0.5  # the lower middle of an even run


def test_a_flat_sweep_takes_its_middle() -> None:
    answers = judged("u", "t1", {"primary": (0.3, False), "crf": (0.4, True)})
    assert choose_threshold(answers, threshold_grid(0.5, 1.0, 0.01)).threshold == 0.75


def test_cross_validation_scores_every_training_text_once_out_of_fold() -> None:
    observations, labels = overconfident_set(240, seed=5)
    answers = [
        LabelledAnswer(unit="u", text=f"t{i // 3}:clean", key=f"t{i // 3}", observation=o,
                       raw=float(o.signals["confidence"]), is_correct=y)
        for i, (o, y) in enumerate(zip(observations, labels, strict=True))
    ]  # fmt: skip
    evaluated = cross_validated(answers, SMALL, folds=3, seed=1)
    assert sorted((e.text, e.path) for e in evaluated) == sorted(
        (a.text, a.observation.path) for a in answers
    )
    choices = choose_thresholds(answers, SMALL, ThresholdSettings(folds=3, seed=1, step=0.05))
    assert set(choices) == {"u", "overall"}
    assert 0.5 <= choices["overall"].threshold <= 1.0
    assert choices["u"].threshold == choices["overall"].threshold  # one unit: the same texts


def test_threshold_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown threshold settings"):
        ThresholdSettings.from_mapping({"fold": 5})
    with pytest.raises(ValueError, match="folds >= 2"):
        ThresholdSettings.from_mapping({"folds": 1})
