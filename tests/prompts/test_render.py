"""Rendering a unit's messages: the static part once per unit, the same messages every time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import aau
from aau.prompts import render
from aau.prompts.render import render_messages

ROOT = Path(__file__).resolve().parents[2]


def test_the_static_part_is_rendered_once_and_the_messages_stay_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unit = aau.load_unit(ROOT / "units" / "extract_price.yaml")
    first = render_messages(unit, "Total: EUR 5")
    rendered: list[str] = []
    real = render._render

    def counting(source: str, *args: Any, **kwargs: Any) -> str:
        rendered.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(render, "_render", counting)
    again = render_messages(unit, "Total: EUR 5")
    other = render_messages(unit, "Total: USD 7")

    assert again == first
    assert len(rendered) == 2  # the input's turn only, for each of the two
    assert other[:-1] == first[:-1]
    assert other[-1]["content"] != first[-1]["content"]
    again[1]["content"] = "changed by a caller"
    assert render_messages(unit, "Total: EUR 5") == first  # callers get their own dicts
    document = render_messages(unit, "Total: EUR 5", "document_first")
    assert document[0]["content"].startswith("Document:\nTotal: EUR 5")
    assert document[1:-1] == first[1:-1]
