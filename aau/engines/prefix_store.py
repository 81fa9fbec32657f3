"""Units' prompt prefixes kept on disk, so that a new process does not prefill them again.

A unit's static part (system text and few-shot turns, a few hundred tokens) is the same in
every process that runs the unit; prefilling it was about a second of a process's first result
on the embedded model. After the first prefill the prefix's KV is written to
``<cache_dir>/prefixes`` (safetensors: reading a file never runs code), and a later process
reads it back (milliseconds) into its in-memory prefix cache.

Only what the engine is told is the unit's own text is written (``GenerationRequest.
static_prefix``): never a document, a tenant's prompt or a term set. A file is named by a hash
of everything its numbers depend on (the weights file's size and time, the model's
configuration, dtype, device, torch and transformers versions, the tokens) and holds the tokens,
which are compared on reading; a file that does not read back as this model's cache is a miss.
The folder is kept under a byte cap, least recently read first out.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aau.engines import kv
from aau.files import replacing

__all__ = ["PrefixStore", "model_identity"]

_log = logging.getLogger(__name__)
_FORMAT = "aau-prefix-1"
_SUFFIX = ".safetensors"
_STALE_TMP_S = 3600.0  # a write takes well under a second


def model_identity(model_path: Path, model: Any, vocabulary: int) -> str:
    """What a prefix's KV depends on besides its tokens, as one string."""
    import torch
    import transformers

    files = [model_path] if model_path.is_file() else sorted(model_path.iterdir())
    stats = [(f.name, f.stat()) for f in files if f.is_file()]
    weights = ";".join(f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, st in stats)
    config = model.config.to_json_string(use_diff=False)
    return "|".join((
        _FORMAT, str(model_path.resolve()), weights, hashlib.sha256(config.encode()).hexdigest(),
        str(model.dtype), model.device.type, torch.__version__, transformers.__version__,
        str(vocabulary),
    ))  # fmt: skip


class PrefixStore:
    """KV caches of token prefixes in one folder, for one model (its ``identity``).

    Args:
        folder: where the files go (created on the first write).
        identity: ``model_identity`` of the engine's model.
        max_bytes: cap of the folder's files; least recently read go first.
    """

    def __init__(self, folder: Path, identity: str, max_bytes: int) -> None:
        self.folder = folder
        self.identity = identity
        self.max_bytes = max_bytes
        self._writing: set[str] = set()
        self._writers: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _path(self, tokens: Sequence[int]) -> Path:
        digest = hashlib.sha256(self.identity.encode())
        digest.update(",".join(map(str, tokens)).encode())
        return self.folder / f"{digest.hexdigest()[:40]}{_SUFFIX}"

    def load(self, tokens: Sequence[int], config: Any, device: Any) -> Any | None:
        """The KV cache of exactly ``tokens``, or None (absent, unreadable or not this model's)."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        path = self._path(tokens)
        try:
            tensors = load_file(str(path), device=str(device))
        except (OSError, SafetensorError, ValueError, RuntimeError):
            return None  # absent, cut short or not a safetensors file: prefill as usual
        stored = tensors.pop("tokens", None)
        if stored is None or stored.dim() != 1 or stored.tolist() != list(tokens):
            return None  # a hash collision, or a file renamed by hand
        cache = kv.cache_from_tensors(config, tensors)
        if cache is None or cache.get_seq_length() != len(tokens):
            return None
        try:
            os.utime(path)  # least recently read goes first
        except OSError:
            pass
        return cache

    def save(self, tokens: Sequence[int], cache: Any) -> None:
        """Write ``cache`` (of exactly ``tokens``) on a background thread, unless it is there."""
        path = self._path(tokens)
        with self._lock:
            if path.name in self._writing or path.exists():
                return
            self._writing.add(path.name)
        # A daemon thread: a process that exits mid-write leaves a temporary file, never a
        # partial prefix (the rename is the last step).
        writer = threading.Thread(target=self._write, args=(path, list(tokens), cache),
                                  name="aau-prefix-store", daemon=True)  # fmt: skip
        with self._lock:
            self._writers = [w for w in self._writers if w.is_alive()] + [writer]
            writer.start()

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait for the writes under way (the engine's ``close``; tests)."""
        with self._lock:
            writers = list(self._writers)
        for writer in writers:
            writer.join(timeout_s)

    def _write(self, path: Path, tokens: list[int], cache: Any) -> None:
        import torch
        from safetensors.torch import save_file

        try:
            tensors = kv.tensors_of(cache)
            if tensors is None:
                return
            tensors = {name: t.cpu() for name, t in tensors.items()}
            tensors["tokens"] = torch.tensor(tokens, dtype=torch.int64)
            size = sum(t.numel() * t.element_size() for t in tensors.values())
            if size > self.max_bytes:
                return
            with replacing(path) as written:  # whole or not at all, whatever else runs meanwhile
                save_file(tensors, str(written), metadata={"format": _FORMAT})
            self._keep_within_cap()
        except Exception as exc:  # noqa: BLE001  # a full or read-only cache: log, never raise
            _log.warning("could not keep a prompt prefix in %s: %s", self.folder, exc)
        finally:
            with self._lock:
                self._writing.discard(path.name)

    def _keep_within_cap(self) -> None:
        """Least recently read out past the cap; temporary files a killed process left, too."""
        files = []
        stale = time.time() - _STALE_TMP_S
        for entry in os.scandir(self.folder):
            if not entry.is_file():
                continue
            stat = entry.stat()
            if entry.name.endswith(_SUFFIX):
                files.append((stat.st_mtime_ns, stat.st_size, entry.path))
            elif entry.name.endswith(".tmp") and stat.st_mtime < stale:
                Path(entry.path).unlink(missing_ok=True)
        total = sum(size for _, size, _ in files)
        for _, size, name in sorted(files):
            if total <= self.max_bytes:
                break
            Path(name).unlink(missing_ok=True)
            total -= size
