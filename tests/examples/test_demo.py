"""``make demo``'s script: the routed pipeline over every example document (without a model here;
``make demo`` runs it on the embedded one)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

DOCS = sorted(
    p.name for p in (REPO / "examples" / "docs").iterdir() if p.suffix in {".txt", ".png", ".pdf"}
)


def test_the_demo_routes_every_document_and_says_where_each_value_came_from() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "examples" / "pipeline.py"), "--no-model"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    out = run.stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    assert [line["id"] for line in lines] == DOCS
    assert {".pdf", ".png", ".txt"} <= {name[name.rindex(".") :] for name in DOCS}
    for line in lines:
        assert set(line["units"]) <= set(line["route"]["probabilities"])
        assert set(line["route"]["applies"]) <= set(line["units"])
        assert f"  {line['id']}: " in out  # its routing line
    by_id = {line["id"]: line for line in lines}
    # the documents written for the new units reach them
    assert "extract_penalty_clauses" in by_id["contract.pdf"]["units"]
    assert "extract_deductible" in by_id["claim_thread.txt"]["units"]
    report = by_id["financial_report.png"]
    assert report["units"]["compare_numeric_range"]["error"] is None
    assert report["graph"]["compare_numeric_range"] == [
        "extract_revenue_current", "extract_revenue_previous"
    ]  # fmt: skip
    assert "Where each value came from" in out
    assert "financial_report.png extract_revenue_current.amount: " in out
    assert "OCR quality" in out
