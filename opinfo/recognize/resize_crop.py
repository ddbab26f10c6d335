"""``image.resize2d`` with coordinate_transformation_mode ``tf_crop_and_resize``.

TVM computes the source coordinate of output coordinate ``o`` along a resized axis as
``start * (in - 1) + o * (end - start) * (in - 1) / (out - 1)`` (``start``/``end`` that axis'
entries of the roi) and returns ``extrapolation_value`` wherever a source coordinate falls
outside ``[0, in - 1]``: the expression is a chain of selects ``coord < 0 ? e : in - 1 < coord
? e : ...`` around the interpolation. This module reads that chain: each guard's coordinate
must mention exactly one output variable (its axis) and be affine in it; the roi is solved
from the coordinate's value at 0 and its slope (an output axis of one pixel, whose
coordinate is the constant midpoint of the roi, leaves start and end open: abstain). The
interpolation is then confirmed against the numpy references of :mod:`.resize_ref` fed with
the coordinates the expression itself computes, extrapolated where it says: every method and
rounding is tried, and the answer must be unique (roundings the values cannot tell apart are
told by the rounding intrinsic written, else the recognizer abstains).
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Call, FloatImm, LT, Var
from tir.functor import pre_order_visit

from ..probe import NotEvaluable, evaluate
from . import resize_ref as ref
from .common import strip
from .movement_index import branches

MODE = "tf_crop_and_resize"
_ROUNDINGS = ("round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
_WRITTEN = {"round": ("round", "nearbyint"), "floor": ("floor",), "round_prefer_ceil": ("floor",),
            "ceil": ("ceil",), "round_prefer_floor": ("ceil",)}
"""The intrinsic each rounding is written with."""


def guards(expr) -> "tuple | None":
    """(guard coordinates as (expression, side), extrapolation value, interpolation) when
    ``expr`` is a chain of at least two extrapolation guards, else None."""
    e, found, value = strip(expr), [], None
    while branches(e) is not None:
        cond, t, f = branches(e)
        if not isinstance(t, FloatImm) or not isinstance(cond, LT) or value is not None and t.value != value:
            return None
        value = t.value
        if isinstance(cond.b, FloatImm) and cond.b.value == 0.0:
            found.append((cond.a, "low", None))
        elif isinstance(cond.a, FloatImm):
            found.append((cond.b, "high", cond.a.value))
        else:
            return None
        e = f
    return (found, value, e) if len(found) >= 2 else None


def _vars(e) -> list:
    out = []

    def visit(n):
        if isinstance(n, BufferLoad):
            out.append(None)
            return False
        if isinstance(n, Var) and all(n is not v for v in out):
            out.append(n)
        return True

    pre_order_visit(e, visit)
    return out


def read_crop(expr, space, axes, in_sizes, out_sizes) -> "tuple | None":
    """(roi, extrapolation value, {axis: coordinate expression}, interpolation expression) of a
    tf_crop_and_resize over ``axes`` (spatial axes of the output, outermost first), or None."""
    parts = guards(expr)
    if parts is None:
        return None
    found, value, inner = parts
    coords = {}
    for coord, side, bound in found:
        vs = _vars(coord)
        if len(vs) != 1 or vs[0] is None:
            return None
        hit = [a for a in axes if space.indices[a] is vs[0]]
        if len(hit) != 1:
            return None
        a = hit[0]
        k = axes.index(a)
        if side == "high" and bound != float(in_sizes[k] - 1):
            return None
        coords.setdefault(a, []).append((coord, side))
    if sorted(coords) != sorted(axes):
        return None
    roi_start, roi_end, exprs = [], [], {}
    for k, a in enumerate(axes):
        sides = sorted(s for _, s in coords[a])
        if sides != ["high", "low"]:
            return None
        n_in, n_out = in_sizes[k], out_sizes[k]
        if n_in < 2 or n_out < 2:
            return None  # the roi's start and end are not both in the coordinate
        vals = [_coordinate(c, space.indices[a], n_out) for c, _ in coords[a]]
        if any(v is None for v in vals) or not np.array_equal(vals[0], vals[1]):
            return None
        src = vals[0]
        slope = src[1] - src[0]
        if not np.allclose(src, src[0] + slope * np.arange(n_out), rtol=1e-6, atol=1e-6):
            return None
        start = src[0] / (n_in - 1)
        roi_start.append(_f32(start))
        roi_end.append(_f32(start + slope * (n_out - 1) / (n_in - 1)))
        exprs[a] = coords[a][0][0]
    return roi_start + roi_end, value, exprs, inner


def _f32(x: float) -> float:
    """``x`` as the shortest decimal within float32 precision of it (TVM folds the roi into
    float32 constants, a few roundings away from the value given)."""
    for digits in range(1, 9):
        d = round(float(x), digits)
        if abs(d - x) <= 1e-6 * max(1.0, abs(x)):
            return d + 0.0
    return float(np.float32(x))


def _coordinate(coord, var, n_out) -> "np.ndarray | None":
    try:
        got = evaluate(coord, {var: np.arange(n_out, dtype=float)})
    except NotEvaluable:
        return None
    got = np.broadcast_to(np.asarray(got, dtype=float), (n_out,))
    return got if np.all(np.isfinite(got)) else None


def coordinates_at(exprs: dict, space, axes, pts) -> list:
    """The source coordinate of every sample position along each axis, as the expression
    computes it."""
    return [np.asarray(evaluate(exprs[a], {space.indices[a]: pts[:, a].astype(float)}), dtype=float)
            * np.ones(len(pts)) for a in axes]


def candidates(n_loads: int, spatial: int, consts, expr) -> list:
    """(attributes, reference maker) pairs: ``make(srcs)`` gives a reference reading the
    source coordinates ``srcs``."""
    out = []
    if n_loads == 1:
        calls = _calls(expr)
        for r in _ROUNDINGS:
            if any(c in calls for c in _WRITTEN[r]):
                out.append(({"method": "nearest_neighbor", "rounding_method": r},
                            lambda srcs, r=r: lambda pixel, outs, ins: pixel(
                                [ref.rounded(s, r) for s in srcs])))
    if n_loads == 2 ** spatial:
        out.append(({"method": "linear", "rounding_method": "round"},
                    lambda srcs: lambda pixel, outs, ins: ref.linear_from(pixel, srcs)))
    if n_loads == 4 ** spatial:
        alphas = [-0.75, -0.5] + [c for c in consts if c < 0 and c not in (-0.75, -0.5)]
        for al in alphas:
            for ex in (0, 1):
                out.append(({"method": "cubic", "rounding_method": "round", "cubic_alpha": al, "cubic_exclude": ex},
                            lambda srcs, al=al, ex=ex: lambda pixel, outs, ins: ref.cubic_from(pixel, srcs, ins,
                                                                                              al, ex)))
    return out


def _calls(expr) -> set:
    found = set()
    pre_order_visit(expr, lambda n: found.add(n.op) if isinstance(n, Call) else True)
    return found
