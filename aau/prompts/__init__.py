"""Prompt rendering for units."""

from aau.prompts.render import compact_json, render_messages

__all__ = ["compact_json", "render_messages"]
