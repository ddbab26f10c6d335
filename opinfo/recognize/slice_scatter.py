"""``slice_scatter`` with step 1, in the form of TVM's Relax legalization.

TVM builds ``out = where(mask, take(src, clamp((i - start) // step, 0, m - 1), axis), x)``
along ``axis`` from a chain of 1-D blocks (arange, comparisons, logical_and, a floor_mod
test when step > 1, a reshape and a broadcast of the mask). Read here over the index ``i``
of that axis, with the chain inlined:

- the take index, seen under its clamp (to the output's extent), is ``i - start`` on every integer (evaluated well
  beyond the axis, so a step > 1 or any wrap-around shows): step 1, the offset is ``start``;
- the mask, evaluated over the axis, is exactly ``start <= i < start + m`` with ``m`` the
  source's extent there, so ``end = start + m`` (with step 1, Relax's shape rule fixes it).

With a step > 1 the end is any of ``step`` values the loops cannot tell apart: not named.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Max, Min

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate
from .common import Match, Space, strip
from .movement_index import branches, pure_space


def _whole(e, space: Space, ctx) -> bool:
    return (isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and len(e.indices) == space.rank
            and all(i is v for i, v in zip(e.indices, space.indices)))


def _source_axis(src: BufferLoad, space: Space) -> "int | None":
    """The one axis where ``src`` is not read at the output index (other extents equal)."""
    other = [d for d, (i, v) in enumerate(zip(src.indices, space.indices)) if i is not v]
    if len(other) != 1:
        return None
    for d, (s, e) in enumerate(zip(src.buffer.shape, space.extents)):
        if d != other[0] and (const_of(s) is None or const_of(s) != const_of(e)):
            return None
    return other[0]


def _unclamped(index, m: int):
    """``g`` of ``max(min(g, hi), 0)`` with ``hi >= m - 1`` (TVM clamps to the output's
    extent; the clamp never acts where the mask keeps the source), else None."""
    e = strip(index)
    if not (isinstance(e, Max) and float_of(e.b) == 0 and isinstance(strip(e.a), Min)):
        return None
    inner = strip(e.a)
    hi = float_of(inner.b)
    return inner.a if hi is not None and hi >= m - 1 else None


def _reading(cond, offset, var, n: int, m: int) -> "int | None":
    """``start`` when the take index is ``i - start`` and the mask ``start <= i < start + m``."""
    wide = np.arange(-4 * n - 4, 4 * n + 4)
    g = np.broadcast_to(evaluate(offset, {var: wide}), wide.shape)
    start = int(wide[0] - g[0])
    if not np.array_equal(g, wide - start) or start < 0 or start + m > n:
        return None
    axis = np.arange(n)
    mask = np.broadcast_to(evaluate(cond, {var: axis}), axis.shape) != 0
    return start if np.array_equal(mask, (axis >= start) & (axis < start + m)) else None


def match_slice_scatter(expr, space: Space, ctx) -> "Match | None":
    br = branches(strip(expr))
    if br is None or not pure_space(space):
        return None
    cond, src, x = br
    if not (_whole(x, space, ctx) and isinstance(src, BufferLoad) and ctx.is_param(src.buffer)):
        return None
    if src.buffer is x.buffer or src.buffer.dtype != x.buffer.dtype or len(src.indices) != space.rank:
        return None
    axis = _source_axis(src, space)
    n = const_of(space.extents[axis]) if axis is not None else None
    m = const_of(src.buffer.shape[axis]) if axis is not None else None
    offset = _unclamped(src.indices[axis], m) if n is not None and m is not None else None
    if offset is None:
        return None
    try:
        start = _reading(cond, offset, space.indices[axis], n, m)
    except (NotEvaluable, TypeError, ValueError):
        return None
    if start is None:
        return None
    return Match("slice_scatter", {"axis": axis, "start": start, "end": start + m, "step": 1},
                 (("input", x, space), ("src", src, space)))
