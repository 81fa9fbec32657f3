"""Fixtures of the ``aau calibrate`` tests: a working folder elsewhere, torch's threads kept,
and the settings of small calibration runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory outside the checkout: no ./calibration, no ./units."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def torch_threads() -> Iterator[None]:
    """Restore torch's thread count (the runs' settings set it for the engine)."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def small_settings(*, version: int, chunk: int, epochs: int, patience: int) -> dict[str, Any]:
    """``config.yaml`` of a quick calibration over ``extract_quantity``: no scans, two folds."""
    return {
        "version": version,
        "runs": {"units": ["extract_quantity"], "seed": 1, "ocr_share": 0.0,
                 "noise": [0.1, 0.2], "crf_folds": 2, "chunk": chunk, "threads": 1},
        "split": {"seed": 7, "validation_share": 0.3},
        "training": {"epochs": epochs, "patience": patience, "hidden": [8], "members": 1},
        "threshold": {"folds": 2, "seed": 3, "step": 0.25},
    }  # fmt: skip
