"""What recognizers share: the match result, the output index space, leaf helpers."""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.functor import pre_order_visit

from ..affine import const_of
from ..semantic import ArgReduce, Inlined, Reduce


@attrs.frozen
class Match:
    """A recognized op at the root of an expression.

    ``inputs`` are the op's operands as (role, expression); an operand that is not a
    parameter load is itself decomposed into producer ops. ``assumed`` names the
    attributes the loops do not decide, filled in by a framework convention (see
    :attr:`opinfo.info.OpInfo.assumed`).
    """

    name: str
    attrs: dict
    inputs: tuple = ()
    assumed: tuple = ()
    unconventional: tuple = ()
    """Attributes the loops leave open that a network's importer passes through as the
    network wrote them (see :attr:`opinfo.info.OpInfo.unconventional`)."""
    constants: tuple = ()
    """``(role, value)`` of a scalar operand folded into the loops (see
    :attr:`opinfo.info.OpInfo.constants`)."""


@attrs.frozen
class Space:
    """The index space an expression is evaluated in: its result tensor's indices."""

    indices: tuple
    """One index expression per result dimension (usually block variables)."""
    extents: tuple
    """Extent of each result dimension."""
    dom: dict = attrs.field(factory=dict, eq=False)
    """Var -> extent for every block / reduction variable in scope."""

    @property
    def rank(self) -> int:
        return len(self.indices)


def strip(e: PrimExpr) -> PrimExpr:
    """See through Inlined markers."""
    while isinstance(e, Inlined):
        e = e.value
    return e


def is_param_load(e, ctx) -> bool:
    return isinstance(e, BufferLoad) and ctx.is_param(e.buffer)


def loads_in(e) -> list:
    """The loads ``e`` reads: parameter loads, and intermediates as a whole (an Inlined
    stands for its buffer read at its indices), not looking into reductions."""
    found = []

    def visit(n):
        if isinstance(n, (BufferLoad, Inlined)):
            found.append(n)
            return False
        return not isinstance(n, (Reduce, ArgReduce))

    pre_order_visit(e, visit)
    return found


def has_reduce(e) -> bool:
    found = []
    pre_order_visit(e, lambda n: found.append(n) if isinstance(n, (Reduce, ArgReduce)) else True)
    return bool(found)


def is_unit(extent) -> bool:
    return const_of(extent) == 1


def aligned(load: BufferLoad, space: Space) -> bool:
    """numpy-style broadcasting: the load's indices are the trailing result indices, with
    unit dimensions read at 0."""
    r, R = len(load.indices), space.rank
    if r > R:
        return False
    for d, idx in enumerate(load.indices):
        o = space.indices[R - r + d]
        if idx is o and isinstance(o, Var):
            continue
        if is_unit(load.buffer.shape[d]) and const_of(idx) == 0:
            continue
        if const_of(idx) == 0 and const_of(o) == 0:
            continue
        return False
    return True


def int_list(values) -> "list | None":
    out = [const_of(v) for v in values]
    return None if any(v is None for v in out) else out


def shape_of(buf) -> list:
    """Buffer shape as ints, with symbolic extents kept as their text."""
    out = []
    for s in buf.shape:
        c = const_of(s)
        out.append(c if c is not None else getattr(s, "name", str(s)))
    return out


def const_index(e) -> bool:
    return isinstance(e, IntImm) or const_of(e) is not None


def stages_storing(expr, ctx) -> list:
    """The stages whose block stores ``expr``: an intermediate's producer, or the output
    stage whose meaning ``expr`` is (where recognizers named by a block's compute tag find
    that block)."""
    sem = ctx.sem
    if isinstance(expr, Inlined):
        return sem.producers.get(id(expr.buffer), [])
    return [s for s in sem.outputs() if sem.meaning(s) == expr]
