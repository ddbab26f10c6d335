"""``hamming_window`` in ``topi.hamming_window``'s form: a 1-D output with no inputs,

    out[i] = Cast(dtype, alpha - beta * cos(2 * pi * Cast(dtype, i) / D))

with ``D = window_size - 1`` (symmetric) or ``D = window_size`` (periodic: TVM computes
``window_size + 1`` values and slices the last away; only the values matter here). TVM folds
the division by ``D = 1`` away. A window of one value TVM lowers to the constant 1 (no
cosine), so an output of extent 1 is never named; any other ``D`` is not a window.
The cosine over the output index keeps every constant-filled tensor (``full``, ``ones``)
apart: those have no index in their value.
"""
from __future__ import annotations

import math

from tir.expr import Call, Cast, Div, Mul, Sub

from ..affine import const_of, float_of
from .common import Match, Space, strip
from .movement_index import pure_space

TWO_PI_TOL = 1e-6


def _uncast(e):
    """``e`` through Inlined markers and float casts."""
    e = strip(e)
    while isinstance(e, Cast) and e.dtype.is_float:
        e = strip(e.value)
    return e


def _scaled(e) -> "tuple | None":
    """(c, x) of ``c * x`` or ``x * c`` with a float constant ``c``."""
    e = strip(e)
    if not isinstance(e, Mul):
        return None
    for c, x in ((e.a, e.b), (e.b, e.a)):
        if float_of(c) is not None and float_of(x) is None:
            return float_of(c), x
    return None


def _angle(e, var, dtype) -> "float | None":
    """D of ``2 * pi * Cast(dtype, var) / D`` (1 when the division was folded away)."""
    e = strip(e)
    d = 1.0
    if isinstance(e, Div):
        d = float_of(e.b)
        e = strip(e.a)
    sc = _scaled(e)
    if d is None or sc is None or abs(sc[0] - 2 * math.pi) > TWO_PI_TOL:
        return None
    idx = strip(sc[1])
    if not (isinstance(idx, Cast) and idx.dtype == dtype and strip(idx.value) is var):
        return None
    return d


def match_hamming_window(expr, space: Space, ctx) -> "Match | None":
    if space.rank != 1 or not pure_space(space) or not expr.dtype.is_float:
        return None
    w = const_of(space.extents[0])
    e = _uncast(expr)
    if w is None or w < 2 or not isinstance(e, Sub) or float_of(e.a) is None:
        return None
    sc = _scaled(e.b)
    cos = _uncast(sc[1]) if sc is not None else None
    if not (isinstance(cos, Call) and cos.op == "cos" and len(cos.args) == 1):
        return None
    d = _angle(cos.args[0], space.indices[0], expr.dtype)
    if d not in (w - 1, w):
        return None
    attrs = {"dtype": str(expr.dtype), "window_size": w, "periodic": d == w,
             "alpha": float_of(e.a), "beta": sc[0]}
    return Match("hamming_window", attrs, ())
