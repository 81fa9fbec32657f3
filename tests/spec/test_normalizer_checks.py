"""Load checks of a unit's normalizers: tables (S041, S042, S010) and unreachable enums (S043).

Each bad unit is a variant of the newcomer's ``extract_notice_period``, written to a real file
and loaded (or validated with ``aau validate``); the expected line is found in the test's own
text.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from aau.cli.main import main
from aau.errors import SpecError
from aau.spec.model import UnitSpec
from tests.conftest import UNIT_FILES
from tests.spec.notice_period_unit import (
    NOTICE_PERIOD_YAML,
    line_of,
    replace_once,
    write_notice_unit,
)

HEURISTIC_UNIT = "      unit: {group: unit, normalize: period_unit}\n"


def field_with(normalize: str) -> str:
    """The heuristic's unit field, read by ``normalize``."""
    return f"      unit: {{group: unit, normalize: {normalize}}}\n"


def load_error(tmp_path: Path, text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(write_notice_unit(tmp_path, text))
    return caught.value


def with_unit_normalizer(text: str = NOTICE_PERIOD_YAML) -> str:
    """The unit with its unit field read by the shipped ``unit`` normalizer (plural units)."""
    return replace_once(text, HEURISTIC_UNIT, "      unit: {group: unit, normalize: unit}\n")


# -- enum values a normalizer can never produce (S043) -------------------------------------------


def test_validate_catches_the_unit_normalizer_that_never_gives_a_singular_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = with_unit_normalizer()
    path = write_notice_unit(tmp_path, text)

    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    line = line_of(text, "normalize: unit}")
    assert err == (
        f"error: {path}:{line}: fallbacks[0].fields.unit.normalize: enum value 'day' of $.unit "
        "can never be produced by normalizer 'unit' (it reads 'day' as 'd'); map it with a "
        "normalizers table [S043]\n"
    )


def test_every_unreachable_enum_value_is_told_at_once(tmp_path: Path) -> None:
    text = replace_once(with_unit_normalizer(), "enum: [day, week, month, year, null]",
                        "enum: [hour, day, week, null]")  # fmt: skip
    error = load_error(tmp_path, text)
    line = line_of(text, "normalize: unit}")

    assert (error.spec_code, error.field, error.line) == (
        "S043",
        "fallbacks[0].fields.unit.normalize",
        line,
    )
    assert "enum value 'hour' of $.unit" in error.message
    assert "(it reads 'hour' as 'h')" in error.message
    assert error.__notes__ == [
        f"{error.file}:{line}: fallbacks[0].fields.unit.normalize: enum value 'day' of $.unit "
        "can never be produced by normalizer 'unit' (it reads 'day' as 'd'); map it with a "
        "normalizers table"
    ]


def test_a_table_that_maps_no_word_to_an_enum_value_is_caught(tmp_path: Path) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "enum: [day, week, month, year, null]",
                        "enum: [day, week, month, year, quarter, null]")  # fmt: skip
    error = load_error(tmp_path, text)

    assert (error.spec_code, error.field) == ("S043", "fallbacks[0].fields.unit.normalize")
    assert error.line == line_of(text, "normalize: period_unit}")
    assert error.message == (
        "enum value 'quarter' of $.unit can never be produced by normalizer table 'period_unit' "
        "(no word maps to it); add a word for it to the table"
    )


def test_with_unknown_keep_a_value_the_base_keeps_is_reachable(tmp_path: Path) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "enum: [day, week, month, year, null]",
                        "enum: [day, week, month, year, quarter, null]")  # fmt: skip
    text = replace_once(text, "    map:\n", "    unknown: keep\n    map:\n")
    assert UnitSpec.from_file(write_notice_unit(tmp_path, text)).normalizers["period_unit"]
    # ...but a value the table maps elsewhere is not kept.
    text = replace_once(text, "      jahren: year\n", "      jahren: year\n      quarter: year\n")
    error = load_error(tmp_path, text)
    assert error.spec_code == "S043"
    assert "'quarter'" in error.message
    assert "its base 'text' does not keep it" in error.message


def test_a_crf_field_is_checked_alike(tmp_path: Path) -> None:
    (tmp_path / "notice.jsonl").write_text("", encoding="utf-8")
    crf = (
        "fallbacks:\n  - kind: crf\n    labels: [VALUE, UNIT]\n    fields:\n"
        "      value: {label: VALUE, normalize: number}\n"
        "      unit: {label: UNIT, normalize: unit}\n"
        "    examples: notice.jsonl\n    model: notice.crf\n"
    )
    text = replace_once(NOTICE_PERIOD_YAML, "fallbacks:\n", crf)
    error = load_error(tmp_path, text)

    assert (error.spec_code, error.field) == ("S043", "fallbacks[0].fields.unit.normalize")
    assert error.line == line_of(text, "{label: UNIT, normalize: unit}")
    assert "(it reads 'day' as 'd')" in error.message


@pytest.mark.parametrize(
    ("schema", "normalize", "unreachable"),
    [
        ("{const: day}", "unit", "'day'"),
        ("{anyOf: [{enum: [d, day]}, {type: 'null'}]}", "unit", "'day'"),
        ("{anyOf: [{type: 'null'}, {const: hour}]}", "unit", "'hour'"),
        ("{type: [integer, 'null'], enum: [7, 14, 30]}", "text", "7 of $.unit"),
        ("{type: [boolean, 'null'], enum: [true]}", "text", "True of $.unit"),
    ],
)
def test_const_anyof_and_typed_enums_are_checked(
    tmp_path: Path, schema: str, normalize: str, unreachable: str
) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, """\
    unit:
      type: [string, "null"]
      enum: [day, week, month, year, null]
""", f"    unit: {schema}\n")  # fmt: skip
    text = replace_once(text, HEURISTIC_UNIT, field_with(normalize))
    error = load_error(tmp_path, text)
    assert error.spec_code == "S043"
    assert f"enum value {unreachable}" in error.message


@pytest.mark.parametrize(
    ("schema", "normalize"),
    [
        ("{type: [integer, 'null'], enum: [7, 14, 30, null]}", "number"),
        ("{type: [number, 'null'], enum: [7, 14.5, null]}", "amount"),  # 7 is 7.0
        ("{enum: [d, h, kg, box, °C, null]}", "unit"),
        ("{const: EUR}", "currency"),
        ("{anyOf: [{const: day}, {type: 'null'}]}", "period_unit"),
    ],
)
def test_enums_a_normalizer_produces_load(tmp_path: Path, schema: str, normalize: str) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, """\
    unit:
      type: [string, "null"]
      enum: [day, week, month, year, null]
""", f"    unit: {schema}\n")  # fmt: skip
    text = replace_once(text, HEURISTIC_UNIT, field_with(normalize))
    assert UnitSpec.from_file(write_notice_unit(tmp_path, text)).name == "extract_notice_period"


def test_a_heuristic_constant_makes_its_value_reachable(tmp_path: Path) -> None:
    text = replace_once(with_unit_normalizer(), "enum: [day, week, month, year, null]",
                        "enum: [d, day, null]")  # fmt: skip
    assert load_error(tmp_path, text).spec_code == "S043"
    constant = replace_once(text, "{group: unit, normalize: unit}",
                            "{group: unit, normalize: unit, value: day}")  # fmt: skip
    assert UnitSpec.from_file(write_notice_unit(tmp_path, constant))
    no_group = replace_once(text, "{group: unit, normalize: unit}", "{value: d}")
    assert UnitSpec.from_file(write_notice_unit(tmp_path, no_group))  # the normalizer never runs


# -- the tables' own checks ----------------------------------------------------------------------


def test_a_table_may_not_shadow_a_registered_normalizer(tmp_path: Path) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "  period_unit:\n", "  unit:\n")
    text = replace_once(text, "normalize: period_unit}", "normalize: unit}")
    error = load_error(tmp_path, text)

    assert (error.spec_code, error.field) == ("S041", "normalizers.unit")
    assert error.line == text.splitlines().index("  unit:") + 1
    assert error.message == (
        "normalizer table 'unit' shadows the registered normalizer 'unit'; rename the table "
        "(fields name tables and registered normalizers alike)"
    )


@pytest.mark.parametrize(
    ("base", "message"),
    [
        ("money", "unknown base normalizer 'money'. Available: amount, currency, "),
        ("period_unit", "base 'period_unit' is a table of this unit; a table's base must be a "
                        "registered normalizer"),
    ],
)  # fmt: skip
def test_a_table_base_must_be_a_registered_normalizer(
    tmp_path: Path, base: str, message: str
) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "    map:\n", f"    base: {base}\n    map:\n")
    error = load_error(tmp_path, text)

    assert (error.spec_code, error.field) == ("S042", "normalizers.period_unit.base")
    assert error.line == line_of(text, f"base: {base}")
    assert message in error.message


def test_a_table_base_may_be_a_grammar_normalizer_read_by_the_locale(tmp_path: Path) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "  period_unit:\n    map:\n",
                        "  period_unit:\n    base: 'grammar:date'\n    unknown: keep\n    map:\n"
                        "      '2024-03-04': day\n")  # fmt: skip
    text = replace_once(text, "normalizers:\n", "locale: {date_order: DMY}\nnormalizers:\n")
    unit = UnitSpec.from_file(write_notice_unit(tmp_path, text))
    from aau.fallbacks.normalize import normalizer_for

    table = normalizer_for("period_unit", unit)
    assert table("04/03/2024") == "day"  # DMY: 4 March
    assert table("05/03/2024") == "2024-03-05"  # unknown: keep


@pytest.mark.parametrize(
    ("table", "field", "message"),
    [
        ("    map: {days: [day]}\n", "normalizers.period_unit.map.days",
         "a table value is a text, a number, a boolean or null, not list"),
        ("    map: {days: {unit: day}}\n", "normalizers.period_unit.map.days",
         "a table value is a text, a number, a boolean or null, not dict"),
        ("    map: {}\n", "normalizers.period_unit.map", "at least 1 item"),
        ("    map: {days: day}\n    default: day\n", "normalizers.period_unit.default",
         "unknown field"),
        ("    map: {days: day}\n    unknown: guess\n", "normalizers.period_unit.unknown",
         "Input should be 'keep'"),
        ("    map: {Days: day, days: week}\n", "normalizers.period_unit",
         "keys 'Days' and 'days' are one key when case is ignored but map to 'day' and 'week'"),
        ("    map: {days: .inf}\n", "normalizers.period_unit.map.days", "finite number"),
        (f"    map: {{{'d' * 257}: day}}\n", f"normalizers.period_unit.map.{'d' * 257}",
         "at most 256 characters"),
        (f"    map: {{days: {'d' * 257}}}\n", "normalizers.period_unit.map.days",
         "at most 256 characters"),
    ],
)  # fmt: skip
def test_bad_tables_are_located_errors(
    tmp_path: Path, table: str, field: str, message: str
) -> None:
    start = NOTICE_PERIOD_YAML.index("  period_unit:\n")
    end = NOTICE_PERIOD_YAML.index("fallbacks:\n")
    text = NOTICE_PERIOD_YAML[:start] + "  period_unit:\n" + table + NOTICE_PERIOD_YAML[end:]
    error = load_error(tmp_path, text)

    assert (error.spec_code, error.field) == ("S010", field)
    assert message in error.message
    assert error.line is not None
    assert error.line >= line_of(text, "  period_unit:")


def test_a_bad_table_name_is_located(tmp_path: Path) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "  period_unit:\n", "  Period-Unit:\n")
    error = load_error(tmp_path, text)
    assert (error.spec_code, error.field) == ("S010", "normalizers.Period-Unit")
    assert error.line == line_of(text, "Period-Unit:")
    assert "should match pattern" in error.message


# -- hostile tables ------------------------------------------------------------------------------


def _with_map(entries: str) -> str:
    start = NOTICE_PERIOD_YAML.index("    map:\n")
    end = NOTICE_PERIOD_YAML.index("fallbacks:\n")
    return NOTICE_PERIOD_YAML[:start] + "    map:\n" + entries + NOTICE_PERIOD_YAML[end:]


def test_a_table_past_ten_thousand_entries_is_refused_quickly(tmp_path: Path) -> None:
    words = "".join(f"      w{i}: day\n" for i in range(10_001))
    began = time.perf_counter()
    error = load_error(tmp_path, _with_map(words + "      week: week\n      month: month\n"
                                                   "      year: year\n"))  # fmt: skip
    assert time.perf_counter() - began < 10
    assert (error.spec_code, error.field) == ("S010", "normalizers.period_unit.map")
    assert "a table holds at most 10000 entries, this one 10004" in error.message


def test_a_table_of_ten_thousand_entries_loads(tmp_path: Path) -> None:
    words = "".join(f"      w{i}: day\n" for i in range(9_996))
    text = _with_map(words + "      week: week\n      month: month\n      year: year\n")
    unit = UnitSpec.from_file(write_notice_unit(tmp_path, text))
    assert len(unit.normalizers["period_unit"].map) == 9_999


def test_a_huge_map_from_the_api_is_refused_before_its_entries_are_validated() -> None:
    from aau.spec.loader import read_yaml

    data, _ = read_yaml(NOTICE_PERIOD_YAML)
    data["normalizers"]["period_unit"]["map"] = {f"w{i}": [i] for i in range(500_000)}
    began = time.perf_counter()
    with pytest.raises(SpecError, match="a table holds at most 10000 entries"):
        UnitSpec.from_dict(data)
    assert time.perf_counter() - began < 5


def test_deeply_nested_table_values_are_refused_by_the_depth_bound(tmp_path: Path) -> None:
    deep = "[" * 60 + "]" * 60
    error = load_error(tmp_path, _with_map(f"      days: {deep}\n"))
    assert error.spec_code == "S007"


def test_too_many_tables_are_refused(tmp_path: Path) -> None:
    tables = "".join(f"  t{i}: {{map: {{a: b}}}}\n" for i in range(65))
    text = replace_once(NOTICE_PERIOD_YAML, "normalizers:\n", "normalizers:\n" + tables)
    error = load_error(tmp_path, text)
    assert (error.spec_code, error.field) == ("S010", "normalizers")
    assert "at most 64 items" in error.message


# -- notes ---------------------------------------------------------------------------------------


def test_validate_notes_a_table_no_field_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = replace_once(NOTICE_PERIOD_YAML, "normalizers:\n",
                        "normalizers:\n  spare: {map: {a: b}}\n")  # fmt: skip
    path = write_notice_unit(tmp_path, text)
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"ok: {path} (extract_notice_period@1)\n"
    assert captured.err == (
        f"note: {path}:{line_of(text, 'spare:')}: normalizers.spare: no fallback field names "
        "this table, so it changes nothing\n"
    )


def test_the_shipped_units_still_validate(capsys: pytest.CaptureFixture[str]) -> None:
    units = Path(__file__).resolve().parents[2] / "units"
    assert main(["validate", str(units)]) == 0
    assert capsys.readouterr().out.count("ok: ") == len(UNIT_FILES)
