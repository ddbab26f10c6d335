"""A compute-style builder for PrimFuncs, producing the loop forms TVM's ``te`` lowering prints.

    b = Builder()
    A = b.placeholder((n, 16), "float32", "A")
    k = b.reduce_axis(16, "k")
    C = b.compute("C", (n,), lambda i: sum_(A[i, k] * A[i, k], k))
    func = b.build([A], [C])

Each ``compute`` becomes one loop nest (``T.grid`` over the spatial then the reduction
extents) around one block whose iteration variables are bound one-to-one to the loops
(``T.axis.remap``). Reads are the regions of the body's loads; a reduction gets ``T.init``.
Index arithmetic is int64, like TVM's legalized output.
"""
from __future__ import annotations

import enum
from typing import Callable, Sequence

import attrs

from . import dtype as dt
from .buffer import Buffer, BufferRegion, Range
from .expr import (BufferLoad, IntImm, Max, Min, PrimExpr, Var, const, convert, max_value,
                   min_value)
from .function import PrimFunc, prim_func
from .functor import pre_order_visit
from .stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar, seq

TRUE = IntImm(dt.bool_, 1)


class Combiner(enum.Enum):
    """How a reduction folds values: the update and the identity it starts from."""

    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"

    def identity(self, dtype) -> PrimExpr:
        """The init value TVM prints (0, 1, lowest or highest finite value)."""
        if self is Combiner.SUM:
            return const(0, dtype)
        if self is Combiner.PROD:
            return const(1, dtype)
        if self is Combiner.MAX:
            return min_value(dtype)
        return max_value(dtype)

    def combine(self, acc: PrimExpr, value: PrimExpr) -> PrimExpr:
        """``acc + value``, ``acc * value``, ``T.max(acc, value)`` or ``T.min(acc, value)``."""
        if self is Combiner.SUM:
            return acc + value
        if self is Combiner.PROD:
            return acc * value
        if self is Combiner.MAX:
            return Max(acc, value)
        return Min(acc, value)


@attrs.frozen(eq=False)
class ReduceAxis:
    """A reduction iteration variable: use ``axis.var`` (or the axis itself) in expressions."""

    var: Var
    """The block iteration variable (``v_k``)."""
    extent: PrimExpr
    """Number of iterations."""
    name: str
    """Name of the loop (``k``); the block variable is ``v_<name>``."""


@attrs.frozen
class Reduction:
    """``combiner`` over ``axes`` of ``value``; the body of a reducing :meth:`Builder.compute`."""

    combiner: Combiner
    value: PrimExpr
    axes: tuple = attrs.field(converter=tuple)
    init: "PrimExpr | None" = None
    """Start value; None means the combiner's identity."""


def _axes(axis) -> tuple:
    return tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)


def sum_(value: PrimExpr, axis, init=None) -> Reduction:
    """Sum of ``value`` over one reduction axis or a list of them."""
    return Reduction(Combiner.SUM, value, _axes(axis), init)


def prod(value: PrimExpr, axis, init=None) -> Reduction:
    """Product of ``value`` over the reduction axes."""
    return Reduction(Combiner.PROD, value, _axes(axis), init)


def max_(value: PrimExpr, axis, init=None) -> Reduction:
    """Maximum of ``value`` over the reduction axes (init: the lowest finite value)."""
    return Reduction(Combiner.MAX, value, _axes(axis), init)


def min_(value: PrimExpr, axis, init=None) -> Reduction:
    """Minimum of ``value`` over the reduction axes (init: the highest finite value)."""
    return Reduction(Combiner.MIN, value, _axes(axis), init)


def index(value) -> PrimExpr:
    """An int64 index expression from an int or expression."""
    return convert(value, dt.int64)


def _region(buffer: Buffer, index_lists: list) -> BufferRegion:
    """The region covering every access of ``buffer``: a point where all accesses agree
    on a simple index, the whole dimension where they differ or the index is data-dependent."""
    ranges = []
    for dim, extent in enumerate(buffer.shape):
        first = index_lists[0][dim]
        same = all(ix[dim] == first for ix in index_lists)
        if same and _is_simple(first):
            ranges.append(Range(first, convert(1, first.dtype)))
        else:
            ranges.append(Range(convert(0, extent.dtype), extent))
    return BufferRegion(buffer, tuple(ranges))


def _is_simple(e: PrimExpr) -> bool:
    """True for index expressions TVM keeps as points (no calls, casts, selects, min/max)."""
    from .expr import Call, Cast, Select

    found = []

    def visit(n):
        if isinstance(n, (Call, Cast, Select, Min, Max)):
            found.append(n)
            return False
        return True

    pre_order_visit(e, visit)
    return not found


def access_regions(stmts, exclude=()) -> tuple:
    """Read regions of the loads in ``stmts`` in order of first appearance (outer loads first),
    leaving out buffers in ``exclude`` (the block's outputs)."""
    accesses: dict = {}
    skip = {id(b) for b in exclude}

    def visit(n):
        if isinstance(n, BufferLoad) and id(n.buffer) not in skip:
            accesses.setdefault(id(n.buffer), (n.buffer, []))[1].append(n.indices)
        return True

    for s in stmts:
        if s is not None:
            pre_order_visit(s, visit)
    return tuple(_region(buf, idx) for buf, idx in accesses.values())


class Builder:
    """Collects placeholders, intermediate buffers and loop nests; :meth:`build` makes a PrimFunc."""

    def __init__(self):
        self.stmts: list = []
        """One loop nest per compute, in program order."""
        self.buffers: list = []
        """Buffers created by computes, in creation order (allocated unless outputs)."""
        self._names: dict = {}

    # ------------------------------------------------------------------ names and axes
    def unique(self, name: str) -> str:
        """``name`` the first time, then ``name_1``, ``name_2``... (TVM's block naming)."""
        count = self._names.get(name, 0)
        self._names[name] = count + 1
        return name if count == 0 else f"{name}_{count}"

    @staticmethod
    def placeholder(shape: Sequence, dtype="float32", name: str = "x") -> Buffer:
        """An input buffer."""
        return Buffer(name, tuple(index(s) for s in shape), dt.dtype(dtype))

    @staticmethod
    def reduce_axis(extent, name: str = "k") -> ReduceAxis:
        """A reduction axis over ``range(extent)``."""
        return ReduceAxis(Var(f"v_{name}", dt.int64), index(extent), name)

    def alloc(self, name: str, shape: Sequence, dtype="float32") -> Buffer:
        """A new intermediate (or output) buffer; allocated in the root block unless an output."""
        buf = Buffer(name, tuple(index(s) for s in shape), dt.dtype(dtype))
        self.buffers.append(buf)
        return buf

    # ------------------------------------------------------------------ computes
    def compute(self, name: str, shape: Sequence, fcompute: Callable, dtype=None,
                names: "Sequence[str] | None" = None, annotations=None, out: "Buffer | None" = None) -> Buffer:
        """``out[i...] = fcompute(*i)`` over ``shape``; ``fcompute`` may return a :class:`Reduction`.

        ``names`` are the loop names (default ``i0, i1...``); ``dtype`` defaults to the body's.
        Returns the buffer written (a new one named ``name`` unless ``out`` is given).
        """
        shape = tuple(index(s) for s in shape)
        names = list(names) if names is not None else [f"i{d}" for d in range(len(shape))]
        ivars = [Var(f"v_{n}", dt.int64) for n in names]
        body = fcompute(*ivars)
        reduction = body if isinstance(body, Reduction) else None
        value = reduction.value if reduction else convert(body)
        if out is None:
            out = self.alloc(name, shape, dtype or value.dtype)
        spatial = list(zip(names, ivars, shape))
        if not shape and reduction is None:
            # TVM gives a scalar (0-d) compute one unit iteration variable bound to 0, no loop
            spatial = [(None, Var("vi", dt.int64), index(1))]
        self.emit_block(self.unique(name), spatial, reduction.axes if reduction else (),
                        lambda: _store(out, ivars, value, reduction), annotations)
        return out

    def emit_block(self, name: str, spatial, reduce_axes, make_body: Callable, annotations=None) -> None:
        """Emit a loop nest and block from ``(loop_name, block_var, extent)`` spatial triples and
        reduction axes; ``make_body()`` returns ``(body, init, written_buffers)``."""
        body, init, written = make_body()
        iters, loops, bindings = [], [], []
        for loop_name, var, extent in spatial:
            extent = index(extent)
            iters.append(IterVar(var, Range(convert(0, extent.dtype), extent), IterKind.SPATIAL))
            if loop_name is None:  # a unit axis bound to 0 without a loop
                bindings.append(index(0))
                continue
            loops.append((Var(loop_name, dt.int64), extent))
            bindings.append(loops[-1][0])
        for ax in reduce_axes:
            iters.append(IterVar(ax.var, Range(convert(0, ax.extent.dtype), ax.extent), IterKind.REDUCE))
            loops.append((Var(ax.name, dt.int64), ax.extent))
            bindings.append(loops[-1][0])
        reads = access_regions([init, body], exclude=written)
        writes = tuple(store_regions(body, init))
        block = Block(name, tuple(iters), reads, writes, body, init, annotations=annotations or {})
        stmt = BlockRealize(tuple(bindings), TRUE, block)
        for var, extent in reversed(loops):
            stmt = For(var, convert(0, extent.dtype), extent, ForKind.SERIAL, stmt)
        self.stmts.append(stmt)

    # ------------------------------------------------------------------ the function
    def build(self, inputs: Sequence[Buffer], outputs: Sequence[Buffer], attrs_=None) -> PrimFunc:
        """The PrimFunc over ``inputs + outputs`` (destination-passing), with ``tir.noalias``;
        every other buffer created by this builder is allocated in the root block."""
        outs = {id(b) for b in outputs}
        allocs = [b for b in self.buffers if id(b) not in outs]
        return prim_func(list(inputs) + list(outputs), seq(*self.stmts), allocs, attrs_)


def _store(out: Buffer, ivars, value, reduction: "Reduction | None"):
    indices = tuple(ivars)
    if reduction is None:
        return BufferStore(out, value, indices), None, (out,)
    acc = BufferLoad(out, indices)
    init_value = reduction.init if reduction.init is not None else reduction.combiner.identity(value.dtype)
    init = BufferStore(out, convert(init_value, out.dtype), indices)
    update = BufferStore(out, reduction.combiner.combine(acc, value), indices)
    return update, init, (out,)


def store_regions(*stmts) -> list:
    """Write regions of the stores in ``stmts`` (a block's body and init; None is skipped),
    in order of first appearance."""
    found: dict = {}

    def visit(n):
        if isinstance(n, BufferStore):
            found.setdefault(id(n.buffer), (n.buffer, []))[1].append(n.indices)
        return True

    for s in stmts:
        if s is not None:
            pre_order_visit(s, visit)
    return [_region(buf, idx) for buf, idx in found.values()]
