"""``T.*`` calls inside TIR expressions: typed immediates, casts, select, min/max, intrinsics."""
from __future__ import annotations

import ast
import math

from .. import dtype as dt
from ..intrinsics import BINARY_MATH, BOOL_UNARY, RUNTIME_CALLS, UNARY_MATH
from ..expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Let, Max, Min,
    Mod, Mul, Not, Or, PrimExpr, Select, Sub, Var, max_value, min_value, Ramp, Broadcast,
)
from .context import describe, error
from .expr import binary, binary_select, boolean, expr, operands, prim, to_prim

_BINARY_NODES = {
    "max": Max, "min": Min, "floordiv": FloorDiv, "floormod": FloorMod, "truncdiv": Div,
    "truncmod": Mod,
    # TVM's node constructors; the printer writes integer division as T.Div(a, b).
    "Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Mod": Mod, "FloorDiv": FloorDiv,
    "FloorMod": FloorMod, "Min": Min, "Max": Max, "EQ": EQ, "NE": NE, "LT": LT, "LE": LE,
    "GT": GT, "GE": GE,
}
_SPECIAL_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def positional(node, low: int, high: "int | None" = None, keywords=()) -> list:
    """The positional arguments of a call, checked for count and allowed keywords."""
    high = low if high is None else high
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise error(arg, f"{describe(node.func)}: *arguments are not supported")
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in keywords:
            allowed = ", ".join(keywords) or "none"
            raise error(kw, f"{describe(node.func)}: unexpected keyword argument {kw.arg!r} (allowed: {allowed})")
    n = len(node.args)
    if n < low or n > high:
        want = str(low) if low == high else f"{low} to {high}"
        raise error(node, f"{describe(node.func)} takes {want} argument(s), got {n}")
    return node.args


def keyword(node, name: str):
    """The value node of keyword argument ``name``, or None."""
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None


def dtype_arg(ctx, node) -> dt.DataType:
    """A dtype written as a string literal (``"float32"``) or ``T.float32``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "T":
        text = node.attr
    else:
        raise error(node, f"expected a data type such as \"float32\", got {describe(node)!r}")
    try:
        return dt.dtype(text)
    except ValueError:
        raise error(node, f"unknown data type {text!r}") from None


def typed_immediate(ctx, node, d: dt.DataType):
    """``T.int64(3)``, ``T.float32(0.5)``, ``T.bool(True)``, ``T.float32("inf")``; ``T.int64(e)`` casts."""
    (arg,) = positional(node, 1)
    value = expr(ctx, arg)
    if isinstance(value, str):
        if value not in _SPECIAL_FLOATS or not d.is_float:
            raise error(arg, f"T.{d}: unexpected string {value!r}")
        return FloatImm(d, _SPECIAL_FLOATS[value])
    if isinstance(value, PrimExpr):
        return Cast(d, value)
    if d.is_float:
        return FloatImm(d, float(value))
    if isinstance(value, float):
        raise error(arg, f"T.{d} needs an integer, got {value!r}")
    if d.is_bool:
        return IntImm(d, int(bool(value)))
    return IntImm(d, int(value))


def _cast(ctx, node):
    d_node, v_node = positional(node, 2)
    return Cast(dtype_arg(ctx, d_node), prim(ctx, v_node))


def _let(ctx, node):
    """``T.Let(body, where={v: value})``: TVM's print of a let expression."""
    if len(node.args) != 1 or len(node.keywords) != 1 or node.keywords[0].arg != "where" \
            or not isinstance(node.keywords[0].value, ast.Dict) or len(node.keywords[0].value.keys) != 1:
        raise error(node, "T.Let takes the body and where={var: value} with one variable")
    where = node.keywords[0].value
    name_node, value_node = where.keys[0], where.values[0]
    if not isinstance(name_node, ast.Name):
        raise error(name_node, "T.Let: the bound variable must be a name")
    value = prim(ctx, value_node)
    var = Var(name_node.id, value.dtype)
    with ctx.scope(var.name, var):
        body = prim(ctx, node.args[0])
    return Let(var, value, body)


def _lanes_arg(node) -> int:
    if not (isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 2):
        raise error(node, f"the number of lanes must be an integer of at least 2, got {describe(node)!r}")
    return node.value


def _ramp(ctx, node):
    """``T.Ramp(base, stride, lanes)``: the vector base + stride * [0, 1, ..., lanes - 1]."""
    b_node, s_node, l_node = positional(node, 3)
    base, stride = operands(expr(ctx, b_node), expr(ctx, s_node), node)
    if base.dtype.lanes != 1 or not base.dtype.is_integer:
        raise error(node, f"T.Ramp: base and stride must be scalar integers, got {base.dtype}")
    return Ramp(base, stride, _lanes_arg(l_node))


def _broadcast(ctx, node):
    """``T.Broadcast(value, lanes)``: a scalar repeated in every lane."""
    v_node, l_node = positional(node, 2)
    value = prim(ctx, v_node)
    if value.dtype.lanes != 1:
        raise error(v_node, f"T.Broadcast: the value must be a scalar, got {value.dtype}")
    return Broadcast(value, _lanes_arg(l_node))


def _reinterpret(ctx, node):
    """``T.reinterpret("int32", x)``: the bits of ``x`` read as another type of the same width."""
    d_node, v_node = positional(node, 2)
    d, value = dtype_arg(ctx, d_node), prim(ctx, v_node)
    if d.bits * d.lanes != value.dtype.bits * value.dtype.lanes:
        raise error(node, f"T.reinterpret: {value.dtype} and {d} differ in width")
    return Call(d, "reinterpret", (value,))


def _select(ctx, node):
    c, t, f = positional(node, 3)
    return binary_select(boolean(expr(ctx, c), c), expr(ctx, t), expr(ctx, f), node)


def _if_then_else(ctx, node):
    c, t, f = positional(node, 3)
    sel = binary_select(boolean(expr(ctx, c), c), expr(ctx, t), expr(ctx, f), node)
    return Call(sel.dtype, "if_then_else", (sel.condition, sel.true_value, sel.false_value))


def _logic(cls):
    """``T.And(a, b)`` / ``T.Or(a, b)``: TVM prints these node constructors when an
    operand is a literal (``T.And(T.bool(True), x)``, from a simplified slice mask)."""
    def handler(ctx, node):
        a, b = positional(node, 2)
        return cls(boolean(expr(ctx, a), a), boolean(expr(ctx, b), b))

    return handler


def _not(ctx, node):
    (arg,) = positional(node, 1)
    return Not(boolean(expr(ctx, arg), arg))


def _limit(fn):
    def handler(ctx, node):
        (arg,) = positional(node, 1)
        return fn(dtype_arg(ctx, arg))

    return handler


def _binary_node(cls):
    def handler(ctx, node):
        a, b = positional(node, 2)
        return binary(cls, expr(ctx, a), expr(ctx, b), node)

    return handler


def _unary_math(name, bool_result=False):
    def handler(ctx, node):
        (arg,) = positional(node, 1)
        x = prim(ctx, arg)
        return Call(dt.bool_ if bool_result else x.dtype, name, (x,))

    return handler


def _binary_math(name):
    def handler(ctx, node):
        a, b = positional(node, 2)
        x, y = operands(expr(ctx, a), expr(ctx, b), node)
        return Call(x.dtype, name, (x, y))

    return handler


def _abs(ctx, node):
    (arg,) = positional(node, 1)
    x = prim(ctx, arg)
    if x.dtype.is_float:
        return Call(x.dtype, "fabs", (x,))
    zero = to_prim(0, arg, x.dtype)
    return Select(GE(x, zero), x, Sub(zero, x))


def _likely(ctx, node):
    (arg,) = positional(node, 1)
    return Call(dt.bool_, "likely", (boolean(expr(ctx, arg), arg),))


def _call_intrin(ctx, node):
    """``T.call_intrin("float32", "tir.op", args...)``: any intrinsic by name."""
    if len(node.args) < 2:
        raise error(node, "T.call_intrin takes a dtype, an op name and arguments")
    positional(node, 2, len(node.args))
    d = dtype_arg(ctx, node.args[0])
    op = expr(ctx, node.args[1])
    if not isinstance(op, str):
        raise error(node.args[1], "T.call_intrin: the op name must be a string")
    args = tuple(to_prim(expr(ctx, a), a) for a in node.args[2:])
    return Call(d, op[4:] if op.startswith("tir.") else op, args)


def _packed(name: str):
    def handler(ctx, node):
        positional(node, 0, len(node.args))
        return Call(dt.dtype(RUNTIME_CALLS[name]), name, tuple(to_prim(expr(ctx, a), a) for a in node.args))

    return handler


def _call_extern(ctx, node):
    """``T.call_extern("float32", "fname", args...)``."""
    if len(node.args) < 2:
        raise error(node, "T.call_extern takes a dtype, a function name and arguments")
    positional(node, 2, len(node.args))
    d = dtype_arg(ctx, node.args[0])
    return Call(d, "call_extern", tuple(to_prim(expr(ctx, a), a) for a in node.args[1:]))


def _table() -> dict:
    table = {
        "T.call_extern": _call_extern,
        "T.Ramp": _ramp, "T.Broadcast": _broadcast,
        "T.Cast": _cast, "T.reinterpret": _reinterpret, "T.Let": _let, "T.Select": _select, "T.if_then_else": _if_then_else,
        "T.max_value": _limit(max_value), "T.min_value": _limit(min_value), "T.abs": _abs,
        "T.likely": _likely, "T.call_intrin": _call_intrin,
        "T.And": _logic(And), "T.Or": _logic(Or), "T.Not": _not,
    }
    table.update({f"T.{k}": _packed(k) for k in RUNTIME_CALLS})
    table.update({f"T.{k}": _binary_node(v) for k, v in _BINARY_NODES.items()})
    table.update({f"T.{k}": _unary_math(k) for k in UNARY_MATH})
    table.update({f"T.{k}": _unary_math(k, True) for k in BOOL_UNARY})
    table.update({f"T.{k}": _binary_math(k) for k in BINARY_MATH})
    return table


_TABLE = _table()


def call_handler(name: "str | None"):
    """The handler of a call to ``name`` in an expression (None when unknown)."""
    if name is None:
        return None
    handler = _TABLE.get(name)
    if handler is not None:
        return handler
    if name.startswith("T."):
        d = _dtype_or_none(name[2:])
        if d is not None:
            return lambda ctx, node: typed_immediate(ctx, node, d)
    return None


def _dtype_or_none(text: str):
    try:
        return dt.dtype(text)
    except ValueError:
        return None
