"""A unit's own calibrator: fitted out of fold on its labelled texts, read as JSON, used by default.

Real fitting (scikit-learn, the classifier path trained per fold) on a real unit folder; the
faults are real files (an altered, malformed or oversized artifact).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from aau import Pipeline
from aau.answers import PathAnswer, PathContext
from aau.calibration.base import PathEvidence
from aau.calibration.unit_calibrator import (
    UnitCalibrator,
    load_unit_calibrator,
    unit_calibration_path,
)
from aau.cli.validate import validate_units
from aau.errors import CalibrationError
from aau.fallbacks.crf import sha256_hex
from aau.fitting.unit_calibration import (
    GoldCase,
    _folded,
    answer_correct,
    fit_unit_calibration,
    write_unit_calibration,
)
from aau.spec.model import UnitSpec
from tests.fallbacks.test_classifier import write_unit

UNITS = Path(__file__).resolve().parents[2] / "units"


@pytest.fixture(scope="module")
def triage(tmp_path_factory: pytest.TempPathFactory) -> tuple[UnitSpec, Path]:
    """A trained classify unit with its own calibrator written beside it."""
    folder = tmp_path_factory.mktemp("triage")
    unit = UnitSpec.from_file(write_unit(folder))
    unit.fallbacks[0].train(unit)
    data = fit_unit_calibration(unit, folds=3)
    write_unit_calibration(data, unit_calibration_path(unit))
    return unit, unit_calibration_path(unit)


def test_fitting_writes_an_artifact_of_out_of_fold_figures(triage: Any) -> None:
    unit, path = triage
    data = load_unit_calibrator(path).data

    assert data.unit == "triage"
    assert data.paths == ["classifier"]
    assert data.report["texts"] == 54
    assert data.report["rows"] == 54
    assert data.report["paths"]["classifier"]["rows"] == 54
    assert data.data_sha256 == sha256_hex((unit.base_dir / "triage.labelled.jsonl").read_bytes())
    assert set(data.report["cv_log_loss"])
    assert data.report["c"] in {0.01, 0.03, 0.1, 0.3, 1, 3}
    assert "signal:class_margin" in data.features
    assert "unseen_words" in data.features


def test_a_pipeline_scores_the_unit_with_its_own_calibrator(triage: Any) -> None:
    unit, _ = triage
    default = Pipeline([unit], engine=False)
    assert isinstance(default.runners[0].calibrator, UnitCalibrator)
    result = default.run("The server is down and nobody can log in").units["triage"]
    assert result.output is not None
    assert 0.0 < result.confidence < 1.0

    assert Pipeline([unit], engine=False, calibrator=False).runners[0].calibrator is None


def test_words_no_training_text_holds_lower_the_confidence() -> None:
    calibrator = load_unit_calibrator(UNITS / "detect_complaint.calibration.json")
    answer = PathAnswer(output={"is_complaint": True, "topic": "billing"}, confidence=0.7,
                        signals={"class_top": 0.7, "class_margin": 0.5})  # fmt: skip

    def confidence(text: str) -> float:
        return calibrator.confidence(PathEvidence("classifier", answer, "valid", text, ""))

    familiar = "I was charged twice for my order, please refund the duplicate payment."
    unfamiliar = "Zkasírovali jste mě dvakrát za stejnou objednávku, vraťte mi tu platbu."
    assert calibrator.vocabulary.unseen_share(familiar) < 0.1
    assert calibrator.vocabulary.unseen_share(unfamiliar) > 0.8
    assert confidence(unfamiliar) < confidence(familiar)


def test_folds_leave_whole_languages_out() -> None:
    cases = [GoldCase(i, f"text {i}", {}, "en") for i in range(40)]
    cases += [GoldCase(100 + i, f"Text {i}", {}, "de") for i in range(9)]
    cases += [GoldCase(200 + i, f"texte {i}", {}, "fr") for i in range(7)]

    folded = _folded(cases, 5, seed=1)

    assert len({c.fold for c in folded if c.language == "de"}) == 1
    assert len({c.fold for c in folded if c.language == "fr"}) == 1
    assert {c.fold for c in folded if c.language == "de"} != {
        c.fold for c in folded if c.language == "fr"
    }
    assert len({c.fold for c in folded if c.language == "en"}) == 5


def test_records_are_right_in_any_order() -> None:
    unit = UnitSpec.from_file(UNITS / "extract_penalty_clauses.yaml")
    one = {"amount": 500, "currency": "EUR", "trigger": "per day of delay"}
    two = {"amount": 25000, "currency": "EUR", "trigger": "breach of confidentiality"}

    assert answer_correct(unit, {"clauses": [two, one]}, {"clauses": [one, two]})
    assert not answer_correct(unit, {"clauses": [one]}, {"clauses": [one, two]})
    assert answer_correct(unit, {"clauses": []}, {"clauses": []})


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(coef=d["coef"][:-1]), "coef must each hold"),
        (lambda d: d.update(scale=[0.0] * len(d["scale"])), "scale must be positive"),
        (lambda d: d.update(format=99), "format 99"),
        (lambda d: d.update(extra="x"), "extra"),
        (lambda d: d.update(data_sha256="../../etc/passwd"), "data_sha256"),
    ],
)
def test_a_malformed_artifact_is_a_located_error(
    triage: Any, tmp_path: Path, change: Any, words: str
) -> None:
    _, path = triage
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    bad = tmp_path / "bad.calibration.json"
    bad.write_text(json.dumps(data), encoding="utf-8")

    with pytest.raises(CalibrationError, match=words):
        load_unit_calibrator(bad)


@pytest.mark.parametrize("content", [b"", b"{", b"\xff\xfe", b"[1, 2]", b'{"coef": NaN}'])
def test_an_unreadable_artifact_refuses_the_pipeline(
    triage: Any, tmp_path: Path, content: bytes
) -> None:
    unit, _ = triage
    folder = tmp_path / "unit"
    shutil.copytree(unit.base_dir, folder)
    copy = UnitSpec.from_file(folder / "triage.yaml")
    unit_calibration_path(copy).write_bytes(content)

    with pytest.raises(CalibrationError, match="triage.calibration.json"):
        Pipeline([copy], engine=False)


def test_validate_warns_of_a_stale_unit_calibration(triage: Any, tmp_path: Path) -> None:
    unit, _ = triage
    folder = tmp_path / "unit"
    shutil.copytree(unit.base_dir, folder)
    out, err = io.StringIO(), io.StringIO()
    assert validate_units([folder / "triage.yaml"], out, err) == 0
    assert "calibration" not in err.getvalue()

    with (folder / "triage.labelled.jsonl").open("a", encoding="utf-8") as examples:
        examples.write(json.dumps({"text": "The lift is stuck between floors",
                                   "output": {"urgent": True, "team": "facilities",
                                              "tags": ["safety"]}}) + "\n")  # fmt: skip
    validate_units([folder / "triage.yaml"], out, err)
    assert "the unit calibration is stale: the labelled texts triage.labelled.jsonl changed" in (
        err.getvalue()
    )


def test_texts_written_apart_rescale_the_confidence(triage: Any, tmp_path: Path) -> None:
    # Texts unlike the training ones, on which the classifier is wrong about half the time:
    # rescaled on them, the calibrator must say so instead of its training texts' sureness.
    unit, path = triage
    plain = load_unit_calibrator(path)
    texts = [f"Ticket {i}: the {thing} on floor {i % 4} needs someone from {team}"
             for i, (thing, team) in enumerate(
                 [("printer", "facilities"), ("payroll run", "it"), ("boiler", "finance"),
                  ("laptop", "finance"), ("invoice", "it"), ("lift", "it")] * 4)]  # fmt: skip
    apart = tmp_path / "triage.heldout.jsonl"
    apart.write_text("".join(json.dumps({"text": t, "output": {
        "urgent": i % 2 == 0, "team": ["it", "finance", "facilities"][i % 3], "tags": []}}) + "\n"
        for i, t in enumerate(texts)), encoding="utf-8")  # fmt: skip

    data = fit_unit_calibration(unit, folds=3, apart=apart)
    rescaled = UnitCalibrator(data)

    assert (data.rescale.slope, data.rescale.offset) != (1.0, 0.0)
    assert data.report["apart_texts"] == len(texts)
    assert {"apart_cv_ece", "apart_raw_ece", "apart_accuracy"} <= set(data.report)
    path_ = unit.fallbacks[0].build(unit)

    def mean_confidence(calibrator: UnitCalibrator) -> float:
        answers = [(t, path_.extract(t, PathContext(unit.name, unit.output))) for t in texts]
        return sum(calibrator.confidence(PathEvidence("classifier", a, "valid", t, ""))
                   for t, a in answers) / len(answers)  # fmt: skip

    accuracy = data.report["apart_accuracy"]
    assert abs(mean_confidence(rescaled) - accuracy) < abs(mean_confidence(plain) - accuracy)
