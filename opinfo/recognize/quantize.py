"""``quantize`` and ``dequantize`` in the form of TVM's Relax legalization.

- quantize: ``Cast(q, max(min(round(x / scale) + Cast(f, zp), qmax), qmin))`` with
  ``[qmin, qmax]`` the range of the integer type ``q``;
- dequantize: ``Cast(f32, Cast(i32, x) - Cast(i32, zp)) * scale``.

``scale`` and ``zp`` are parameter tensors read either at one output index (one value per
channel: that index is ``axis``) or at a constant (one value for the whole tensor). With
one value the loops are the same for every ``axis``, so the op is named only where the axis
cannot matter (a 1-D tensor); otherwise nothing is claimed.
"""
from __future__ import annotations

from tir.expr import Add, BufferLoad, Call, Cast, Div, Max, Min, Mul, Sub, Var

from ..affine import const_of, float_of
from .common import Match, Space, strip
from .movement_index import pure_space


def _integer_range(dtype) -> tuple:
    if dtype.is_uint:
        return 0, 2 ** dtype.bits - 1
    return -2 ** (dtype.bits - 1), 2 ** (dtype.bits - 1) - 1


def _whole(e, space: Space, ctx) -> bool:
    """A parameter read at exactly the output position."""
    return (isinstance(e, BufferLoad) and ctx.is_param(e.buffer) and len(e.indices) == space.rank
            and all(i is v for i, v in zip(e.indices, space.indices)))


def _channel(e, space: Space, ctx) -> "tuple | None":
    """(load, output axis or None for one value) of a scale / zero point read."""
    e = strip(e)
    if not (isinstance(e, BufferLoad) and ctx.is_param(e.buffer)) or len(e.indices) > 1:
        return None
    if not e.indices or const_of(e.indices[0]) == 0:
        n = const_of(e.buffer.shape[0]) if e.indices else 1
        return (e, None) if n == 1 else None
    i = e.indices[0]
    axis = next((d for d, v in enumerate(space.indices) if v is i), None) if isinstance(i, Var) else None
    if axis is None or const_of(e.buffer.shape[0]) != const_of(space.extents[axis]):
        return None
    return e, axis


def _axis(space: Space, *reads) -> "int | None":
    """The one axis the per-channel reads agree on; 0 for a 1-D tensor read at one value."""
    axes = {a for _, a in reads if a is not None}
    if len(axes) > 1:
        return None
    if axes:
        return axes.pop()
    return 0 if space.rank == 1 else None


def _uncast(e, dtype):
    """``e`` seen through a cast to ``dtype`` (or ``e`` itself when already of it)."""
    e = strip(e)
    if isinstance(e, Cast) and e.dtype == dtype:
        return strip(e.value)
    return e if e.dtype == dtype else None


def _match(name, x, scale, zp, space, ctx, attrs) -> "Match | None":
    s, z = _channel(scale, space, ctx), _channel(zp, space, ctx)
    if s is None or z is None or not _whole(x, space, ctx) or s[0].buffer is z[0].buffer:
        return None
    axis = _axis(space, s, z)
    if axis is None:
        return None
    inputs = (("data", x, space), ("scale", s[0], space), ("zero_point", z[0], space))
    return Match(name, {"axis": axis, **attrs}, inputs)


def match_quantize(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not (isinstance(e, Cast) and e.dtype.is_integer) or not pure_space(space):
        return None
    lo, hi = _integer_range(e.dtype)
    clip = strip(e.value)
    if not (isinstance(clip, Max) and isinstance(strip(clip.a), Min)) or float_of(clip.b) != lo:
        return None
    inner = strip(clip.a)
    if float_of(inner.b) != hi or not inner.a.dtype.is_float:
        return None
    shifted = strip(inner.a)
    if not isinstance(shifted, Add):
        return None
    rnd, zp = strip(shifted.a), _uncast(shifted.b, shifted.dtype)
    if not (isinstance(rnd, Call) and rnd.op == "round" and isinstance(strip(rnd.args[0]), Div)) or zp is None:
        return None
    div = strip(rnd.args[0])
    return _match("quantize", strip(div.a), div.b, zp, space, ctx, {"out_dtype": str(e.dtype)})


def match_dequantize(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not (isinstance(e, Mul) and e.dtype.is_float) or not pure_space(space):
        return None
    diff = _uncast(e.a, e.dtype)
    if not isinstance(diff, Sub) or str(diff.dtype) != "int32":
        return None
    x, zp = _uncast(diff.a, diff.dtype), _uncast(diff.b, diff.dtype)
    if x is None or zp is None or not x.dtype.is_integer:
        return None
    return _match("dequantize", x, e.b, zp, space, ctx, {"out_dtype": str(e.dtype)})
