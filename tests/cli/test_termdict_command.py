"""``aau termdict``: tenants and uploads from the shell, and batch lines naming a tenant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aau.cli.main import main
from tests.conftest import UNITS_DIR


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


def termdict(store: Path, *args: str) -> int:
    return main(["termdict", "--store", str(store), *args])


def write(folder: Path, name: str, *rows: str) -> Path:
    path = folder / name
    path.write_text("term\tcanonical\tcategory\n" + "".join(r + "\n" for r in rows), "utf-8")
    return path


def upload_parts(store: Path, tmp_path: Path) -> int:
    parts = write(tmp_path, "parts.tsv", "widget pack\tWP-1\tproduct")
    return termdict(store, "add", "--tenant", "acme", str(parts))


def test_tenant_upload_list_find_remove(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert termdict(store, "tenant", "add", "acme") == 0
    assert upload_parts(store, tmp_path) == 0
    assert "added parts (1 terms) for tenant acme" in capsys.readouterr().out
    assert termdict(store, "list", "--tenant", "acme", "--json") == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    ours = [entry for entry in listed if entry["tenant"] == "acme"]
    assert [(e["name"], e["terms"], e["surfaces"]) for e in ours] == [("parts", 1, 1)]
    assert ours[0]["file"].endswith(".tsv")
    assert any(entry["tenant"] is None for entry in listed)  # the shipped dictionaries
    assert termdict(store, "find", "--tenant", "acme", "--text", "Two widget pack units") == 0
    hits = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert hits[0]["canonical"] == "WP-1"
    assert termdict(store, "remove", "--tenant", "acme", "parts") == 0
    assert termdict(store, "tenant", "list") == 0
    assert capsys.readouterr().out.splitlines()[-1] == "acme"


def test_bad_uploads_exit_2_with_a_located_message(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "bad.tsv", "widget pack\tWP-1\tproduct", "x\tx\tproduct")
    assert termdict(store, "add", "--tenant", "nobody", str(bad)) == 2
    err = capsys.readouterr().err
    assert "unknown tenant 'nobody'" in err
    assert "aau termdict tenant add nobody" in err
    termdict(store, "tenant", "add", "acme")
    assert termdict(store, "add", "--tenant", "acme", str(bad)) == 2
    assert f"{bad}:3: term: 'x' is too short" in capsys.readouterr().err
    assert termdict(store, "check", str(bad)) == 2
    assert termdict(store, "list", "--tenant", "acme", "--json") == 0
    assert all(json.loads(line)["tenant"] is None for line in capsys.readouterr().out.splitlines())


def test_batch_lines_name_their_tenant(store: Path, tmp_path: Path) -> None:
    termdict(store, "tenant", "add", "acme")
    upload_parts(store, tmp_path)
    source = tmp_path / "in.jsonl"
    lines = [
        {"id": 1, "text": "Total due: 40.00 EUR", "tenant": "acme"},
        {"id": 2, "text": "Total due: 40.00 EUR", "tenant": "initech"},
        {"id": 3, "text": "Total due: 40.00 EUR"},
    ]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    target = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "batch",
                str(UNITS_DIR / "extract_price.yaml"),
                "--input",
                str(source),
                "--output",
                str(target),
                "--no-model",
                "--terms-store",
                str(store),
            ]
        )
        == 0
    )
    out = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["id"] for line in out] == [1, 2, 3]
    assert out[0]["units"]["extract_price"]["output"] == {"amount": 40.0, "currency": "EUR"}
    assert out[1]["units"]["extract_price"]["error"]["code"] == "unknown_tenant"
    assert out[2]["units"]["extract_price"]["error"] is None
