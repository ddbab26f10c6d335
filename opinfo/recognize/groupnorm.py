"""``nn.group_norm`` (num_groups, channel_axis, axes, epsilon, center, scale).

TVM reshapes the channels into (groups, channels per group), takes one two-value
reduction (sum and sum of squares) over the channels of a group and the given axes,
normalises, and reshapes back. Candidates: a channel axis whose extent is gamma's, a
group count dividing it, axes whose extents times the group size make a reduction's
size, an epsilon among the constants; each is checked numerically (:mod:`.numeric`).

With one channel per group the computation is also ``nn.instance_norm``'s; it is then
claimed only when the channels pass through the grouping reshape TVM's group_norm
writes, and otherwise left alone.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad

from ..semantic import Inlined
from .common import Match, Space
from .layernorm import axes_candidates, eps_consts, normalisation
from .numeric import (Check, claim, data_operands, param_loads, reduction_sizes, unique,
                      visit_once)


def _group_stats(check: Check, data, ca, groups, axes, scale):
    """Mean and variance of each position's group: over its channels and ``axes``."""
    per = check.extents[ca] // groups
    rank = len(check.extents)
    extra = 1 + len(axes)
    first = (check.pts[:, ca] // per) * per
    idx = []
    for d in range(rank):
        shape = [1] * (extra + 1)
        if d == ca:
            shape[1] = per
            idx.append(first.reshape((-1,) + (1,) * extra) + np.arange(per).reshape(shape))
        elif d in axes:
            shape[2 + axes.index(d)] = check.extents[d]
            idx.append(np.arange(check.extents[d], dtype=float).reshape(shape))
        else:
            idx.append(check.pts[:, d].astype(float).reshape((-1,) + (1,) * extra))
    around = check.values(data.buffer, idx, scale)
    red = tuple(range(1, extra + 1))
    return around.mean(axis=red), around.var(axis=red)


def _reference(check: Check, data, cand, scale):
    ca, groups, axes, eps, gamma, beta = cand
    mean, var = check.memo(("group", id(data.buffer), ca, groups, axes, scale),
                           lambda: _group_stats(check, data, ca, groups, list(axes), scale))
    x = check.at_points(data.buffer, list(range(len(check.extents))), scale)
    out = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * check.at_points(gamma[0], [ca], scale)
    if beta is not None:
        out = out + check.at_points(beta[0], [ca], scale)
    return out


def _roles(others: list) -> list:
    if len(others) == 2:
        return [(others[0], others[1]), (others[1], others[0])]
    if len(others) == 1:
        return [(others[0], None), (None, others[0])]
    return [(None, None)] if not others else []


def _channel_axes(check: Check, others: list) -> list:
    """Channel axes: extent equal to gamma/beta's length when they exist, else > 1. One
    channel is a candidate like any other: when several axes have that extent, they give
    candidates with different channel axes and the recognizer abstains."""
    lengths = {tuple(check.shape_of(b)) for b, _ in others}
    return [d for d, e in enumerate(check.extents)
            if (e > 1 or lengths) and all(l == (e,) for l in lengths)]


def _candidates(check: Check, others: list):
    sizes = reduction_sizes(check)
    for ca in _channel_axes(check, others):
        c = check.extents[ca]
        for groups in (g for g in range(1, c + 1) if c % g == 0):
            group_sizes = {s // (c // groups) for s in sizes if s % (c // groups) == 0}
            for axes in axes_candidates(check, group_sizes, skip=(ca,)) + ([[]] if 1 in group_sizes else []):
                for eps in eps_consts(check.expr):
                    for gamma, beta in _roles(others):
                        yield ca, groups, tuple(axes), eps, gamma, beta


def _grouping_reshape(check: Check, ca: int, groups: int) -> bool:
    """An intermediate of the data's shape with the channel axis split into (groups, c/groups),
    or gamma/beta regrouped so: a (groups, c/groups) intermediate holding a load of a 1-D
    parameter of the c channels (TVM's group_norm writes both; instance_norm reads gamma and
    beta directly). ``compute_inline`` can take the data's reshape away and leave gamma's."""
    ext = check.extents
    c = ext[ca]
    want = ext[:ca] + [groups, c // groups] + ext[ca + 1:]

    def regrouped(n) -> bool:
        v = n.value
        return (check.shape_of(n.buffer) == [groups, c // groups] and isinstance(v, BufferLoad)
                and check.ctx.is_param(v.buffer) and check.shape_of(v.buffer) == [c])

    found = []
    visit_once(check.expr, lambda n: found.append(n) if isinstance(n, Inlined)
                    and (check.shape_of(n.buffer) == want or regrouped(n)) else True)
    return bool(found)


def _preferred(found: list) -> "tuple | None":
    """The one candidate, or among candidates differing only in unit axes, the one that
    leaves out the batch axis and keeps the most axes."""
    rest = unique([(c[0], c[1], c[3], id(c[4]), id(c[5])) for c in found])
    if rest is None:
        return None
    return max(found, key=lambda c: (0 not in c[2], len(c[2])))


def match_group_norm(expr, space: Space, ctx) -> "Match | None":
    """group_norm of one data operand, when exactly one candidate fits."""
    return claim(expr, space, ctx, _find, normalisation)


def _find(check: Check) -> "Match | None":
    for data in data_operands(check):
        others = param_loads(check.expr, check.ctx, data.buffer)
        found = [c for c in _candidates(check, others)
                 if check.matches(data, lambda s, c=c: _reference(check, data, c, s))]
        best = _preferred(found) if found else None
        if best is not None and _unit_axes_only(check, found, best):
            return _match(check, best, data, check.space)
        if found:
            return None
    return None


def _unit_axes_only(check: Check, found: list, best) -> bool:
    """Candidates may differ only in axes of extent 1; one channel per group needs the
    grouping reshape (else it is instance_norm's computation too)."""
    for c in found:
        diff = set(c[2]) ^ set(best[2])
        if any(check.extents[d] != 1 for d in diff):
            return False
    ca, groups = best[0], best[1]
    return groups < check.extents[ca] or _grouping_reshape(check, ca, groups)


def _match(check: Check, cand, data, space: Space) -> Match:
    ca, groups, axes, eps, gamma, beta = cand
    attrs = {"num_groups": groups, "channel_axis": ca, "axes": list(axes), "epsilon": eps,
             "center": beta is not None, "scale": gamma is not None}
    inputs = [("data", data.expr, space)]
    inputs += [(role, p[1], space) for role, p in (("gamma", gamma), ("beta", beta)) if p is not None]
    return Match("nn.group_norm", attrs, tuple(inputs))
