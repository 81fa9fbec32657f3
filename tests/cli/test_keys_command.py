"""``aau keys``: keys shown once, stored as digests; ``aau serve`` refuses to start without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from aau.cli.main import main
from aau.server import KeyStore
from tests.conftest import REPO


def test_a_key_is_printed_once_and_stored_as_a_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"
    assert main(["keys", "add", "acme", "--keys", str(keys)]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("aau_")

    assert main(["keys", "list", "--keys", str(keys)]) == 0
    listing = capsys.readouterr().out
    key_id = key.split("_")[1]
    assert listing.split("\t")[:3] == [key_id, "tenant", "acme"]
    assert key.split("_", 2)[2] not in listing
    assert key.split("_", 2)[2] not in keys.read_text()
    assert KeyStore(keys).lookup(key) is not None

    assert main(["keys", "revoke", key_id, "--keys", str(keys)]) == 0
    assert KeyStore(keys).lookup(key) is None


def test_bad_names_and_ids_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = str(tmp_path / "keys.json")
    assert main(["keys", "add", "../evil", "--keys", keys]) == 2
    assert main(["keys", "revoke", "nope", "--keys", keys]) == 2
    err = capsys.readouterr().err
    assert "tenant name" in err
    assert "no key has the id" in err
    assert "Traceback" not in err
    assert not (tmp_path / "evil").exists()


def test_serve_refuses_to_start_without_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["serve", str(REPO / "units"), "--no-model", "--keys", str(tmp_path / "none.json")])

    assert code == 2
    assert "holds no key" in capsys.readouterr().err


def test_a_corrupt_key_file_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": [{"id": 1}]}')

    assert main(["keys", "list", "--keys", str(keys)]) == 2
    err = capsys.readouterr().err
    assert str(keys) in err
    assert "not a key file" in err
