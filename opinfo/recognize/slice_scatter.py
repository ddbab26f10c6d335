"""``slice_scatter``, in the form of TVM's Relax legalization.

TVM builds ``out = where(mask, take(src, clamp((i - start + step - 1) // step, 0, n - 1),
axis), x)`` along ``axis`` (extent ``n``) from a chain of 1-D blocks: an arange, the mask
``full(True)``, ``and i >= start`` (only when start != 0), ``and i < end`` (only when
end != n), ``and (i - start) % step == 0`` (only when step != 1), a reshape and a broadcast
of the mask. Read here over the index ``i`` of that axis, with the chain inlined:

- the take index, seen under its clamp (to the output's extent), is evaluated on every
  integer well beyond the axis (so any wrap-around shows) and must be exactly
  ``ceil((i - start) / step)`` for one ``start >= 0`` and ``step >= 1``;
- the mask, evaluated over the axis, is exactly ``{start + k * step : 0 <= k < m}`` with
  ``m`` the source's extent there (each written element reads source element ``k``);
- ``end``: with step 1, Relax's shape rule fixes it (``start + m``). With a larger step, the
  elements written leave it open (any end in ``(last, last + step]``), so it is read where
  TVM spells it: a conjunct of the mask comparing the arange with a constant from above
  (``i < end``), or, when the mask has no such conjunct, the axis extent (TVM drops the test
  only when end == n). The end read must agree with ``m``; several bounds: not named.
"""
from __future__ import annotations

import numpy as np

from tir.expr import GE, GT, LE, LT, NE, And, BufferLoad, Cast, IntImm, Max, Min

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate
from .common import Match, Space, strip
from ..semantic import Inlined
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


def _start_step(g, wide) -> "tuple | None":
    """(start, step) with ``g == ceil((wide - start) / step)`` exactly, else None."""
    jumps = np.flatnonzero(np.diff(g) != 0)
    if len(jumps) < 2:
        return None
    step = int(jumps[1] - jumps[0])
    if step < 1:
        return None
    start = int(wide[jumps[0]] - g[jumps[0]] * step)
    return (start, step) if np.array_equal(g, (wide - start + step - 1) // step) else None


def _atoms(e) -> list:
    """The terms of the mask ``e`` is a conjunction of, looked for through inlined
    intermediates, ``and``, bool-to-int casts and ``0 < b`` / ``b != 0`` tests of a bool."""
    if isinstance(e, Inlined):
        return _atoms(e.value)
    if isinstance(e, And):
        return _atoms(e.a) + _atoms(e.b)
    if isinstance(e, Cast) and e.value.dtype.is_bool:
        return _atoms(e.value)
    if isinstance(e, (LT, NE)) and isinstance(e.a, IntImm) and e.a.value == 0 and _boolish(e.b):
        return _atoms(e.b)
    if isinstance(e, (GT, NE)) and isinstance(e.b, IntImm) and e.b.value == 0 and _boolish(e.a):
        return _atoms(e.a)
    return [e]


def _boolish(e) -> bool:
    return e.dtype.is_bool or (isinstance(e, Cast) and e.value.dtype.is_bool)


def _upper_bound(atom, var, n: int, fixed: dict) -> "int | None":
    """``c`` when ``atom`` is ``x < c`` (or ``x <= c - 1``, either way round) for an ``x``
    that is ``i`` on the axis, else None."""
    forms = ((LT, "a", "b", 0), (LE, "a", "b", 1), (GT, "b", "a", 0), (GE, "b", "a", 1))
    for cls, x_side, c_side, plus in forms:
        if isinstance(atom, cls):
            c = const_of(getattr(atom, c_side))
            if c is None:
                return None
            axis = np.arange(n)
            x = np.broadcast_to(evaluate(getattr(atom, x_side), {**fixed, var: axis}), axis.shape)
            return c + plus if np.array_equal(x, axis) else None
    return None


def _end(cond, var, n: int, start: int, step: int, m: int, fixed: dict) -> "int | None":
    """The end of a slice with step > 1 (see the module doc), else None."""
    bounds = {b for b in (_upper_bound(a, var, n, fixed) for a in _atoms(cond)) if b is not None}
    if len(bounds) > 1:
        return None
    end = bounds.pop() if bounds else n
    last = start + (m - 1) * step
    return end if last < end <= min(last + step, n) else None


def _reading(cond, offset, var, n: int, m: int, fixed: dict) -> "tuple | None":
    """(start, end, step) when the take index is ``ceil((i - start) / step)`` and the mask
    ``{start + k * step : k < m}`` (see the module doc). ``fixed``: the other output
    variables of extent 1, at their one value 0 (TVM's reshape of the mask to the data's rank
    may keep them in its index, ``(v0 + v1 + v2) % n`` over ``(n, 1, 1)``)."""
    wide = np.arange(-4 * n - 4, 4 * n + 4)
    g = np.broadcast_to(evaluate(offset, {**fixed, var: wide}), wide.shape)
    found = _start_step(g, wide)
    if found is None:
        return None
    start, step = found
    if start < 0 or m < 1 or start + (m - 1) * step >= n:
        return None
    axis = np.arange(n)
    mask = np.broadcast_to(evaluate(cond, {**fixed, var: axis}), axis.shape) != 0
    want = np.zeros(n, bool)
    want[start:start + (m - 1) * step + 1:step] = True
    if not np.array_equal(mask, want):
        return None
    end = start + m if step == 1 else _end(cond, var, n, start, step, m, fixed)
    return (start, end, step) if end is not None else None


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
        fixed = {v: np.float64(0) for d, (v, e) in enumerate(zip(space.indices, space.extents))
                 if d != axis and const_of(e) == 1}
        found = _reading(cond, offset, space.indices[axis], n, m, fixed)
    except (NotEvaluable, TypeError, ValueError):
        return None
    if found is None:
        return None
    start, end, step = found
    return Match("slice_scatter", {"axis": axis, "start": start, "end": end, "step": step},
                 (("input", x, space), ("src", src, space)))
