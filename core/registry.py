"""One registry per kind of extension, and the only place where the project imports a module named by a string.

Every kind (suites, judge tasks and their templates, rating tasks, rating protocols, metrics, sampling strategies,
presets, reports) is a :class:`Registry` instance next to its declaration class. It is filled, on the first question
asked of it, from two places:

- **the built-ins**: an explicit tuple of module names, imported in order; each module ends with its
  declaration(s), ``SUITES.register(Suite(...))``;
- **plug-ins**: the modules named by the entry points of the group ``t2i_arena.<kind>`` of any installed package
  (``[project.entry-points."t2i_arena.suites"] my_suite = "my_package.my_suite"`` in its pyproject.toml), imported
  the same way.

A module's declarations are the same whichever way it is found. The built-ins come first, in their tuple's order,
then the others in the order they registered. A plug-in that cannot be imported stops with its package's name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import itertools
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")
GROUP = "t2i_arena.{kind}"  # the entry-point group of a kind's plug-ins
_REQUIRED = object()


class RegistryError(ValueError, LookupError):
    """An unknown name (the message lists the choices), a second declaration under a name already taken, or a
    plug-in that cannot be imported; the message says what to do."""


def load(reference: str):
    """The module ``"package.module"``, or its attribute ``"package.module:name"`` (an entry point's syntax)."""
    module, _, attribute = reference.partition(":")
    found = importlib.import_module(module)
    for name in filter(None, attribute.split(".")):
        found = getattr(found, name)
    return found


if sys.version_info >= (3, 12):
    _AllEntryPoints = importlib.metadata.EntryPoints
else:  # Python 3.11's entry_points() without a group: the groups, each selectable by name
    _AllEntryPoints = importlib.metadata.SelectableGroups


def _name_of(item: Any) -> str:
    """The key of an item of a registry made without ``key``: its ``name``."""
    return item.name


@cache
def _entry_points() -> _AllEntryPoints:
    return importlib.metadata.entry_points()  # read once per process (about 40 ms over a full install)


class Registry(Mapping[str, T]):
    """The declarations of one kind by name, read as a mapping: ``register`` refuses a second one under a taken
    name, ``registry[name]`` and ``get(name)`` name the choices of an unknown one (``get(name, default)`` returns
    the default instead), ``names``, ``items`` and iteration list them, the built-ins first."""

    def __init__(self, kind: str, builtins: tuple[str, ...], *, what: str, key: Callable[[T], str] | None = None,
                 hint: str = "", groups: tuple[str, ...] = (), check: Callable[[T, list[T]], None] | None = None):
        """``what`` names one item in messages, ``hint`` follows the choices of an unknown name, ``groups`` are
        other kinds whose plug-ins declare items of this one too, ``check(item, others)`` raises
        :class:`RegistryError` when a new item clashes with the others otherwise than by its name."""
        self.kind, self.builtins, self.what, self.hint, self._check = kind, tuple(builtins), what, hint, check
        self.groups = (GROUP.format(kind=kind), *(GROUP.format(kind=group) for group in groups))
        self._key = key or _name_of
        self._items: dict[str, tuple[int, int, T]] = {}  # name -> (built-in module's place, sequence, item)
        self._lock = threading.Lock()
        self._sequence = itertools.count()
        self._loaded = False
        self._loading = threading.local()

    def register(self, item: T) -> T:
        """Add ``item`` and return it (declaring the same item again changes nothing); another item under its name
        raises :class:`RegistryError`."""
        name = self._key(item)
        with self._lock:
            known = self._items.get(name)
            if known is not None and known[2] is not item and known[2] != item:
                raise RegistryError(f"{self.what} {name!r} is declared twice. Give the new {self.what} another name "
                                    "(or unregister the old one first).")
            if known is None:
                if self._check is not None:
                    self._check(item, [other for _, _, other in self._items.values()])
                self._items[name] = (self._place(), next(self._sequence), item)
        return item

    def unregister(self, name: str) -> T | None:
        """Remove ``name`` (tests, plug-ins that clean up) and return its item, or None when there was none."""
        with self._lock:
            known = self._items.pop(name, None)
        return None if known is None else known[2]

    def __getitem__(self, name: str) -> T:
        """The item called ``name``; an unknown name raises :class:`RegistryError` listing the choices."""
        self.load()
        known = self._items.get(name)
        if known is None:
            raise RegistryError(f"unknown {self.what} {name!r}; choices: {', '.join(self.names()) or 'none'}"
                                f"{' ' + self.hint if self.hint else ''}.")
        return known[2]

    def get(self, name: str, default: Any = _REQUIRED) -> Any:
        """``registry[name]``; with a ``default``, that default for an unknown name."""
        if default is not _REQUIRED and name not in self:
            return default
        return self[name]

    def declared(self, name: str) -> T | None:
        """The item registered as ``name`` so far, or None, without loading anything (for a declaration that
        registers items of another kind with it)."""
        known = self._items.get(name)
        return None if known is None else known[2]

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.items())

    def items(self) -> list[tuple[str, T]]:  # type: ignore[override]
        """(name, item) of every declaration: the built-ins in their modules' order, then the others."""
        self.load()
        with self._lock:
            ordered = sorted(self._items.items(), key=lambda entry: entry[1][:2])
        return [(name, item) for name, (_, _, item) in ordered]

    def values(self) -> list[T]:  # type: ignore[override]
        return [item for _, item in self.items()]

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self.load()
        return len(self._items)

    def load(self) -> None:
        """Import the built-in modules, then the plug-ins' (once; not under the lock, which a module's own
        declarations take, while the import system already serialises each module's import)."""
        if self._loaded or getattr(self._loading, "active", False):  # a module being imported asks its registry
            return
        self._loading.active = True
        try:
            for module in self.builtins:
                importlib.import_module(module)
            for entry in (entry for group in self.groups for entry in _entry_points().select(group=group)):
                try:
                    entry.load()
                except Exception as error:
                    package = entry.dist.name if entry.dist is not None else "an installed package"
                    raise RegistryError(f"the plug-in {entry.name} = {entry.value!r} of {package} (entry point group "
                                        f"{entry.group}) cannot be imported: {error!r}. Fix it, or uninstall "
                                        f"{package}.") from error
            self._loaded = True
        finally:
            self._loading.active = False

    def _place(self) -> int:
        """Where the module declaring the item being registered (the innermost one running its top level) stands
        among the built-ins; after them when it is none of them."""
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and frame.f_code.co_name != "<module>":
            frame = frame.f_back
        module = frame.f_globals.get("__name__") if frame is not None else None
        return self.builtins.index(module) if module in self.builtins else len(self.builtins)
