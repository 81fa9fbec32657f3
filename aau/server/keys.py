"""API keys: which tenant a request comes from.

A key is ``aau_<id>_<secret>``: the id is public (it names the key in ``aau keys list`` and in
logs), the secret is 32 random bytes. The key file keeps only each key's SHA-256 digest, never
the key: a key is shown once, when it is made. A fast digest is enough because the secrets are
random and long (nothing to guess from a dictionary), so no slow password hash is needed.

The file is JSON, written atomically with mode 0600::

    {"keys": [{"id": "3f9a1c2e", "tenant": "acme", "sha256": "…", "created": "2026-…",
               "role": "tenant"}]}

A ``tenant`` key reaches its tenant's analyses and dictionaries; an ``operator`` key reaches
only what is about the whole service (``/metrics``), which names tenants and so is no tenant's
to read.

A serving process notices a changed file at the next request (one ``stat`` a second), so
``aau keys add`` and ``aau keys revoke`` from another shell apply without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, get_args

from aau.errors import InputError, TermDictionaryError
from aau.files import write_replacing
from aau.terms.store import check_tenant_name

__all__ = ["KeyRecord", "KeyStore", "Role"]

Role = Literal["tenant", "operator"]

_PREFIX = "aau_"
_MAX_FILE_BYTES = 4 * 2**20
_MAX_KEY_CHARS = 200
"""Longer ``Authorization`` values are refused before they are hashed."""
_RELOAD_EVERY_S = 1.0


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """One key as stored: its public id, its tenant and its digest."""

    id: str
    tenant: str
    sha256: str
    created: str
    role: Role = "tenant"


def digest(key: str) -> str:
    """The SHA-256 hex digest a key is stored as."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class KeyStore:
    """The API keys of a service, kept in one JSON file.

    Args:
        path: the key file; a missing file is an empty store (``add`` creates it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._by_digest: dict[str, KeyRecord] = {}
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self._load()

    # -- reading ----------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._by_digest, self._stamp = {}, None
            return
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._stamp:
            return
        if stat.st_size > _MAX_FILE_BYTES:
            raise InputError(f"{self.path}: {stat.st_size:,} bytes is over the key file's limit")
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            records = [KeyRecord(**entry) for entry in data["keys"]]
            for record in records:
                check_tenant_name(record.tenant)
                if record.role not in get_args(Role):
                    raise ValueError(f"key {record.id}: unknown role {record.role!r}")
        except (ValueError, TypeError, KeyError, TermDictionaryError) as exc:
            raise InputError(f"{self.path}: not a key file ({type(exc).__name__}: {exc})") from None
        self._by_digest = {r.sha256: r for r in records}
        self._stamp = stamp

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < _RELOAD_EVERY_S:
            return
        with self._lock:
            self._checked = now
            try:
                self._load()
            except InputError:  # a half-edited file: keep serving with the keys read before
                pass

    def records(self) -> list[KeyRecord]:
        """Every key's record (never the key itself), by tenant then id."""
        with self._lock:
            self._load()
            return sorted(self._by_digest.values(), key=lambda r: (r.tenant, r.id))

    def tenants(self) -> list[str]:
        """The tenants that hold at least one tenant key, sorted."""
        return sorted({r.tenant for r in self.records() if r.role == "tenant"})

    def lookup(self, key: str) -> KeyRecord | None:
        """The record of ``key``, or None when it is not a key of this store."""
        if not key.startswith(_PREFIX) or len(key) > _MAX_KEY_CHARS:
            return None
        self._refresh()
        wanted = digest(key)
        record = self._by_digest.get(wanted)
        # The lookup is by digest, so its timing says nothing of the secret; compare anyway.
        if record is None or not hmac.compare_digest(record.sha256, wanted):
            return None
        return record

    # -- changing ---------------------------------------------------------------------------

    def add(self, tenant: str, *, role: Role = "tenant") -> str:
        """Make a key for ``tenant`` and store its digest; returns the key (shown only now).

        ``tenant`` names the holder of an ``operator`` key (it reaches no tenant's data).
        """
        check_tenant_name(tenant)
        if role not in get_args(Role):
            raise InputError(f"unknown role {role!r}: tenant or operator")
        key_id = secrets.token_hex(4)
        key = f"{_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = KeyRecord(key_id, tenant, digest(key), created, role)
        with self._lock:
            self._load()
            self._write([*self._by_digest.values(), record])
        return key

    def revoke(self, key_id: str) -> KeyRecord:
        """Remove the key whose id is ``key_id``; returns its record.

        Raises:
            InputError: no key has that id.
        """
        with self._lock:
            self._load()
            found = [r for r in self._by_digest.values() if r.id == key_id]
            if not found:
                raise InputError(f"no key has the id {key_id!r} (see: aau keys list)")
            self._write([r for r in self._by_digest.values() if r.id != key_id])
            return found[0]

    def _write(self, records: list[KeyRecord]) -> None:
        body = json.dumps({"keys": [asdict(r) for r in records]}, indent=1)
        # Whole: a reader sees the old keys or the new ones; the owner's alone to read.
        write_replacing(self.path, body, mode=0o600)
        self._stamp = None
        self._load()
