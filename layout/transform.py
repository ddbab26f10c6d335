"""``transform_layout``: re-lay-out one buffer of a PrimFunc through an IndexMap.

The buffer gets the mapped shape and every access to it (loads, stores, read/write
regions) goes through the map. Each block that writes the buffer is re-indexed so that it
iterates the new shape: its spatial iteration variables become ``u0..uk`` with the store
``buf[u0, ..., uk]``, and the old variables are re-expressed through the inverse map
(``c = u1 * 4 + u4``). When the block sits under a perfect loop nest that only binds those
variables, the loops are rebuilt over the new shape too, so the result reads like TVM's
``transform_layout`` output. The rewrite is a relabelling of memory, so it preserves the
function's meaning whatever the op is.

Assumptions: constant buffer extents for dimensions that are split or fused (symbolic ones,
such as a dynamic batch, may only be moved); maps with no padding (non-divisible splits are
refused with a LayoutError).
"""
from __future__ import annotations

import attrs

from tir import dtype as dt
from tir.buffer import Buffer, BufferRegion, Range
from tir.expr import BufferLoad, Var, as_int, convert
from tir.function import PrimFunc
from tir.functor import post_order_visit, transform
from tir.stmt import BufferStore, For, IterVar

from .index_map import IndexMap
from .layout import LayoutError
from .reindex import reindex_writer_blocks


def find_buffer(func: PrimFunc, buffer) -> Buffer:
    """The Buffer of ``func`` named by a Buffer, a name or a parameter index."""
    if isinstance(buffer, Buffer):
        return buffer
    if isinstance(buffer, int):
        bufs = func.buffers
        if not -len(bufs) <= buffer < len(bufs):
            raise LayoutError(f"function has {len(bufs)} buffer parameters, no parameter {buffer}")
        return bufs[buffer]
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Buffer) and n.name == buffer else None)
    found.extend(b for b in func.buffers if b.name == buffer)
    if not found:
        raise LayoutError(f"function {func.name or '<anonymous>'} has no buffer named {buffer!r}")
    return found[0]


def mapped_shape(index_map: IndexMap, shape: tuple) -> tuple:
    """The buffer shape after the map; symbolic extents may only be moved, not split."""
    out = []
    for e in index_map.final:
        if isinstance(e, Var) and any(e is v for v in index_map.initial):
            out.append(shape[[id(v) for v in index_map.initial].index(id(e))])
            continue
        used = [_uses(e, v) for v in index_map.initial]
        if any(u and as_int(s) is None for u, s in zip(used, shape)):
            raise LayoutError(f"cannot split or fuse a symbolic extent ({shape})")
        out.append(convert(index_map.map_shape(_constant_shape(shape))[len(out)], dt.int64))
    return tuple(out)


def _constant_shape(shape) -> list:
    """``shape`` with symbolic extents read as 1 (for the dimensions a map only moves)."""
    return [as_int(s) if as_int(s) is not None else 1 for s in shape]


def var_bounds(node) -> dict:
    """Inclusive ranges of every loop and block iteration variable with constant extent."""
    bounds = {}

    def visit(n):
        if isinstance(n, For) and as_int(n.min) is not None and as_int(n.extent) is not None:
            bounds[n.loop_var] = (as_int(n.min), as_int(n.min) + as_int(n.extent) - 1)
        if isinstance(n, IterVar) and as_int(n.dom.min) is not None and as_int(n.dom.extent) is not None:
            bounds[n.var] = (as_int(n.dom.min), as_int(n.dom.min) + as_int(n.dom.extent) - 1)

    post_order_visit(node, visit)
    return bounds


def _map_region(index_map: IndexMap, region: tuple, new_shape: tuple, bounds: dict) -> tuple:
    """The region of the mapped buffer covering ``region`` (exact for points and
    permutations, the whole dimension otherwise)."""
    mins = index_map.apply([r.min for r in region], bounds)
    out = []
    for k, e in enumerate(index_map.final):
        used = [i for i, v in enumerate(index_map.initial) if _uses(e, v)]
        if isinstance(e, Var) and len(used) == 1:
            out.append(region[used[0]])
        elif all(as_int(region[i].extent) == 1 for i in used):
            out.append(Range(mins[k], convert(1, mins[k].dtype)))
        else:
            out.append(Range(convert(0, new_shape[k].dtype), new_shape[k]))
    return tuple(out)


def _uses(expr, var) -> bool:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if n is var else None)
    return bool(found)


def _rewrite_accesses(func: PrimFunc, old: Buffer, new: Buffer, index_map: IndexMap) -> PrimFunc:
    bounds = var_bounds(func.body)

    def pre(n):
        if n is old:
            return new
        if isinstance(n, BufferLoad) and n.buffer is old:
            return BufferLoad(new, index_map.apply([rewrite(i) for i in n.indices], bounds))
        if isinstance(n, BufferStore) and n.buffer is old:
            idx = index_map.apply([rewrite(i) for i in n.indices], bounds)
            return BufferStore(new, rewrite(n.value), idx)
        if isinstance(n, BufferRegion) and n.buffer is old:
            region = tuple(Range(rewrite(r.min), rewrite(r.extent)) for r in n.region)
            return BufferRegion(new, _map_region(index_map, region, new.shape, bounds))
        return None

    def rewrite(n):
        return transform(n, lambda m: None, pre)

    return rewrite(func)


def transform_layout(func: PrimFunc, buffer, index_map: IndexMap, reindex: bool = True) -> PrimFunc:
    """``func`` with ``buffer`` (a Buffer, its name or a parameter index) laid out by ``index_map``.

    With ``reindex`` the blocks writing the buffer iterate the new shape (see the module
    docstring). Raises LayoutError for a map that needs padding or does not fit the buffer.
    """
    old = find_buffer(func, buffer)
    if index_map.ndim_in != len(old.shape):
        raise LayoutError(f"buffer {old.name} has {len(old.shape)} dimensions, "
                          f"the index map takes {index_map.ndim_in}")
    new_shape = mapped_shape(index_map, old.shape)
    ints = _constant_shape(old.shape)
    if index_map.padding(ints) != 0:
        raise LayoutError(f"mapping buffer {old.name} of shape {tuple(ints)} needs padding "
                          f"(new shape {tuple(as_int(s) for s in new_shape)})")
    if old.strides or old.elem_offset is not None:
        raise LayoutError(f"buffer {old.name} has explicit strides or offset; cannot re-lay it out")
    new = attrs.evolve(old, shape=new_shape)
    if reindex:
        func = reindex_writer_blocks(func, old, index_map, new_shape)
    return _rewrite_accesses(func, old, new, index_map)
