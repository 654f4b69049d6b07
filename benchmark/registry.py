"""Typed registries with duplicate-name checks and lazy entry points (after lm-eval's registry).

A `Registry` maps names to objects of one kind. Third-party packages add entries through the
entry-point group named by the registry; they are loaded lazily, on the first lookup.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Callable, Generic, Iterator, TypeVar

from benchmark.errors import RegistryError

T = TypeVar("T")


def iter_entry_points(group: str):
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
        self._loaded = group is None

    def register(self, name: str, obj: T, *, replace: bool = False) -> T:
        if self.validate is not None:
            self.validate(name, obj)
        if not replace and name in self._items and self._items[name] is not obj:
            raise RegistryError(
                f"{self.kind} '{name}' is registered twice; rename one of them (names must be unique)"
            )
        self._items[name] = obj
        return obj

    def decorator(self, name: str) -> Callable[[T], T]:
        def wrap(obj: T) -> T:
            return self.register(name, obj)

        return wrap

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for ep in iter_entry_points(self.group):
            obj = ep.load()
            self.register(ep.name, obj)

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise RegistryError(
                f"unknown {self.kind} '{name}'; known: {known} (see `xaibench list`)"
            ) from None

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        self._load()
        return iter(sorted(self._items.items()))

    def __contains__(self, name: str) -> bool:
        self._load()
        return name in self._items
