"""``quantize`` / ``dequantize`` as TVM's Relax legalization writes them (one block each,
loops ``i0...``): the scale and zero point are 1-D tensors read at the ``axis`` index when
they hold one value per channel, at 0 when they hold one value."""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder
from ..expr import Call, Max, Min, cast, const
from .common import OpError, ShapeError, normalize_axis, static


def integer_range(dtype: dt.DataType) -> tuple:
    """(min, max) of an integer dtype."""
    if dtype.is_uint:
        return 0, 2 ** dtype.bits - 1
    return -2 ** (dtype.bits - 1), 2 ** (dtype.bits - 1) - 1


def _param_reader(op: str, arg: str, p: Buffer, x: Buffer, axis: int):
    """``i... -> p[i[axis]]`` for a per-channel ``p``, ``p[0]`` for one value."""
    if p.ndim == 0:
        return lambda i: p[()]
    if p.ndim != 1:
        raise OpError(op, arg, f"must be 1-D, got rank {p.ndim}")
    n = static(p.shape[0], op, arg)
    if n == 1:
        return lambda i: p[(0,)]
    if n != static(x.shape[axis], op, arg):
        raise ShapeError(op, arg, f"has {n} values, axis {axis} has {x.shape[axis]}")
    return lambda i: p[(i[axis],)]


def quantize(b: Builder, x: Buffer, scale: Buffer, zero_point: Buffer, *, axis=-1, out_dtype="int8") -> Buffer:
    """``quantized = Cast(out, max(min(round(x / scale) + zp, qmax), qmin))``."""
    out = dt.dtype(out_dtype)
    if not out.is_integer:
        raise OpError("quantize", "out_dtype", f"must be an integer type, got {out}")
    ax = normalize_axis(axis, x.ndim, "quantize")
    s, z = _param_reader("quantize", "scale", scale, x, ax), _param_reader("quantize", "zero_point", zero_point, x, ax)
    lo, hi = integer_range(out)

    def body(*i):
        v = Call(x.dtype, "round", (x[i] / s(i),)) + cast(z(i), x.dtype)
        return cast(Max(Min(v, const(float(hi), x.dtype)), const(float(lo), x.dtype)), out)

    return b.compute("quantized", x.shape, body)


def dequantize(b: Builder, x: Buffer, scale: Buffer, zero_point: Buffer, *, axis=-1, out_dtype="float32") -> Buffer:
    """``dequantized = Cast(out, Cast(int32, x) - Cast(int32, zp)) * scale``."""
    out = dt.dtype(out_dtype)
    if out != dt.float32 or scale.dtype != dt.float32:
        raise OpError("dequantize", "out_dtype", f"only float32 output and scale are lowered, got {out}")
    ax = normalize_axis(axis, x.ndim, "dequantize")
    s = _param_reader("dequantize", "scale", scale, x, ax)
    z = _param_reader("dequantize", "zero_point", zero_point, x, ax)
    return b.compute("dequantized", x.shape,
                     lambda *i: cast(cast(x[i], dt.int32) - cast(z(i), dt.int32), out) * s(i))
