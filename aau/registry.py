"""Named registries: the one plug-in seam of engines, fallback kinds, normalizers and grammars.

A ``Registry`` maps names to plug-ins of one kind. Plug-ins come from an entry-point group
(``aau.engines``, ``aau.fallbacks``…): the package declares its own there too, in
``pyproject.toml``, so a registry low in the tree never imports the layers above it that define
them, and a shipped plug-in is found exactly as a third-party one. Code in the running process
may also register with the decorator (``@FALLBACK_KINDS.register("mine")``). Entry points are
read once, the first time a registry is asked for a name, so an unused registry costs nothing
and a used one never scans twice.

An entry point names the plug-in itself (``mykind = "mypkg.kinds:MyFallback"``), registered
under the entry point's name. A plug-in that fails to load is skipped with a warning that names
it: one broken third-party package must not take the shipped plug-ins down with it.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Generic, TypeVar

from aau.errors import AAUError

__all__ = ["Registry", "UnknownName"]

T = TypeVar("T")


class UnknownName(AAUError, LookupError):
    """A name no plug-in is registered under; the message lists the available ones."""

    code = "unknown_name"

    def __init__(self, what: str, name: str, available: list[str]) -> None:
        listed = ", ".join(available) if available else "none"
        super().__init__(f"unknown {what} {name!r}. Available: {listed}")
        self.what, self.name, self.available = what, name, available


class Registry(Generic[T]):
    """Plug-ins of one kind by name.

    Args:
        what: what a plug-in is, for messages (``"engine"``, ``"fallback kind"``).
        group: the entry-point group plug-ins are declared in; None for none.
        resolve: a function that makes a plug-in for a name nobody registered (e.g.
            ``grammar:<name>`` normalizers), or returns None.
    """

    def __init__(
        self,
        what: str,
        group: str | None = None,
        *,
        resolve: Callable[[str], T | None] | None = None,
    ) -> None:
        self.what = what
        self.group = group
        self._resolve = resolve
        self._entries: dict[str, T] = {}
        self._loaded = False
        self._lock = threading.RLock()

    def register(self, name: str, *aliases: str) -> Callable[[T], T]:
        """Decorator: register the decorated plug-in under ``name`` (and ``aliases``)."""

        def decorate(plugin: T) -> T:
            for each in (name, *aliases):
                self.add(each, plugin)
            return plugin

        return decorate

    def add(self, name: str, plugin: T) -> None:
        """Register ``plugin`` under ``name``; a later registration replaces an earlier one."""
        with self._lock:
            self._entries[name] = plugin

    def get(self, name: str) -> T:
        """The plug-in called ``name``; ``UnknownName`` (listing the names) if there is none."""
        plugin = self.find(name)
        if plugin is None:
            raise UnknownName(self.what, name, self.names())
        return plugin

    def find(self, name: str) -> T | None:
        """The plug-in called ``name``, or None."""
        self._load()
        plugin = self._entries.get(name)
        if plugin is None and self._resolve is not None:
            plugin = self._resolve(name)
        return plugin

    def names(self) -> list[str]:
        """Every registered name, sorted (resolved names are not listed)."""
        self._load()
        return sorted(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        """``(name, plug-in)`` pairs in registration order."""
        self._load()
        return iter(list(self._entries.items()))

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            # Set first: a plug-in module that asks this registry while it imports must not
            # start the scan again.
            self._loaded = True
            if self.group is None:
                return
            for entry in metadata.entry_points(group=self.group):
                try:
                    loaded = entry.load()
                except Exception as exc:  # a broken third-party plug-in, not ours to raise
                    warnings.warn(
                        f"{self.what} plug-in {entry.name!r} ({entry.value}) failed to load: "
                        f"{exc!r}; it is not available",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                    continue
                self._entries.setdefault(entry.name, loaded)
