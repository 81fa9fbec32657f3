"""Files written whole: a reader sees the old file or the new one, never part of either.

Every artifact and cache file AAU writes (CRF and classifier models, calibrators, routers,
recordings, compiled grammars, prefix KV, CLDR tables, term manifests, API keys) may be read
by another process while it is written, and a write may fail half-way (a full disk, a killed
process). So each is written to a temporary file beside it and renamed over it, which is atomic
within one file system. Each writer gets a temporary name of its own, so two processes writing
one path at once never mix their bytes: the last rename wins.

A temporary file that a killed process leaves behind ends in ``.tmp`` and starts with a dot.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["replacing", "write_replacing"]


@contextmanager
def replacing(path: Path, *, mode: int = 0o666) -> Iterator[Path]:
    """A new, empty file beside ``path`` for the block to write; renamed over ``path`` after it.

    ``mode`` is the permission bits the file is created with, before the umask (``0o600``:
    the owner's alone). The folder is created if missing. If the block raises, the temporary
    file is removed and ``path`` stays as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    unique = f"{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}"
    temporary = path.with_name(f".{path.name}.{unique}.tmp")
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_replacing(path: Path, data: bytes | str, *, mode: int = 0o666) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole (see ``replacing``)."""
    with replacing(path, mode=mode) as temporary:
        temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
