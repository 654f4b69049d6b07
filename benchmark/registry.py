"""Typed registries with duplicate-name checks and lazy entry points (after lm-eval's registry).

A `Registry` maps names to objects of one kind. Third-party packages add entries through the
entry-point group named by the registry; those, and the built-in modules a package names with
`on_first_lookup` (modules that register themselves when imported), are loaded lazily, on the first
lookup.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from importlib.metadata import EntryPoint
from typing import Callable, Generic, Iterator, TypeVar

from benchmark.errors import RegistryError

T = TypeVar("T")


class MetadataError(RegistryError, ValueError):
    """A track's or metric's declared metadata is invalid (raised where it is declared, naming it)."""


def iter_entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of `group`, sorted by name (deterministic order)."""
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


class Registry(Generic[T]):
    """Name → object, with a duplicate check and an optional entry-point group loaded on demand."""

    def __init__(self, kind: str, group: str | None = None,
                 validate: Callable[[str, T], None] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.validate = validate  # raises (naming the entry) when an object may not be registered
        self._items: dict[str, T] = {}
        self._loaders: list[Callable[[], None]] = []
        self._loaded = False

    def on_first_lookup(self, loader: Callable[[], None]) -> None:
        """Run `loader` (e.g. importing the built-in modules that register themselves) before the
        first lookup; it runs at once if a lookup already happened."""
        if self._loaded:
            loader()
        else:
            self._loaders.append(loader)

    def load(self) -> None:
        """Load what registers lazily (the `on_first_lookup` loaders, then the entry points), once."""
        self._load()

    def register(self, name: str, obj: T, *, replace: bool = False) -> T:
        """Add `obj` under `name` after the registry's `validate`; a second object under a taken name
        is a RegistryError unless `replace`."""
        if self.validate is not None:
            self.validate(name, obj)
        if not replace and name in self._items and self._items[name] is not obj:
            raise RegistryError(
                f"{self.kind} '{name}' is registered twice; rename one of them (names must be unique)"
            )
        self._items[name] = obj
        return obj

    def decorator(self, name: str) -> Callable[[T], T]:
        """`@registry.decorator(name)`: registers the decorated object under `name`."""

        def wrap(obj: T) -> T:
            return self.register(name, obj)

        return wrap

    def _load(self) -> None:
        if self._loaded:
            return
        while self._loaders:  # a loader that raises stays, and runs again on the next lookup
            loader = self._loaders[0]
            loader()
            self._loaders.remove(loader)
        self._loaded = True
        if self.group is None:
            return
        for ep in iter_entry_points(self.group):
            obj = ep.load()
            self.register(ep.name, obj)

    def get(self, name: str) -> T:
        """The object registered as `name`; a RegistryError listing the known names otherwise."""
        self._load()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise RegistryError(
                f"unknown {self.kind} '{name}'; known: {known} (see `xaibench list`)"
            ) from None

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._load()
        return sorted(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        """(name, object) pairs sorted by name."""
        self._load()
        return iter(sorted(self._items.items()))

    def __contains__(self, name: str) -> bool:
        """Whether `name` is registered (after the lazy loading)."""
        self._load()
        return name in self._items
