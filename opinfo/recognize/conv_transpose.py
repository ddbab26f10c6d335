"""Transposed convolutions (``nn.conv1d_transpose`` to ``nn.conv3d_transpose``; strides,
padding, output_padding, dilation, groups, layouts).

TVM lowers them as a convolution over the input dilated by the strides and padded by
``K - 1 - padding`` (plus ``output_padding`` after), with the kernel flipped and dilated
(``K = (k - 1) * dilation + 1``). Whatever blocks hold those steps, or wherever they were
inlined, the meaning is::

    out[b, c, y] = sum_{i, r} X[b, g(c) + i, y + r] * W[g(c) + i, c % O, r]
    X = x[b, ch, (y + r + off) // s]  if (y + r + off) % s == 0 and in bounds, else 0
    W = w[i, o, (K - 1 - r) // d]     if (K - 1 - r) % d == 0, else 0

The index forms are read structurally (``conv_transpose_dims``); the guards are checked
exactly, one spatial dimension at a time, by evaluating them on every (output, tap) pair.

Padding after and output_padding enter the loops only as their difference, so the loops
never tell them apart. Enumerate the readings (``0 <= output_padding < max(stride,
dilation)``, padding >= 0); report a unique one; else report the one with
``output_padding = 0`` in every dimension when it exists: output_padding only picks among
output sizes, and Relax (like ONNX and PyTorch) defaults it to 0 -- none of the TVM-lowered
samples we have uses another value. Otherwise abstain.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir.expr import Add, BufferLoad, Call, Cast, Mul, Var
from tir.functor import pre_order_visit

from ..affine import float_of
from ..probe import NotEvaluable, evaluate
from ..semantic import Inlined, Reduce
from .common import Match, Space, strip
from .conv import unit_reduction, with_loads
from .conv_transpose_dims import Roles, classify
from .guard import conjuncts

SPATIAL = "DHW"


def _guarded(e, ctx) -> "tuple | None":
    """(parameter load, guard conjuncts) of ``e`` seen through Inlined, casts and zero guards."""
    conds = []
    while True:
        if isinstance(e, (Inlined, Cast)):
            e = e.value
        elif isinstance(e, Call) and e.op == "if_then_else" and float_of(e.args[2]) == 0.0:
            conds += conjuncts(e.args[0])
            e = e.args[1]
        else:
            break
    if isinstance(e, BufferLoad) and ctx.is_param(e.buffer):
        return e, conds
    return None


def match_conv_transpose(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "sum" or float_of(e.init) != 0.0:
        return None
    src = e.source  # the reduction's own product (see matmul)
    while isinstance(src, Cast):
        src = strip(src.value)
    if not isinstance(src, Mul) or not all(isinstance(i, Var) for i in space.indices):
        return None
    for a, b in ((src.a, src.b), (src.b, src.a)):
        data, weight = _guarded(a, ctx), _guarded(b, ctx)
        if data and weight and data[0].buffer is not weight[0].buffer:
            roles = classify(e, space, data[0], weight[0])
            if roles is not None and _guards_hold(roles, data[1], weight[1]):
                return _match(roles, space, data[0], weight[0])
            restored = _with_unit_channel(e, space, data[0], weight[0])
            if restored is not None:
                e2, x2, w2 = restored
                roles = classify(e2, space, x2, w2)
                if roles is not None and _guards_hold(roles, data[1], weight[1]):
                    return _match(roles, space, x2, w2)
    return None


def _with_unit_channel(e: Reduce, space: Space, x: BufferLoad, w: BufferLoad) -> "tuple | None":
    """(``e``, data load, weight load) with an input-channel reduction variable of extent 1
    given back, when a schedule dropped it with its block variable (one input channel per
    group: ``x[.., c + rc, ..] * w[c + rc, c % 1, ..]`` printed as ``x[.., c, ..] *
    w[c, 0, ..]``; conv's :func:`.conv._with_unit_channel` for the weight's other forms).
    Only when exactly one data index and one weight index are one and the same output
    variable alone (the channel; the batch is read by the data only), tried once the plain
    reading failed; ``rc`` in [0, 1) is 0, so the reduction computes the same."""
    outs = [v for v in space.indices if isinstance(v, Var)]

    def alone(i):
        return i if isinstance(i, Var) and any(i is v for v in outs) else None

    pairs = [(j, k) for j, i in enumerate(x.indices) for k, wi in enumerate(w.indices)
             if alone(i) is not None and alone(wi) is i]
    if len(pairs) != 1 or not e.axes:
        return None
    j, k = pairs[0]
    iv = unit_reduction(x.indices[j].dtype)
    new_x = attrs.evolve(x, indices=tuple(Add(i, iv.var) if d == j else i for d, i in enumerate(x.indices)))
    new_w = attrs.evolve(w, indices=tuple(Add(i, iv.var) if d == k else i for d, i in enumerate(w.indices)))
    return with_loads(e, ((x, new_x), (w, new_w)), (iv,)), new_x, new_w


# ---------------------------------------------------------------- guards
def _vars(e) -> set:
    found = set()
    pre_order_visit(e, lambda n: found.add(n) if isinstance(n, Var) else True)
    return found


def _per_dim(conds, allowed) -> "list | None":
    """Each condition's spatial dimension (the one whose variables it uses), or None."""
    out = [[] for _ in allowed]
    for c in conds:
        vs = _vars(c)
        hits = [k for k, a in enumerate(allowed) if vs and vs <= a]
        if len(hits) != 1:
            return None
        out[hits[0]].append(c)
    return out


def _mask(conds, env, shape) -> "np.ndarray | None":
    seen = np.ones(shape, dtype=bool)
    for c in conds:
        try:
            seen &= np.broadcast_to(evaluate(c, env) != 0, shape)
        except NotEvaluable:
            return None
    return seen


def _guards_hold(roles: Roles, data_conds, weight_conds) -> bool:
    """Whether the guards are exactly the dilation and bounds tests of the module doc."""
    data = _per_dim(data_conds, [{sp.y, sp.r} for sp in roles.spatial])
    weight = _per_dim(weight_conds, [{sp.r} for sp in roles.spatial])
    if data is None or weight is None:
        return False
    for sp, dc, wc in zip(roles.spatial, data, weight):
        y = np.arange(sp.out, dtype=float)[:, None]
        r = np.arange(sp.taps, dtype=float)[None, :]
        v = y + r + sp.offset
        want = (np.mod(v, sp.stride) == 0) & (v >= 0) & (np.floor_divide(v, sp.stride) < sp.size)
        seen = _mask(dc, {sp.y: y, sp.r: r}, want.shape)
        u = sp.taps - 1 - r[0]
        kseen = _mask(wc, {sp.r: r[0]}, u.shape)
        if seen is None or kseen is None or not np.array_equal(seen, want):
            return False
        if not np.array_equal(kseen, np.mod(u, sp.dilation) == 0):
            return False
    return True


# ---------------------------------------------------------------- attributes
def _readings(roles: Roles) -> "tuple | None":
    """(padding before, list of (after, output_padding) per dimension), or None."""
    before, per = [], []
    for sp in roles.spatial:
        pb = sp.taps - 1 + sp.offset
        if pb < 0:
            return None
        q = (sp.size - 1) * sp.stride + sp.taps - pb - sp.out
        before.append(pb)
        per.append([(q + t, t) for t in range(max(sp.stride, sp.dilation)) if q + t >= 0])
    return before, per


def _choose(per) -> "tuple | None":
    if any(not p for p in per):
        return None
    if all(len(p) == 1 for p in per):
        return tuple(p[0] for p in per)
    plain = [next((r for r in p if r[1] == 0), None) for p in per]
    if any(r is None for r in plain):
        return None
    return tuple(plain)


def _match(roles: Roles, space: Space, x, w) -> "Match | None":
    got = _readings(roles)
    if got is None:
        return None
    before, per = got
    pick = _choose(per)
    if pick is None:
        return None
    nsp = len(roles.spatial)
    attrs = {"strides": [sp.stride for sp in roles.spatial],
             "padding": before + [a for a, _ in pick],
             "output_padding": [o for _, o in pick],
             "dilation": [sp.dilation for sp in roles.spatial], "groups": roles.groups,
             "data_layout": roles.data_layout, "kernel_layout": roles.kernel_layout,
             "out_layout": roles.out_layout}
    sx = Space(tuple(x.indices), tuple(x.buffer.shape), space.dom)
    return Match(f"nn.conv{nsp}d_transpose", attrs, (("data", x, sx), ("weight", w, sx)))

