"""PrimFunc: a low-level function over buffers."""
from __future__ import annotations

import weakref
from typing import Iterator

import attrs

from .buffer import Buffer
from .expr import Var
from .node import EMPTY, Map, Node
from .stmt import Block, BlockRealize, Stmt


_BLOCKS: dict = {}
"""id(PrimFunc) -> (weak reference to it, its blocks): PrimFuncs are immutable."""


@attrs.frozen(cache_hash=True)
class PrimFunc(Node):
    """A TIR function.

    ``params`` are handle or scalar variables; ``buffer_map`` maps a handle parameter to the
    Buffer it is viewed as. By TVM's destination-passing convention the last buffer parameter
    is the output. ``body`` is normally a root BlockRealize whose block holds the allocations.
    """

    params: tuple = attrs.field(converter=tuple)
    buffer_map: Map = attrs.field(converter=Map)
    body: Stmt
    attrs: Map = attrs.field(default=EMPTY, converter=Map)
    """Function attributes (``T.func_attr``), e.g. ``{"tir.noalias": True}``."""

    @property
    def buffers(self) -> tuple:
        """The parameters as Buffers (scalar parameters are left out)."""
        return tuple(self.buffer_map[p] for p in self.params if p in self.buffer_map)

    @property
    def scalar_params(self) -> tuple:
        return tuple(p for p in self.params if p not in self.buffer_map)

    @property
    def root_block(self) -> "Block | None":
        """The root block (``T.block("root")``), if the body has one."""
        if isinstance(self.body, BlockRealize) and self.body.block.name == "root":
            return self.body.block
        return None

    @property
    def name(self) -> "str | None":
        """The ``global_symbol`` attribute, if any."""
        return self.attrs.get("global_symbol")

    def blocks(self) -> Iterator[Block]:
        """Every block except the root, in program order (walked once per function object:
        analyses ask for them many times)."""
        from .functor import post_order_stmts

        key = id(self)
        hit = _BLOCKS.get(key)
        if hit is not None and hit[0]() is self:
            return iter(hit[1])
        found = []

        def visit(node):
            if isinstance(node, Block) and node is not self.root_block:
                found.append(node)

        post_order_stmts(self.body, visit)
        _BLOCKS[key] = (weakref.ref(self, lambda _, k=key: _BLOCKS.pop(k, None)), tuple(found))
        return iter(found)

    def with_attr(self, key: str, value) -> "PrimFunc":
        return attrs.evolve(self, attrs=self.attrs.set(key, value))


def prim_func(buffers: "list[Buffer]", body: Stmt, alloc_buffers=(), func_attrs=None, scalars=()) -> PrimFunc:
    """Make a PrimFunc from parameter buffers and a body (wrapped in a root block)."""
    from .dtype import bool_, handle
    from .expr import IntImm

    params, bmap = [], {}
    for b in buffers:
        v = b.data if b.data is not None else Var(b.name, handle)
        params.append(v)
        bmap[v] = b
    params.extend(scalars)
    root = Block("root", (), (), (), body, alloc_buffers=tuple(alloc_buffers))
    realize = BlockRealize((), IntImm(bool_, 1), root)
    fa = {"tir.noalias": True} if func_attrs is None else func_attrs
    return PrimFunc(tuple(params), Map(bmap), realize, Map(fa))

