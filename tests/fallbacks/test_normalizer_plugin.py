"""A normalizer added by a third-party package's entry point, as a newcomer ships one.

The package is real: a module and a ``.dist-info`` folder with ``entry_points.txt`` declaring
``notice_unit`` in the ``aau.normalizers`` group, put on ``sys.path`` of a fresh Python process
(entry points are read once per process, so the test process cannot see a package installed
after it started). That process validates a unit whose field names the plug-in, runs it and
validates a unit whose enum the plug-in can never produce. This process, without the package,
refuses the unit with the unknown-normalizer check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aau.errors import SpecError
from aau.spec.model import UnitSpec
from tests.spec.notice_period_unit import NOTICE_PERIOD_YAML, line_of, replace_once

PLUGIN = '''\
"""Notice-period units as contracts abbreviate them (d, wk, mos, yrs...)."""

_UNITS = {
    "d": "day", "day": "day", "days": "day", "wk": "week", "wks": "week", "week": "week",
    "weeks": "week", "mo": "month", "mos": "month", "month": "month", "months": "month",
    "yr": "year", "yrs": "year", "year": "year", "years": "year",
}


def notice_unit(text):
    return _UNITS.get(text.strip().rstrip(".").lower())
'''

ENTRY_POINTS = """\
[aau.normalizers]
notice_unit = aau_notice_plugin:notice_unit
"""

METADATA = """\
Metadata-Version: 2.1
Name: aau-notice-plugin
Version: 1.0
Summary: A notice-period normalizer for AAU units
"""


def _install_plugin(site: Path) -> None:
    """The package as pip leaves it in site-packages: the module and its dist-info."""
    (site / "aau_notice_plugin").mkdir(parents=True)
    (site / "aau_notice_plugin" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "aau_notice_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA, encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")


def _plugin_unit(enum: str = "[day, week, month, year, null]") -> str:
    text = replace_once(NOTICE_PERIOD_YAML, "normalize: period_unit}", "normalize: notice_unit}")
    text = replace_once(text, "enum: [day, week, month, year, null]", f"enum: {enum}")
    return replace_once(text, r"(?P<unit>[^\W\d_]+)", r"(?P<unit>[^\W\d_]+\.?)")


SCRIPT = """\
import contextlib, io, json, sys

import aau
from aau.cli.main import main
from aau.fallbacks.normalize import NORMALIZERS

good, bad, out = sys.argv[1:4]
texts = ["Notice period: 3 mos.", "Terminate with 2 wks notice.", "Notice: 30 d."]
report = {
    "registered": "notice_unit" in NORMALIZERS.names(),
    "module": NORMALIZERS.get("notice_unit").__module__,
}
report["validate_good"] = main(["validate", good])
pipeline = aau.Pipeline([aau.load_unit(good)], engine=False)
report["answers"] = [
    pipeline.run(text)["extract_notice_period"].to_dict()["output"] for text in texts
]
errors = io.StringIO()
with contextlib.redirect_stderr(errors):
    report["validate_bad"] = main(["validate", bad])
report["bad_errors"] = errors.getvalue()
with open(out, "w", encoding="utf-8") as handle:
    json.dump(report, handle)
"""


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("plugin")
    _install_plugin(root / "site")
    for name, text in (("good", _plugin_unit()), ("bad", _plugin_unit("[day, quarter, null]"))):
        (root / name).mkdir()
        (root / name / "extract_notice_period.yaml").write_text(text, encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(root / "site"), env.get("PYTHONPATH", "")) if p
    )
    good, bad = (str(root / n / "extract_notice_period.yaml") for n in ("good", "bad"))
    out = root / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, good, bad, str(out)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["good"], report["bad"], report["stdout"] = good, bad, done.stdout
    return report


def test_an_entry_point_normalizer_is_found_like_a_shipped_one(plugin_run: dict[str, Any]) -> None:
    assert plugin_run["registered"]
    assert plugin_run["module"] == "aau_notice_plugin"
    assert plugin_run["validate_good"] == 0
    assert f"ok: {plugin_run['good']} (extract_notice_period@1)" in plugin_run["stdout"]


def test_a_unit_field_naming_the_plugin_answers_with_its_values_in_a_run(
    plugin_run: dict[str, Any],
) -> None:
    assert plugin_run["answers"] == [
        {"value": 3, "unit": "month"},
        {"value": 2, "unit": "week"},
        {"value": 30, "unit": "day"},
    ]


def test_validate_catches_an_enum_value_the_plugin_can_never_produce(
    plugin_run: dict[str, Any],
) -> None:
    assert plugin_run["validate_bad"] == 2
    line = line_of(_plugin_unit("[day, quarter, null]"), "normalize: notice_unit")
    assert plugin_run["bad_errors"].strip() == (
        f"error: {plugin_run['bad']}:{line}: fallbacks[0].fields.unit.normalize: enum value "
        "'quarter' of $.unit can never be produced by normalizer 'notice_unit' (it reads "
        "'quarter' as nothing); map it with a normalizers table [S043]"
    )


def test_without_the_package_the_unit_is_refused_naming_the_normalizer(tmp_path: Path) -> None:
    text = _plugin_unit()
    path = tmp_path / "extract_notice_period.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        UnitSpec.from_file(path)
    error = caught.value
    assert (error.spec_code, error.field) == ("S034", "fallbacks[0].fields.unit.normalize")
    assert error.line == line_of(text, "normalize: notice_unit")
    assert "unknown normalizer 'notice_unit'. Available: amount, currency, " in error.message
    assert error.message.endswith("; this unit's tables: period_unit")
