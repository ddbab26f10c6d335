"""Running a loop nest around one block as a whole grid of iterations with numpy.

A perfect nest ``for l1 .. for lk: block`` is evaluated at once: each loop variable becomes an
``arange`` along its own axis of a k-dimensional grid, and every expression broadcasts over
the axes it depends on. Three ways, chosen from the block's form:

* data-parallel (no reduction variables): the body runs once over the grid;
* combine reduction (each store is ``C[s] = C[s] op f`` with ``op`` in +, *, max, min and
  ``f`` free of the written buffers): the init runs over the spatial grid, ``f`` is reduced
  along the reduction axes (``einsum`` for sums of products), then combined with ``C[s]``;
  a ``T.where`` over the reduction loops (a split that does not divide them) masks steps
  to the combine's identity, as long as every lane that runs at all runs its first step;
* ordered reduction (anything else, e.g. argmax): the reduction loops run one step at a time
  in loop order, each step vectorised over the spatial grid.

A nest none of these fit (loop-carried dependencies, reads of written buffers elsewhere
than the written element, nested loops or allocations in the block) is left to the scalar
walk: ``run_nest`` then returns False.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import expr as E
from . import stmt as S
from .interp_expr import Ctx, evaluate
from .interp_reduce import plan_combine, reduce_stores
from .interp_stmt import at_init_point, run_stmt, scalar_int, take_steps
from .loop_nest import (Nest, collect_nest, free_vars, per_loop, predicate_reduces, reads_only_own_elements,
                        stores_and_loads)
from .nest_instances import instances_distinct


class _Facts:
    """What the runs of a nest ask of its block's text: whether every read of a written
    buffer is at a stored index tuple, whether the body reads a buffer it writes, and the
    body's stores."""

    def __init__(self, block: S.Block):
        self.own_elements = reads_only_own_elements(block)
        stores, loads = stores_and_loads(block.body)
        written = {st.buffer for st in stores}
        self.self_reads = any(ld.buffer in written for ld in loads)
        self.stores = stores


class _Distinct:
    """:func:`.nest_instances.instances_distinct` of a nest whose bounds or bindings use
    variables from outside it, remembered per value of those variables."""

    def __init__(self, nest: Nest):
        own = {l.loop_var for l in nest.loops}
        used = set()
        exprs = [l.min for l in nest.loops] + [l.extent for l in nest.loops] + list(nest.realize.iter_values)
        for e in exprs:
            used |= free_vars(e)
        self.nest, self.outer, self.seen = nest, sorted(used - own, key=lambda v: v.name), {}
        # bounds read from data (roi_align's bins) change from run to run
        self.cached = not any(stores_and_loads(e)[1] for e in exprs)

    def holds(self, ctx: Ctx) -> bool:
        values = [ctx.vars.get(v) for v in self.outer]
        if not self.cached or any(v is None or np.ndim(v) for v in values) or len(self.seen) > 64:
            return instances_distinct(self.nest, ctx)
        key = tuple(int(v) for v in values)
        if key not in self.seen:
            self.seen[key] = instances_distinct(self.nest, ctx)
        return self.seen[key]


@per_loop
def _plan(loop: S.For) -> tuple:
    """(nest, combines, facts, instances proven distinct): worked out once per loop (a nest inside an outer loop the grid
    does not cover, a region's bins read at run time, rfactor's partial block under its
    blockized outer block, is entered once per outer iteration)."""
    nest = collect_nest(loop)
    combines = facts = None
    distinct = False
    block = nest.realize.block if nest is not None else None
    if block is not None:
        facts = _Facts(block)
        if block.init is not None or any(iv.kind == S.IterKind.REDUCE for iv in block.iter_vars):
            stores = reduce_stores(block)
            combines = plan_combine(nest, stores) if stores is not None else None
            distinct = instances_distinct(nest) or _Distinct(nest)  # from the text alone, else per entry
    return nest, combines, facts, distinct


def run_nest(loop: S.For, ctx: Ctx) -> bool:
    """Run the nest under ``loop`` as a grid if it can be; False leaves it to the scalar walk."""
    nest, combines, facts, distinct = _plan(loop)
    if nest is None:
        return False
    block = nest.realize.block
    has_reduce = any(iv.kind == S.IterKind.REDUCE for iv in block.iter_vars)
    if not has_reduce and block.init is None:
        return _guarded(nest, ctx, lambda n, c: _run_parallel(n, c, facts))
    if distinct is not True and not distinct.holds(ctx):
        return False  # walked: an instance met again at its init point starts again
    if combines is not None and _guarded(nest, ctx, lambda n, c: _run_combine(n, c, combines)):
        return True
    if facts.own_elements:
        return _guarded(nest, ctx, _run_ordered)
    return False


def _guarded(nest, ctx, fn) -> bool:
    outer = ctx.where
    ctx.where = f"block {nest.realize.block.name!r}"
    bound = [l.loop_var for l in nest.loops] + [iv.var for iv in nest.realize.block.iter_vars]
    try:
        return fn(nest, ctx) is not False
    finally:
        for v in bound:
            ctx.vars.pop(v, None)
        ctx.where = outer


def bind_grid(nest: Nest, ctx: Ctx, skip_axes=()) -> tuple:
    """Bind each loop variable to an arange along its axis; returns the grid shape."""
    k = len(nest.loops)
    shape = []
    for axis, loop in enumerate(nest.loops):
        lo = scalar_int(loop.min, ctx, "loop start")
        extent = max(scalar_int(loop.extent, ctx, "loop extent"), 0)  # a negative extent runs 0 times
        shape.append(extent)
        if axis in skip_axes:
            continue
        dims = [1] * k
        dims[axis] = extent
        vtype = np.dtype(loop.loop_var.dtype.numpy)
        ctx.vars[loop.loop_var] = np.arange(lo, lo + extent, dtype=vtype).reshape(dims)
    return tuple(shape)


def bind_iter_vars(nest: Nest, ctx: Ctx, kinds) -> None:
    """Bind the block's iteration variables of the given kinds to their (broadcast) values."""
    for iv, value in zip(nest.realize.block.iter_vars, nest.realize.iter_values):
        if iv.kind in kinds:
            ctx.vars[iv.var] = evaluate(value, ctx)


def predicate_mask(nest: Nest, ctx: Ctx):
    """The block predicate as a mask; None when it is always true."""
    p = nest.realize.predicate
    if isinstance(p, E.IntImm):
        return None if p.value else False
    return evaluate(p, ctx)


def _run_parallel(nest: Nest, ctx: Ctx, facts: _Facts):
    block = nest.realize.block
    if not facts.own_elements:
        return False
    if 0 in bind_grid(nest, ctx):
        return True
    bind_iter_vars(nest, ctx, (S.IterKind.SPATIAL,))
    mask = predicate_mask(nest, ctx)
    if mask is False or (mask is not None and not np.any(mask)):
        return True
    if facts.self_reads and not _stores_injective(facts.stores, ctx, mask):
        return False
    run_stmt(block.body, ctx, mask)
    return True


def _stores_injective(stores, ctx, mask) -> bool:
    """Distinct lanes store to distinct elements (checked on the actual index values)."""
    shape = np.broadcast_shapes(*[np.shape(v) for v in ctx.vars.values()])
    for st in stores:
        data = ctx.data(st.buffer)
        idx = [evaluate(i, ctx, mask) for i in st.indices]
        flat = np.broadcast_to(data.flat_index(idx, mask, ctx.where), shape)
        if mask is not None:
            flat = flat[np.broadcast_to(mask, shape)]
        if np.unique(flat).size != flat.size:
            return False
    return True


def _run_combine(nest: Nest, ctx: Ctx, combines):
    from .interp_reduce import combine_all

    shape = bind_grid(nest, ctx)
    if 0 in shape:
        return True
    block = nest.realize.block
    bind_iter_vars(nest, ctx, (S.IterKind.SPATIAL,))
    mask = predicate_mask(nest, ctx)
    if mask is not None and mask is not False and predicate_reduces(nest):
        mask = _reduced_mask(nest, mask)
        if mask is None:
            return False
    if mask is False:
        return True
    init_mask = _init_lanes(nest, ctx, mask) if block.init is not None else False
    for iv in block.iter_vars:
        if iv.kind == S.IterKind.REDUCE:
            ctx.vars[iv.var] = evaluate(iv.dom.min, ctx)
    if np.ndim(init_mask) == 0:
        if init_mask:
            run_stmt(block.init, ctx, mask)
    elif np.any(init_mask):
        run_stmt(block.init, ctx, init_mask)
    bind_iter_vars(nest, ctx, (S.IterKind.REDUCE,))
    combine_all(nest, combines, shape, ctx, mask)
    return True


def _reduced_mask(nest: Nest, full):
    """The lanes of a reduction whose predicate depends on its reduction loops (each value
    masked to the combine's identity by :func:`.interp_reduce.plan_combine`): stored where
    any step runs. The init (if any) stays at the first step, as in the scalar walk, only
    when every lane that runs at all runs its first step; None otherwise (the nest is left
    to the ordered walk). ``full`` spans the whole grid (size-1 axes broadcast)."""
    if np.ndim(full) == 0:
        return None if full else False
    axes = tuple(nest.reduce_axes)
    lanes = np.any(full, axis=axes, keepdims=True)
    first = full[tuple(slice(0, 1) if a in axes else slice(None) for a in range(np.ndim(full)))]
    if np.any(lanes & ~first):
        return None
    return lanes if np.any(lanes) else False


def _init_lanes(nest: Nest, ctx: Ctx, mask):
    """Where the init runs: the lanes whose reduction variables are all at their minimum at
    the nest's first reduction step. A nest inside an outer loop that also feeds a reduction
    variable (a fused loop split between spatial and reduction variables, above the nest)
    enters the block once per value of that variable: only the entry at its minimum
    initialises."""
    saved = {}
    for axis in nest.reduce_axes:
        var = nest.loops[axis].loop_var
        saved[var] = ctx.vars[var]
        ctx.vars[var] = np.dtype(var.dtype.numpy).type(scalar_int(nest.loops[axis].min, ctx, "loop start"))
    try:
        bind_iter_vars(nest, ctx, (S.IterKind.REDUCE,))
        return at_init_point(nest.realize.block, ctx, mask)
    finally:
        ctx.vars.update(saved)


def _run_ordered(nest: Nest, ctx: Ctx):
    block = nest.realize.block
    shape = bind_grid(nest, ctx, skip_axes=nest.reduce_axes)
    if 0 in shape:
        return True
    bind_iter_vars(nest, ctx, (S.IterKind.SPATIAL,))
    ranges = []
    for axis in nest.reduce_axes:
        lo = scalar_int(nest.loops[axis].min, ctx, "loop start")
        ranges.append(range(lo, lo + shape[axis]))
    take_steps(ctx, int(np.prod([len(r) for r in ranges])))
    for point in itertools.product(*ranges):
        for axis, value in zip(nest.reduce_axes, point):
            var = nest.loops[axis].loop_var
            ctx.vars[var] = np.dtype(var.dtype.numpy).type(value)
        _ordered_step(nest, block, ctx)
    return True


def _ordered_step(nest, block, ctx):
    bind_iter_vars(nest, ctx, (S.IterKind.REDUCE,))
    mask = predicate_mask(nest, ctx)
    if mask is False:
        return
    if block.init is not None:
        init_mask = at_init_point(block, ctx, mask)
        if np.ndim(init_mask) == 0:
            if init_mask:
                run_stmt(block.init, ctx, None)
        elif np.any(init_mask):
            run_stmt(block.init, ctx, init_mask)
    run_stmt(block.body, ctx, mask)
