"""Scalar expressions of the mini TIR.

Every expression has a ``dtype``. Variables are binders and compare by identity; all other
expressions are frozen value nodes that compare by their fields. Python operators build
nodes (``x + 1``, ``x // 4``, ``x < n``); ``==`` stays Python equality, use :func:`eq`.
"""
from __future__ import annotations

import operator
from typing import Any, Union

import attrs

from . import dtype as dt
from .dtype import DataType
from .node import Node


class PrimExpr(Node):
    """Base of scalar expressions: operator overloads build IR nodes."""

    __slots__ = ()
    dtype: DataType

    def __add__(self, other):
        return _binary(Add, self, other)

    def __radd__(self, other):
        return _binary(Add, other, self)

    def __sub__(self, other):
        return _binary(Sub, self, other)

    def __rsub__(self, other):
        return _binary(Sub, other, self)

    def __mul__(self, other):
        return _binary(Mul, self, other)

    def __rmul__(self, other):
        return _binary(Mul, other, self)

    def __truediv__(self, other):
        return _binary(Div, self, other)

    def __rtruediv__(self, other):
        return _binary(Div, other, self)

    def __floordiv__(self, other):
        return _binary(FloorDiv, self, other)

    def __rfloordiv__(self, other):
        return _binary(FloorDiv, other, self)

    def __mod__(self, other):
        return _binary(FloorMod, self, other)

    def __rmod__(self, other):
        return _binary(FloorMod, other, self)

    def __neg__(self):
        return _binary(Sub, 0, self)

    def __lt__(self, other):
        return _binary(LT, self, other)

    def __le__(self, other):
        return _binary(LE, self, other)

    def __gt__(self, other):
        return _binary(GT, self, other)

    def __ge__(self, other):
        return _binary(GE, self, other)

    def __and__(self, other):
        return _binary(And, self, other)

    def __or__(self, other):
        return _binary(Or, self, other)

    def __invert__(self):
        return Not(self)

    def __bool__(self):
        raise TypeError("a symbolic expression has no truth value; build eq()/ne() or compare explicitly")


ExprLike = Union[PrimExpr, int, float, bool]


# ---------------------------------------------------------------------------- leaves

@attrs.frozen(eq=False, repr=False)
class Var(PrimExpr):
    """A variable: loop, block-iteration, let, size or parameter variable. Compared by identity."""

    name: str
    """Name hint, used only for printing."""
    dtype: DataType = dt.int32
    """Type of the value."""

    def __repr__(self) -> str:
        return f"Var({self.name}: {self.dtype})"


@attrs.frozen(eq=False, repr=False)
class SizeVar(Var):
    """A symbolic extent (e.g. a dynamic batch size ``n``); known to be non-negative."""

    def __repr__(self) -> str:
        return f"SizeVar({self.name}: {self.dtype})"


@attrs.frozen(cache_hash=True)
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: DataType
    value: int

    def __attrs_post_init__(self):
        if not (self.dtype.is_integer or self.dtype.is_bool):
            raise TypeError(f"IntImm needs an integer or bool dtype, got {self.dtype}")


@attrs.frozen(cache_hash=True)
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: DataType
    value: float

    def __attrs_post_init__(self):
        if not self.dtype.is_float:
            raise TypeError(f"FloatImm needs a float dtype, got {self.dtype}")


@attrs.frozen(cache_hash=True)
class StringImm(PrimExpr):
    """A string constant (used in intrinsic arguments)."""

    value: str
    dtype: DataType = dt.handle


# ---------------------------------------------------------------------------- binary ops

def _same_dtype(self, attribute, value):
    if value.dtype != self.a.dtype:
        raise TypeError(
            f"{type(self).__name__}: operand types differ ({self.a.dtype} vs {value.dtype})"
        )


@attrs.frozen(cache_hash=True)
class BinaryOp(PrimExpr):
    """Base of binary operators; both operands have one dtype."""

    a: PrimExpr
    b: PrimExpr = attrs.field(validator=_same_dtype)

    @property
    def dtype(self) -> DataType:
        return self.a.dtype


class Add(BinaryOp):
    """a + b"""


class Sub(BinaryOp):
    """a - b"""


class Mul(BinaryOp):
    """a * b"""


class Div(BinaryOp):
    """a / b: true division on floats, truncating division on integers (C semantics)."""


class Mod(BinaryOp):
    """truncmod(a, b): remainder with the sign of a (C semantics)."""


class FloorDiv(BinaryOp):
    """floordiv(a, b): division rounding towards negative infinity."""


class FloorMod(BinaryOp):
    """floormod(a, b): remainder with the sign of b."""


class Min(BinaryOp):
    """min(a, b)"""


class Max(BinaryOp):
    """max(a, b)"""


class CmpOp(BinaryOp):
    """Base of comparisons; the result is bool (a bool vector for vector operands)."""

    @property
    def dtype(self) -> DataType:
        return dt.bool_ if self.a.dtype.lanes == 1 else with_lanes(dt.bool_, self.a.dtype.lanes)


class EQ(CmpOp):
    """a == b"""


class NE(CmpOp):
    """a != b"""


class LT(CmpOp):
    """a < b"""


class LE(CmpOp):
    """a <= b"""


class GT(CmpOp):
    """a > b"""


class GE(CmpOp):
    """a >= b"""


class And(CmpOp):
    """Logical a and b (both bool)."""


class Or(CmpOp):
    """Logical a or b (both bool)."""


ARITH_OPS = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
CMP_OPS = (EQ, NE, LT, LE, GT, GE)
LOGIC_OPS = (And, Or)


# ---------------------------------------------------------------------------- other nodes

@attrs.frozen(cache_hash=True)
class Not(PrimExpr):
    """Logical not."""

    a: PrimExpr

    @property
    def dtype(self) -> DataType:
        return self.a.dtype if self.a.dtype.lanes > 1 else dt.bool_


@attrs.frozen(cache_hash=True)
class Select(PrimExpr):
    """``condition ? true_value : false_value`` with both sides evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    def __attrs_post_init__(self):
        if self.true_value.dtype != self.false_value.dtype:
            raise TypeError(f"Select: branch types differ ({self.true_value.dtype} vs {self.false_value.dtype})")

    @property
    def dtype(self) -> DataType:
        return self.true_value.dtype


@attrs.frozen(cache_hash=True)
class Cast(PrimExpr):
    """Conversion of ``value`` to ``dtype``."""

    dtype: DataType
    value: PrimExpr


@attrs.frozen(cache_hash=True)
class Call(PrimExpr):
    """An intrinsic call such as ``exp``, ``sqrt``, ``if_then_else`` or ``max_value``.

    ``op`` is the intrinsic's name without a ``tir.`` prefix.
    """

    dtype: DataType
    op: str
    args: tuple = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class BufferLoad(PrimExpr):
    """``buffer[indices]``"""

    buffer: Any  # tir.buffer.Buffer
    indices: tuple = attrs.field(converter=tuple)

    def __attrs_post_init__(self):
        if len(self.indices) != len(self.buffer.shape):
            raise ValueError(
                f"buffer {self.buffer.name!r} has rank {len(self.buffer.shape)}, "
                f"accessed with {len(self.indices)} indices"
            )

    @property
    def dtype(self) -> DataType:
        return access_dtype(self.buffer, self.indices)


@attrs.frozen(cache_hash=True)
class Let(PrimExpr):
    """``let var = value in body`` as an expression."""

    var: Var
    value: PrimExpr
    body: PrimExpr

    @property
    def dtype(self) -> DataType:
        return self.body.dtype


# ---------------------------------------------------------------------------- vectors

def with_lanes(d: DataType, lanes: int) -> DataType:
    """``d`` with ``lanes`` lanes (``float32`` -> ``float32x4``)."""
    return d if d.lanes == lanes else DataType(d.code, d.bits, lanes)


def access_dtype(buffer, indices) -> DataType:
    """The type of what ``buffer[indices]`` loads or stores: the buffer's element type, a
    vector of it when an index is a vector (a Ramp: TVM's vector access)."""
    lanes = max((i.dtype.lanes for i in indices), default=1)
    return buffer.dtype if lanes == 1 else with_lanes(buffer.dtype, lanes)


def _lanes(self, attribute, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 2:
        raise ValueError(f"{type(self).__name__}: lanes must be an integer of at least 2, got {value!r}")


@attrs.frozen(cache_hash=True)
class Ramp(PrimExpr):
    """The vector ``base, base + stride, ..., base + (lanes - 1) * stride`` (TVM's vectorised
    index after VectorizeLoop)."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int = attrs.field(validator=_lanes)

    def __attrs_post_init__(self):
        if self.base.dtype.lanes != 1 or self.stride.dtype != self.base.dtype:
            raise TypeError(f"Ramp: base and stride must be scalars of one type ({self.base.dtype}, {self.stride.dtype})")

    @property
    def dtype(self) -> DataType:
        return with_lanes(self.base.dtype, self.lanes)


@attrs.frozen(cache_hash=True)
class Broadcast(PrimExpr):
    """The scalar ``value`` repeated in ``lanes`` lanes."""

    value: PrimExpr
    lanes: int = attrs.field(validator=_lanes)

    def __attrs_post_init__(self):
        if self.value.dtype.lanes != 1:
            raise TypeError(f"Broadcast: the value must be a scalar, got {self.value.dtype}")

    @property
    def dtype(self) -> DataType:
        return with_lanes(self.value.dtype, self.lanes)


# ---------------------------------------------------------------------------- construction helpers

def const(value, dtype: "str | DataType | None" = None) -> PrimExpr:
    """A constant of the given dtype (default: int32 for ints, float32 for floats, bool)."""
    if isinstance(value, PrimExpr):
        return value
    if dtype is None:
        if isinstance(value, bool):
            dtype = dt.bool_
        elif isinstance(value, int):
            dtype = dt.int32
        else:
            dtype = dt.float32
    d = dt.dtype(dtype)
    if d.is_float:
        return FloatImm(d, float(value))
    if d.is_bool:
        return IntImm(d, int(bool(value)))
    if isinstance(value, float) and not float(value).is_integer():
        raise TypeError(f"cannot make an {d} constant from {value!r}")
    return IntImm(d, int(value))


def convert(value: ExprLike, like: "DataType | None" = None) -> PrimExpr:
    """Turn a Python number into a constant, matching ``like`` when given (a vector ``like``
    gives the constant broadcast to its lanes)."""
    if isinstance(value, PrimExpr):
        return value
    if like is not None and like.lanes > 1:
        return Broadcast(convert(value, with_lanes(like, 1)), like.lanes)
    if like is not None and not like.is_handle:
        if isinstance(value, bool) and not like.is_bool:
            return const(int(value), like)
        if isinstance(value, float) and not like.is_float:
            return const(value)
        return const(value, like)
    return const(value)


def _binary(cls, a: ExprLike, b: ExprLike) -> PrimExpr:
    if not isinstance(a, PrimExpr):
        a = convert(a, b.dtype)
    if not isinstance(b, PrimExpr):
        b = convert(b, a.dtype)
    return cls(a, b)


def eq(a: ExprLike, b: ExprLike) -> PrimExpr:
    """a == b as an expression."""
    return _binary(EQ, a, b)


def ne(a: ExprLike, b: ExprLike) -> PrimExpr:
    """a != b as an expression."""
    return _binary(NE, a, b)


def min_(a: ExprLike, b: ExprLike) -> PrimExpr:
    """min(a, b) as an expression."""
    return _binary(Min, a, b)


def max_(a: ExprLike, b: ExprLike) -> PrimExpr:
    """max(a, b) as an expression."""
    return _binary(Max, a, b)


def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """C-style integer division."""
    return _binary(Div, a, b)


def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """C-style remainder."""
    return _binary(Mod, a, b)


def floordiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    return _binary(FloorDiv, a, b)


def floormod(a: ExprLike, b: ExprLike) -> PrimExpr:
    return _binary(FloorMod, a, b)


def logical_and(*args: PrimExpr) -> PrimExpr:
    """Conjunction of one or more bool expressions (left-nested)."""
    out = args[0]
    for a in args[1:]:
        out = And(out, a)
    return out


def logical_or(*args: PrimExpr) -> PrimExpr:
    out = args[0]
    for a in args[1:]:
        out = Or(out, a)
    return out


def if_then_else(cond: PrimExpr, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``T.if_then_else``: only the taken branch is evaluated (safe for guarded loads)."""
    if not isinstance(t, PrimExpr):
        t = convert(t, f.dtype if isinstance(f, PrimExpr) else None)
    f = convert(f, t.dtype)
    if t.dtype != f.dtype:
        raise TypeError(f"if_then_else: branch types differ ({t.dtype} vs {f.dtype})")
    return Call(t.dtype, "if_then_else", (cond, t, f))


def select(cond: PrimExpr, t: ExprLike, f: ExprLike) -> PrimExpr:
    if not isinstance(t, PrimExpr):
        t = convert(t, f.dtype if isinstance(f, PrimExpr) else None)
    return Select(cond, t, convert(f, t.dtype))


def cast(value: ExprLike, dtype: "str | DataType") -> PrimExpr:
    """Cast to ``dtype`` (no node when the type already matches)."""
    d = dt.dtype(dtype)
    value = convert(value, d)
    if value.dtype == d:
        return value
    return Cast(d, value)


def call(op: str, *args: ExprLike, dtype: "str | DataType | None" = None) -> PrimExpr:
    """An intrinsic call; the result type defaults to the first argument's type."""
    conv = tuple(convert(a) for a in args)
    d = dt.dtype(dtype) if dtype is not None else conv[0].dtype
    return Call(d, op, conv)


def max_value(dtype: "str | DataType") -> PrimExpr:
    """The largest finite value of ``dtype`` as a constant."""
    import numpy as np

    d = dt.dtype(dtype)
    if d.is_float:
        return FloatImm(d, float(np.finfo(d.numpy).max))
    if d.is_bool:
        return IntImm(d, 1)
    return IntImm(d, int(np.iinfo(str(d)).max))


def min_value(dtype: "str | DataType") -> PrimExpr:
    """The lowest finite value of ``dtype`` as a constant."""
    import numpy as np

    d = dt.dtype(dtype)
    if d.is_float:
        return FloatImm(d, float(-np.finfo(d.numpy).max))
    if d.is_bool:
        return IntImm(d, 0)
    return IntImm(d, int(np.iinfo(str(d)).min))


def as_int(e: ExprLike) -> "int | None":
    """The Python int of a constant integer expression, else None."""
    if isinstance(e, bool):
        return int(e)
    if isinstance(e, int):
        return e
    if isinstance(e, IntImm):
        return e.value
    return None


PY_ARITH = {Add: operator.add, Sub: operator.sub, Mul: operator.mul}
