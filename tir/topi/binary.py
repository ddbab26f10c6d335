"""Binary ops with numpy broadcasting (``T_add``, ``T_less``... blocks over ``ax0...``) and ``where``."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder
from .. import dtype as dt
from ..expr import (EQ, LE, LT, NE, And, Call, Cast, FloorDiv, FloorMod, Max, Min, Mod, Or, Select,
                    const)
from .broadcast import broadcast_index, broadcast_shape
from .common import OpError


def _floor_divide(a, c):
    if a.dtype.is_float:
        return Call(a.dtype, "floor", (a / c,))
    return FloorDiv(a, c)


def _floor_mod(a, c):
    if a.dtype.is_float:
        return a - Call(a.dtype, "floor", (a / c,)) * c
    return FloorMod(a, c)


# op name -> (block name, expression of the two operands, result is bool)
BINARY = {
    "add": ("T_add", lambda a, c: a + c, False),
    "subtract": ("T_subtract", lambda a, c: a - c, False),
    "multiply": ("T_multiply", lambda a, c: a * c, False),
    "divide": ("T_divide", lambda a, c: a / c, False),
    "maximum": ("T_maximum", Max, False),
    "minimum": ("T_minimum", Min, False),
    "power": ("T_power", lambda a, c: Call(a.dtype, "pow", (a, c)), False),
    "floor_divide": ("T_floor_divide", _floor_divide, False),
    "floor_mod": ("T_floor_mod", _floor_mod, False),
    "equal": ("T_equal", EQ, True),
    "not_equal": ("T_not_equal", NE, True),
    "less": ("T_less", LT, True),
    "less_equal": ("T_less_equal", LE, True),
    "greater": ("T_greater", lambda a, c: LT(c, a), True),
    "greater_equal": ("T_greater_equal", lambda a, c: LE(c, a), True),
    "logical_and": ("T_logical_and", And, True),
    "logical_or": ("T_logical_or", Or, True),
    "mod": ("T_mod", Mod, False),
    "atan2": ("T_atan2", lambda a, c: Call(a.dtype, "atan2", (a, c)), False),
    "bitwise_and": ("T_bitwise_and", lambda a, c: Call(a.dtype, "bitwise_and", (a, c)), False),
    "bitwise_or": ("T_bitwise_or", lambda a, c: Call(a.dtype, "bitwise_or", (a, c)), False),
    "bitwise_xor": ("T_bitwise_xor", lambda a, c: Call(a.dtype, "bitwise_xor", (a, c)), False),
    "left_shift": ("T_left_shift", lambda a, c: Call(a.dtype, "shift_left", (a, c)), False),
    "right_shift": ("T_right_shift", lambda a, c: Call(a.dtype, "shift_right", (a, c)), False),
    "logical_xor": ("T_logical_xor", lambda a, c: Call(a.dtype, "bitwise_xor", (a, c)), True),
    "log_add_exp": ("T_log_add_exp", lambda a, c: Call(a.dtype, "log", (Call(a.dtype, "exp", (a,)) +
                                                                      Call(a.dtype, "exp", (c,)),)), False),
}
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}


def binary(b: Builder, op: str, x: Buffer, y: Buffer) -> Buffer:
    """``op`` applied elementwise to ``x`` and ``y`` broadcast together."""
    name, fn, is_cmp = BINARY[op]
    if x.dtype != y.dtype:
        raise OpError(op, "dtype", f"operand types differ ({x.dtype} vs {y.dtype}); insert astype")
    if op in INTEGER_ONLY and not x.dtype.is_integer:
        raise OpError(op, "dtype", f"expected integer operands, got {x.dtype}")
    shape = broadcast_shape([x.shape, y.shape], op)

    def body(*i):
        return fn(x[broadcast_index(x.shape, i, shape)], y[broadcast_index(y.shape, i, shape)])

    return b.compute(name, shape, body, names=[f"ax{d}" for d in range(len(shape))],
                     dtype=dt.bool_ if is_cmp else x.dtype)


def outer(b: Builder, x: Buffer, y: Buffer) -> Buffer:
    """``outer[i, j] = x[i] * y[j]`` of two vectors."""
    if x.ndim != 1 or y.ndim != 1:
        raise OpError("outer", "shape", f"expects two vectors, got ranks {x.ndim} and {y.ndim}")
    if x.dtype != y.dtype:
        raise OpError("outer", "dtype", f"operand types differ ({x.dtype} vs {y.dtype})")
    return b.compute("outer", [x.shape[0], y.shape[0]], lambda i, j: x[i] * y[j], names=["i", "j"])


def where(b: Builder, cond: Buffer, x: Buffer, y: Buffer) -> Buffer:
    """``Select(0 < int64(cond), x, y)`` with the three operands broadcast together."""
    if x.dtype != y.dtype:
        raise OpError("where", "dtype", f"branch types differ ({x.dtype} vs {y.dtype})")
    shape = broadcast_shape([cond.shape, x.shape, y.shape], "where")

    def body(*i):
        c = cond[broadcast_index(cond.shape, i, shape)]
        test = LT(const(0, dt.int64), Cast(dt.int64, c)) if c.dtype != dt.int64 else LT(const(0, dt.int64), c)
        return Select(test, x[broadcast_index(x.shape, i, shape)], y[broadcast_index(y.shape, i, shape)])

    return b.compute("T_where", shape, body, names=[f"ax{d}" for d in range(len(shape))])
