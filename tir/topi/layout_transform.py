"""``layout_transform``: one ``te_layout_transform`` block reading the source element of each
destination element, from a pair of layout strings (``"NCHW"`` -> ``"NCHW4c"``) or from an
index map with its inverse. Padding (a split that does not divide) reads ``pad_value``."""
from __future__ import annotations

from typing import Callable

from ..buffer import Buffer
from ..builder import Builder
from ..expr import LT, FloorDiv, FloorMod, as_int, const, if_then_else, logical_and
from .common import OpError, add, index, mul, static
from .layouts import parse_layout

OP = "layout_transform"


def _primal_extents(x: Buffer, src) -> dict:
    extents = {}
    for (axis, factor), e in zip(src, x.shape):
        if axis.isupper():
            extents[axis] = e
    for (axis, factor), e in zip(src, x.shape):
        if axis.islower():
            extents[axis.upper()] = mul(extents[axis.upper()], factor)
    return extents


def from_layouts(b: Builder, x: Buffer, src_layout: str, dst_layout: str, pad_value=0.0) -> Buffer:
    """Re-lay ``x`` from ``src_layout`` to ``dst_layout`` (same primal axes, any splits)."""
    src = parse_layout(src_layout, OP, "src_layout")
    dst = parse_layout(dst_layout, OP, "dst_layout")
    if len(src) != x.ndim:
        raise OpError(OP, "src_layout", f"{src_layout!r} has {len(src)} axes, the input has rank {x.ndim}")
    if sorted(a for a, _ in src if a.isupper()) != sorted(a for a, _ in dst if a.isupper()):
        raise OpError(OP, "dst_layout", f"{dst_layout!r} does not hold the axes of {src_layout!r}")
    full = _primal_extents(x, src)
    sub = {a.upper(): f for a, f in dst if a.islower()}
    shape = []
    for axis, factor in dst:
        if axis.islower():
            shape.append(index(factor))
        elif axis in sub:
            n = static(full[axis], OP, f"extent of {axis}")
            shape.append(index(-(-n // sub[axis])))
        else:
            shape.append(full[axis])
    padded = [a for a, f in sub.items() if static(full[a], OP, a) % f]

    def body(*o):
        pos = dict(zip([a for a, _ in dst], o))
        value = {a: add(mul(pos[a], sub[a]), pos[a.lower()]) if a in sub else pos[a] for a in full}
        src_sub = {a.upper(): f for a, f in src if a.islower()}
        idx = []
        for axis, factor in src:
            if axis.islower():
                idx.append(FloorMod(value[axis.upper()], index(factor)))
            elif axis in src_sub:
                idx.append(FloorDiv(value[axis], index(src_sub[axis])))
            else:
                idx.append(value[axis])
        load = x[tuple(idx)]
        if not padded:
            return load
        inside = logical_and(*[LT(value[a], full[a]) for a in padded])
        return if_then_else(inside, load, const(pad_value, x.dtype))

    return b.compute("te_layout_transform", shape, body, names=[f"ax{d}" for d in range(len(dst))])


def from_index_map(b: Builder, x: Buffer, index_map: Callable, inverse: Callable) -> Buffer:
    """Re-lay ``x`` by ``index_map`` (source index -> destination index); ``inverse`` maps back.

    The destination shape is ``index_map(extent - 1...) + 1``, so the map must be monotone
    (splits, fusions and permutations are).
    """
    last = index_map(*[index(static(e, OP, "data") - 1) for e in x.shape])
    shape = []
    for e in last:
        v = as_int(_fold(e))
        if v is None:
            raise OpError(OP, "index_map", "the destination extents must be constants")
        shape.append(index(v + 1))
    return b.compute("te_layout_transform", shape, lambda *o: x[tuple(inverse(*o))],
                     names=[f"ax{d}" for d in range(len(shape))])


def _fold(e):
    """Evaluate a constant integer expression."""
    from ..expr import Add, FloorDiv as FD, FloorMod as FM, IntImm, Mul, Sub

    if isinstance(e, int):
        return index(e)
    if isinstance(e, IntImm):
        return e
    ops = {Add: lambda a, c: a + c, Sub: lambda a, c: a - c, Mul: lambda a, c: a * c,
           FD: lambda a, c: a // c, FM: lambda a, c: a % c}
    fn = ops.get(type(e))
    if fn is None:
        return e
    a, c = as_int(_fold(e.a)), as_int(_fold(e.b))
    return index(fn(a, c)) if a is not None and c is not None else e
