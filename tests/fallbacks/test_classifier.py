"""The classifier path: trained from labelled examples, stored as JSON, rebuilt in numpy.

Real scikit-learn training on real files in a temporary unit folder; the faults (a missing,
stale, altered or hostile model or examples file) are real files too.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse
import yaml

import aau.fallbacks.classifier as classifier_module
import aau.fallbacks.labelled as labelled_module
from aau.answers import PathContext
from aau.errors import SpecError
from aau.fallbacks.classifier import (
    ClassifierFallback,
    ClassifierModelCorrupt,
    ClassifierModelMissing,
    ClassifierModelStale,
    open_model,
)
from aau.fallbacks.linear_text import vectorizer
from aau.spec.model import UnitSpec

UNITS = Path(__file__).resolve().parents[2] / "units"

# Short tickets: urgent or not, the team, and any number of tags (multi-label).
_TEXTS = [
    ("The server is down and nobody can log in", True, "it", ["outage"]),
    ("Production database offline, customers cannot pay", True, "it", ["outage", "payments"]),
    ("Website unreachable since this morning, urgent", True, "it", ["outage"]),
    ("Please reset my password when you have time", False, "it", []),
    ("Could you install the new printer driver next week", False, "it", []),
    ("My laptop is slow, no hurry", False, "it", []),
    ("Payroll did not run, staff were not paid today", True, "finance", ["payments"]),
    ("Invoice payment to our main supplier bounced, urgent", True, "finance", ["payments"]),
    ("Card payments failing at all tills right now", True, "finance", ["payments", "outage"]),
    ("Please send me the expense report template", False, "finance", []),
    ("When is the budget meeting for next quarter", False, "finance", []),
    ("Question about the travel allowance rules", False, "finance", []),
    ("Fire alarm going off in building B, evacuate", True, "facilities", ["safety"]),
    ("Water leaking from the ceiling onto the servers", True, "facilities", ["safety", "outage"]),
    ("Gas smell in the kitchen on floor 2", True, "facilities", ["safety"]),
    ("The meeting room chairs are squeaky", False, "facilities", []),
    ("Can we get more plants for the office", False, "facilities", []),
    ("The coffee machine needs descaling sometime", False, "facilities", []),
]
TEXTS = _TEXTS * 2 + [(f"{t} again", u, team, tags) for t, u, team, tags in _TEXTS]

OUTPUT = {
    "type": "object",
    "properties": {
        "urgent": {"type": "boolean"},
        "team": {"type": "string", "enum": ["it", "finance", "facilities"]},
        "tags": {"type": "array", "items": {"type": "string",
                                            "enum": ["outage", "payments", "safety"]}},
    },
    "required": ["urgent", "team", "tags"],
    "additionalProperties": False,
}  # fmt: skip


def write_unit(folder: Path, *, output: dict[str, Any] | None = None, kind: str = "classify",
               rows: list[Any] | None = None, **block: Any) -> Path:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    lines = rows if rows is not None else [
        {"text": t, "output": {"urgent": u, "team": team, "tags": tags}}
        for t, u, team, tags in TEXTS
    ]  # fmt: skip
    (folder / "triage.labelled.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8"
    )
    fallback = {"kind": "classifier", "examples": "triage.labelled.jsonl",
                "model": "triage.classifier.json",
                "features": {"max_features": 2000, "min_df": 1},
                "training": {"folds": 3}, **block}  # fmt: skip
    data = {
        "name": "triage",
        "version": 1,
        "kind": kind,
        "description": "Triage an IT, finance or facilities ticket.",
        "output": output or OUTPUT,
        "prompt": {"system": "Triage the ticket as JSON.", "template": "{{ text }}"},
        "fallbacks": [fallback],
    }
    path = folder / "triage.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def trained(folder: Path, **block: Any) -> tuple[UnitSpec, ClassifierFallback, str]:
    unit = UnitSpec.from_file(write_unit(folder, **block))
    spec = unit.fallbacks[0]
    assert isinstance(spec, ClassifierFallback)
    return unit, spec, spec.train(unit)


@pytest.fixture(scope="module")
def triage(tmp_path_factory: pytest.TempPathFactory) -> tuple[UnitSpec, ClassifierFallback, str]:
    return trained(tmp_path_factory.mktemp("triage"))


def answer(unit: UnitSpec, spec: ClassifierFallback, text: str) -> Any:
    return spec.build(unit).extract(text, PathContext(unit.name, unit.output))


def test_training_writes_a_json_model_and_reports_held_out_figures(triage: Any) -> None:
    unit, spec, report = triage
    assert "held out: accuracy" in report
    assert "classes:" in report
    data = json.loads(spec.model_path(unit).read_text(encoding="utf-8"))  # plain JSON
    assert data["format"] == 1
    assert data["report"]["held_out"] > 0
    kinds = [(h["kind"], h["fields"]) for h in data["heads"]]
    assert kinds == [("choice", ["urgent", "team"]), ("labels", ["tags"])]
    # the joint head's classes are the combinations the examples show, no other
    seen = {(u, team) for _, u, team, _ in TEXTS}
    assert {tuple(c) for c in data["heads"][0]["classes"]} == seen
    assert all(s > 0 for h in data["heads"] for s in h["scale"])


@pytest.mark.parametrize(
    ("text", "urgent", "team", "tags"),
    [
        ("The server is down, nobody can log in", True, "it", ["outage"]),
        ("Gas smell in the kitchen", True, "facilities", ["safety"]),
        ("Please send me the expense report template", False, "finance", []),
    ],
)
def test_predicts_booleans_enums_and_label_sets(
    triage: Any, text: str, urgent: bool, team: str, tags: list[str]
) -> None:
    unit, spec, _ = triage
    result = answer(unit, spec, text)
    assert result.output == {"urgent": urgent, "team": team, "tags": tags}
    assert 0 < result.confidence <= 1
    assert result.signals["class_top"] == result.confidence
    assert 0 <= result.signals["class_margin"] <= result.confidence
    assert result.signals["class_features"] > 0


def test_numpy_features_equal_scikit_learns(triage: Any) -> None:
    unit, spec, _ = triage
    model = open_model(spec, unit)
    text = "Card payments failing at the tills, Server DOWN!"
    columns, weights = model.features(text)
    dense = np.zeros(model.width)
    dense[columns] = weights
    blocks = []
    for block in model.data.blocks:
        fitted = vectorizer(block.analyzer, block.ngram_range, vocabulary=block.terms)
        fitted.fit([text])  # the vocabulary is fixed; set the stored idf
        fitted.idf_ = np.asarray(block.idf)
        blocks.append(fitted.transform([text]))
    expected = scipy.sparse.hstack(blocks).toarray()[0]
    np.testing.assert_allclose(dense, expected, atol=1e-12)


def test_a_text_of_unknown_words_answers_the_priors(triage: Any) -> None:
    unit, spec, _ = triage
    result = answer(unit, spec, "zzzq xxyq")
    assert result.signals["class_features"] == 0
    assert result.confidence < 0.9  # nothing known: no strong claim


def test_separate_heads_without_joint(tmp_path: Path) -> None:
    unit, spec, _ = trained(tmp_path, training={"folds": 3, "joint": False})
    data = json.loads(spec.model_path(unit).read_text(encoding="utf-8"))
    assert [h["fields"] for h in data["heads"]] == [["urgent"], ["team"], ["tags"]]
    assert answer(unit, spec, "Fire alarm in building B").output["team"] == "facilities"


def test_missing_model_is_a_coded_run_error_and_a_validate_problem(tmp_path: Path) -> None:
    unit = UnitSpec.from_file(write_unit(tmp_path))  # loads without a model
    spec = unit.fallbacks[0]
    assert isinstance(spec, ClassifierFallback)
    with pytest.raises(ClassifierModelMissing, match="aau train") as caught:
        answer(unit, spec, "server down")
    assert caught.value.code == "classifier_model_missing"
    assert [p.check for p in spec.data_problems(unit)] == ["S077"]


def test_changed_examples_or_settings_make_the_model_stale(tmp_path: Path) -> None:
    unit, spec, _ = trained(tmp_path)
    assert spec.data_problems(unit) == []
    examples = spec.examples_path(unit)
    examples.write_text(examples.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(ClassifierModelStale, match="labelled examples"):
        open_model(spec, unit)
    assert [p.check for p in spec.data_problems(unit)] == ["S077"]
    spec.train(unit)
    open_model(spec, unit)  # current again
    rows = [json.loads(x) for x in examples.read_text().splitlines() if x]
    changed = UnitSpec.from_file(write_unit(tmp_path, training={"folds": 3, "c": 1.0}, rows=rows))
    with pytest.raises(ClassifierModelStale, match="settings"):
        open_model(changed.fallbacks[0], changed)  # type: ignore[arg-type]


def test_a_new_enum_value_makes_the_model_stale(tmp_path: Path) -> None:
    unit, spec, _ = trained(tmp_path)
    output = json.loads(json.dumps(OUTPUT))
    output["properties"]["team"]["enum"].append("legal")
    rows = [json.loads(x) for x in spec.examples_path(unit).read_text().splitlines()]
    grown = UnitSpec.from_file(write_unit(tmp_path, output=output, rows=rows))
    with pytest.raises(ClassifierModelStale, match="classes"):
        open_model(grown.fallbacks[0], grown)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"not json", "not a classifier model"),
        (pickle.dumps({"format": 1}), "not a classifier model"),  # never unpickled
        (b'{"format": 1, "unit": "x"}', "not a classifier model"),
    ],
)
def test_an_unreadable_model_is_corrupt(triage: Any, tmp_path: Path, content: bytes,
                                        words: str) -> None:  # fmt: skip
    unit, spec, _ = trained(tmp_path)
    spec.model_path(unit).write_bytes(content)
    with pytest.raises(ClassifierModelCorrupt, match=words):
        open_model(spec, unit)


def test_a_model_whose_numbers_do_not_fit_is_corrupt(tmp_path: Path) -> None:
    unit, spec, _ = trained(tmp_path)
    path = spec.model_path(unit)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["heads"][0]["coef"][0] = data["heads"][0]["coef"][0][:-1]  # one weight short
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ClassifierModelCorrupt, match="coefficient row"):
        open_model(spec, unit)
    data = json.loads(json.dumps(data).replace('"facilities"', '"legal"'))
    data["heads"][0]["coef"][0].append(0.0)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ClassifierModelCorrupt, match="not in the output schema"):
        open_model(spec, unit)


def test_a_huge_model_file_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unit, spec, _ = trained(tmp_path)
    monkeypatch.setattr(classifier_module, "MAX_MODEL_BYTES", 1000)
    with pytest.raises(ClassifierModelCorrupt, match="over 1000 bytes"):
        open_model(spec, unit)


@pytest.mark.parametrize(
    ("row", "check", "words"),
    [
        ({"text": 7, "output": {}}, "S072", "must be a string"),
        ({"text": "x", "output": {"urgent": "yes", "team": "it", "tags": []}}, "S072",
         "violates the output schema"),
        ({"text": "x", "output": {"urgent": True, "team": "hr", "tags": []}}, "S072",
         "violates the output schema"),
        ({"text": "x", "output": {"urgent": True, "team": "it"}}, "S072", "lacks"),
        ({"text": "x", "output": {"urgent": True, "team": "it", "tags": []}, "id": 1}, "S072",
         "exactly the keys"),
        ({"text": "x" * 200, "output": {"urgent": True, "team": "it", "tags": []}}, "S073",
         "max_chars"),
    ],
)  # fmt: skip
def test_bad_labelled_lines_are_located(tmp_path: Path, row: Any, check: str, words: str) -> None:
    good = {"text": "ok", "output": {"urgent": False, "team": "it", "tags": []}}
    unit = UnitSpec.from_file(write_unit(tmp_path, rows=[good, row], max_chars=100))
    spec = unit.fallbacks[0]
    problems = spec.data_problems(unit)
    assert problems[0].check == check
    assert problems[0].line == 2
    assert words in str(problems[0])
    with pytest.raises(SpecError, match=words):
        spec.train(unit)
    assert not spec.model_path(unit).exists()  # nothing written


def test_oversized_labelled_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unit = UnitSpec.from_file(write_unit(tmp_path))
    spec = unit.fallbacks[0]
    monkeypatch.setattr(labelled_module, "MAX_LABELLED_LINES", 10)
    assert [p.check for p in spec.data_problems(unit)][0] == "S073"
    monkeypatch.setattr(labelled_module, "MAX_LABELLED_BYTES", 100)
    with pytest.raises(SpecError, match="over 100 bytes"):
        spec.train(unit)
    (tmp_path / "triage.labelled.jsonl").write_bytes(b"\xff\xfe not utf-8")
    monkeypatch.setattr(labelled_module, "MAX_LABELLED_BYTES", 10**6)
    with pytest.raises(SpecError, match="UTF-8"):
        spec.train(unit)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("examples", "../outside.labelled.jsonl", "outside the unit's folder"),
        ("examples", "/etc/passwd", "is an absolute path"),
        ("model", "../../victim.json", "outside the unit's folder"),
        ("model", "/tmp/model.json", "is an absolute path"),
    ],
)
def test_paths_out_of_the_unit_folder_are_refused_at_load(
    tmp_path: Path, field: str, value: str, words: str
) -> None:
    with pytest.raises(SpecError, match=words) as caught:
        UnitSpec.from_file(write_unit(tmp_path / "unit", **{field: value}))
    assert caught.value.check == "S061"


def test_a_missing_examples_file_is_refused_at_load(tmp_path: Path) -> None:
    path = write_unit(tmp_path)
    (tmp_path / "triage.labelled.jsonl").unlink()
    with pytest.raises(SpecError, match="labelled examples file not found") as caught:
        UnitSpec.from_file(path)
    assert caught.value.check == "S071"


def test_fields_that_are_no_classes_are_refused(tmp_path: Path) -> None:
    output = json.loads(json.dumps(OUTPUT))
    output["properties"]["note"] = {"type": "string"}
    with pytest.raises(SpecError) as caught:  # a classify unit refuses it itself
        UnitSpec.from_file(write_unit(tmp_path / "a", output=output))
    assert "note" in str(caught.value)
    with pytest.raises(SpecError, match="no boolean, string enum") as caught:
        UnitSpec.from_file(write_unit(tmp_path / "b", output=output, kind="extract"))
    assert caught.value.check == "S070"


def test_the_shipped_unit_has_a_current_model() -> None:
    unit = UnitSpec.from_file(UNITS / "detect_complaint.yaml")
    spec = unit.fallbacks[0]
    assert isinstance(spec, ClassifierFallback)
    assert spec.data_problems(unit) == []
    result = answer(unit, spec, "I was charged twice for my order, please refund the payment.")
    assert result.output == {"is_complaint": True, "topic": "billing"}
    result = answer(unit, spec, "Thank you for the lovely flowers, they arrived on time!")
    assert result.output == {"is_complaint": False, "topic": "none"}
