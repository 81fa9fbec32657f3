"""External labelled texts in the calibration runs: read, fingerprinted, split by whole group."""

from __future__ import annotations

import json
from pathlib import Path

from aau.fitting.calibrate import validation_keys
from aau.fitting.runs import (
    external_cases,
    load_config,
    load_unit,
    runs_fingerprint,
    text_cases,
)
from tests.conftest import REPO, UNITS_DIR


def _config(tmp_path: Path, lines: list[dict[str, object]]) -> dict[str, object]:
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    (tmp_path / "config.yaml").write_text(
        "runs: {units: [extract_quantity], seed: 1, ocr_share: 0.0, noise: [0.1, 0.2],\n"
        "       crf_folds: 2, chunk: 4, threads: 1, external: cases.jsonl}\n",
        encoding="utf-8",
    )
    return load_config(tmp_path / "config.yaml")


CASES = [
    {"id": "q/Dutch/0", "unit": "extract_quantity", "kind": "single", "language": "Dutch",
     "source": "Dim.json", "text": "een weg van tien kilometer", "expected": {"value": 10,
                                                                              "unit": "km"}},
    {"id": "q/Dutch/1", "unit": "extract_quantity", "kind": "multi", "language": "Dutch",
     "source": "Dim.json", "text": "5 m en 6 m", "expected": [{"value": 5, "unit": "m"}]},
    {"id": "q/Dutch/2", "unit": "extract_quantity", "kind": "none", "language": "Dutch",
     "source": "Dim.json", "text": "geen maat", "expected": {"value": None, "unit": None}},
    {"id": "p/Dutch/0", "unit": "extract_price", "kind": "single", "language": "Dutch",
     "source": "Cur.json", "text": "5 euro", "expected": {"amount": 5, "currency": "EUR"}},
]  # fmt: skip


def test_several_files_of_external_texts_are_read_and_unlabelled_texts_left_out(
    tmp_path: Path,
) -> None:
    _config(tmp_path, CASES)
    shop = {
        "id": "pp/0",
        "unit": "extract_quantity",
        "kind": "single",
        "language": "various",
        "source": "suite#A",
        "text": "7 km",
        "expected": {"value": 7, "unit": "km"},
    }
    unlabelled = dict(shop, id="pp/1", kind="unlabelled", expected=None)
    (tmp_path / "more.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in (shop, unlabelled)), encoding="utf-8"
    )
    (tmp_path / "config.yaml").write_text(
        "runs: {units: [extract_quantity], seed: 1, ocr_share: 0.0, noise: [0.1, 0.2],\n"
        "       crf_folds: 2, chunk: 4, threads: 1, external: [cases.jsonl, more.jsonl]}\n",
        encoding="utf-8",
    )  # fmt: skip
    config = load_config(tmp_path / "config.yaml")
    assert [c["id"] for c in external_cases(config, "extract_quantity")] == [
        "q/Dutch/0", "q/Dutch/2", "pp/0",
    ]  # fmt: skip


def test_the_units_external_texts_with_one_gold_output_run_as_cases(tmp_path: Path) -> None:
    config = _config(tmp_path, CASES)
    assert [c["id"] for c in external_cases(config, "extract_quantity")] == [
        "q/Dutch/0",
        "q/Dutch/2",
    ]
    unit = load_unit(UNITS_DIR, "extract_quantity")
    external = [c for c in text_cases(unit, config) if "external" in c.cases]
    assert [(c.text, c.gold, c.group) for c in external] == [
        ("een weg van tien kilometer", {"value": 10, "unit": "km"}, "Dutch|Dim.json"),
        ("geen maat", {"value": None, "unit": None}, "Dutch|Dim.json"),
    ]
    assert "no_value" in external[1].cases


def test_the_external_texts_are_in_the_fingerprint_and_their_folder_is_not(
    tmp_path: Path,
) -> None:
    unit = load_unit(UNITS_DIR, "extract_quantity")
    before = runs_fingerprint(unit, _config(tmp_path, CASES))
    (tmp_path / "clone").mkdir()
    assert runs_fingerprint(unit, _config(tmp_path / "clone", CASES)) == before
    changed = [dict(CASES[0], text="een weg van elf kilometer"), *CASES[1:]]
    assert runs_fingerprint(unit, _config(tmp_path, changed)) != before


def test_external_texts_are_held_out_by_whole_group_own_texts_one_by_one() -> None:
    records = [{"key": f"own{i}"} for i in range(40)]
    records += [{"key": f"ext{i}", "group": f"lang{i % 8}|spec"} for i in range(80)]
    held = validation_keys(records, {"seed": 7, "validation_share": 0.4})
    for group in {r["group"] for r in records if "group" in r}:
        keys = {r["key"] for r in records if r.get("group") == group}
        assert keys <= held or not keys & held, group
    assert any(k.startswith("own") for k in held)
    assert any(k.startswith("ext") for k in held)


def test_the_shipped_config_names_only_the_dev_part() -> None:
    config = load_config(REPO / "calibration" / "config.yaml")
    external = config["runs"]["external"]
    assert "../benchmarks/external/cases.dev.jsonl" in external
    assert all(Path(name).name.endswith(".dev.jsonl") for name in external)  # never the test part
