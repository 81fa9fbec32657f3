"""The plug-in registry: shipped plug-ins found through entry points, read once, named errors."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import pytest

from aau.decoding.base import CONSTRAINT_BACKENDS
from aau.engines.registry import ENGINES
from aau.fallbacks.normalize import NORMALIZERS
from aau.grammars.normalizers import GRAMMAR_NORMALIZERS
from aau.registry import Registry, UnknownName
from aau.spec.model import FALLBACK_KINDS


def test_shipped_plugins_come_from_their_entry_point_groups() -> None:
    assert ENGINES.names() == ["openai", "transformers"]
    assert FALLBACK_KINDS.names() == ["classifier", "crf", "heuristic", "keyword_rules", "records"]
    assert CONSTRAINT_BACKENDS.names() == ["outlines_core", "xgrammar"]
    assert {"date", "iso_date", "money_amount"} <= set(GRAMMAR_NORMALIZERS.names())
    assert {"amount", "currency", "date", "unit"} <= set(NORMALIZERS.names())
    assert FALLBACK_KINDS.get("crf").__module__ == "aau.fallbacks.crf"


def test_unknown_name_lists_the_available_ones() -> None:
    with pytest.raises(UnknownName) as caught:
        FALLBACK_KINDS.get("regex")
    assert str(caught.value) == (
        "unknown fallback kind 'regex'. "
        "Available: classifier, crf, heuristic, keyword_rules, records"
    )
    assert caught.value.available == ["classifier", "crf", "heuristic", "keyword_rules", "records"]
    assert isinstance(caught.value, LookupError)


def fake_entry_points(
    monkeypatch: pytest.MonkeyPatch, entries: list[metadata.EntryPoint]
) -> list[str]:
    """Replaces the entry-point scan with ``entries``; returns the groups asked for."""
    asked: list[str] = []

    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        asked.append(group)
        return [e for e in entries if e.group == group]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return asked


def test_entry_points_are_read_once_however_often_the_registry_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry = metadata.EntryPoint("upper", "builtins:str", "test.normalizers")
    asked = fake_entry_points(monkeypatch, [entry])
    registry: Registry[Any] = Registry("normalizer", "test.normalizers")
    assert registry.get("upper") is str
    assert "upper" in registry
    assert registry.names() == ["upper"]
    assert asked == ["test.normalizers"]


def test_the_decorator_registers_in_process_and_an_entry_point_does_not_replace_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(monkeypatch, [metadata.EntryPoint("mine", "builtins:str", "test.kinds")])
    registry: Registry[Any] = Registry("kind", "test.kinds")

    @registry.register("mine", "alias")
    def mine() -> None: ...

    assert registry.get("mine") is mine
    assert registry.get("alias") is mine


def test_a_plugin_that_fails_to_load_is_skipped_with_a_warning_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = metadata.EntryPoint("broken", "aau_no_such_module:thing", "test.kinds")
    good = metadata.EntryPoint("good", "builtins:int", "test.kinds")
    fake_entry_points(monkeypatch, [broken, good])
    registry: Registry[Any] = Registry("kind", "test.kinds")
    with pytest.warns(RuntimeWarning, match=r"kind plug-in 'broken' \(aau_no_such_module:thing\)"):
        assert registry.names() == ["good"]


def test_resolve_makes_plugins_for_names_nobody_registered() -> None:
    registry: Registry[str] = Registry(
        "thing", resolve=lambda n: n.upper() if n.startswith("x:") else None
    )
    assert registry.get("x:a") == "X:A"
    assert registry.find("y") is None
    assert registry.names() == []  # resolved names are not listed
