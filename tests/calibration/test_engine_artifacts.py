"""A calibrator per engine kind: its artifact's name, the kind of log-probabilities it records
(``metadata["engine"]``, kept through save and load), and the one a pipeline picks."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import aau.calibration.calibrator as calibrator_module
from aau.calibration.calibrator import (
    IN_PROCESS_ENGINE,
    MlpCalibrator,
    artifact_name,
    engine_artifact_path,
    load_calibrator,
)
from aau.calibration.features import PathObservation
from aau.calibration.training import TrainingSettings, fit_calibrator
from aau.engines.registry import EngineConfig, build_engine
from aau.errors import CalibrationError
from aau.pipeline import Pipeline
from aau.pipeline.pipeline import _calibrator
from tests.conftest import UNITS_DIR

SERVER = EngineConfig(backend="openai", remote={"base_urls": ["http://127.0.0.1:9"],
                                                "served_model": "smollm2"})  # fmt: skip
"""A server's engine; building it sends nothing (no test here reaches a server)."""
TINY = TrainingSettings(epochs=15, patience=5, hidden=(4,), members=1)


def tiny_fitted(engine: dict[str, Any] | None, *, version: str) -> MlpCalibrator:
    """A calibrator fitted in a moment on made-up answers, with ``metadata["engine"]``."""
    rng = random.Random(3)
    observations, labels = [], []
    for _ in range(120):
        confidence = rng.random()
        path = rng.choice(["primary", "crf", "heuristic"])
        observations.append(PathObservation(path, "valid", {"confidence": confidence}))
        labels.append(rng.random() < confidence)
    groups = [f"text{i // 3}" for i in range(len(observations))]
    metadata = {"engine": engine} if engine is not None else {}
    return fit_calibrator(observations, labels, groups, TINY, version=version, metadata=metadata)


RAW = {"name": "transformers", "logprobs_after_mask": False, "served_model": None}
MASKED = {"name": "openai", "logprobs_after_mask": True, "served_model": "smollm2"}


# -- the artifact's name -------------------------------------------------------------------------


def test_the_in_process_engine_keeps_the_default_artifact_name() -> None:
    assert artifact_name() == "calibrator.pt"
    assert artifact_name(IN_PROCESS_ENGINE) == "calibrator.pt"
    assert engine_artifact_path(IN_PROCESS_ENGINE) == calibrator_module.default_artifact_path()


def test_another_engine_has_its_artifact_beside_the_default() -> None:
    assert artifact_name("openai") == "calibrator-openai.pt"
    default = calibrator_module.default_artifact_path()
    assert engine_artifact_path("openai") == default.with_name("calibrator-openai.pt")


@pytest.mark.parametrize("name", ["", "../openai", "a/b", ".hidden", "x" * 80])
def test_a_name_no_file_can_carry_is_refused(name: str) -> None:
    with pytest.raises(CalibrationError, match="cannot name a calibrator artifact"):
        artifact_name(name)


# -- the kind of log-probabilities, through save and load ---------------------------------------


@pytest.mark.parametrize("engine", [RAW, MASKED], ids=["raw", "after-mask"])
def test_the_engine_round_trips_through_save_and_load(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    fitted = tiny_fitted(engine, version="9")
    assert fitted.logprobs_after_mask is engine["logprobs_after_mask"]
    fitted.save(tmp_path / "c.pt", hidden=TINY.hidden)
    loaded = load_calibrator(tmp_path / "c.pt")
    assert loaded.metadata["engine"] == engine
    assert loaded.logprobs_after_mask is engine["logprobs_after_mask"]


def test_an_artifact_from_before_engine_kinds_is_of_the_raw_kind(tmp_path: Path) -> None:
    tiny_fitted(None, version="1").save(tmp_path / "old.pt", hidden=TINY.hidden)
    loaded = load_calibrator(tmp_path / "old.pt")
    assert "engine" not in loaded.metadata
    assert loaded.logprobs_after_mask is False


# -- the pipeline's choice ----------------------------------------------------------------------


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An artifact folder of its own in place of the shipped one (empty until a test fills it)."""
    folder = tmp_path / "calibration"
    folder.mkdir()
    monkeypatch.setattr(
        calibrator_module, "default_artifact_path", lambda: folder / "calibrator.pt"
    )
    return folder


def write_default(folder: Path) -> None:
    tiny_fitted(RAW, version="default").save(folder / "calibrator.pt", hidden=TINY.hidden)


def write_server(folder: Path) -> None:
    tiny_fitted(MASKED, version="server").save(folder / "calibrator-openai.pt", hidden=TINY.hidden)


def version_of(chosen: object) -> str:
    assert isinstance(chosen, MlpCalibrator)
    return chosen.version


def test_a_server_engine_gets_the_calibrator_fitted_with_it(artifacts: Path) -> None:
    write_default(artifacts)
    write_server(artifacts)
    engine = build_engine(SERVER)
    chosen = _calibrator(None, engine)
    assert isinstance(chosen, MlpCalibrator)
    assert chosen.version == "server"
    assert chosen.logprobs_after_mask is engine.capabilities.logprobs_after_mask is True
    assert version_of(_calibrator(True, engine)) == "server"


def test_without_its_own_artifact_a_server_engine_gets_the_default_one(artifacts: Path) -> None:
    write_default(artifacts)
    chosen = _calibrator(None, build_engine(SERVER))
    assert isinstance(chosen, MlpCalibrator)
    assert chosen.version == "default"
    # the runner then reads none of the server's generations: they are of the other kind
    assert chosen.logprobs_after_mask is False


def test_the_in_process_engine_keeps_the_default_artifact(artifacts: Path) -> None:
    write_default(artifacts)
    write_server(artifacts)
    local = build_engine(EngineConfig())  # built, no weights loaded
    try:
        assert version_of(_calibrator(None, local)) == "default"
    finally:
        local.close()
    assert version_of(_calibrator(None, None)) == "default"


def test_no_artifact_no_calibrator(artifacts: Path) -> None:
    assert _calibrator(None, build_engine(SERVER)) is None
    write_server(artifacts)
    assert _calibrator(None, None) is None  # no engine: only the default artifact counts


def test_an_explicit_choice_is_kept_whatever_the_engine(artifacts: Path) -> None:
    write_default(artifacts)
    write_server(artifacts)
    engine = build_engine(SERVER)
    assert _calibrator(False, engine) is None
    assert version_of(_calibrator(artifacts / "calibrator.pt", engine)) == "default"
    fitted = tiny_fitted(RAW, version="given")
    assert _calibrator(fitted, engine) is fitted


def test_a_pipeline_on_a_server_scores_with_its_calibrator(artifacts: Path) -> None:
    write_default(artifacts)
    write_server(artifacts)
    pipeline = Pipeline([UNITS_DIR / "extract_quantity.yaml"], engine=SERVER, terms=False)
    assert isinstance(pipeline.calibrator, MlpCalibrator)
    assert pipeline.calibrator.version == "server"
    assert pipeline.runners[0].calibrator is pipeline.calibrator
