"""Normalisations recognised by probing: inference batch_norm
``(x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]``."""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Var
from tir.functor import pre_order_visit

from ..probe import NotEvaluable, evaluate
from .common import Match, Space, aligned, strip


def _leaves(e):
    found = []

    def visit(n):
        if isinstance(n, BufferLoad):
            if n not in found:
                found.append(n)
            return False
        return True

    pre_order_visit(e, visit)
    return found


def _free_vars(e) -> set:
    out = set()
    pre_order_visit(e, lambda n: out.add(id(n)) if isinstance(n, Var) else True)
    return out


def _consts(e):
    from tir.expr import FloatImm
    vals = []
    pre_order_visit(e, lambda n: vals.append(n.value) if isinstance(n, FloatImm) else True)
    return vals


def match_batch_norm(expr, space: Space, ctx) -> "Match | None":
    leaves = _leaves(expr)
    if len(leaves) != 5 or not all(ctx.is_param(l.buffer) for l in leaves):
        return None
    order = sorted(leaves, key=lambda l: next(i for i, p in enumerate(ctx.sem.params) if p is l.buffer))
    x, rest = order[0], order[1:]
    if len(x.indices) != space.rank or not aligned(x, space) or not all(len(l.indices) == 1 for l in rest):
        return None
    axes = {id(v): d for d, v in enumerate(space.indices)}
    used = [_free_vars(l.indices[0]) for l in rest]
    if any(len(u) != 1 for u in used) or len({next(iter(u)) for u in used}) != 1:
        return None
    cvar_id = next(iter(used[0]))
    if cvar_id not in axes:
        return None
    axis = axes[cvar_id]
    cvar = space.indices[axis]
    n = rest[0].buffer.shape[0]
    try:
        ext = int(getattr(n, "value", n))
        idx = np.arange(ext, dtype=float)
        for l in rest:
            if not np.array_equal(np.broadcast_to(evaluate(l.indices[0], {cvar: idx}), idx.shape), idx):
                return None
    except (NotEvaluable, TypeError, ValueError):
        return None
    rng = np.random.default_rng(5)
    vals = [rng.uniform(-3, 3, 32), rng.uniform(0.5, 2, 32), rng.uniform(-1, 1, 32),
            rng.uniform(-1, 1, 32), rng.uniform(0.1, 2, 32)]
    try:
        got = evaluate(expr, dict(zip(order, vals)))
    except NotEvaluable:
        return None
    xv, g, b, m, v = vals
    for eps in _consts(expr):
        want = (xv - m) / np.sqrt(v + eps) * g + b
        if np.allclose(got, want, rtol=1e-6, atol=1e-9):
            attrs = {"axis": axis, "epsilon": eps, "center": True, "scale": True}
            roles = ("data", "gamma", "beta", "moving_mean", "moving_var")
            return Match("nn.batch_norm", attrs, tuple((r, l, space) for r, l in zip(roles, order)))
    return None
