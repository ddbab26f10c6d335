"""Re-indexing the blocks that write a re-laid-out buffer (used by ``transform_layout``).

A block that stores ``buf[v0, ..., vn]`` with distinct spatial iteration variables gets new
spatial variables ``u0..uk`` over the mapped shape, bound to ``index_map(v-bindings)``; the
old variables become ``inverse(u)`` in its body. If the block is the innermost statement of
a perfect loop nest whose loops bind exactly those variables, the loops are rebuilt over the
new shape and the bindings become plain loop variables.
"""
from __future__ import annotations

import attrs

from tir.buffer import Buffer, Range
from tir.expr import Var, as_int, convert
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar

from .index_map import IndexMap
from .simplify import simplify_indices


def _stores_to(block: Block, buf: Buffer) -> list:
    found = []

    def visit(n):
        if isinstance(n, BufferStore) and n.buffer is buf:
            found.append(n)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return found


def _store_vars(block: Block, buf: Buffer) -> "list[Var] | None":
    """The spatial iteration variables indexing every store to ``buf``, in order, or None."""
    if not any(w.buffer is buf for w in block.writes):
        return None
    stores = _stores_to(block, buf)
    if not stores:
        return None
    idx = stores[0].indices
    spatial = {id(iv.var) for iv in block.iter_vars if iv.kind == IterKind.SPATIAL}
    if len({id(i) for i in idx}) != len(idx) or not all(isinstance(i, Var) and id(i) in spatial for i in idx):
        return None
    if any(len(s.indices) != len(idx) or any(a is not b for a, b in zip(s.indices, idx)) for s in stores[1:]):
        return None
    return list(idx)


def _new_vars(block: Block, count: int, dtype) -> tuple:
    taken = {iv.var.name for iv in block.iter_vars if iv.kind != IterKind.SPATIAL}
    names = []
    for j in range(count):
        name = f"v_ax{j}"
        while name in taken:
            name += "_"
        names.append(name)
    return tuple(Var(n, dtype) for n in names)


def _reindex_block(realize: BlockRealize, buf: Buffer, index_map: IndexMap, new_shape, bounds):
    """(new realize, loop vars that bound the old variables) or None when not re-indexable."""
    block = realize.block
    olds = _store_vars(block, buf)
    if olds is None:
        return None
    pos = {id(iv.var): k for k, iv in enumerate(block.iter_vars)}
    values = [realize.iter_values[pos[id(v)]] for v in olds]
    us = _new_vars(block, index_map.ndim_out, olds[0].dtype)
    u_bounds = dict(bounds)
    u_bounds.update({u: (0, as_int(s) - 1) for u, s in zip(us, new_shape) if as_int(s) is not None})
    inv = index_map.inverse([as_int(s) for s in buf.shape] if all(as_int(s) is not None for s in buf.shape) else None)
    old_of_u = inv.apply(us, u_bounds)
    sub = {v: e for v, e in zip(olds, old_of_u)}
    new_ivs = tuple(IterVar(u, Range(convert(0, s.dtype), s), IterKind.SPATIAL) for u, s in zip(us, new_shape))
    new_vals = index_map.apply(values, bounds)
    ivs, vals, placed = [], [], False
    for iv, val in zip(block.iter_vars, realize.iter_values):
        if any(iv.var is v for v in olds):
            if not placed:
                ivs.extend(new_ivs)
                vals.extend(new_vals)
                placed = True
            continue
        ivs.append(iv)
        vals.append(val)
    body_fields = {k: substitute(getattr(block, k), sub) for k in ("body", "init")
                   if getattr(block, k) is not None}
    for k in ("reads", "writes"):
        body_fields[k] = tuple(substitute(r, sub) for r in getattr(block, k))
    new_block = simplify_indices(attrs.evolve(block, iter_vars=tuple(ivs), **body_fields), u_bounds)
    loop_vars = values if all(isinstance(v, Var) for v in values) else None
    return attrs.evolve(realize, iter_values=tuple(vals), block=new_block), loop_vars, us, inv


def _chain(loop: For) -> "tuple[list, object]":
    loops = [loop]
    while isinstance(loops[-1].body, For):
        loops.append(loops[-1].body)
    return loops, loops[-1].body


def _only_in(var: Var, realize: BlockRealize, used_ids: set) -> bool:
    """``var`` appears in the realize's bindings only at the positions in ``used_ids``."""
    hits = []
    for k, val in enumerate(realize.iter_values):
        if k in used_ids:
            continue
        post_order_visit(val, lambda n: hits.append(n) if n is var else None)
    return not hits


def _rebuild_nest(loops: list, result, new_shape):
    """The loop nest over the new shape, or None when the old one cannot be replaced."""
    realize, loop_vars, us, inv = result
    if loop_vars is None or len({id(v) for v in loop_vars}) != len(loop_vars):
        return None
    by_var = {id(l.loop_var): l for l in loops}
    if any(id(v) not in by_var or as_int(by_var[id(v)].min) != 0 for v in loop_vars):
        return None
    u_pos = {k for k, iv in enumerate(realize.block.iter_vars) if any(iv.var is u for u in us)}
    if not all(_only_in(v, realize, u_pos) for v in loop_vars):
        return None
    extents_used = []
    for l in loops:
        post_order_visit(l.extent, lambda n: extents_used.append(n))
    if any(n is v for n in extents_used for v in loop_vars):
        return None
    ms = tuple(Var(f"ax{j}", loop_vars[0].dtype) for j in range(len(us)))
    vals = list(realize.iter_values)
    for k, j in zip(sorted(u_pos), range(len(us))):
        vals[k] = ms[j]
    pred = substitute(realize.predicate, {v: e for v, e in zip(loop_vars, inv.apply(ms))})
    body = attrs.evolve(realize, iter_values=tuple(vals), predicate=pred)
    removed = {id(v) for v in loop_vars}
    first = min(k for k, l in enumerate(loops) if id(l.loop_var) in removed)
    kept = [l for l in loops if id(l.loop_var) not in removed]
    new_loops = [For(m, convert(0, s.dtype), s, ForKind.SERIAL, None) for m, s in zip(ms, new_shape)]
    order = kept[:first] + new_loops + kept[first:]
    for l in reversed(order):
        body = attrs.evolve(l, body=body)
    return body


def reindex_writer_blocks(func: PrimFunc, buf: Buffer, index_map: IndexMap, new_shape) -> PrimFunc:
    """``func`` with the blocks writing ``buf`` iterating the mapped shape (accesses to
    ``buf`` itself are left for the caller to map)."""
    from .transform import var_bounds

    bounds = var_bounds(func.body)

    def pre(n):
        if not isinstance(n, For):
            return None
        loops, inner = _chain(n)
        if not isinstance(inner, BlockRealize):
            return None
        result = _reindex_block(inner, buf, index_map, new_shape, bounds)
        if result is None:
            return None
        rebuilt = _rebuild_nest(loops, result, new_shape)
        if rebuilt is not None:
            return rebuilt
        body = result[0]
        for l in reversed(loops):
            body = attrs.evolve(l, body=body)
        return body

    def post(n):
        if isinstance(n, BlockRealize):
            result = _reindex_block(n, buf, index_map, new_shape, bounds)
            return None if result is None else result[0]
        return None

    return transform(func, post, pre)
