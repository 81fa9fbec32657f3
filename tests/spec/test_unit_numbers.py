"""Every number of a unit file is finite: ``.nan`` and ``.inf`` are refused where they appear."""

from __future__ import annotations

import pytest
import yaml

from aau.errors import SpecError
from aau.spec.loader import read_yaml
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML


def with_value(path: tuple[str | int, ...], value: str) -> str:
    """The test unit's YAML with ``value`` (YAML text such as ``.nan``) at ``path``."""
    data, _ = read_yaml(FIND_TOTAL_YAML)
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = "@@VALUE@@"
    return yaml.safe_dump(data, sort_keys=False).replace("'@@VALUE@@'", value)


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", ".NaN", "+.inf"])
@pytest.mark.parametrize(
    "path",
    [
        ("version",),
        ("policy", "timeout_s"),
        ("policy", "threshold"),
        ("fallbacks", 0, "confidence"),
        ("fallbacks", 0, "no_match_confidence"),
        ("fallbacks", 0, "patterns", 0, "strength"),
    ],
)
def test_non_finite_numbers_are_refused_with_their_field(
    path: tuple[str | int, ...], value: str
) -> None:
    text = with_value(path, value)
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_text(text)
    error = caught.value
    assert error.spec_code == "S010"
    dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    assert error.field == dotted
    assert error.line is not None


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_non_finite_keyword_bonus_is_refused(value: str) -> None:
    text = with_value(("fallbacks", 0, "keywords"), f"{{total: {value}}}")
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_text(text)
    assert caught.value.spec_code == "S010"


@pytest.mark.parametrize("value", ["1", "1.5", "'2.0'", "'2024-01'"])
def test_finite_versions_still_load(value: str) -> None:
    assert UnitSpec.from_text(with_value(("version",), value)).version.strip("'") != ""
