"""outer: ``out[i, j] = x1[i] * x2[j]`` for vectors x1, x2.

Not a broadcast multiply: numpy broadcasting aligns both vectors with the last output
axis, so no elementwise op reads x1 along the first. Operands are told apart by the
output axis that indexes them, whichever side of the product they are written on.
"""
from __future__ import annotations

from tir.expr import BufferLoad, Mul

from .common import Match, Space, strip


def _vector(e, ctx):
    e = strip(e)
    return e if isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and len(e.indices) == 1 else None


def match_outer(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Mul) or space.rank != 2:
        return None
    a, b = _vector(e.a, ctx), _vector(e.b, ctx)
    if a is None or b is None or a.buffer is b.buffer:
        return None
    i, j = space.indices
    if a.indices[0] is j and b.indices[0] is i:
        a, b = b, a
    if a.indices[0] is not i or b.indices[0] is not j:
        return None
    if a.buffer.dtype != b.buffer.dtype:
        return None
    return Match("outer", {}, (("lhs", a, space), ("rhs", b, space)))
