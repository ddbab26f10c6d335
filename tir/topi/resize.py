"""``image.resize2d``: one ``resize`` block; nearest_neighbor reads the clamped rounded source
position, linear interpolates the four neighbours, cubic the sixteen (Keys' kernel)."""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder
from ..expr import GT, LT, Call, Cast, FloorDiv, Max, Min, Or, PrimExpr, const
from .common import OpError, index, ints, static

_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
_ROUNDING = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def _source(v, in_size: int, out_size: int, mode: str, fdt) -> PrimExpr:
    """The (fractional) input coordinate of output coordinate ``v``. An axis whose size does
    not change reads ``v`` itself (``v + 0.5`` for tf_half_pixel_for_nn): TVM's simplifier
    folds the scale of one away."""
    x = Cast(fdt, v)
    if mode == "pytorch_half_pixel" and out_size == 1:
        return const(0.0, fdt)
    if in_size == out_size:
        return x + const(0.5, fdt) if mode == "tf_half_pixel_for_nn" else x
    if mode == "align_corners":
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        return x * const(scale, fdt)
    scale = const(in_size / out_size, fdt)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + const(0.5, fdt)) * scale
    return (x + const(0.5, fdt)) * scale - const(0.5, fdt)


def _int_div(in_size: int, out_size: int) -> bool:
    """TVM reads an asymmetric nearest upscaling by an integer factor with integer division
    (when rounding down)."""
    return out_size % in_size == 0 and out_size / in_size <= 1 / (1e-5 * in_size + 1e-5)


def _round(x: PrimExpr, method: str, mode: str) -> PrimExpr:
    method = method or ("round" if mode == "align_corners" else "floor")
    fdt = x.dtype
    if method == "round_prefer_floor":
        return Call(fdt, "ceil", (x - const(0.5, fdt),))
    if method == "round_prefer_ceil":
        return Call(fdt, "floor", (x + const(0.5, fdt),))
    if method == "floor":  # TVM adds an epsilon against GPU rounding errors
        return Call(fdt, "floor", (x + const(1e-5, fdt),))
    if method == "ceil":
        return Call(fdt, "ceil", (x - const(1e-5, fdt),))
    return Call(fdt, method, (x,))


def _clamp(i: PrimExpr, size: int) -> PrimExpr:
    return Max(Min(i, index(size - 1)), index(0))


def _cubic_weights(t: PrimExpr, alpha: float, fdt) -> list:
    """The four cubic-convolution weights of fraction ``t`` (Keys, coefficient ``alpha``),
    with the coefficients folded as TVM's Python arithmetic folds them."""
    def c(v):
        return const(v, fdt)
    t2, t3 = t * t, t * t * t
    return [c(alpha) * (t3 - c(2.0) * t2 + t),
            c(alpha + 2) * t3 - c(3 + alpha) * t2 + c(1.0),
            c(-(alpha + 2)) * t3 + c(3 + 2 * alpha) * t2 - c(alpha) * t,
            c(-alpha) * t3 + c(alpha) * t2]


def _sum(terms: list) -> PrimExpr:
    """``terms[0] + terms[1] + ...`` (Python's sum from 0, which TVM folds away)."""
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def _cubic_axis(src: PrimExpr, size: int, alpha: float, exclude: int, fdt) -> tuple:
    """(clamped neighbour indices, weights) along one axis, as TVM's cubic resize."""
    fl = Call(fdt, "floor", (src,))
    base = Cast(dt.int64, fl)
    weights = _cubic_weights(src - fl, alpha, fdt)
    if exclude:
        outside = [Or(LT(base + index(i - 1), index(0)), GT(base + index(i), index(size))) for i in range(4)]
        weights = [Call(fdt, "if_then_else", (o, const(0.0, fdt), w)) for o, w in zip(outside, weights)]
        total = _sum(weights)
        weights = [w / total for w in weights]
    return [_clamp(base + index(i - 1), size) for i in range(4)], weights


def resize2d(b: Builder, x: Buffer, *, size, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="round", cubic_alpha=-0.75,
             cubic_exclude=0, out_dtype=None) -> Buffer:
    """Resize the H and W axes of ``layout`` (NCHW or NHWC) to ``size``."""
    op = "image.resize2d"
    if layout not in ("NCHW", "NHWC"):
        raise OpError(op, "layout", f"expected 'NCHW' or 'NHWC', got {layout!r}")
    if method not in ("nearest_neighbor", "linear", "cubic"):
        raise OpError(op, "method", f"expected 'nearest_neighbor', 'linear' or 'cubic', got {method!r}")
    if coordinate_transformation_mode not in _MODES:
        raise OpError(op, "coordinate_transformation_mode", f"expected one of {_MODES}")
    if rounding_method not in _ROUNDING:
        raise OpError(op, "rounding_method", f"expected one of {_ROUNDING}")
    oh, ow = ints(size, 2, op, "size")
    if oh < 1 or ow < 1:
        raise OpError(op, "size", f"must be positive, got {size!r}")
    hax, wax = layout.index("H"), layout.index("W")
    ih, iw = static(x.shape[hax], op, "data H"), static(x.shape[wax], op, "data W")
    fdt = x.dtype if x.dtype.is_float else dt.float32
    odt = dt.dtype(out_dtype) if out_dtype else x.dtype
    shape = list(x.shape)
    shape[hax], shape[wax] = index(oh), index(ow)
    mode = coordinate_transformation_mode

    def at(i, yy, xx):
        idx = list(i)
        idx[hax], idx[wax] = yy, xx
        return Cast(fdt, x[tuple(idx)]) if x.dtype != fdt else x[tuple(idx)]

    def closest(v, size_in, size_out):
        if mode == "asymmetric" and rounding_method in ("floor", "") and _int_div(size_in, size_out):
            factor = size_out // size_in
            return _clamp(FloorDiv(v, index(factor)) if factor > 1 else v, size_in)
        return _clamp(Cast(dt.int64, _round(_source(v, size_in, size_out, mode, fdt), rounding_method, mode)), size_in)

    def nearest(*i):
        ys, xs = closest(i[hax], ih, oh), closest(i[wax], iw, ow)
        v = at(i, ys, xs)
        return Cast(odt, v) if v.dtype != odt else v

    def linear(*i):
        sy, sx = _source(i[hax], ih, oh, mode, fdt), _source(i[wax], iw, ow, mode, fdt)
        fy, fx = Call(fdt, "floor", (sy,)), Call(fdt, "floor", (sx,))
        y0, x0 = Cast(dt.int64, fy), Cast(dt.int64, fx)
        ty, tx = sy - fy, sx - fx
        y_lo, y_hi = _clamp(y0, ih), _clamp(y0 + index(1), ih)
        x_lo, x_hi = _clamp(x0, iw), _clamp(x0 + index(1), iw)
        one = const(1.0, fdt)
        top = at(i, y_lo, x_lo) * (one - tx) + at(i, y_lo, x_hi) * tx
        bottom = at(i, y_hi, x_lo) * (one - tx) + at(i, y_hi, x_hi) * tx
        v = top * (one - ty) + bottom * ty
        return Cast(odt, v) if v.dtype != odt else v

    def cubic(*i):
        ys, wy = _cubic_axis(_source(i[hax], ih, oh, mode, fdt), ih, cubic_alpha, cubic_exclude, fdt)
        xs, wx = _cubic_axis(_source(i[wax], iw, ow, mode, fdt), iw, cubic_alpha, cubic_exclude, fdt)
        rows = [_sum([at(i, yy, xx) * w for xx, w in zip(xs, wx)]) for yy in ys]
        v = _sum([r * w for r, w in zip(rows, wy)])
        return Cast(odt, v) if v.dtype != odt else v

    body = {"nearest_neighbor": nearest, "linear": linear, "cubic": cubic}[method]
    return b.compute("resize", shape, body, dtype=odt)
