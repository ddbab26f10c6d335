"""``image.resize2d`` and ``image.resize3d``: one ``resize`` block over the spatial axes of the
layout; nearest_neighbor reads the clamped rounded source position, linear interpolates the
two neighbours along each axis, cubic the four (Keys' kernel), innermost axis first."""
from __future__ import annotations

import math

import attrs

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder
from ..expr import GT, LT, Call, Cast, FloatImm, FloorDiv, Max, Min, Or, PrimExpr, const
from .common import OpError, index, ints, static

_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
_ROUNDING = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


@attrs.frozen
class Flavour:
    """What differs between TVM's 2-D and 3-D resize computations."""

    op: str
    """The Relax op name (for errors)."""
    layouts: tuple
    """Accepted layouts; the spatial axes are their D, H and W letters."""
    int_div: bool
    """Whether an asymmetric nearest upscaling by an integer factor reads with integer division
    (TVM's 2-D resize does, its 3-D resize does not)."""
    depth_weights_from_width: bool
    """TVM's 3-D cubic with ``cubic_exclude`` weighs depth with the width weights, masked by
    the width neighbours against the height (topi's resize3d as written)."""


RESIZE2D = Flavour("image.resize2d", ("NCHW", "NHWC"), int_div=True, depth_weights_from_width=False)
RESIZE3D = Flavour("image.resize3d", ("NCDHW", "NDHWC"), int_div=False, depth_weights_from_width=True)


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


def int_div(in_size: int, out_size: int) -> bool:
    """Whether TVM's 2-D resize reads an asymmetric nearest upscaling from ``in_size`` to
    ``out_size`` with integer division (when rounding down)."""
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


def _linear_axis(src: PrimExpr, size: int, fdt) -> tuple:
    """(clamped neighbour indices, weights) along one axis, as TVM's linear resize."""
    fl = Call(fdt, "floor", (src,))
    base = Cast(dt.int64, fl)
    t = src - fl
    return [_clamp(base, size), _clamp(base + index(1), size)], [const(1.0, fdt) - t, t]


def _combine(at, picks: list, chosen: tuple = ()) -> PrimExpr:
    """The neighbours of ``picks`` (per spatial axis, outermost first: (indices, weights))
    weighted along the innermost axis first, as TVM nests its interpolations."""
    if len(chosen) == len(picks):
        return at(chosen)
    indices, weights = picks[len(chosen)]
    return _sum([_combine(at, picks, chosen + (i,)) * w for i, w in zip(indices, weights)])


@attrs.frozen
class _Attrs:
    """The checked attributes of one resize."""

    axes: tuple
    in_sizes: tuple
    out_sizes: tuple
    method: str
    mode: str
    rounding: str
    alpha: float
    exclude: int


def _checked(fl: Flavour, x: Buffer, size, layout, method, mode, rounding, alpha, exclude) -> _Attrs:
    op = fl.op
    if layout not in fl.layouts:
        raise OpError(op, "layout", f"expected one of {fl.layouts}, got {layout!r}")
    if method not in ("nearest_neighbor", "linear", "cubic"):
        raise OpError(op, "method", f"expected 'nearest_neighbor', 'linear' or 'cubic', got {method!r}")
    if mode not in _MODES:
        raise OpError(op, "coordinate_transformation_mode", f"expected one of {_MODES}")
    if rounding not in _ROUNDING:
        raise OpError(op, "rounding_method", f"expected one of {_ROUNDING}")
    letters = "DHW"[3 - (len(layout) - 2):]
    out_sizes = tuple(ints(size, len(letters), op, "size"))
    if min(out_sizes) < 1:
        raise OpError(op, "size", f"must be positive, got {size!r}")
    axes = tuple(layout.index(c) for c in letters)
    in_sizes = tuple(static(x.shape[a], op, f"data {c}") for a, c in zip(axes, letters))
    return _Attrs(axes, in_sizes, out_sizes, method, mode, rounding, alpha, exclude)


def resize(b: Builder, x: Buffer, fl: Flavour, *, size, layout, method, coordinate_transformation_mode,
           rounding_method, cubic_alpha=-0.75, cubic_exclude=0, out_dtype=None) -> Buffer:
    """Resize the spatial axes of ``layout`` to ``size`` as TVM's ``fl`` resize computes it."""
    a = _checked(fl, x, size, layout, method, coordinate_transformation_mode, rounding_method, cubic_alpha,
                 cubic_exclude)
    fdt = dt.float32  # topi reads every pixel .astype("float") and scales in float32, any data type
    odt = dt.dtype(out_dtype) if out_dtype else x.dtype
    shape = list(x.shape)
    for ax, s in zip(a.axes, a.out_sizes):
        shape[ax] = index(s)

    def body(*i):
        def at(spatial):
            idx = list(i)
            for ax, s in zip(a.axes, spatial):
                idx[ax] = s
            v = x[tuple(idx)]
            return Cast(fdt, v) if x.dtype != fdt else v

        v = _value(fl, a, [i[ax] for ax in a.axes], at, fdt)
        return Cast(odt, v) if v.dtype != odt else v

    return b.compute("resize", shape, body, dtype=odt)


def _value(fl: Flavour, a: _Attrs, out: list, at, fdt) -> PrimExpr:
    """The resized value at output spatial coordinates ``out``."""
    sizes = list(zip(out, a.in_sizes, a.out_sizes))
    if a.method == "nearest_neighbor":
        return at(tuple(_closest(fl, a, v, si, so, fdt) for v, si, so in sizes))
    srcs = [_source(v, si, so, a.mode, fdt) for v, si, so in sizes]
    if a.method == "linear":
        return _combine(at, [_linear_axis(s, si, fdt) for s, si in zip(srcs, a.in_sizes)])
    picks = [_cubic_axis(s, si, a.alpha, a.exclude, fdt) for s, si in zip(srcs, a.in_sizes)]
    if a.exclude and fl.depth_weights_from_width and len(picks) == 3:
        picks[0] = (picks[0][0], _cubic_axis(srcs[2], a.in_sizes[1], a.alpha, 1, fdt)[1])
    return _combine(at, picks)


def _closest(fl: Flavour, a: _Attrs, v, size_in: int, size_out: int, fdt) -> PrimExpr:
    """The source index nearest_neighbor reads along one axis."""
    if fl.int_div and a.mode == "asymmetric" and a.rounding in ("floor", "") and int_div(size_in, size_out):
        factor = size_out // size_in
        return _clamp(FloorDiv(v, index(factor)) if factor > 1 else v, size_in)
    src = _source(v, size_in, size_out, a.mode, fdt)
    if isinstance(src, FloatImm):  # pytorch_half_pixel to one: TVM folds the index to a constant
        return index(min(max(_rounded_const(src.value, a.rounding, a.mode), 0), size_in - 1))
    return _clamp(Cast(dt.int64, _round(src, a.rounding, a.mode)), size_in)


def _rounded_const(x: float, method: str, mode: str) -> int:
    """:func:`_round` of a constant."""
    method = method or ("round" if mode == "align_corners" else "floor")
    if method == "round":
        return round(x)
    up = method in ("ceil", "round_prefer_floor")
    shift = {"round_prefer_floor": -0.5, "round_prefer_ceil": 0.5, "floor": 1e-5, "ceil": -1e-5}[method]
    return math.ceil(x + shift) if up else math.floor(x + shift)
