"""CLDR tables kept on disk: read back by the next process, never trusted to run code."""

from __future__ import annotations

import pickle
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from aau.values import _disk_cache
from aau.values._disk_cache import cache_folder, cached

MODULES = (sys.modules[__name__],)


def table() -> dict[str, object]:
    return {"kč": frozenset({"CZK"}), "scale": {"de": Decimal("1e6")}}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AAU_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_a_table_is_built_once_and_read_back_after() -> None:
    builds: list[int] = []

    def build() -> dict[str, object]:
        builds.append(1)
        return table()

    first = cached("t", MODULES, build)
    second = cached("t", MODULES, build)

    assert first == second == table()
    assert builds == [1]
    assert [p.suffix for p in cache_folder().iterdir()] == [".pickle"]  # no temporary left


class Exploit:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("this ran",))


def test_a_file_that_would_run_code_is_refused_and_the_table_rebuilt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cached("t", MODULES, table)
    (path,) = cache_folder().iterdir()
    path.write_bytes(pickle.dumps(Exploit()))

    assert cached("t", MODULES, table) == table()
    assert "this ran" not in capsys.readouterr().out
    assert pickle.loads(path.read_bytes()) == table()  # rewritten with the real table


def test_a_changed_builder_is_not_served_an_old_table(monkeypatch: pytest.MonkeyPatch) -> None:
    cached("t", MODULES, table)
    monkeypatch.setattr(_disk_cache, "_key", lambda name, modules: f"{name}-other.pickle")

    assert cached("t", MODULES, lambda: {"new": frozenset()}) == {"new": frozenset()}


def test_an_unwritable_cache_still_gives_the_table(cache_dir: Path) -> None:
    (cache_dir / "values").write_text("a file where the folder should be")

    assert cached("t", MODULES, table) == table()
