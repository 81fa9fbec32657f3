"""Tenants and their term dictionaries, kept on disk and live in every process that reads them.

Layout under the store's root (``AAU_TERMS_DIR``, default ``~/.local/share/aau/terms``)::

    tenants/<tenant>/manifest.json     the tenant's dictionaries, in upload order
    tenants/<tenant>/<name>.<ext>      each uploaded file, byte for byte

Every tenant sees the shipped dictionaries (``termdicts/``) first and its own uploads after
them, so its own terms win where both define a surface form. An upload is validated whole —
parsed, checked against the tenant's other dictionaries, compiled — before anything is written,
and becomes visible through one atomic rename of the manifest: all or nothing. A process that
serves requests (``TermStore.term_set``) notices a changed manifest at the tenant's next request,
so ``aau termdict add`` from another shell is active without a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: writers in one process only
    fcntl = None  # type: ignore[assignment]

from aau.errors import TermDictionaryError, UnknownTenant
from aau.files import write_replacing
from aau.terms.dictionary import (
    TermDictionary,
    fold_surface,
    load_dictionary,
    parse_dictionary,
    read_dictionary_bytes,
)
from aau.terms.matcher import TermHit, TermMatcher

__all__ = [
    "DictionaryInfo",
    "DictionaryUpload",
    "TermSet",
    "TermStore",
    "default_store_dir",
    "shipped_dictionaries",
]

# ASCII only, and fullmatch: "$" would also match before a final newline ("nl\n").
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SHIPPED_DIR = Path(__file__).resolve().parents[2] / "termdicts"


def default_store_dir() -> Path:
    """``$AAU_TERMS_DIR``, else ``$XDG_DATA_HOME/aau/terms`` (``~/.local/share/aau/terms``)."""
    if os.environ.get("AAU_TERMS_DIR"):
        return Path(os.environ["AAU_TERMS_DIR"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "aau" / "terms"


def shipped_dictionaries(root: str | Path | None = None) -> list[TermDictionary]:
    """The dictionaries under ``termdicts/`` (or ``root``), sorted by path."""
    root = Path(root) if root is not None else _SHIPPED_DIR
    if not root.is_dir():
        return []
    files = sorted(p for p in root.rglob("*") if p.suffix in (".tsv", ".csv", ".yaml", ".yml"))
    return [load_dictionary(path) for path in files]


@dataclass(frozen=True, slots=True)
class DictionaryUpload:
    """A dictionary file received as bytes (an HTTP upload): its name gives only the format."""

    filename: str
    """The name the sender gave; only its suffix is read (``.tsv``/``.csv``/``.yaml``)."""
    data: bytes


@dataclass(frozen=True, slots=True)
class DictionaryInfo:
    """What ``list`` shows of a dictionary."""

    name: str
    tenant: str | None
    terms: int
    surfaces: int
    source: str
    file: str


@dataclass(frozen=True, slots=True)
class TermSet:
    """One tenant's active dictionaries and their automaton: what a request is matched with.

    ``fingerprint`` changes with any dictionary's content, so caches keyed by it (prefix KV,
    merged vocabularies, compiled constraints) never serve one term set's state to another.
    """

    tenant: str | None
    matcher: TermMatcher

    @property
    def fingerprint(self) -> str:
        """Digest of the dictionaries' names, order and content."""
        return self.matcher.fingerprint

    def find(self, text: str) -> list[TermHit]:
        """The terms in ``text`` (see ``TermMatcher.find``)."""
        return self.matcher.find(text)

    def __len__(self) -> int:
        return len(self.matcher)


def check_tenant_name(tenant: str) -> None:
    """Refuse tenant names that cannot be folder names everywhere (T016).

    Letters, digits, ``_``, ``.``, ``-`` (ASCII), at most 64, not starting with a symbol: no
    ``/``, ``..``, NUL, newline or empty name can reach a path.
    """
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise TermDictionaryError(
            f"tenant name {tenant!r} must be letters, digits, '_', '.' or '-' (at most 64, "
            "not starting with a symbol)",
            field="tenant",
            check="T016",
        )


class TermStore:
    """Tenants, their uploaded dictionaries, and the live term set of each.

    Args:
        root: where tenants are kept; default ``default_store_dir()``.
        shipped: the dictionaries every tenant starts from; default those in ``termdicts/``.
    """

    def __init__(
        self, root: str | Path | None = None, *, shipped: Sequence[TermDictionary] | None = None
    ) -> None:
        self.root = Path(root) if root is not None else default_store_dir()
        self._shipped = list(shipped) if shipped is not None else None
        self._lock = threading.RLock()
        self._live: dict[str | None, tuple[Any, TermSet]] = {}
        # By content digest, so re-reads skip parsing; an entry lasts while a live term set
        # still uses it (replaced and removed dictionaries do not pile up in a server).
        self._parsed: weakref.WeakValueDictionary[str, TermDictionary] = (
            weakref.WeakValueDictionary()
        )

    @property
    def shipped(self) -> list[TermDictionary]:
        """The shipped dictionaries (read once, on first use)."""
        if self._shipped is None:
            self._shipped = shipped_dictionaries()
        return self._shipped

    # -- tenants --------------------------------------------------------------------------

    def _dir(self, tenant: str) -> Path:
        check_tenant_name(tenant)  # every tenant path is built here
        return self.root / "tenants" / tenant

    @contextlib.contextmanager
    def _locked(self, *, shared: bool = False) -> Iterator[None]:
        """This process's lock and, across processes, a lock file in the store's root.

        Writers (create, add, remove) hold it exclusively: each reads the manifest, writes
        files and replaces the manifest, and must not interleave with another writer. Readers
        rebuilding a term set hold it shared, so no writer deletes a file they are about to
        read.
        """
        with self._lock:
            if fcntl is None:
                yield
                return
            self.root.mkdir(parents=True, exist_ok=True)
            with open(self.root / ".lock", "a+b") as handle:
                fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)

    def tenants(self) -> list[str]:
        """Known tenants, sorted."""
        base = self.root / "tenants"
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if (p / "manifest.json").is_file())

    def create_tenant(self, tenant: str) -> None:
        """Register ``tenant`` (no dictionaries of its own yet); refuses an existing one."""
        check_tenant_name(tenant)
        with self._locked():
            if tenant in self.tenants():
                raise TermDictionaryError(
                    f"tenant {tenant!r} exists already", field="tenant", check="T016"
                )
            self._write_manifest(tenant, [])

    def remove_tenant(self, tenant: str) -> None:
        """Forget ``tenant`` and its dictionaries."""
        with self._locked():
            self._require(tenant)
            shutil.rmtree(self._dir(tenant))
            self._live.pop(tenant, None)

    def _require(self, tenant: str) -> None:
        check_tenant_name(tenant)
        if tenant not in self.tenants():
            known = ", ".join(self.tenants()) or "none yet"
            error = UnknownTenant(
                f"unknown tenant {tenant!r} (known: {known})", field="tenant", check="T017"
            )
            error.add_note(f"create it first: aau termdict tenant add {tenant}")
            raise error

    # -- dictionaries ---------------------------------------------------------------------

    def _manifest(self, tenant: str) -> list[dict[str, str]]:
        path = self._dir(tenant) / "manifest.json"
        return list(json.loads(path.read_text(encoding="utf-8"))["dictionaries"])

    def _write_manifest(self, tenant: str, entries: list[dict[str, str]]) -> None:
        # Whole: readers see the old set or the new one.
        write_replacing(self._dir(tenant) / "manifest.json",
                        json.dumps({"dictionaries": entries}, indent=1))  # fmt: skip

    def uploaded(self, tenant: str) -> list[TermDictionary]:
        """The tenant's own dictionaries, in upload order."""
        self._require(tenant)
        folder = self._dir(tenant)
        out = []
        for entry in self._manifest(tenant):
            dictionary = self._parsed.get(entry["sha256"])
            if dictionary is None or dictionary.name != entry["name"]:
                data = (folder / entry["file"]).read_bytes()
                dictionary = parse_dictionary(data, file=entry["file"], name=entry["name"])
                self._parsed[dictionary.sha256] = dictionary
            out.append(dictionary)
        return out

    def add(
        self, tenant: str, sources: Iterable[str | Path | DictionaryUpload | TermDictionary], *,
        replace: bool = False,
    ) -> list[TermDictionary]:  # fmt: skip
        """Upload dictionaries for ``tenant``, all or nothing; active at its next request.

        Args:
            tenant: a tenant created with ``create_tenant``.
            sources: files (``.tsv``/``.csv``/``.yaml``) or uploads of their bytes, kept as
                uploaded.
            replace: allow replacing a dictionary of the same name (else that is an error).

        Raises:
            UnknownTenant: ``tenant`` was never created.
            TermDictionaryError: any file is bad, two dictionaries give one surface form two
                meanings, or a name is taken; nothing was applied.
        """
        self._require(tenant)  # before reading files: the cheaper and clearer mistake
        new: list[tuple[TermDictionary, bytes, str]] = []
        for source in sources:
            if isinstance(source, TermDictionary):
                raise TermDictionaryError(
                    "upload files (their bytes are kept); parsed dictionaries are for "
                    "TermMatcher and the shipped set",
                    file=source.file,
                    check="T005",
                )
            if isinstance(source, DictionaryUpload):
                # Only the suffix of a sender's file name is used: no path reaches the disk.
                path = Path(PurePosixPath(source.filename.replace("\\", "/")).name or "upload")
                data = source.data  # parse_dictionary bounds its size
            else:
                path = Path(source)
                data = read_dictionary_bytes(path)  # read once: what is checked is what is kept
            dictionary = parse_dictionary(data, file=str(path))
            new.append((dictionary, data, path.suffix.lower()))
        if not new:
            raise TermDictionaryError("nothing to upload", field="files", check="T003")
        with self._locked():
            self._require(tenant)
            current = self.uploaded(tenant)
            names = [d.name for d, _, _ in new]
            for name in names:
                if names.count(name) > 1:
                    raise TermDictionaryError(
                        f"two files of this upload are both named {name!r}", check="T018"
                    )
            taken = {d.name for d in current} & set(names)
            if taken and not replace:
                raise TermDictionaryError(
                    f"tenant {tenant!r} already has dictionary {sorted(taken)[0]!r}; remove "
                    "it first or upload with replace",
                    field="name",
                    check="T018",
                )
            kept = [d for d in current if d.name not in taken]
            result = kept + [d for d, _, _ in new]
            _check_conflicts(result)
            matcher = TermMatcher(self.shipped + result)  # compiles, or raises before writing
            folder = self._dir(tenant)
            entries = [e for e in self._manifest(tenant) if e["name"] not in taken]
            stamp = time.strftime("%Y%m%dT%H%M%S")
            written: list[Path] = []
            try:
                for dictionary, data, suffix in new:
                    file = f"{dictionary.name}.{stamp}.{dictionary.sha256[:8]}{suffix}"
                    (folder / file).write_bytes(data)
                    written.append(folder / file)
                    entries.append({"name": dictionary.name, "file": file,
                                    "sha256": dictionary.sha256})  # fmt: skip
                self._write_manifest(tenant, entries)
                for dictionary, _, _ in new:
                    self._parsed[dictionary.sha256] = dictionary
                self._live[tenant] = (_stamp(folder / "manifest.json"), TermSet(tenant, matcher))
            except OSError as exc:
                for path in written:
                    path.unlink(missing_ok=True)
                raise TermDictionaryError(
                    f"could not store the upload: {exc}", file=str(folder), check="T001"
                ) from None
            self._collect(tenant)
            return [d for d, _, _ in new]

    def remove(self, tenant: str, name: str) -> None:
        """Remove the tenant's dictionary ``name``; active at its next request."""
        with self._locked():
            self._require(tenant)
            entries = self._manifest(tenant)
            if not any(e["name"] == name for e in entries):
                have = ", ".join(e["name"] for e in entries) or "none"
                raise TermDictionaryError(
                    f"tenant {tenant!r} has no dictionary {name!r} (it has: {have})",
                    field="name",
                    check="T019",
                )
            self._write_manifest(tenant, [e for e in entries if e["name"] != name])
            self._collect(tenant)

    def _collect(self, tenant: str) -> None:
        """Delete stored files no manifest entry names any more."""
        folder = self._dir(tenant)
        named = {e["file"] for e in self._manifest(tenant)} | {"manifest.json"}
        for path in folder.iterdir():
            if path.name not in named and not path.name.startswith("."):
                path.unlink(missing_ok=True)

    def list(self, tenant: str | None = None) -> list[DictionaryInfo]:
        """The shipped dictionaries, then ``tenant``'s own (all tenants' when None)."""
        shipped = [_info(d, None) for d in self.shipped]
        tenants = [tenant] if tenant is not None else self.tenants()
        return shipped + [_info(d, t) for t in tenants for d in self.uploaded(t)]

    # -- serving --------------------------------------------------------------------------

    def term_set(self, tenant: str | None = None) -> TermSet:
        """The live term set of ``tenant`` (None: the shipped dictionaries alone).

        Cheap when nothing changed (one ``stat`` of the manifest); rebuilt when an upload or
        removal, from this process or another, changed it.
        """
        if tenant is None:
            with self._lock:
                live = self._live.get(None)
                if live is None:
                    live = (0, TermSet(None, TermMatcher(self.shipped)))
                    self._live[None] = live
                return live[1]
        try:
            stamp = _stamp(self._dir(tenant) / "manifest.json")
        except (FileNotFoundError, NotADirectoryError):
            check_tenant_name(tenant)
            self._require(tenant)
            raise
        live = self._live.get(tenant)
        if live is not None and live[0] == stamp:
            return live[1]
        with self._locked(shared=True):
            try:
                stamp = _stamp(self._dir(tenant) / "manifest.json")
                uploads = self.uploaded(tenant)
            except OSError as exc:
                raise TermDictionaryError(
                    f"tenant {tenant!r}: its stored dictionaries cannot be read ({exc}); "
                    "upload them again",
                    file=str(self._dir(tenant)),
                    check="T001",
                ) from None
            term_set = TermSet(tenant, TermMatcher(self.shipped + uploads))
            self._live[tenant] = (stamp, term_set)
            return term_set


def _stamp(manifest: Path) -> tuple[int, int, int]:
    """What changes when the manifest is replaced (a new file: new inode, time and size)."""
    stat = manifest.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _info(dictionary: TermDictionary, tenant: str | None) -> DictionaryInfo:
    return DictionaryInfo(
        name=dictionary.name,
        tenant=tenant,
        terms=len(dictionary),
        surfaces=sum(1 for _ in dictionary.surfaces()),
        source=dictionary.source,
        file=dictionary.file,
    )


def _check_conflicts(dictionaries: Sequence[TermDictionary]) -> None:
    """One surface form, one meaning, across a tenant's own dictionaries."""
    seen: dict[str, tuple[str, str, int]] = {}
    for dictionary in dictionaries:
        for surface, term in dictionary.surfaces():
            key = fold_surface(surface)
            first = seen.get(key)
            if first is not None and first[1] != term.canonical:
                raise TermDictionaryError(
                    f"{surface!r} means {term.canonical!r} here but {first[1]!r} in the "
                    f"tenant's dictionary {first[0]!r} (line {first[2]})",
                    file=dictionary.file,
                    line=term.line,
                    check="T013",
                )
            seen.setdefault(key, (dictionary.name, term.canonical, term.line))
