"""``nn.layer_norm`` (axes, epsilon, center, scale), ``nn.rms_norm`` (axes, epsilon) and
``nn.instance_norm`` (channel_axis, axes, epsilon, center, scale).

Both are several blocks (sums, mean, variance or mean square, the normalised output);
after inlining, the output expression holds sum reductions and an ``rsqrt``/``sqrt``.
Candidates come from the structure: the normalised axes are a set of output dimensions
whose extents multiply to a reduction's size (and give the shape of gamma/beta; for
instance_norm gamma/beta are 1-D along a channel dimension outside the axes), epsilon
is one of the expression's constants, gamma and beta are the other parameters read.
A candidate is accepted when the expression equals the numpy formula at sample
positions on two data scales (:mod:`.numeric`); anything ambiguous abstains.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from tir.expr import Add, FloatImm, FloorDiv, FloorMod
from tir.functor import pre_order_visit

from ..semantic import ArgReduce, Inlined, Reduce
from ..tags import tags
from ..unit_axes import rebuilt
from .common import Match, Space, strip
from .numeric import Check, claim, data_operands, float_consts, param_loads, reduction_sizes, signature, unique


def normalisation(expr, ctx) -> bool:
    """A sum reduction and a (reciprocal) square root, in a float expression."""
    reds, calls = signature(expr)
    return "sum" in reds and bool({"rsqrt", "sqrt"} & calls) and expr.dtype.is_float


def axes_candidates(check: Check, sizes: set, skip=()) -> list:
    """Sets of dimensions (none in ``skip``) whose extents multiply to a reduction size."""
    dims = [d for d in range(len(check.extents)) if d not in skip]
    out = []
    for k in range(1, len(dims) + 1):
        for axes in combinations(dims, k):
            if int(np.prod([check.extents[a] for a in axes])) in sizes:
                out.append(list(axes))
    return out


def eps_consts(expr) -> tuple:
    """Epsilon candidates: the float constants added to something (``var / n + eps``); a
    reduction's 0.0 start value is not one (numerically, 1e-12 and 0 cannot be told apart).
    All float constants when none is an addend."""
    added: list = []

    def visit(n):
        if isinstance(n, Add):
            for side in (n.a, n.b):
                if isinstance(side, FloatImm) and side.value not in added:
                    added.append(side.value)
        return True

    pre_order_visit(expr, visit)
    return tuple(added) or float_consts(expr)


def _stats(check: Check, data, axes, scale) -> tuple:
    """(x, mean, variance, mean square) of the data at each position over ``axes``."""
    def compute():
        around = check.around(data.buffer, axes, scale)
        red = tuple(range(1, len(axes) + 1))
        x = check.at_points(data.buffer, list(range(len(check.extents))), scale)
        return x, around.mean(axis=red), around.var(axis=red), (around * around).mean(axis=red)
    return check.memo(("stats", id(data.buffer), tuple(axes), scale), compute)


def _param_at(check: Check, buffer, axes, scale):
    return check.at_points(buffer, axes, scale)


def _layer_norm(check, data, axes, eps, gamma, beta, scale):
    x, mean, var, _ = _stats(check, data, axes, scale)
    out = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * _param_at(check, gamma, axes, scale)
    if beta is not None:
        out = out + _param_at(check, beta, axes, scale)
    return out


def _instance_norm(check, data, axes, channel, eps, gamma, beta, scale):
    x, mean, var, _ = _stats(check, data, axes, scale)
    out = (x - mean) / np.sqrt(var + eps)
    return out * _param_at(check, gamma, [channel], scale) + _param_at(check, beta, [channel], scale)


def _rms_norm(check, data, axes, eps, weight, scale):
    x, _, _, square = _stats(check, data, axes, scale)
    return x / np.sqrt(square + eps) * _param_at(check, weight, axes, scale)


def _roles(others: list) -> list:
    """(gamma, beta) assignments of the other parameters."""
    if len(others) == 0:
        return [(None, None)]
    if len(others) == 1:
        return [(others[0], None), (None, others[0])]
    if len(others) == 2:
        return [(others[0], others[1]), (others[1], others[0])]
    return []


def _fits(check: Check, load, axes) -> bool:
    """A gamma/beta/weight parameter has the shape of the normalised axes."""
    return load is None or check.shape_of(load[0]) == [check.extents[a] for a in axes]


def _group_norm_tagged(func) -> bool:
    """Whether a block of ``func`` carries a compute tag of group_norm's TVM form and none
    of instance_norm's: ``T_group_norm`` or its closing ``T_reshape`` (dlight inlines the
    other blocks into that one, leaving its tag)."""
    found = set(tags(func))
    return "T_instance_norm" not in found and any(t == "T_group_norm" or t.startswith("T_reshape") for t in found)


def _candidates(check: Check, data, others: list):
    sizes = reduction_sizes(check)
    for axes in axes_candidates(check, sizes):
        for eps in eps_consts(check.expr):
            for gamma, beta in _roles(others):
                if _fits(check, gamma, axes) and _fits(check, beta, axes):
                    yield "nn.layer_norm", axes, eps, gamma, beta
            if len(others) == 1 and _fits(check, others[0], axes):
                yield "nn.rms_norm", axes, eps, others[0], None
            if len(others) == 2 and _same_rank_throughout(check) and not rebuilt(check.ctx.sem.func) \
                    and not _group_norm_tagged(check.ctx.sem.func):
                # (rebuilt blocks, or group_norm's compute tags: its grouping reshape may have
                # been inlined, and with one channel per group its computation is this one)
                # instance_norm normalises each sample and channel over all other axes
                # (Relax's frontends always pass those; unit dimensions make other axis
                # sets compute the same values, so only this one is read)
                for channel in range(1, len(check.extents)):
                    if axes != [d for d in range(1, len(check.extents)) if d != channel]:
                        continue
                    for gamma, beta in _roles(others):
                        if _fits(check, gamma, [channel]) and _fits(check, beta, [channel]):
                            yield "nn.instance_norm", (axes, channel), eps, gamma, beta


def _same_rank_throughout(check: Check) -> bool:
    """Every intermediate other than a reduction's result has the output's rank and no
    floordiv/floormod index: TVM's group_norm works on a (N, G, C/G, ...) reshape of the
    data and, with G = C, computes the same values as instance_norm; only the form tells."""
    rank = len(check.extents)
    ok = [True]

    def visit(n):
        if isinstance(n, (FloorDiv, FloorMod)):
            ok[0] = False
        elif isinstance(n, Inlined) and len(n.indices) != rank and not isinstance(strip(n), (Reduce, ArgReduce)):
            ok[0] = False
        return ok[0]

    pre_order_visit(check.expr, visit)
    return ok[0]


def _accepts(check: Check, data, cand) -> bool:
    name, axes, eps, gamma, beta = cand
    g = gamma[0] if gamma else None
    b = beta[0] if beta else None
    if name == "nn.rms_norm":
        return check.matches(data, lambda s: _rms_norm(check, data, axes, eps, g, s))
    if name == "nn.instance_norm":
        axes, channel = axes
        return check.matches(data, lambda s: _instance_norm(check, data, axes, channel, eps, g, b, s))
    return check.matches(data, lambda s: _layer_norm(check, data, axes, eps, g, b, s))


def _match(cand, data, space: Space) -> Match:
    name, axes, eps, gamma, beta = cand
    inputs = [("data", data.expr, space)]
    if name == "nn.rms_norm":
        return Match(name, {"axes": axes, "epsilon": eps}, tuple(inputs + [("weight", gamma[1], space)]))
    if name == "nn.instance_norm":
        axes, channel = axes
        attrs = {"channel_axis": channel, "axes": list(axes), "epsilon": eps, "center": True, "scale": True}
        return Match(name, attrs, tuple(inputs + [("gamma", gamma[1], space), ("beta", beta[1], space)]))
    attrs = {"axes": axes, "epsilon": eps, "center": beta is not None, "scale": gamma is not None}
    inputs += [(role, p[1], space) for role, p in (("gamma", gamma), ("beta", beta)) if p is not None]
    return Match(name, attrs, tuple(inputs))


def match_layer_norm(expr, space: Space, ctx) -> "Match | None":
    """layer_norm or rms_norm of one data operand, when exactly one candidate fits."""
    return claim(expr, space, ctx, _find, normalisation)


def _find(check: Check) -> "Match | None":
    for data in data_operands(check):
        others = param_loads(check.expr, check.ctx, data.buffer)
        found = [c for c in _candidates(check, data, others) if _accepts(check, data, c)]
        keys = [(c[0], repr(c[1]), c[2], id(c[3] and c[3][0]), id(c[4] and c[4][0])) for c in found]
        if unique(keys) is not None:
            return _match(found[0], data, check.space)
        if found:
            return None
    return None
