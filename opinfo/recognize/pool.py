"""Pooling: max and average (pool_size, strides, dilation, padding, ceil_mode,
count_include_pad, layout) and adaptive average pooling with an even split.

When a pad block is sized for ``ceil_mode`` the program is identical to one without
ceil_mode and ``stride - 1`` more padding after. A reading whose padding exceeds half the
window (which Relax front ends never produce) is dropped; if both readings remain the
recognizer abstains.
"""
from __future__ import annotations

import numpy as np

from tir.expr import Div, Var

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate
from ..semantic import Reduce
from .common import Match, Space, strip
from .window import dim_of, unpad

SPATIAL = "DHW"


def _window(red: Reduce, space: Space, ctx, pad_value_ok):
    p = unpad(red.source, ctx)
    if p is None or not all(isinstance(i, Var) for i in space.indices):
        return None
    if p.pad_value is not None and not pad_value_ok(p.pad_value):
        return None
    x = p.load
    out_ids = {id(v) for v in space.indices}
    red_ids = {id(iv.var) for iv in red.axes}
    rext = {id(iv.var): const_of(iv.dom.extent) for iv in red.axes}
    dims = [dim_of(i, out_ids, red_ids) for i in x.indices]
    if None in dims or len(x.indices) != space.rank or any(d.group for d in dims):
        return None
    sp = [d for d, dm in enumerate(dims) if dm.red is not None]
    plain = [d for d, dm in enumerate(dims) if dm.red is None]
    if not 1 <= len(sp) <= 3 or any(dims[d].out is not space.indices[d] for d in range(space.rank)):
        return None
    if any(dims[d].stride != 1 or dims[d].offset != 0 for d in plain):
        return None
    return p, dims, sp, rext


def _layout(x, sp, space):
    letters = SPATIAL[-len(sp):]
    lay = []
    for d in range(space.rank):
        if d in sp:
            lay.append(letters[sp.index(d)])
        else:
            lay.append(None)
    rest = [d for d in range(space.rank) if d not in sp]
    if len(rest) == 2:
        lay[rest[0]], lay[rest[1]] = "N", "C"
    elif len(rest) == 3:
        c = const_of(x.buffer.shape[rest[2]])
        lay[rest[0]], lay[rest[1]], lay[rest[2]] = "N", "C", f"{c}c"
    else:
        return None
    return "".join(lay)


def _geometry(p, dims, sp, rext, space):
    out = []
    for d in sp:
        dm = dims[d]
        in_ext, out_ext, k = const_of(p.load.buffer.shape[d]), const_of(space.extents[d]), rext[id(dm.red)]
        if None in (in_ext, out_ext, k) or dm.stride <= 0 or dm.dilation <= 0 or dm.offset > 0:
            return None
        before = -dm.offset
        if p.pad_value is None and before:
            return None
        padded = p.padded_shape[d] if p.padded_shape else None
        if padded is None and p.pad_value is not None:
            return None
        if padded is None:
            padded = in_ext
        out.append((in_ext, out_ext, k, dm.stride, dm.dilation, before, padded - in_ext - before))
    return out


def _ceil_choice(geo):
    """(ceil_mode, pad_after list) for the observed after-padding: the one reading that
    keeps padding within half a window; None when both readings do (the programs are
    identical, so the attributes cannot be told apart)."""
    def valid(after):
        return all(0 <= a <= (dl * (k - 1) + 1) // 2 for a, (_, _, k, s, dl, _, _) in zip(after, geo))

    plain = [pa for (_, _, k, s, dl, _, pa) in geo]
    ceil = [pa - (s - 1) for (_, _, k, s, dl, _, pa) in geo]
    cands = [(False, plain)] if valid(plain) else []
    if any(g[3] > 1 for g in geo) and valid(ceil):
        cands.append((True, ceil))
    return cands[0] if len(cands) == 1 else None


def _attrs(geo, ceil, after, layout):
    return {"pool_size": [g[2] for g in geo], "strides": [g[3] for g in geo],
            "dilation": [g[4] for g in geo], "padding": [g[5] for g in geo] + after,
            "ceil_mode": ceil, "count_include_pad": False, "layout": layout, "out_layout": layout}


def match_max_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "max":
        return None
    w = _window(e, space, ctx, lambda v: v <= -3.0e38)
    if w is None:
        return None
    p, dims, sp, rext = w
    geo = _geometry(p, dims, sp, rext, space)
    layout = _layout(p.load, sp, space)
    if geo is None or layout is None or not any(g[2] > 1 for g in geo):
        return None
    choice = _ceil_choice(geo)
    if choice is None:
        return None
    attrs = _attrs(geo, choice[0], choice[1], layout)
    return Match(f"nn.max_pool{len(sp)}d", attrs, (("data", p.load, space),))


def _counts(geo, space, sp, include_pad, after):
    """Expected divisor at every output position (flattened over the pooled dims)."""
    grids = []
    for (in_ext, out_ext, k, s, dl, pb, _), pa in zip(geo, after):
        o = np.arange(out_ext)
        start = o * s - pb
        lo, hi = (-pb, in_ext + pa) if include_pad else (0, in_ext)
        taps = start[:, None] + dl * np.arange(k)[None, :]
        grids.append(((taps >= lo) & (taps < hi)).sum(axis=1))
    total = grids[0]
    for g in grids[1:]:
        total = np.multiply.outer(total, g)
    return np.maximum(total, 1)


def match_avg_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Div) or not isinstance(strip(e.a), Reduce) or strip(e.a).combiner != "sum":
        return None
    red = strip(e.a)
    w = _window(red, space, ctx, lambda v: v == 0.0)
    if w is None:
        return None
    p, dims, sp, rext = w
    geo = _geometry(p, dims, sp, rext, space)
    layout = _layout(p.load, sp, space)
    if geo is None or layout is None:
        return None
    if float_of(e.b) is not None:
        return _adaptive(e, geo, p, sp, layout, space)
    got = _divisor(e.b, space, sp)
    if got is None:
        return None
    choice = _ceil_choice(geo)
    if choice is None:
        return None
    ceil, after = choice
    padded = any(g[5] for g in geo) or any(after)
    for include in ((False, True) if padded else (False,)):
        if np.array_equal(got, _counts(geo, space, sp, include, after)):
            attrs = _attrs(geo, ceil, after, layout)
            attrs["count_include_pad"] = include
            if padded:
                other = _counts(geo, space, sp, not include, after)
                if np.array_equal(other, got):
                    return None
            return Match(f"nn.avg_pool{len(sp)}d", attrs, (("data", p.load, space),))
    return None


def _divisor(expr, space, sp):
    env = {}
    shape = [const_of(space.extents[d]) for d in sp]
    if None in shape:
        return None
    axes = np.meshgrid(*[np.arange(n, dtype=float) for n in shape], indexing="ij")
    for d, a in zip(sp, axes):
        env[space.indices[d]] = a
    for d in range(space.rank):
        if d not in sp:
            env[space.indices[d]] = np.zeros(1)
    try:
        val = evaluate(expr, env)
    except NotEvaluable:
        return None
    return np.broadcast_to(val, axes[0].shape)


def _adaptive(e, geo, p, sp, layout, space):
    """An even adaptive average pool: window = stride = input / output, constant divisor."""
    if p.pad_value is not None:
        return None
    for (in_ext, out_ext, k, s, dl, pb, pa) in geo:
        if dl != 1 or pb or pa or k != s or in_ext != out_ext * k:
            return None
    if float_of(e.b) != float(np.prod([g[2] for g in geo])):
        return None
    attrs = {"output_size": [g[1] for g in geo], "layout": layout, "out_layout": layout}
    return Match(f"nn.adaptive_avg_pool{len(sp)}d", attrs, (("data", p.load, space),))
