"""``image.resize2d`` (size, layout, method, coordinate_transformation_mode, rounding_method,
and for cubic cubic_alpha and cubic_exclude).

A resize reads the data at positions computed from the output coordinate through float
arithmetic, rounding and clamping; linear interpolation reads four neighbours, cubic
sixteen. The recognizer evaluates the expression over every output (H, W) position with
hashed data and compares it with numpy references of TVM's formulas (:mod:`.resize_ref`)
for each candidate layout, method, coordinate transformation and rounding. Several
candidates can compute the same function on a given shape (``round`` and
``round_prefer_ceil`` when no position falls on .5; any rounding for linear and cubic):
the first in Relax's default-first order is reported, which lowers back to the same
computation.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad

from ..affine import affine
from . import resize_ref as ref
from .common import Match, Space
from .numeric import Check, Operand, claim, float_consts, visit_once
from .resize_form import written_like

MAX_POSITIONS = 200_000


def _grid(extents: list, hw: tuple) -> np.ndarray:
    """Output positions: every (H, W) pair, the other dimensions at both corners and at
    random values (different for every pair)."""
    h, w = hw
    ys, xs = np.meshgrid(np.arange(extents[h]), np.arange(extents[w]), indexing="ij")
    rng = np.random.default_rng(7)
    rows = []
    for kind in ("first", "last", "random", "random"):
        p = np.zeros((ys.size, len(extents)), dtype=np.int64)
        for d, e in enumerate(extents):
            p[:, d] = 0 if kind == "first" else e - 1 if kind == "last" else rng.integers(0, e, ys.size)
        p[:, h], p[:, w] = ys.ravel(), xs.ravel()
        rows.append(p)
    return np.unique(np.concatenate(rows), axis=0)


def _pixel(check: Check, x, hw, in_hw, scale):
    """``pixel(ys, xs)``: the data at clamped source rows and columns, other axes as the
    sample positions'."""
    def pixel(ys, xs):
        idx = [check.pts[:, d].astype(float) for d in range(len(check.extents))]
        idx[hw[0]] = np.clip(ys, 0, in_hw[0] - 1)
        idx[hw[1]] = np.clip(xs, 0, in_hw[1] - 1)
        return check.values(x, idx, scale)
    return pixel


def _layouts(rank: int, extents: list) -> list:
    """(layout, (H axis, W axis)) candidates for a data rank."""
    if rank == 4:
        return [("NCHW", (2, 3)), ("NHWC", (1, 2))]
    if rank == 5:
        return [(f"NCHW{extents[4]}c", (2, 3))]
    return []


def _data_load(expr, ctx) -> "BufferLoad | None":
    """The one parameter read, through at least one non-affine index."""
    loads = []
    visit_once(expr, lambda n: loads.append(n) if isinstance(n, BufferLoad) else True)
    bufs = {id(l.buffer) for l in loads}
    if len(bufs) != 1 or not ctx.is_param(loads[0].buffer):
        return None
    if all(affine(i) is not None for l in loads for i in l.indices):
        return None
    return loads[0]


def _candidates(n_loads: int, consts) -> list:
    """(attributes, reference) pairs for the number of distinct data reads, defaults first."""
    if n_loads == 1:
        return [({"method": "nearest_neighbor", "coordinate_transformation_mode": m, "rounding_method": r},
                 lambda *a, m=m, r=r: ref.nearest(*a, m, r)) for m in ref.MODES for r in ref.ROUNDINGS]
    if n_loads == 4:
        return [({"method": "linear", "coordinate_transformation_mode": m, "rounding_method": "round"},
                 lambda *a, m=m: ref.linear(*a, m)) for m in ref.MODES]
    if n_loads != 16:
        return []
    alphas = [-0.75, -0.5] + [c for c in consts if c < 0 and c not in (-0.75, -0.5)]
    return [({"method": "cubic", "coordinate_transformation_mode": m, "rounding_method": "round",
              "cubic_alpha": a, "cubic_exclude": e}, lambda *args, m=m, a=a, e=e: ref.cubic(*args, m, a, e))
            for m in ref.MODES for a in alphas for e in (0, 1)]


def match_resize2d(expr, space: Space, ctx) -> "Match | None":
    """resize2d of one parameter: the first matching candidate in default-first order,
    when exactly one layout fits."""
    return claim(expr, space, ctx, _find, _wanted)


def _wanted(expr, ctx) -> bool:
    """One parameter read through a non-affine index, of the output's rank, as floats."""
    load = _data_load(expr, ctx)
    return load is not None and expr.dtype.is_float


def _find(check: Check) -> "Match | None":
    load = _data_load(check.expr, check.ctx)
    if len(load.indices) != len(check.extents):
        return None
    x = load.buffer
    n_loads = _count_loads(check.expr)
    in_shape = check.shape_of(x)
    found = []
    for layout, hw in _layouts(len(check.extents), check.extents):
        if _others_equal(in_shape, check.extents, hw) and _others_copied(load, check.space, hw):
            got = _matching(check, x, hw, in_shape, n_loads)
            found += [(layout, hw, got)] if got else []
    if len(found) != 1:
        return None
    layout, hw, passing = found[0]
    size = [check.extents[hw[0]], check.extents[hw[1]]]
    chosen = written_like(check.expr, x, size, layout, passing)
    if chosen is None:
        return None
    attrs = {"size": size, "layout": layout, **chosen}
    return Match("image.resize2d", attrs, (("data", load, check.space),))


def _matching(check: Check, x, hw, in_shape, n_loads) -> list:
    """The attributes of every candidate equal to the expression over all (H, W)."""
    out_hw = (check.extents[hw[0]], check.extents[hw[1]])
    if out_hw[0] * out_hw[1] * 4 > MAX_POSITIONS:
        return []
    check.use_points(_grid(check.extents, hw))
    data = Operand(x, None, True)
    in_hw = (in_shape[hw[0]], in_shape[hw[1]])
    oy, ox = check.pts[:, hw[0]].astype(float), check.pts[:, hw[1]].astype(float)
    return [attrs for attrs, reference in _candidates(n_loads, float_consts(check.expr))
            if check.matches(data, lambda s, r=reference: r(_pixel(check, x, hw, in_hw, s), oy, ox, in_hw, out_hw))]


def _others_equal(in_shape, out_shape, hw) -> bool:
    return all(a == b for d, (a, b) in enumerate(zip(in_shape, out_shape)) if d not in hw)


def _others_copied(load, space: Space, hw) -> bool:
    """The axes other than H and W are read at the output's own coordinate (TVM computes
    the H and W indices even when a size is unchanged)."""
    return all(load.indices[d] is space.indices[d] or load.indices[d] == space.indices[d]
               for d in range(len(space.indices)) if d not in hw)


def _count_loads(expr) -> int:
    found = []
    visit_once(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and n not in found else True)
    return len(found)
