"""Helpers shared by the lowering functions: int64 index arithmetic that folds the trivial
cases the way TVM's simplifier prints them, attribute normalisation, and the pad stage."""
from __future__ import annotations

from typing import Sequence

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder, index
from ..expr import LE, LT, IntImm, PrimExpr, as_int, cast, const, if_then_else, logical_and


class OpError(ValueError):
    """A shape or attribute error of one op, naming the op and the argument."""

    def __init__(self, op: str, arg: str, message: str):
        super().__init__(f"{op}: {arg}: {message}")
        self.op, self.arg = op, arg


class ShapeError(OpError):
    """Operands the op cannot take: static extents that differ where the op needs them equal
    (a matmul's reduction extents, broadcast dimensions, a convolution's channels), or an
    index tensor that is not integer (a gather's indices), whatever its other attributes.
    Raised only where the extents are known (:func:`differ`); an op not lowered for some
    attributes, or extents that cannot be told equal, stay plain :class:`OpError`."""


def differ(a, b) -> bool:
    """Two extents known to differ: both constant and unequal (a symbolic one may take the
    other's value)."""
    ka, kb = as_int(a), as_int(b)
    return ka is not None and kb is not None and ka != kb


def dims(shape) -> list:
    """A shape for a message: ints, and the names of symbolic extents."""
    return [as_int(e) if as_int(e) is not None else str(e) for e in shape]


def add(a, b) -> PrimExpr:
    """``a + b`` with ``x + 0`` folded and constants added."""
    a, b = index(a), index(b)
    ca, cb = as_int(a), as_int(b)
    if ca is not None and cb is not None:
        return index(ca + cb)
    if cb == 0:
        return a
    if ca == 0:
        return b
    return a + b


def sub(a, b) -> PrimExpr:
    """``a - b`` with ``x - 0`` folded and constants subtracted."""
    a, b = index(a), index(b)
    ca, cb = as_int(a), as_int(b)
    if ca is not None and cb is not None:
        return index(ca - cb)
    if cb == 0:
        return a
    return a - b


def mul(a, b) -> PrimExpr:
    """``a * b`` with ``x * 1`` folded and constants multiplied."""
    a, b = index(a), index(b)
    ca, cb = as_int(a), as_int(b)
    if ca is not None and cb is not None:
        return index(ca * cb)
    if cb == 1:
        return a
    if ca == 1:
        return b
    return a * b


def window(out_index, stride, red_index, dilation) -> PrimExpr:
    """``out * stride + red * dilation``, the input position of a sliding window."""
    return add(mul(out_index, stride), mul(red_index, dilation))


def ints(value, n: int, op: str, arg: str) -> list:
    """An attribute given as one int or a list of ``n`` ints (or 1, broadcast to ``n``)."""
    vals = [value] if isinstance(value, int) else list(value)
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n or not all(isinstance(v, int) for v in vals):
        raise OpError(op, arg, f"expected {n} integers, got {value!r}")
    return vals


def padding(value, n: int, op: str) -> "tuple[list, list]":
    """``(before, after)`` from a padding of 1, n or 2n ints (``[top, left, bottom, right]`` in 2-D)."""
    vals = [value] if isinstance(value, int) else list(value)
    if len(vals) == 1:
        vals = vals * (2 * n)
    elif len(vals) == n:
        vals = vals + vals
    if len(vals) != 2 * n or not all(isinstance(v, int) and v >= 0 for v in vals):
        raise OpError(op, "padding", f"expected 1, {n} or {2 * n} non-negative integers, got {value!r}")
    return vals[:n], vals[n:]


def static(extent, op: str, arg: str) -> int:
    """The int value of a static extent (symbolic extents are rejected for this argument)."""
    v = as_int(extent)
    if v is None:
        raise OpError(op, arg, f"needs a static extent, got the symbolic {extent}")
    return v


def normalize_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    """``axis`` in ``[-ndim, ndim)`` as a non-negative index."""
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise OpError(op, arg, f"axis {axis!r} is out of range for a tensor of rank {ndim}")
    return axis % ndim


def pad(b: Builder, data: Buffer, before: Sequence[int], after: Sequence[int], value,
        name: str = "pad_temp", per_side: bool = False, names=None) -> Buffer:
    """A padding stage ``name[i] = if_then_else(in bounds, data[i - before], value)``.

    ``per_side=False`` is the Python topi pad (both bounds tested on every padded dimension);
    ``per_side=True`` is the C++ one (only the sides that are padded are tested).
    """
    shape = [add(add(s, lo), hi) for s, lo, hi in zip(data.shape, before, after)]
    pad_value = const(value, data.dtype) if not isinstance(value, PrimExpr) else value

    def body(*i):
        conds, idx = [], []
        for v, s, lo, hi in zip(i, data.shape, before, after):
            idx.append(sub(v, lo))
            if per_side:
                if lo != 0:
                    conds.append(LE(index(lo), v))
                if hi != 0:
                    conds.append(LT(v, add(s, lo)))
            elif lo != 0 or hi != 0:
                conds += [LE(index(lo), v), LT(v, add(s, lo))]
        load = data[tuple(idx)]
        return if_then_else(logical_and(*conds), load, pad_value) if conds else load

    return b.compute(name, shape, body, names=names)


def out_dtype(value, default) -> dt.DataType:
    """The ``out_dtype`` attribute (None or "" means the input's dtype)."""
    return dt.dtype(value) if value else dt.dtype(default)


def cast_to(value: PrimExpr, dtype) -> PrimExpr:
    """``T.Cast(dtype, value)`` unless it already has that dtype."""
    return cast(value, dtype)


TRUE = IntImm(dt.bool_, 1)
