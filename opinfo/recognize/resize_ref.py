"""numpy references of TVM's ``image.resize2d`` and ``image.resize3d`` formulas (topi/image/
resize.py semantics), for any number of spatial axes.

Each ``*_nd`` reference takes ``pixel(coords)``, the data read at (clamped) source coordinates, one
array per spatial axis (outermost first) for every sample position, the output coordinates
``outs`` of those positions and the input and output sizes of the spatial axes; it returns
the resized values, or None when the candidate is undefined for these sizes (align_corners
to one pixel). ``flavour`` (:class:`tir.topi.resize.Flavour`) says where TVM's 2-D and 3-D
computations differ. :func:`nearest`, :func:`linear` and :func:`cubic` are the 2-D ones
with ``pixel(ys, xs)``.
"""
from __future__ import annotations

import numpy as np

from tir.topi.resize import RESIZE2D, int_div

MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
"""Coordinate transformation modes, Relax's default first."""
ROUNDINGS = ("round", "floor", "", "ceil", "round_prefer_floor", "round_prefer_ceil")
"""Nearest-neighbour roundings: an explicit rounding before ``""``, which computes as one of
them (round for align_corners, floor otherwise)."""


def _f32(x: float) -> float:
    """``x`` as the float32 constant TVM folds it to."""
    return float(np.float32(x))


def source(out: np.ndarray, size_in: int, size_out: int, mode: str) -> "np.ndarray | None":
    """The input coordinate of output coordinates ``out`` (float64 arithmetic on TVM's
    float32-folded scale, as the expression is evaluated: positions that fall on .5 or on
    an integer fall there as they do in the expression)."""
    scale = _f32(size_in / size_out)
    if mode == "half_pixel":
        return (out + 0.5) * scale - 0.5
    if mode == "align_corners":
        return None if size_out == 1 else _f32((size_in - 1) / (size_out - 1)) * out
    if mode == "asymmetric":
        return scale * out
    if mode == "pytorch_half_pixel":
        return (out + 0.5) * scale - 0.5 if size_out > 1 else np.zeros_like(out)
    return (out + 0.5) * scale


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


def nearest_index(out, size_in, size_out, mode, rounding, flavour) -> "np.ndarray | None":
    """The source index nearest_neighbor reads for output coordinates ``out``."""
    if flavour.int_div and mode == "asymmetric" and rounding in ("floor", "") and int_div(size_in, size_out):
        return out // (size_out // size_in)
    src = source(out, size_in, size_out, mode)
    if src is None:
        return None
    return _rounded(src, rounding or ("round" if mode == "align_corners" else "floor"))


def _sources(outs, ins, out_sizes, mode) -> "list | None":
    srcs = [source(o, si, so, mode) for o, si, so in zip(outs, ins, out_sizes)]
    return None if any(s is None for s in srcs) else srcs


def _combine(pixel, picks: list, chosen: tuple = ()) -> np.ndarray:
    """The neighbours of ``picks`` (per axis, outermost first: (coordinates, weights))
    weighted and summed."""
    if len(chosen) == len(picks):
        return pixel(list(chosen))
    coords, weights = picks[len(chosen)]
    return sum(_combine(pixel, picks, chosen + (c,)) * w for c, w in zip(coords, weights))


def nearest_nd(pixel, outs, ins, out_sizes, flavour, mode, rounding):
    idx = [nearest_index(o, si, so, mode, rounding, flavour) for o, si, so in zip(outs, ins, out_sizes)]
    return None if any(i is None for i in idx) else pixel(idx)


def linear_nd(pixel, outs, ins, out_sizes, flavour, mode):
    srcs = _sources(outs, ins, out_sizes, mode)
    if srcs is None:
        return None
    picks = []
    for s in srcs:
        base = np.floor(s)
        picks.append(([base, base + 1], [1.0 - (s - base), s - base]))
    return _combine(pixel, picks)


def cubic_weights(t: np.ndarray, alpha: float) -> list:
    """Keys' cubic convolution weights of the four neighbours at fraction ``t``."""
    t2, t3 = t * t, t * t * t
    return [alpha * (t3 - 2 * t2 + t),
            (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
            -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
            -alpha * t3 + alpha * t2]


def _cubic_axis(src: np.ndarray, size: int, alpha: float, exclude: int) -> tuple:
    base = np.floor(src)
    weights = cubic_weights(src - base, alpha)
    if exclude:
        weights = [np.where((base - 1 + i < 0) | (base + i > size), 0.0, w) for i, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [base + i - 1 for i in range(4)], weights


def cubic_nd(pixel, outs, ins, out_sizes, flavour, mode, alpha, exclude):
    srcs = _sources(outs, ins, out_sizes, mode)
    if srcs is None:
        return None
    with np.errstate(all="ignore"):
        picks = [_cubic_axis(s, si, alpha, exclude) for s, si in zip(srcs, ins)]
        if exclude and flavour.depth_weights_from_width and len(picks) == 3:
            picks[0] = (picks[0][0], _cubic_axis(srcs[2], ins[1], alpha, 1)[1])
        return _combine(pixel, picks)


def nearest(pixel, oy, ox, in_hw, out_hw, mode, rounding):
    """resize2d's nearest_neighbor, ``pixel(ys, xs)`` reading rows and columns."""
    return nearest_nd(lambda c: pixel(*c), [oy, ox], in_hw, out_hw, RESIZE2D, mode, rounding)


def linear(pixel, oy, ox, in_hw, out_hw, mode):
    """resize2d's linear, ``pixel(ys, xs)`` reading rows and columns."""
    return linear_nd(lambda c: pixel(*c), [oy, ox], in_hw, out_hw, RESIZE2D, mode)


def cubic(pixel, oy, ox, in_hw, out_hw, mode, alpha, exclude):
    """resize2d's cubic, ``pixel(ys, xs)`` reading rows and columns."""
    return cubic_nd(lambda c: pixel(*c), [oy, ox], in_hw, out_hw, RESIZE2D, mode, alpha, exclude)


def rounded(x: np.ndarray, rounding: str) -> np.ndarray:
    """``x`` rounded as nearest_neighbor's ``rounding`` (an explicit one) rounds it."""
    return _rounded(x, rounding)


def linear_from(pixel, srcs: list) -> np.ndarray:
    """Linear interpolation at given source coordinates (one array per spatial axis)."""
    picks = []
    for s in srcs:
        base = np.floor(s)
        picks.append(([base, base + 1], [1.0 - (s - base), s - base]))
    return _combine(pixel, picks)


def cubic_from(pixel, srcs: list, ins, alpha: float, exclude: int) -> np.ndarray:
    """Cubic interpolation (resize2d's) at given source coordinates."""
    with np.errstate(all="ignore"):
        return _combine(pixel, [_cubic_axis(s, si, alpha, exclude) for s, si in zip(srcs, ins)])
