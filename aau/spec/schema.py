"""The JSON Schema of the unit file format, generated from the pydantic models.

Editors use it to complete and check unit files (``# yaml-language-server: $schema=…``). It is
generated, never hand-edited: ``aau schema > units/unit.schema.json``; a test fails when the
shipped copies differ from what the models generate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import create_model

from aau.spec.model import UnitSpec, fallback_union

__all__ = ["PACKAGED_SCHEMA", "unit_file_schema", "unit_file_schema_text"]

PACKAGED_SCHEMA = Path(__file__).with_name("unit.schema.json")
"""The copy shipped inside the package."""


def unit_file_schema() -> dict[str, Any]:
    """The JSON Schema of a unit file, with every registered fallback kind."""
    # ``UnitSpec.fallbacks`` holds the kinds' common base, validated through the registry; the
    # published schema spells out the discriminated union of the kinds registered now.
    fallbacks: Any = list[fallback_union()]  # type: ignore[misc]  # a union built at run time
    model = create_model("UnitFile", __base__=UnitSpec, fallbacks=(fallbacks, []))
    schema = model.model_json_schema(mode="validation")
    schema["properties"].pop("source", None)
    schema["title"] = "AAU unit"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def unit_file_schema_text() -> str:
    """The schema as the stable text that is shipped."""
    return json.dumps(unit_file_schema(), indent=2, sort_keys=True) + "\n"
