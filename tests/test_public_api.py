"""The public API: ``aau.__all__`` names every public name of the package, sorted (as httpx)."""

from __future__ import annotations

import inspect

import aau
import aau.errors


def public_names(module: object) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }


def test_all_is_sorted() -> None:
    assert aau.__all__ == sorted(aau.__all__)


def test_all_has_no_duplicates() -> None:
    assert len(aau.__all__) == len(set(aau.__all__))


def test_all_names_every_public_name_of_the_package() -> None:
    assert public_names(aau) == set(aau.__all__)


def test_every_name_in_all_exists() -> None:
    for name in aau.__all__:
        assert getattr(aau, name) is not None, name


def test_exported_errors_are_the_ones_of_the_error_hierarchy() -> None:
    errors = {name for name in aau.__all__ if isinstance(getattr(aau, name), type)
              and issubclass(getattr(aau, name), BaseException)}  # fmt: skip

    assert errors <= set(aau.errors.__all__)
    assert {"AAUError", "SpecError", "EngineError", "UnitRunError", "InputError"} <= errors
    for name in errors:
        assert getattr(aau, name) is getattr(aau.errors, name)
        assert issubclass(getattr(aau, name), aau.AAUError)


def test_error_module_all_is_complete_and_sorted() -> None:
    assert aau.errors.__all__ == sorted(aau.errors.__all__)
    assert public_names(aau.errors) == set(aau.errors.__all__)


def test_the_documented_entry_points_are_exported() -> None:
    assert {"load_unit", "UnitSpec", "Pipeline", "run", "build_engine"} <= set(aau.__all__)
    assert callable(aau.load_unit)
    assert callable(aau.run)
