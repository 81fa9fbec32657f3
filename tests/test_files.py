"""Files written whole: ``aau.files``, which every artifact and cache writer goes through."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from aau.files import replacing, write_replacing


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_write_replaces_the_file_whole_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "model.json"  # missing folders are made
    write_replacing(target, "first")
    write_replacing(target, "zweite Fassung: größer")  # text is written as UTF-8
    assert target.read_bytes() == "zweite Fassung: größer".encode()
    assert leftovers(target.parent) == []


def test_a_failing_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "calibrator.pt"
    write_replacing(target, b"old")

    def fail_half_way() -> None:
        with replacing(target) as written:
            written.write_bytes(b"half of the n")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        fail_half_way()
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path) == []


def test_the_block_writes_by_path_as_libraries_do(tmp_path: Path) -> None:
    target = tmp_path / "runs.jsonl"
    with replacing(target) as written:
        assert written.parent == tmp_path
        assert written.name.startswith(".runs.jsonl.")
        assert written.read_bytes() == b""  # created empty, there to be opened by path
        with open(written, "a", encoding="utf-8") as file:
            file.write("one\n")
        assert not target.exists()  # nothing is seen before the block ends
    assert target.read_text(encoding="utf-8") == "one\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_permissions_follow_the_umask_unless_a_mode_narrows_them(tmp_path: Path) -> None:
    before = os.umask(0o022)
    try:
        write_replacing(tmp_path / "router.json", "{}")
        write_replacing(tmp_path / "keys.json", "{}", mode=0o600)
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "router.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600


def test_concurrent_writers_of_one_path_never_mix_their_bytes(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    bodies = [bytes([65 + i]) * 200_000 for i in range(8)]
    start = threading.Barrier(len(bodies))
    errors: list[BaseException] = []

    def write(body: bytes) -> None:
        try:
            start.wait()
            for _ in range(5):
                write_replacing(target, body)
        except BaseException as exc:  # collected: a thread's exception would be lost
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert target.read_bytes() in bodies  # one writer's bytes, whole
    assert leftovers(tmp_path) == []
