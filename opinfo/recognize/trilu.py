"""tril / triu: ``Select(cond, x, 0)`` where ``cond`` is a half-plane over the last two axes.

``topi.trilu`` keeps ``x[..., r, c]`` where ``c - r <= k`` (tril) or ``c - r >= k`` (triu);
TVM's simplifier rewrites the test in several ways (``c <= r + 1``, ``r < c``,
``r + 2 <= c``). The test is read as an integer inequality ``a*c + b*r + d >= 0``: tril
is ``r - c + k >= 0``, triu is ``c - r - k >= 0``. The reading is exact over all
integers, so ``k`` is the one the IR states, also where the kept positions of a narrow
matrix would allow several (``k=1`` and ``k=5`` keep all of a two-column matrix), and it
needs no constant extents.
"""
from __future__ import annotations

from tir.expr import GE, GT, LE, LT, BufferLoad

from ..affine import ONE, add_forms, affine, float_of
from .common import Match, Space, strip
from .movement_index import branches, pure_space


def _nonneg_form(cond) -> "dict | None":
    """The affine form ``f`` with ``cond`` <=> ``f >= 0`` (integer operands), or None."""
    if not isinstance(cond, (GE, GT, LE, LT)):
        return None
    a, b = affine(cond.a), affine(cond.b)
    if a is None or b is None:
        return None
    big, small = (a, b) if isinstance(cond, (GE, GT)) else (b, a)
    form = add_forms(big, small, -1)
    if isinstance(cond, (GT, LT)):
        form = add_forms(form, {ONE: 1}, -1)
    return form


def _reading(form: dict, row, col) -> "tuple | None":
    """(name, k) of the half-plane ``form >= 0`` over (row, col)."""
    if set(form) - {row, col, ONE}:
        return None
    k = form.get(ONE, 0)
    if form.get(row) == 1 and form.get(col) == -1:
        return "tril", k
    if form.get(row) == -1 and form.get(col) == 1:
        return "triu", -k
    return None


def match_trilu(expr, space: Space, ctx) -> "Match | None":
    """``Select(half-plane over the last two axes, x[out indices], 0)``."""
    br = branches(strip(expr))
    R = space.rank
    if br is None or R < 2 or not pure_space(space):
        return None
    cond, t, f = br
    if float_of(f) != 0 or not isinstance(t, BufferLoad) or not ctx.is_param(t.buffer):
        return None
    if len(t.indices) != R or not all(i is v for i, v in zip(t.indices, space.indices)):
        return None
    if t.buffer.dtype != f.dtype or len(t.buffer.shape) != R:
        return None
    form = _nonneg_form(cond)
    got = _reading(form, space.indices[-2], space.indices[-1]) if form is not None else None
    if got is None:
        return None
    return Match(got[0], {"k": got[1]}, (("data", t, space),))
