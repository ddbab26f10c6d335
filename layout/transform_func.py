"""Generating graph-level ``layout_transform`` PrimFuncs."""
from __future__ import annotations

from tir import dtype as dt
from tir.buffer import BufferRegion, Range, decl_buffer
from tir.expr import Var, as_int, convert, if_then_else
from tir.function import prim_func
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar

from .index_map import IndexMap
from .layout import LayoutError
from .transform import mapped_shape


def layout_transform_func(src_shape, dtype, index_map: IndexMap, name: str = "layout_transform",
                          pad_value=0):
    """A PrimFunc ``(src, dst)`` with ``dst[index_map(i)] = src[i]`` for every ``i``.

    It iterates the destination (``dst[u] = src[inverse(u)]``), so every destination element
    is written once; destination elements with no source (padding of a non-divisible split)
    get ``pad_value``.
    """
    dtype = dt.dtype(dtype)
    src = decl_buffer(tuple(src_shape), dtype, "src")
    dst_shape = mapped_shape(index_map, src.shape)
    dst = decl_buffer(dst_shape, dtype, "dst")
    ints = [as_int(s) for s in src.shape]
    known = all(i is not None for i in ints)
    inv = index_map.inverse(ints if known else None)
    loops = tuple(Var(f"ax{j}", dt.int64) for j in range(len(dst_shape)))
    us = tuple(Var(f"v_ax{j}", dt.int64) for j in range(len(dst_shape)))
    bounds = {u: (0, as_int(s) - 1) for u, s in zip(us, dst_shape) if as_int(s) is not None}
    src_idx = inv.apply(us, bounds)
    value = src[tuple(src_idx)]
    pred = index_map.pad_predicate(ints, us) if known else None
    if pred is not None:
        value = if_then_else(pred, convert(pad_value, dtype), value)
    store = BufferStore(dst, value, us)
    # a transform that only reorders axes is a transpose: tagged as TVM tags one (Relax's
    # ConvertLayout inserts permute_dims there), so opinfo names it permute_dims; others keep
    # TVM's layout_transform tag
    permutes = pred is None and len(src_idx) == len(us) and all(isinstance(i, Var) for i in src_idx) \
        and len(set(src_idx)) == len(us)
    block = Block(
        "T_transpose" if permutes else "T_layout_trans",
        tuple(IterVar(u, Range(convert(0, s.dtype), s), IterKind.SPATIAL) for u, s in zip(us, dst_shape)),
        (BufferRegion(src, tuple(Range(i, convert(1, dt.int64)) for i in src_idx)),) if pred is None
        else (BufferRegion.full(src),),
        (BufferRegion.point(dst, us),),
        store,
    )
    body = BlockRealize(loops, convert(True, dt.bool_), block)
    for v, s in reversed(list(zip(loops, dst_shape))):
        body = For(v, convert(0, s.dtype), s, ForKind.SERIAL, body)
    func = prim_func([src, dst], body)
    return func.with_attr("global_symbol", name)


def layout_transform_between(src_shape, dtype, src_layout, dst_layout, name: str = "layout_transform"):
    """The ``layout_transform`` PrimFunc from ``src_layout`` to ``dst_layout`` (strings or Layouts)."""
    from .layout import Layout

    src_layout, dst_layout = Layout.parse(src_layout), Layout.parse(dst_layout)
    if len(src_shape) != src_layout.ndim:
        raise LayoutError(f"shape {tuple(src_shape)} does not have the {src_layout.ndim} axes of {src_layout}")
    return layout_transform_func(src_shape, dtype, src_layout.index_map_to(dst_layout), name)
