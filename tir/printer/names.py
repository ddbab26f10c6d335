"""Names given at print time: every binder gets its hint, made unique with a suffix."""
from __future__ import annotations

import keyword
import re

_BAD = re.compile(r"\W")
RESERVED = frozenset(("T", "R", "I", "cls", "range", "True", "False", "None", "TypeVar"))


def sanitize(hint: str) -> str:
    """A valid Python identifier close to ``hint``."""
    name = _BAD.sub("_", hint or "v")
    if not name or name[0].isdigit():
        name = "v_" + name
    if keyword.iskeyword(name):
        name += "_"
    return name


class Namer:
    """Assigns each binder (by identity) one unique name; a child namer sees the parent's."""

    def __init__(self, parent: "Namer | None" = None):
        self.used: set = set(parent.used) if parent else set(RESERVED)
        self.names: dict = dict(parent.names) if parent else {}
        self.keep: list = list(parent.keep) if parent else []

    def __call__(self, node) -> str:
        found = self.names.get(id(node))
        if found is not None:
            return found
        return self.fresh(node, getattr(node, "name", "v"))

    def fresh(self, node, hint: str) -> str:
        """Name ``node`` after ``hint`` (``x``, ``x_1``, ``x_2``... on clashes)."""
        base = sanitize(hint)
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        self.names[id(node)] = name
        self.keep.append(node)  # ids stay valid while the namer lives
        return name

    def release(self, node) -> None:
        """``node``'s scope ended: later binders may reuse its name (as TVM prints sibling loops)."""
        name = self.names.get(id(node))
        if name is not None:
            self.used.discard(name)

    def reserve(self, name: str) -> None:
        self.used.add(name)
