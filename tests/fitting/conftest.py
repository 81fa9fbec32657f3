"""Fixtures of the ``aau calibrate`` tests: a working folder elsewhere, torch's threads kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
