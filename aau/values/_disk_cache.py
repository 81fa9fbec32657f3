"""Tables built from CLDR, kept on disk so that a second process start reads them back.

Building the tables means reading every locale file Babel ships (a second or more per process);
reading them back from one file takes a third of that. A file is keyed by everything the table
depends on: the Python and Babel versions and the source of the modules that build it, so a
changed builder or a new Babel is never served a stale table.

The files are read with an unpickler that accepts only plain containers, ``Decimal`` and the
tables' own dataclass: a file someone else wrote into the cache folder cannot run code. Any
failure to read or write falls back to building the table in memory.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from aau.files import replacing

__all__ = ["cache_folder", "cached"]

_T = TypeVar("_T")

_ALLOWED = {
    ("builtins", "dict"), ("builtins", "frozenset"), ("builtins", "set"), ("builtins", "list"),
    ("builtins", "tuple"), ("collections", "defaultdict"), ("decimal", "Decimal"),
    ("aau.values._cldr", "Tables"),
}  # fmt: skip


class _TablesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a table")
        return super().find_class(module, name)


def cache_folder() -> Path:
    """``$AAU_CACHE_DIR/values``, else ``~/.cache/aau/values`` (the engine's cache root)."""
    root = os.environ.get("AAU_CACHE_DIR") or Path.home() / ".cache" / "aau"
    return Path(root) / "values"


def _key(name: str, modules: tuple[ModuleType, ...]) -> str:
    import babel

    digest = hashlib.sha256(f"{sys.version}|babel {babel.__version__}".encode())
    for module in modules:
        digest.update(Path(module.__file__ or "").read_bytes())
    return f"{name}-{digest.hexdigest()[:20]}.pickle"


def cached(name: str, modules: tuple[ModuleType, ...], build: Callable[[], _T]) -> _T:
    """``build()``'s table: read from the cache folder when a file there matches, else built.

    A table built is stored there for the next process.
    """
    try:
        path = cache_folder() / _key(name, modules)
    except OSError:  # a module's source unreadable (a frozen install): no key, no cache
        return build()
    try:
        with path.open("rb") as file:
            table: _T = _TablesUnpickler(io.BytesIO(file.read())).load()
        return table
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
        pass  # absent, or not a table this code wrote: build it
    table = build()
    try:
        with replacing(path) as written, written.open("wb") as file:  # whole or not at all
            pickle.dump(table, file, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:  # a read-only or full cache: build again next time
        pass
    return table
