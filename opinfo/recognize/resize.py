"""``image.resize2d`` (size, layout, method, coordinate_transformation_mode, rounding_method).

A resize reads the data at positions computed from the output coordinate through float
arithmetic, rounding and clamping; linear interpolation reads four neighbours. The
recognizer evaluates the expression over every output (H, W) position with hashed data
and compares it with numpy references of TVM's formulas for each candidate layout,
method, coordinate transformation and rounding. Several candidates can compute the
same function on a given shape (``round`` and ``round_prefer_ceil`` when no position
falls on .5; any rounding for linear): the first in Relax's default-first order is
reported, which lowers back to the same computation.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad

from ..affine import affine
from .common import Match, Space
from .numeric import Check, Operand, claim, visit_once

MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
ROUNDINGS = ("round", "floor", "", "ceil", "round_prefer_floor", "round_prefer_ceil")
MAX_POSITIONS = 200_000


def _source(out: np.ndarray, size_in: int, size_out: int, mode: str) -> "np.ndarray | None":
    """TVM's input coordinate of output coordinates ``out`` (float64)."""
    scale = size_in / size_out
    if mode == "half_pixel":
        return (out + 0.5) * scale - 0.5
    if mode == "align_corners":
        return None if size_out == 1 else (size_in - 1) / (size_out - 1) * out
    if mode == "asymmetric":
        return scale * out
    if mode == "pytorch_half_pixel":
        return (out + 0.5) * scale - 0.5 if size_out > 1 else np.zeros_like(out)
    return (out + 0.5) * scale


def _int_div(size_in: int, size_out: int) -> bool:
    """TVM reads asymmetric nearest upscaling by an integer factor with integer division."""
    if size_out % size_in:
        return False
    return size_out / size_in <= 1 / (1e-5 * size_in + 1e-5)


def _nearest_index(out, size_in, size_out, mode, rounding) -> "np.ndarray | None":
    if mode == "asymmetric" and _int_div(size_in, size_out):
        idx = out // (size_out // size_in)
    else:
        src = _source(out, size_in, size_out, mode)
        if src is None:
            return None
        idx = _rounded(src, rounding or ("round" if mode == "align_corners" else "floor"))
    return np.clip(idx, 0, size_in - 1)


def _rounded(x: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "round":
        return np.rint(x)
    if rounding == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if rounding == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if rounding == "floor":
        return np.floor(x + 1e-5)
    return np.ceil(x - 1e-5)


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


def _pixel(check: Check, x, hw, in_hw, ys, xs, scale) -> np.ndarray:
    idx = [check.pts[:, d].astype(float) for d in range(len(check.extents))]
    idx[hw[0]] = np.clip(ys, 0, in_hw[0] - 1)
    idx[hw[1]] = np.clip(xs, 0, in_hw[1] - 1)
    return check.values(x, idx, scale)


def _nearest(check, x, hw, in_hw, mode, rounding, scale):
    ys = _nearest_index(check.pts[:, hw[0]].astype(float), in_hw[0], check.extents[hw[0]], mode, rounding)
    xs = _nearest_index(check.pts[:, hw[1]].astype(float), in_hw[1], check.extents[hw[1]], mode, rounding)
    if ys is None or xs is None:
        return None
    return _pixel(check, x, hw, in_hw, ys, xs, scale)


def _linear(check, x, hw, in_hw, mode, rounding, scale):
    sy = _source(check.pts[:, hw[0]].astype(float), in_hw[0], check.extents[hw[0]], mode)
    sx = _source(check.pts[:, hw[1]].astype(float), in_hw[1], check.extents[hw[1]], mode)
    if sy is None or sx is None:
        return None
    y0, x0 = np.floor(sy), np.floor(sx)
    ty, tx = sy - y0, sx - x0
    px = [[_pixel(check, x, hw, in_hw, y0 + j, x0 + i, scale) for i in (0, 1)] for j in (0, 1)]
    top = px[0][0] * (1.0 - tx) + px[0][1] * tx
    bottom = px[1][0] * (1.0 - tx) + px[1][1] * tx
    return top * (1.0 - ty) + bottom * ty


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


def _candidates(n_loads: int):
    if n_loads == 1:
        return [("nearest_neighbor", m, r, _nearest) for m in MODES for r in ROUNDINGS]
    if n_loads == 4:
        return [("linear", m, "round", _linear) for m in MODES]
    return []


def match_resize2d(expr, space: Space, ctx) -> "Match | None":
    """resize2d of one parameter: the first matching candidate in default-first order,
    when exactly one layout fits."""
    return claim(expr, space, ctx, _find)


def _find(check: Check) -> "Match | None":
    load = _data_load(check.expr, check.ctx)
    if load is None or len(load.indices) != len(check.extents) or not check.expr.dtype.is_float:
        return None
    x = load.buffer
    n_loads = _count_loads(check.expr)
    in_shape = check.shape_of(x)
    found = []
    for layout, hw in _layouts(len(check.extents), check.extents):
        if _others_equal(in_shape, check.extents, hw):
            got = _first_match(check, x, hw, in_shape, n_loads)
            found += [(layout, hw, got)] if got is not None else []
    if len(found) != 1:
        return None
    layout, hw, (method, mode, rounding) = found[0]
    attrs = {"size": [check.extents[hw[0]], check.extents[hw[1]]], "layout": layout, "method": method,
             "coordinate_transformation_mode": mode, "rounding_method": rounding}
    return Match("image.resize2d", attrs, (("data", load, check.space),))


def _first_match(check: Check, x, hw, in_shape, n_loads) -> "tuple | None":
    if check.extents[hw[0]] * check.extents[hw[1]] * 4 > MAX_POSITIONS:
        return None
    check.use_points(_grid(check.extents, hw))
    data = Operand(x, None, True)
    in_hw = (in_shape[hw[0]], in_shape[hw[1]])
    for method, mode, rounding, ref in _candidates(n_loads):
        if check.matches(data, lambda s: ref(check, x, hw, in_hw, mode, rounding, s)):
            return method, mode, rounding
    return None


def _others_equal(in_shape, out_shape, hw) -> bool:
    return all(a == b for d, (a, b) in enumerate(zip(in_shape, out_shape)) if d not in hw)


def _count_loads(expr) -> int:
    found = []
    visit_once(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and n not in found else True)
    return len(found)
