"""``PipelineSpec``: a pipeline declared in YAML, ``units/pipelines/<name>.yaml``.

A pipeline file names the units it runs; their ``needs`` make the DAG (a derived unit runs
after the units it computes from, every other unit at once). With ``route: true`` the router
chooses, per input, which of them apply (and the units those need run too)::

    name: contract_review
    description: What a contract commits the parties to.
    units: [extract_parties, extract_payment_terms, extract_penalty_clauses]

Units are found by name beside the ``pipelines/`` folder (``units/<name>.yaml``): a name is a
unit name, never a path, so a pipeline file cannot make AAU read a file outside that folder.
The file is read like a unit file (size and nesting bounds, a located error naming the line);
``aau schema --pipeline`` prints its JSON Schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aau.errors import SpecError
from aau.spec.loader import LineMap, line_of, read_yaml_file
from aau.spec.model import NAME_PATTERN, _spec_error_from

__all__ = ["PipelineSpec", "pipeline_file_schema_text", "pipeline_units_dir"]

_Name = Annotated[str, Field(pattern=NAME_PATTERN)]


class PipelineSpec(BaseModel):
    """A declared pipeline. Build with ``from_file``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: _Name
    """Pipeline id; equals the file stem."""
    description: str = ""
    """What the pipeline answers, in a sentence."""
    units: list[_Name] = Field(min_length=1, max_length=64)
    """The units it runs, by name; the units they need are added to the DAG."""
    route: bool = False
    """Let the router choose, per input, which of the units apply."""
    source: Path | None = Field(None, exclude=True)
    """The file the pipeline was read from."""

    @model_validator(mode="after")
    def _distinct(self) -> PipelineSpec:
        repeated = sorted({name for name in self.units if self.units.count(name) > 1})
        if repeated:
            raise ValueError(f"units are named once each; repeated: {', '.join(repeated)}")
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> PipelineSpec:
        """Read and check a pipeline file; a located ``SpecError`` when it is not one."""
        path = Path(path)
        data, lines, _ = read_yaml_file(path)
        return cls.from_dict(data, source=path.resolve(), lines=lines)

    @classmethod
    def from_dict(
        cls, data: Any, *, source: Path | None = None, lines: LineMap | None = None
    ) -> PipelineSpec:
        """Validate a parsed pipeline file."""
        where = str(source) if source else "<pipeline>"
        lines = lines or {}
        if not isinstance(data, dict):
            raise SpecError(f"a pipeline file must be a mapping, got {type(data).__name__}",
                            file=where, line=1, check="P001")  # fmt: skip
        try:
            spec = cls.model_validate({**data, "source": source})
        except ValidationError as exc:
            raise _spec_error_from(exc, where, lines) from None
        if source is not None and spec.name != source.stem:
            raise SpecError(
                f"name {spec.name!r} differs from the file stem {source.stem!r}; rename one",
                file=where, line=line_of(lines, ("name",)), field="name", check="P003",
            )  # fmt: skip
        return spec

    def unit_paths(self) -> list[Path]:
        """The unit files of ``units``, beside the ``pipelines/`` folder.

        Raises:
            SpecError: a unit file is missing (P004, naming the line).
        """
        folder = pipeline_units_dir(self.source)
        paths = []
        for index, name in enumerate(self.units):
            path = folder / f"{name}.yaml"
            if not path.is_file():
                raise SpecError(f"unit {name!r} not found: no {path}", file=str(self.source),
                                field=f"units[{index}]", check="P004")  # fmt: skip
            paths.append(path)
        return paths


def pipeline_units_dir(source: Path | None) -> Path:
    """Where a pipeline file's units are: the folder holding its ``pipelines/`` folder."""
    if source is None:
        return Path.cwd()
    return source.parent.parent if source.parent.name == "pipelines" else source.parent


def pipeline_file_schema_text() -> str:
    """The JSON Schema of a pipeline file, as the stable text that is shipped."""
    schema = PipelineSpec.model_json_schema(mode="validation")
    schema["properties"].pop("source", None)
    schema["title"] = "AAU pipeline"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
