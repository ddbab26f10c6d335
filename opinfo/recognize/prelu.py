"""``nn.prelu`` in ``topi.nn.prelu``'s form: ``Select(x > 0, x, x * slope[i_axis])``, the
slope a 1-D tensor read at one output index (the channel axis)."""
from __future__ import annotations

from tir.expr import GT, LT, BufferLoad, Call, Mul, Select, Var

from ..affine import const_of, float_of
from ..semantic import Inlined
from .common import Match, Space, strip


def _branches(e):
    if isinstance(e, Select):
        return e.condition, e.true_value, e.false_value
    if isinstance(e, Call) and e.op == "if_then_else":
        return e.args
    return None


def _whole(e, space, ctx) -> bool:
    """``e`` is a tensor read at exactly the output position (a parameter or an intermediate)."""
    if isinstance(e, BufferLoad) and not ctx.is_param(e.buffer):
        return False
    if not isinstance(e, (BufferLoad, Inlined)):
        return False
    return len(e.indices) == space.rank and all(i is v for i, v in zip(e.indices, space.indices))


def _same(a, b) -> bool:
    """Two reads of the same tensor at the same (identical) indices."""
    return (type(a) is type(b) and isinstance(a, (BufferLoad, Inlined)) and a.buffer is b.buffer
            and len(a.indices) == len(b.indices) and all(i is j for i, j in zip(a.indices, b.indices)))


def _positive_test(cond):
    """The tested value of ``v > 0`` (or ``0 < v``), else None."""
    if isinstance(cond, GT) and float_of(cond.b) == 0:
        return cond.a
    if isinstance(cond, LT) and float_of(cond.a) == 0:
        return cond.b
    return None


def _single_slope_axis(raw, slope: BufferLoad, space: Space) -> "int | None":
    """The channel axis of a one-element slope: TVM broadcasts it to the channels through an
    intermediate (``slope_broadcasted[c] = y[0]``) read at the channel's output variable; once
    inlined, the read of ``y[0]`` no longer shows the axis, the intermediate's index does."""
    if not (isinstance(raw, Inlined) and len(raw.indices) == 1 and const_of(slope.indices[0]) == 0
            and const_of(slope.buffer.shape[0]) == 1 and len(raw.buffer.shape) == 1):
        return None
    axis = next((d for d, v in enumerate(space.indices) if raw.indices[0] is v), None)
    if axis is None or const_of(raw.buffer.shape[0]) != const_of(space.extents[axis]):
        return None
    return axis


def match_prelu(expr, space: Space, ctx) -> "Match | None":
    br = _branches(strip(expr)) if not isinstance(expr, Inlined) else None
    if br is None or space.rank < 1:
        return None
    if not all(isinstance(i, Var) for i in space.indices) or len({id(i) for i in space.indices}) != space.rank:
        return None
    cond, t, f = br
    x = _positive_test(cond)
    if x is None or not _whole(x, space, ctx) or not _same(t, x) or not isinstance(f, Mul):
        return None
    for a, s in ((f.a, f.b), (f.b, f.a)):
        if not _same(a, x):
            continue
        raw, s = s, strip(s)
        if not (isinstance(s, BufferLoad) and ctx.is_param(s.buffer) and len(s.indices) == 1):
            continue
        axis = next((d for d, v in enumerate(space.indices) if s.indices[0] is v), None)
        if axis is None:
            axis = _single_slope_axis(raw, s, space)
        if axis is None or const_of(s.buffer.shape[0]) is None or \
                const_of(s.buffer.shape[0]) != const_of(space.extents[axis]):
            continue
        if s.buffer is getattr(x, "buffer", None):
            continue
        return Match("nn.prelu", {"axis": axis}, (("data", x, space), ("alpha", s, space)))
    return None
