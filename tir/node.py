"""Base classes shared by every IR node, and the hashable mapping used for attributes."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import attrs


class Node:
    """Marker base of all IR nodes (expressions, statements, buffers, functions, modules).

    Value nodes compare by their fields; binders (variables, buffers) compare by identity.
    """

    __slots__ = ()

    def script(self, dialect: str = "tirx") -> str:
        """TVMScript text of this node (see :func:`tir.to_script`)."""
        from .printer import to_script

        return to_script(self, dialect=dialect)

    def __str__(self) -> str:
        """Readable TVMScript when the printer handles this node, else the repr."""
        try:
            return self.script()
        except Exception:  # noqa: BLE001 - a node the printer has no form for
            return repr(self)


def freeze(value: Any) -> Any:
    """Turn lists and dicts (recursively) into tuples and Maps so they can be hashed."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return Map(value)
    return value


@attrs.frozen
class Target:
    """A compilation target as an attribute value (``T.target({"kind": "llvm", ...})`` in a
    function's attributes, as TVM prints a function bound to a target): kept and printed back,
    never interpreted."""

    config: Any = attrs.field(converter=freeze)
    """The target's configuration: a Map of its fields, or its string form (``"llvm"``)."""


class Map(Mapping):
    """An immutable, hashable mapping that keeps insertion order.

    Used for annotations, function attributes and buffer maps. Keys may be strings or
    binder nodes (which hash by identity).
    """

    __slots__ = ("_items", "_dict", "_hash")

    def __init__(self, items: "Mapping | Iterator | None" = None):
        if isinstance(items, Map):  # already frozen, and immutable: share it
            self._dict, self._items, self._hash = items._dict, items._items, items._hash
            return
        pairs = items.items() if isinstance(items, Mapping) else (items or ())
        self._dict = {k: freeze(v) for k, v in pairs}
        self._items = tuple(self._dict.items())
        self._hash = None

    def __getitem__(self, key):
        return self._dict[key]

    def items_tuple(self) -> tuple:
        """The ``(key, value)`` pairs in order, as a tuple (cheaper than ``items()``)."""
        return self._items

    def __iter__(self):
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._items)
        return self._hash

    def __eq__(self, other) -> bool:
        if isinstance(other, Map):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return f"Map({dict(self._items)!r})"

    @classmethod
    def _of_frozen(cls, d: dict) -> "Map":
        """A Map over ``d``, whose values are already frozen (no second pass over them)."""
        m = cls.__new__(cls)
        m._dict, m._items, m._hash = d, tuple(d.items()), None
        return m

    def set(self, key, value) -> "Map":
        """A copy with ``key`` set to ``value``."""
        d = dict(self._dict)
        d[key] = freeze(value)
        return Map._of_frozen(d)

    def without(self, key) -> "Map":
        """A copy without ``key``."""
        return Map._of_frozen({k: v for k, v in self._items if k != key})


EMPTY = Map()
