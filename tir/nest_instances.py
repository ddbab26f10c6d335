"""Whether a loop nest runs each instance of its block once.

The engines run a reduction nest's block instances as lanes combined at once (the
interpreter's grid, the C emitter's accumulator schedules), with the init once per instance.
TVM's semantics run the nest iteration by iteration, and a block instance met again at its
init point starts again: when two iterations bind the same iteration values (a block
``compute_at`` under loops it does not depend on, a binding ``(i * 4 + j) // 3``), only the
walk computes what TVM's build does. Such a nest is found here and left to the walk.

The iteration values are grouped by the loops they share; each group is evaluated over the
grid of its own loops (small: the loops feeding one variable, or the few a fused loop feeds)
and must give distinct tuples. The predicate is not consulted (a nest it makes distinct is
walked, which is slower but exact).
"""
from __future__ import annotations

import numpy as np

from .interp_expr import Ctx, evaluate
from .loop_nest import Nest, free_vars
from .loop_nest_affine import linear_coeffs

MAX_GROUP_POINTS = 1 << 20
"""The largest grid of one group's loops evaluated; a larger group is not proven distinct."""


def _groups(values: list, loop_vars: set) -> list:
    """[(indices of values, their loop variables)] of values that share loops."""
    groups = []
    for i, v in enumerate(values):
        used = free_vars(v) & loop_vars
        merged = [g for g in groups if g[1] & used]
        for g in merged:
            groups.remove(g)
        groups.append(([i] + [j for g in merged for j in g[0]], used.union(*[g[1] for g in merged])))
    return groups


def _extent(loop, ctx) -> "tuple | None":
    """(min, extent) of ``loop`` as integers, or None when the text does not give them."""
    try:
        lo, ext = evaluate(loop.min, ctx), evaluate(loop.extent, ctx)
    except Exception:  # a symbolic bound with no value here
        return None
    if np.ndim(lo) or np.ndim(ext):
        return None
    return int(lo), int(ext)


def _moves_with(value, var) -> bool:
    """``value`` is affine in ``var`` with a nonzero coefficient (other variables fixed):
    distinct values of ``var`` give distinct values, whatever its range."""
    coeffs = linear_coeffs(value)
    return coeffs is not None and coeffs.get(var, 0) != 0


def instances_distinct(nest: Nest, ctx: "Ctx | None" = None) -> bool:
    """No two iterations of ``nest`` bind the same iteration values (so none runs a block
    instance again). ``ctx`` gives symbolic extents and variables in bindings their values;
    without it, what depends on them is not proven (False)."""
    env = Ctx(vars=dict(ctx.vars), bufs=ctx.bufs) if ctx is not None else Ctx()
    by_var = {l.loop_var: l for l in nest.loops}
    values = list(nest.realize.iter_values)
    bounds = {l.loop_var: _extent(l, env) for l in nest.loops}

    def runs(var) -> bool:  # more than once, or perhaps
        return bounds[var] is None or bounds[var][1] > 1

    used = set()
    for v in values:
        used |= free_vars(v)
    if any(var not in used and runs(var) for var in by_var):
        return False  # a loop running more than once that no binding reads
    for idx, loop_vars in _groups(values, set(by_var)):
        running = [var for var in loop_vars if runs(var)]
        if not running:
            continue
        if len(running) == 1 and any(_moves_with(values[i], running[0]) for i in idx):
            continue
        if any(bounds[var] is None for var in loop_vars):
            return False
        shape = [bounds[var][1] for var in running]
        if int(np.prod(shape, dtype=np.int64)) > MAX_GROUP_POINTS:
            return False
        local = dict(env.vars)
        for var in loop_vars:
            local[var] = np.int64(bounds[var][0])
        for axis, var in enumerate(running):
            dims = [1] * len(running)
            dims[axis] = shape[axis]
            lo = bounds[var][0]
            local[var] = np.arange(lo, lo + shape[axis], dtype=np.int64).reshape(dims)
        try:
            cols = [np.broadcast_to(np.asarray(evaluate(values[i], Ctx(vars=local, bufs=env.bufs))), shape).ravel()
                    for i in idx]
        except Exception:  # a variable with no value here
            return False
        tuples = np.stack(cols, axis=1)
        if len(np.unique(tuples, axis=0)) != tuples.shape[0]:
            return False
    return True
