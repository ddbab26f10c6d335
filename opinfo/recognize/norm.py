"""Normalisations recognised by probing: inference batch_norm
``(x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]``."""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Cast, Var
from tir.functor import collect_distinct, pre_order_visit

from tir.interp_data import np_dtype

from ..affine import const_of
from ..probe import NotEvaluable, evaluate
from .numeric import narrow_casts
from ..semantic import Inlined
from .common import Match, Space, aligned


def _leaves(e):
    return collect_distinct(e, lambda n: isinstance(n, BufferLoad))


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
    if not 3 <= len(leaves) <= 5 or not all(ctx.is_param(l.buffer) for l in leaves):
        return None
    order = sorted(leaves, key=lambda l: next(i for i, p in enumerate(ctx.sem.params) if p is l.buffer))
    x, rest = order[0], order[1:]
    if _cast_block_at_root(expr):
        return None  # a cast after the norm (to float16 and back, say) is an astype op
    if len(x.indices) != space.rank or not aligned(x, space) or not all(len(l.indices) == 1 for l in rest):
        return None
    axes = {id(v): d for d, v in enumerate(space.indices)}
    units = {v: np.zeros(1) for v in space.indices if isinstance(v, Var) and const_of(space.dom.get(v)) == 1}
    used = [_free_vars(l.indices[0]) - {id(u) for u in units} for l in rest]
    if all(not u for u in used):  # one channel: the only unit dimension is the channel axis
        unit_dims = [d for d, v in enumerate(space.indices) if v in units]
        if len(unit_dims) != 1 or any(const_of(l.buffer.shape[0]) != 1 for l in rest):
            return None
        used = [{id(space.indices[unit_dims[0]])} for _ in rest]
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
            if not np.array_equal(np.broadcast_to(evaluate(l.indices[0], {**units, cvar: idx}), idx.shape), idx):
                return None
    except (NotEvaluable, TypeError, ValueError):
        return None
    for scale, center in _affine_flags(len(order)):
        got = _probe(expr, order, axis, scale, center)
        if got is not None:
            attrs = {"axis": axis, "epsilon": got, "center": center, "scale": scale}
            roles = ("data",) + ("gamma",) * scale + ("beta",) * center + ("moving_mean", "moving_var")
            return Match("nn.batch_norm", attrs, tuple((r, l, space) for r, l in zip(roles, order)))
    return None


def _cast_block_at_root(expr) -> bool:
    """Whether ``expr`` ends in a block that only casts another block's result: TVM's form
    of batch_norm ends in the add of beta (float16 data computes in float32 inside it)."""
    root = expr
    while isinstance(root, Inlined):
        root = root.value
    return isinstance(root, Cast) and isinstance(root.value, Inlined)


def _affine_flags(n_leaves: int) -> list:
    """(scale, center) pairs that use ``n_leaves`` inputs (data, [gamma], [beta], mean, var:
    Relax's argument order; an input the formula does not use is not read)."""
    return [(s, c) for s in (True, False) for c in (True, False) if 3 + s + c == n_leaves]


def _probe(expr, order, axis, scale, center) -> "float | None":
    """epsilon when ``expr`` is ``(x - mean) / sqrt(var + eps) [* gamma] [+ beta]`` over
    the leaves in ``order``, else None."""
    rng = np.random.default_rng(5)
    xv, g, b = rng.uniform(-3, 3, 32), rng.uniform(0.5, 2, 32), rng.uniform(-1, 1, 32)
    m, v = rng.uniform(-1, 1, 32), rng.uniform(0.1, 2, 32)
    vals = [xv] + [g] * scale + [b] * center + [m, v]
    # values the leaves can hold: a cast of a float16 leaf to float32 is then exact
    vals = [np.asarray(x, dtype=np_dtype(leaf.dtype)).astype(float) if leaf.dtype.is_float else x
            for x, leaf in zip(vals, order)]
    xv, m, v = vals[0], vals[-2], vals[-1]
    g = vals[1] if scale else g
    b = vals[1 + scale] if center else b
    try:
        got = evaluate(expr, dict(zip(order, vals)))
    except NotEvaluable:
        return None
    # float16 data: TVM computes in float32 between casts, results round to ~3 digits, and
    # then only one of the constants may fit
    narrow = narrow_casts(expr)
    rtol, atol = (4e-3, 1e-3) if narrow else (1e-6, 1e-9)
    fits = []
    for eps in _consts(expr):
        want = (xv - m) / np.sqrt(v + eps) * (g if scale else 1.0) + (b if center else 0.0)
        if np.allclose(got, want, rtol=rtol, atol=atol):
            if not narrow:
                return eps
            fits.append(eps)
    return fits[0] if len(set(fits)) == 1 else None
