"""Hostile lines inside a big batch change nothing for the lines around them.

A batch of 1,000 lines, 100 of them hostile (the corpus's batch lines and documents, spread
through the file: every tenth line), must write 1,000 lines in input order, and the 900 good
lines' results must be those of a batch of the 900 good lines alone: same outputs,
confidences, paths and error codes (timings aside). What each hostile line gets is judged by
``test_corpus.py``; here only that it keeps its place.
Both batches run at once, ``--no-model``, in the same folder (the same documents root).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.hostile.corpus import (
    BATCH_UNIT_NAMES,
    Job,
    Place,
    Run,
    Runner,
    batch_argv,
    batch_line,
    child_env,
    expected_id,
    good_line,
    load_cases,
    read_output,
    write_batch,
)

LINES, EVERY = 1000, 10
HEAVY = frozenset({"batch-sentences-at-limit"})
"""Legitimate lines that cost seconds of CPU per unit by design: test_corpus runs them alone;
in the mix they would test the good lines' deadlines under load, not what hostile lines do."""


def essentials(output: dict[str, Any]) -> dict[str, Any]:
    """What must not change: per unit, the output, confidence, path and error code."""
    units = output["units"]
    return {
        name: (
            units[name]["output"],
            units[name]["confidence"],
            units[name]["path"],
            (units[name]["error"] or {}).get("code"),
        )
        for name in BATCH_UNIT_NAMES
    }


def test_a_thousand_lines_with_a_hundred_hostile_ones(tmp_path: Path) -> None:
    place = Place(tmp_path)
    cases = [c for c in load_cases() if c.kind in ("batch", "document") and c.id not in HEAVY]
    raws = [batch_line(case, place) for case in cases]
    lines: list[bytes] = []
    hostile: dict[int, int] = {}  # line index -> case index
    good: list[bytes] = []
    for index in range(LINES):
        if index % EVERY == EVERY // 2:
            hostile[index] = len(hostile) % len(cases)
            lines.append(raws[hostile[index]])
        else:
            good.append(good_line(len(good)))
            lines.append(good[-1])
    assert len(hostile) == 100
    mixed_in, good_in = place.batch / "mixed.jsonl", place.batch / "good.jsonl"
    mixed_out, good_out = place.batch / "mixed.out.jsonl", place.batch / "good.out.jsonl"
    write_batch(mixed_in, lines)
    write_batch(good_in, good)
    runs: dict[str, Run] = {}
    runner = Runner(place, jobs=2)
    env = child_env(place)
    runner.run(
        Job(batch_argv(source, target), runner.fresh_cwd(), env,
            lambda run, name=name: runs.__setitem__(name, run), timeout_s=300, label=name)
        for name, source, target in (("mixed", mixed_in, mixed_out), ("good", good_in, good_out))
    )  # fmt: skip
    for run in runs.values():
        assert run.failure() is None, run.evidence()
        assert run.rc == 0, run.evidence()

    mixed, alone = read_output(mixed_out), read_output(good_out)
    assert len(mixed) == LINES, "one output line per input line"
    assert len(alone) == len(good)
    assert all(output is not None for output in mixed + alone)
    goods = iter(alone)
    for index, (raw, output) in enumerate(zip(lines, mixed, strict=True)):
        assert output is not None
        if index in hostile:  # what each hostile line gets is test_corpus's; here: its place
            want = expected_id(raw)
            assert want is ... or output["id"] == want, f"line {index + 1} is out of order"
            assert sorted(output["units"]) == sorted(BATCH_UNIT_NAMES)
            continue
        reference = next(goods)
        assert reference is not None
        assert output["id"] == reference["id"], f"line {index + 1} is out of order"
        assert essentials(output) == essentials(reference), f"line {index + 1} ({output['id']})"
