"""IRModule: named PrimFuncs and graph-level functions."""
from __future__ import annotations

from typing import Iterator

import attrs

from .function import PrimFunc
from .node import EMPTY, Map, Node
from .relax import Function


@attrs.frozen(cache_hash=True)
class IRModule(Node):
    """A module of functions by name, in insertion order, plus module attributes."""

    functions: Map = attrs.field(converter=Map)
    attrs: Map = attrs.field(default=EMPTY, converter=Map)

    def __getitem__(self, name: str):
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"module has no function {name!r}; it has {list(self.functions)}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    @property
    def main(self) -> "Function | PrimFunc | None":
        return self.functions.get("main")

    def prim_funcs(self) -> "list[tuple[str, PrimFunc]]":
        """(name, PrimFunc) pairs in module order."""
        return [(k, f) for k, f in self.functions.items() if isinstance(f, PrimFunc)]

    def graph_funcs(self) -> "list[tuple[str, Function]]":
        return [(k, f) for k, f in self.functions.items() if isinstance(f, Function)]

    def with_function(self, name: str, func) -> "IRModule":
        """A copy with ``name`` bound to ``func`` (replacing or appending)."""
        return attrs.evolve(self, functions=self.functions.set(name, func))

    def without_function(self, name: str) -> "IRModule":
        return attrs.evolve(self, functions=self.functions.without(name))

    def with_attr(self, key: str, value) -> "IRModule":
        return attrs.evolve(self, attrs=self.attrs.set(key, value))
