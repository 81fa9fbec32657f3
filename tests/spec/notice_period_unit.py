"""A unit as a newcomer writes it: words in three languages mapped to an enum by a YAML table.

``extract_notice_period`` answers ``{value: integer, unit: day|week|month|year}``. No shipped
normalizer gives singular units (``unit`` reads "day" as "days"), so the unit declares its own,
``period_unit``, a table of English, French and German words; its fields name it like any
normalizer. Shared by the spec, fallback and CLI tests.
"""

from __future__ import annotations

from pathlib import Path

NOTICE_PERIOD_YAML = """\
# yaml-language-server: $schema=unit.schema.json
name: extract_notice_period
version: 1
description: The notice period a contract or letter states, as a number and a unit of time.
output:
  type: object
  properties:
    value:
      type: [integer, "null"]
    unit:
      type: [string, "null"]
      enum: [day, week, month, year, null]
  required: [value, unit]
  additionalProperties: false
prompt:
  system: >-
    Reply with the notice period as JSON: {"value": integer, "unit": "day", "week", "month" or
    "year"}, or {"value": null, "unit": null} when the text states none.
  template: "Text: {{ text }}"
normalizers:
  period_unit:
    map:
      day: day
      days: day
      jour: day
      jours: day
      tag: day
      tage: day
      tagen: day
      week: week
      weeks: week
      semaine: week
      semaines: week
      woche: week
      wochen: week
      month: month
      months: month
      mois: month
      monat: month
      monate: month
      monaten: month
      year: year
      years: year
      an: year
      ans: year
      année: year
      années: year
      jahr: year
      jahre: year
      jahren: year
fallbacks:
  - kind: heuristic
    keywords: [notice, préavis, kündigungsfrist, frist]
    patterns:
      - regex: '\\b(?P<value>\\d{1,3})\\s*(?P<unit>[^\\W\\d_]+)'
        strength: 0.8
    fields:
      value: {group: value, normalize: number}
      unit: {group: unit, normalize: period_unit}
"""
"""The newcomer's unit (file stem ``extract_notice_period``)."""

TEXTS = [
    ("Either party may terminate with a notice period of 3 months.", 3, "month"),
    ("Le contrat peut être résilié avec un préavis de 2 mois.", 2, "month"),
    ("Die Kündigungsfrist beträgt 6 Wochen zum Monatsende.", 6, "week"),
    ("Notice: 30 days.", 30, "day"),
    ("Résiliation avec un préavis de 15 jours.", 15, "day"),
    ("Kündigung mit einer Frist von 1 Jahr.", 1, "year"),
    ("DIE KÜNDIGUNGSFRIST BETRÄGT 3 MONATE.", 3, "month"),
    ("Termination requires 2 weeks notice.", 2, "week"),
]
"""(text, value, unit) the unit's paths must answer, in English, French and German."""


def write_notice_unit(folder: Path, text: str = NOTICE_PERIOD_YAML) -> Path:
    """Write the unit (or a variant of it) as ``folder/extract_notice_period.yaml``."""
    path = folder / "extract_notice_period.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def replace_once(text: str, old: str, new: str) -> str:
    """``text`` with its one ``old`` replaced."""
    assert text.count(old) == 1, f"{old!r} must occur once in the unit"
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line of ``text`` that contains ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the unit")
