"""The calibrator artifact: saved with its feature spec and version; another spec is refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from aau.calibration.base import PathEvidence
from aau.calibration.calibrator import (
    Member,
    MlpCalibrator,
    default_artifact_path,
    load_calibrator,
    network,
)
from aau.calibration.features import (
    FEATURE_SPEC,
    Feature,
    FeatureSpec,
    PathObservation,
    text_signals,
)
from aau.errors import CalibrationError

OBSERVATIONS = [
    PathObservation("primary", "valid", {"confidence": 0.8, "logprob_mean": -0.3}),
    PathObservation("crf", "valid", {"confidence": 0.95, "crf_marginal_mean": 0.9}),
    PathObservation("heuristic", "ungrounded", {}),
]


def make(spec: FeatureSpec = FEATURE_SPEC, *, version: str = "7") -> MlpCalibrator:
    torch.manual_seed(0)
    width = len(spec.features)
    members = [Member(network(spec.width, (8, 4)), 1.3, -0.2), Member(network(spec.width, (8, 4)))]
    return MlpCalibrator(members, spec, [0.5] * width, [2.0] * width, version=version,
                      metadata={"note": "test"})  # fmt: skip


def test_saved_calibrator_loads_with_the_same_scores_and_version(tmp_path: Path) -> None:
    calibrator = make()
    calibrator.save(tmp_path / "c.pt", hidden=(8, 4))
    loaded = load_calibrator(tmp_path / "c.pt")
    assert loaded.version == "7"
    assert loaded.metadata["note"] == "test"
    assert loaded.score_many(OBSERVATIONS) == pytest.approx(calibrator.score_many(OBSERVATIONS))


def test_calibrator_for_another_feature_spec_is_refused(tmp_path: Path) -> None:
    other = dataclasses.replace(
        FEATURE_SPEC, version=2, features=(*FEATURE_SPEC.features, Feature("layout_score"))
    )
    make(other).save(tmp_path / "other.pt", hidden=(8, 4))
    with pytest.raises(CalibrationError) as caught:
        load_calibrator(tmp_path / "other.pt")
    message = str(caught.value)
    assert "was fitted for another feature spec (v2" in message
    assert "features removed: layout_score" in message
    assert message.endswith("run `aau calibrate` to fit one")


def test_changed_transform_is_another_spec(tmp_path: Path) -> None:
    features = tuple(
        Feature(f.name, "log1p") if f.name == "confidence" else f for f in FEATURE_SPEC.features
    )
    make(dataclasses.replace(FEATURE_SPEC, features=features)).save(
        tmp_path / "t.pt", hidden=(8, 4)
    )
    with pytest.raises(CalibrationError, match="transforms changed: confidence"):
        load_calibrator(tmp_path / "t.pt")


def test_missing_artifact_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match=r"not found; run `aau calibrate`"):
        load_calibrator(tmp_path / "absent.pt")


def test_corrupt_artifact_is_a_calibration_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.pt"
    path.write_bytes(b"not a torch file")
    with pytest.raises(CalibrationError, match="unreadable"):
        load_calibrator(path)


def test_ensemble_scores_the_mean_of_its_members() -> None:
    calibrator = make()
    singles = [
        MlpCalibrator(m, FEATURE_SPEC, calibrator.mean, calibrator.std).score_many(OBSERVATIONS)
        for m in calibrator.members
    ]
    expected = [sum(scores) / len(scores) for scores in zip(*singles, strict=True)]
    assert calibrator.score_many(OBSERVATIONS) == pytest.approx(expected)


def test_calibrator_needs_a_member() -> None:
    with pytest.raises(CalibrationError, match="at least one fitted network"):
        MlpCalibrator(
            [], FEATURE_SPEC, [0.0] * len(FEATURE_SPEC.features), [1.0] * len(FEATURE_SPEC.features)
        )


def test_statistics_must_match_the_spec() -> None:
    with pytest.raises(CalibrationError, match="feature statistics"):
        MlpCalibrator(network(FEATURE_SPEC.width, (4,)), FEATURE_SPEC, [0.0], [1.0])


def test_scores_are_probabilities() -> None:
    scores = make().score_many(OBSERVATIONS)
    assert all(0.0 < s < 1.0 for s in scores)


@pytest.mark.skipif(not default_artifact_path().is_file(), reason="no fitted calibrator yet")
def test_shipped_calibrator_matches_this_feature_spec() -> None:
    calibrator = load_calibrator()
    assert calibrator.spec.digest == FEATURE_SPEC.digest
    assert all(0.0 <= s <= 1.0 for s in calibrator.score_many(OBSERVATIONS))


def test_calibrator_fitted_before_agreement_was_a_signal_is_refused(tmp_path: Path) -> None:
    before = dataclasses.replace(
        FEATURE_SPEC, version=1,
        features=tuple(f for f in FEATURE_SPEC.features if f.name != "agreement"),
    )  # fmt: skip
    make(before).save(tmp_path / "v1.pt", hidden=(8, 4))
    with pytest.raises(CalibrationError) as caught:
        load_calibrator(tmp_path / "v1.pt")
    message = str(caught.value)
    assert f"(v1, digest {before.digest[:12]}); this AAU reads v{FEATURE_SPEC.version}" in message
    assert "features added: agreement" in message


def test_confidence_compares_the_answer_with_its_witnesses() -> None:
    from aau.answers import PathAnswer

    calibrator = make()
    answer = PathAnswer(output={"value": 15, "unit": "boxes"}, confidence=0.6)
    context = {"outcome": "valid", "text": "15 boxes", "description": "d"}
    agreeing = calibrator.confidence(PathEvidence(
        "primary", answer, **context, witnesses=[{"value": 15.0, "unit": "box"}],
        normalizers={"unit": "unit"},
    ))  # fmt: skip
    signals = {"confidence": 0.6, "null_answer": 0.0, "filled_share": 1.0}
    # v3: the text signals too (read from the text and the answer, not from the witnesses)
    read = text_signals("15 boxes", answer.output, answer.spans, {"unit": "unit"})
    expected = calibrator.score(PathObservation(
        "primary", "valid", {**signals, **read, "agreement": 1.0, "witnesses_with_value": 1.0}
    ))  # fmt: skip
    assert agreeing == pytest.approx(expected)
    alone = calibrator.confidence(PathEvidence("primary", answer, **context))
    alone_read = text_signals("15 boxes", answer.output, answer.spans, None)
    expected_alone = PathObservation("primary", "valid", {**signals, **alone_read})
    assert alone == pytest.approx(calibrator.score(expected_alone))
    assert alone != pytest.approx(agreeing)


def test_the_networks_score_in_numpy_as_torch_does() -> None:
    import torch

    from aau.calibration.calibrator import _forward, _numpy_layers, network

    torch.manual_seed(0)
    for hidden in ((), (4,), (16, 8)):
        model = network(FEATURE_SPEC.width, hidden, dropout=0.2).eval()
        batch = torch.randn(5, FEATURE_SPEC.width)
        layers = _numpy_layers(model)
        assert layers is not None
        assert len(layers) == len(hidden) + 1
        with torch.inference_mode():
            expected = model(batch).squeeze(-1).numpy()
        assert _forward(layers, batch.numpy()) == pytest.approx(expected, abs=1e-5)
    other = torch.nn.Sequential(torch.nn.Linear(FEATURE_SPEC.width, 1), torch.nn.Sigmoid())
    assert _numpy_layers(other) is None  # anything else is run by torch
