"""Buffer declarations (``T.Buffer``, ``T.alloc_buffer``, ``T.match_buffer``) and regions."""
from __future__ import annotations

import ast

from .. import dtype as dt
from ..buffer import Buffer, BufferRegion, Range
from ..expr import IntImm, PrimExpr
from .context import describe, error
from .expr import dim_text, expr, index_nodes, prim, span, to_prim
from .tir_calls import dtype_arg

_IGNORED = ("align", "offset_factor", "annotations")
"""Alignment and allocation hints TVM prints on some buffers (``annotations`` of an
allocation after TVM's planning passes: ``buffer_data_alignment``, ``buffer_allocated_addr``);
they do not change any value, so the mini TIR does not keep them."""
_KNOWN = ("dtype", "strides", "elem_offset", "scope") + _IGNORED


def shape_arg(ctx, node) -> tuple:
    """A shape: a tuple/list of extents or one extent (literals become int64)."""
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return tuple(_extent(ctx, e) for e in elts)


def _extent(ctx, node) -> PrimExpr:
    """One extent; a string is an expression TVM quoted (``"n + T.int64(8)"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return to_prim(dim_text(ctx, node), node, dt.int64)
    return prim(ctx, node, dt.int64)


def buffer_from_call(ctx, node, name: str, args: list, data=None) -> Buffer:
    """A Buffer from ``(shape, dtype="float32", strides=..., elem_offset=..., scope=...)``."""
    what = describe(node.func if isinstance(node, ast.Call) else node.value)  # T.Buffer(...) or T.Buffer[...]
    if not args:
        raise error(node, f"{what} needs a shape")
    if len(args) > 2:
        raise error(args[2], f"{what}: too many positional arguments; expected (shape, dtype)")
    kw = {}
    for k in getattr(node, "keywords", ()):
        if k.arg not in _KNOWN:
            raise error(k, f"{what}: unexpected keyword argument {k.arg!r} (allowed: {', '.join(_KNOWN)})")
        kw[k.arg] = k.value
    shape = shape_arg(ctx, args[0])
    d_node = args[1] if len(args) > 1 else kw.get("dtype")
    d = dt.float32 if d_node is None else dtype_arg(ctx, d_node)
    strides = shape_arg(ctx, kw["strides"]) if "strides" in kw else ()
    if strides and len(strides) != len(shape):
        if len(strides) != 1 or not (isinstance(strides[0], IntImm) and strides[0].value == 1):
            raise error(kw["strides"], f"{what}: {len(strides)} strides for a rank-{len(shape)} buffer")
        # TVM 0.27's cache_index prints its index buffers with the flattened buffer's one unit
        # stride whatever their rank (a scalar's too): the buffer is compact; its accesses are
        # multi-dimensional
        strides = ()
    offset = prim(ctx, kw["elem_offset"], dt.int64) if "elem_offset" in kw else None
    scope = _scope(ctx, kw.get("scope"))
    return Buffer(name, shape, d, strides, offset, scope, data)


def _scope(ctx, node) -> str:
    if node is None:
        return "global"
    value = expr(ctx, node)
    if not isinstance(value, str):
        raise error(node, "scope must be a string such as \"shared\"")
    return value


def region(ctx, node, summary: bool = False) -> BufferRegion:
    """``A[0:4, i]`` (ranges and points) or a whole buffer ``A``; ``summary``: a block's
    ``T.reads``/``T.writes`` entry."""
    if isinstance(node, ast.Name):
        buf = ctx.lookup(node.id, node)
        if isinstance(buf, Buffer):
            return BufferRegion.full(buf)
    if not isinstance(node, ast.Subscript):
        raise error(node, f"expected a buffer region such as A[i, 0:4], got {describe(node)!r}")
    buf = expr(ctx, node.value)
    if not isinstance(buf, Buffer):
        raise error(node.value, f"{describe(node.value)!r} is not a buffer")
    nodes = index_nodes(node.slice)
    if len(nodes) != len(buf.shape) and summary:
        # TVM 0.27's loop_partition prints some blocks' regions with another buffer's rank
        # (the region of the block's first read): a region only summarises the body's
        # accesses, so the whole buffer stands for it
        return BufferRegion.full(buf)
    if len(nodes) != len(buf.shape):
        raise error(node, f"buffer {buf.name!r} has rank {len(buf.shape)}, region has {len(nodes)} dimensions")
    return BufferRegion(buf, tuple(_range(ctx, n, dim) for n, dim in zip(nodes, buf.shape)))


def _range(ctx, node, dim: PrimExpr) -> Range:
    if not isinstance(node, ast.Slice):
        i = prim(ctx, node)
        return Range(i, IntImm(i.dtype, 1) if not i.dtype.is_bool else IntImm(dt.int32, 1))
    if node.step is not None:
        raise error(node, "a region slice cannot have a step")
    lo = prim(ctx, node.lower, dim.dtype) if node.lower is not None else IntImm(dim.dtype, 0)
    hi = prim(ctx, node.upper, lo.dtype) if node.upper is not None else dim
    return Range(lo, span(lo, hi))


def regions(ctx, args: list) -> tuple:
    """The regions of ``T.reads(a, b)`` or the older ``T.reads([a, b])``."""
    out = []
    for a in args:
        if isinstance(a, (ast.List, ast.Tuple)):
            out.extend(region(ctx, e, True) for e in a.elts)
        else:
            out.append(region(ctx, a, True))
    return tuple(out)
