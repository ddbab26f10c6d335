"""numpy references of TVM's ``image.resize2d`` formulas (topi/image/resize.py semantics).

Each reference takes ``pixel(ys, xs)``, the data read at (clamped) source rows and columns
for every sample position, the output coordinates ``oy, ox`` of those positions, and the
input and output (H, W) sizes; it returns the resized values, or None when the candidate
is undefined for these sizes (align_corners to one pixel).
"""
from __future__ import annotations

import numpy as np

MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
"""Coordinate transformation modes, Relax's default first."""
ROUNDINGS = ("round", "floor", "", "ceil", "round_prefer_floor", "round_prefer_ceil")
"""Nearest-neighbour roundings, Relax's default first."""


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


def _int_div(size_in: int, size_out: int) -> bool:
    """TVM reads asymmetric nearest upscaling by an integer factor with integer division
    (when rounding down)."""
    if size_out % size_in:
        return False
    return size_out / size_in <= 1 / (1e-5 * size_in + 1e-5)


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


def nearest_index(out, size_in, size_out, mode, rounding) -> "np.ndarray | None":
    """The source index nearest_neighbor reads for output coordinates ``out``."""
    if mode == "asymmetric" and rounding in ("floor", "") and _int_div(size_in, size_out):
        return out // (size_out // size_in)
    src = source(out, size_in, size_out, mode)
    if src is None:
        return None
    return _rounded(src, rounding or ("round" if mode == "align_corners" else "floor"))


def nearest(pixel, oy, ox, in_hw, out_hw, mode, rounding):
    ys = nearest_index(oy, in_hw[0], out_hw[0], mode, rounding)
    xs = nearest_index(ox, in_hw[1], out_hw[1], mode, rounding)
    return None if ys is None or xs is None else pixel(ys, xs)


def linear(pixel, oy, ox, in_hw, out_hw, mode):
    sy, sx = source(oy, in_hw[0], out_hw[0], mode), source(ox, in_hw[1], out_hw[1], mode)
    if sy is None or sx is None:
        return None
    y0, x0 = np.floor(sy), np.floor(sx)
    ty, tx = sy - y0, sx - x0
    top = pixel(y0, x0) * (1.0 - tx) + pixel(y0, x0 + 1) * tx
    bottom = pixel(y0 + 1, x0) * (1.0 - tx) + pixel(y0 + 1, x0 + 1) * tx
    return top * (1.0 - ty) + bottom * ty


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


def cubic(pixel, oy, ox, in_hw, out_hw, mode, alpha, exclude):
    sy, sx = source(oy, in_hw[0], out_hw[0], mode), source(ox, in_hw[1], out_hw[1], mode)
    if sy is None or sx is None:
        return None
    ys, wy = _cubic_axis(sy, in_hw[0], alpha, exclude)
    xs, wx = _cubic_axis(sx, in_hw[1], alpha, exclude)
    rows = [sum(pixel(y, x) * w for x, w in zip(xs, wx)) for y in ys]
    return sum(r * w for r, w in zip(rows, wy))
