"""Unit files from an attacker: refused within bounds, each with a located, coded error.

The loader (``aau.spec.loader``) parses once and checks while composing: alias bombs (S008),
nesting (S007), duplicate keys (S006), size (S009); files that are not regular files (S002)
are never opened blocking nor read without a bound; a deep output schema handed to
``UnitSpec.from_dict`` is refused before pydantic and jsonschema recurse into it (S015).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aau.errors import SpecError
from aau.limits import LIMITS, Limits
from aau.spec import loader as loader_module
from aau.spec import model as model_module
from aau.spec.loader import (
    FileRefused,
    nesting_depth,
    path_past_depth,
    read_bounded,
    read_yaml,
)
from aau.spec.model import UnitSpec
from tests.conftest import FIND_TOTAL_YAML, within

DEADLINE_S = 30.0  # generous: each of these is refused in well under a second
RSS_GROWTH_LIMIT = 200 * 2**20


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the test text")


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """The "billion laughs": ``width ** levels`` strings from a few hundred bytes."""
    names = [f"lol{i}" for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    for prev, name in zip(names, names[1:], strict=False):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * width)}]")
    return "\n".join(lines) + "\n"


def max_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def refused(seconds: float, call: Callable[[], Any]) -> SpecError:
    error = within(seconds, call)
    assert isinstance(error, SpecError), f"expected a SpecError, got {error!r}"
    return error


# -- alias bombs ----------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_quickly_and_without_growing_the_process(tmp_path: Path) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 1500
    path = tmp_path / "find_total.yaml"
    path.write_text(bomb, encoding="utf-8")
    before = max_rss_bytes()
    for call in (lambda: read_yaml(bomb), lambda: UnitSpec.from_file(path)):
        error = refused(DEADLINE_S, call)
        assert error.check == "S008"
        assert "aliases expand to more than 200,000 nodes" in error.message
        assert error.line in range(2, 11)
    assert error.file == str(path)
    assert max_rss_bytes() - before < RSS_GROWTH_LIMIT


def test_aliases_are_counted_once_expanded_but_never_expanded() -> None:
    text = "a: &a [1, 2]\nb: [*a, *a]\n"  # each *a adds 3 nodes (the list and its items)
    data, lines = read_yaml(text, limits=Limits(yaml_nodes=6))
    assert data == {"a": [1, 2], "b": [[1, 2], [1, 2]]}
    assert data["b"][0] is data["a"]  # shared, as PyYAML builds aliases
    error = refused(DEADLINE_S, lambda: read_yaml(text, limits=Limits(yaml_nodes=5)))
    assert (error.check, error.line) == ("S008", 2)


def test_many_legal_aliases_load_with_a_line_map_that_does_not_follow_them() -> None:
    anchor = "base: &b {" + ", ".join(f"k{i}: {i}" for i in range(50)) + "}\n"
    text = anchor + "uses:\n" + "".join("  - *b\n" for _ in range(1000))  # 101,000 nodes
    data, lines = read_yaml(text)
    assert len(data["uses"]) == 1000
    assert data["uses"][999]["k49"] == 49
    assert lines[("uses", 999)] == 1002  # the alias's own line
    assert ("uses", 999, "k49") not in lines  # paths through an alias are not listed
    assert len(lines) < 1200


def test_an_alias_that_contains_itself_is_refused() -> None:
    error = refused(DEADLINE_S, lambda: read_yaml("a: &a [1, *a]\n"))
    assert (error.check, error.line) == ("S008", 1)
    assert "expand forever" in error.message


# -- nesting --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "{a: " * 100_000 + "1" + "}" * 100_000,  # 100,000 nested mappings
        "- " * 100_000 + "x\n",
    ],
    ids=["sequences", "mappings", "block-sequences"],
)
def test_deep_nesting_is_a_located_error_not_a_recursion_error(text: str) -> None:
    error = refused(DEADLINE_S, lambda: read_yaml(text))
    assert (error.check, error.line) == ("S007", 1)
    assert f"nested deeper than {LIMITS.yaml_depth} levels" in error.message


def test_deep_nesting_in_a_unit_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_text(FIND_TOTAL_YAML + "flow:\n  x: " + "[" * 100_000 + "\n", encoding="utf-8")
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(path))
    assert (error.check, error.file) == ("S007", str(path))
    assert error.line == len(FIND_TOTAL_YAML.splitlines()) + 2


def test_nesting_is_counted_through_aliases() -> None:
    depth = LIMITS.yaml_depth
    text = "a: &a " + "[" * (depth - 5) + "]" * (depth - 5) + "\nb: " + "[" * 10 + "*a"
    text += "]" * 10 + "\n"
    error = refused(DEADLINE_S, lambda: read_yaml(text))
    assert (error.check, error.line) == ("S007", 2)
    assert "through *a" in error.message
    read_yaml("a: &a [[1]]\nb: [[*a]]\n")  # within bounds


def test_a_depth_bound_past_the_python_stack_is_still_a_located_error() -> None:
    limits = Limits(yaml_depth=1_000_000)
    error = refused(DEADLINE_S, lambda: read_yaml("x:\n  " + "[" * 100_000, limits=limits))
    assert (error.check, error.line) == ("S007", 2)


# -- duplicate keys -------------------------------------------------------------------------------


def test_a_duplicate_key_names_the_line_of_the_second(tmp_path: Path) -> None:
    text = FIND_TOTAL_YAML.replace("description:", "version: 4\ndescription:", 1)
    path = tmp_path / "find_total.yaml"
    path.write_text(text, encoding="utf-8")
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(path))
    assert (error.check, error.file) == ("S006", str(path))
    assert error.line == line_of(text, "version: 4")
    assert f"duplicate key 'version' (first on line {line_of(text, 'version: 3')})" in str(error)


def test_duplicate_keys_are_found_at_any_depth_and_however_quoted() -> None:
    error = refused(DEADLINE_S, lambda: read_yaml("a:\n  b: [1]\n  c:\n    on: 1\n    'on': 2\n"))
    assert (error.check, error.line) == ("S006", 5)
    error = refused(DEADLINE_S, lambda: read_yaml("[{x: 1, y: 2, x: 3}]"))
    assert error.check == "S006"
    read_yaml("a: {x: 1}\nb: {x: 1}\n'1': one\n1: int one\n")  # different mappings and types


def test_merge_keys_may_be_overridden() -> None:
    data, _ = read_yaml("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n")
    assert data["d"] == {"x": 3, "y": 2}


# -- keeping today's behaviour --------------------------------------------------------------------


def test_the_line_map_is_the_one_of_the_plain_walk() -> None:
    _, lines = read_yaml(FIND_TOTAL_YAML)
    assert lines[()] == 1
    assert lines[("output", "properties", "amount")] == line_of(FIND_TOTAL_YAML, "amount:")
    assert lines[("prompt", "system")] == line_of(FIND_TOTAL_YAML, "system:")


def test_a_scalar_its_type_refuses_is_a_located_yaml_error() -> None:
    error = refused(DEADLINE_S, lambda: read_yaml("a: 1\nwhen: 2024-13-45\n"))
    assert (error.check, error.line) == ("S001", 2)
    assert "month must be in 1..12" in error.message
    error = refused(DEADLINE_S, lambda: read_yaml("version: " + "9" * 5000 + "\n"))
    assert (error.check, error.line) == ("S001", 1)
    assert len(str(error)) < 400  # the value is cut in the message


def test_long_keys_are_cut_in_messages() -> None:
    key = "k" * 1000  # an implicit key has at most 1024 characters
    error = refused(DEADLINE_S, lambda: read_yaml(f"{key}: 1\n{key}: 2\n"))
    assert (error.check, error.line) == ("S006", 2)
    assert len(str(error)) < 300


# -- size -----------------------------------------------------------------------------------------


def test_an_oversized_unit_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "find_total.yaml"
    path.write_bytes(FIND_TOTAL_YAML.encode() + b"#" * LIMITS.unit_bytes)
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(path))
    assert (error.check, error.file) == ("S009", str(path))
    assert "for one unit file (AAU_MAX_UNIT_BYTES)" in error.message
    error = refused(DEADLINE_S, lambda: UnitSpec.from_text(path.read_text(encoding="utf-8")))
    assert error.check == "S009"
    wide = "# " + "€" * (LIMITS.unit_bytes // 3 + 1)  # fewer characters than bytes
    assert refused(DEADLINE_S, lambda: read_yaml(wide)).check == "S009"


def test_a_read_never_takes_more_than_the_cap_plus_one_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"x" * 10_000)
    real_stat, asked = os.fstat, []

    def small_stat(fd: int) -> Any:  # a file that reports less than it holds (/proc, growing)
        info = list(real_stat(fd))
        info[6] = 0  # st_size
        return os.stat_result(info)

    def counting_read(fd: int, size: int) -> bytes:
        asked.append(size)
        return real_read(fd, size)

    real_read = os.read
    monkeypatch.setattr(loader_module.os, "fstat", small_stat)
    monkeypatch.setattr(loader_module.os, "read", counting_read)
    with pytest.raises(FileRefused) as info:
        read_bounded(path, 100)
    assert info.value.reason == "too_big"
    assert sum(asked) <= 101


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_a_proc_file_is_cut_at_the_cap() -> None:
    with pytest.raises(FileRefused) as info:
        read_bounded("/proc/self/maps", 100)
    assert info.value.reason == "too_big"


# -- files that are not regular files -------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_unit_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "find_total.yaml"
    os.mkfifo(fifo)
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(fifo))
    assert (error.check, error.file) == ("S002", str(fifo))
    assert "FIFO" in error.message


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_unit_file_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "find_total.yaml"
    link.symlink_to("/dev/zero")
    for path in (Path("/dev/zero"), link):
        error = refused(DEADLINE_S, functools.partial(UnitSpec.from_file, path))
        assert (error.check, error.file) == ("S002", str(path))
        assert "character device" in error.message


def test_a_directory_and_a_missing_file_keep_their_errors(tmp_path: Path) -> None:
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(tmp_path))
    assert (error.check, error.message) == ("S002", "is a directory, expected a unit YAML file")
    error = refused(DEADLINE_S, lambda: UnitSpec.from_file(tmp_path / "absent.yaml"))
    assert (error.check, error.message) == ("S002", "file not found")


# -- output schemas and parsed data ---------------------------------------------------------------


def deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize("levels", [100, 100_000])
def test_a_deep_output_schema_is_refused_before_validation(levels: int) -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data["output"] = deep_schema(levels)
    error = refused(DEADLINE_S, lambda: UnitSpec.from_dict(data))
    assert error.check == "S015"
    assert f"the output schema is nested deeper than {LIMITS.json_depth} levels" in error.message
    assert str(error.field).startswith("output.properties.a.properties")


def test_a_deep_output_schema_is_located_in_the_unit_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "LIMITS", dataclasses.replace(LIMITS, json_depth=3))
    error = refused(DEADLINE_S, lambda: UnitSpec.from_text(FIND_TOTAL_YAML))
    assert (error.check, error.field) == ("S015", "output.properties.amount.type")
    assert error.line == line_of(FIND_TOTAL_YAML, "type: [number")


def test_an_output_schema_that_contains_itself_is_refused() -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    data["output"]["properties"]["loop"] = data["output"]
    assert refused(DEADLINE_S, lambda: UnitSpec.from_dict(data)).check == "S015"


def test_deep_data_elsewhere_in_a_unit_is_refused_too() -> None:
    data, _ = read_yaml(FIND_TOTAL_YAML)
    flow: Any = {}
    for _ in range(10_000):
        flow = {"states": flow}
    data["flow"] = flow
    error = refused(DEADLINE_S, lambda: UnitSpec.from_dict(data))
    assert error.check == "S007"
    assert str(error.field).startswith("flow.states")


def test_nesting_depth_is_iterative_bounded_and_linear() -> None:
    assert [nesting_depth(v, 50) for v in (1, "x", [], {}, [[1]], {"a": [{"b": []}]})] == [
        0, 0, 1, 1, 2, 4,
    ]  # fmt: skip
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    assert nesting_depth(deep, 50) == 51
    assert path_past_depth(deep, 3) == (0, 0, 0)
    assert path_past_depth({"a": [[1]]}, 3) is None
    cycle: list[Any] = []
    cycle.append(cycle)
    assert nesting_depth(cycle, 50) == 51
    shared: Any = [1]
    for _ in range(40):  # 2**40 paths, 41 distinct lists
        shared = [shared, shared]
    assert within(DEADLINE_S, lambda: nesting_depth(shared, 50)) is None
    assert nesting_depth(shared, 50) == 41
    assert nesting_depth(shared, 40) == 41
