"""Scalar expressions of TVMScript: names, literals, operators, buffer loads and ``T.*`` calls.

Literals stay Python numbers until they meet a typed operand, whose dtype they take
(``i * 2`` with an int64 ``i`` gives an int64 constant); a lone integer literal is int32 and
a lone float literal float32, as in TVM. Operands of different widths are widened like TVM
does (an int32 operand meeting an int64 one is cast; a constant is re-typed instead).
"""
from __future__ import annotations

import ast
import operator

from .. import dtype as dt
from ..buffer import Buffer
from ..expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BufferLoad, Call, Cast, Div, FloatImm, FloorDiv, FloorMod,
    IntImm, Mul, Not, Or, PrimExpr, Ramp, Select, StringImm, Sub, convert,
)
from ..errors import ParseError
from .context import Context, describe, dotted, error

_BINOPS = {ast.Add: Add, ast.Sub: Sub, ast.Mult: Mul, ast.Div: Div, ast.FloorDiv: FloorDiv, ast.Mod: FloorMod}
BITOPS = {
    ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
    ast.LShift: "shift_left", ast.RShift: "shift_right",
}
"""Python's bitwise operators and the intrinsic calls TVM builds for them (``a ^ b`` is
``tir.bitwise_xor(a, b)``), the same IR ``tir.topi`` lowers the bitwise ops to."""
_PY_BITOPS = {
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "shift_left": operator.lshift, "shift_right": operator.rshift,
}
_CMPOPS = {ast.Eq: EQ, ast.NotEq: NE, ast.Lt: LT, ast.LtE: LE, ast.Gt: GT, ast.GtE: GE}
_NUMBER = (bool, int, float)


def expr(ctx: Context, node):
    """Evaluate an expression node: a PrimExpr, a Python number, a string or a Buffer."""
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise error(node, f"unsupported expression {describe(node)!r}; expected a TIR expression")
    try:
        return handler(ctx, node)
    except ParseError:
        raise
    except RecursionError:
        raise error(node, "expression nested too deeply") from None
    except Exception as err:  # noqa: BLE001 - an IR constructor refused the operands
        raise error(node, f"invalid expression {describe(node)!r}: {err}") from None


def prim(ctx: Context, node, like: "dt.DataType | None" = None) -> PrimExpr:
    """Evaluate ``node`` to a PrimExpr; Python literals take dtype ``like`` (or the default)."""
    value = expr(ctx, node)
    return to_prim(value, node, like)


def to_prim(value, node, like: "dt.DataType | None" = None) -> PrimExpr:
    """Turn an evaluated value into a PrimExpr, or raise a ParseError at ``node``."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, _NUMBER):
        return convert(value, like)
    if isinstance(value, str):
        return StringImm(value)
    if isinstance(value, Buffer):
        raise error(node, f"buffer {value.name!r} used as a value; expected an element such as {value.name}[i]")
    raise error(node, f"expected a TIR expression, got {describe(node)!r}")


def match_types(a: PrimExpr, b: PrimExpr):
    """Bring two operands to one dtype the way TVM does (widen, int -> float)."""
    da, db = a.dtype, b.dtype
    if da == db:
        return a, b
    if _wider(da, db):
        return a, _retype(b, da)
    return _retype(a, db), b


def _wider(da, db) -> bool:
    if da.is_float != db.is_float:
        return da.is_float
    if da.is_bool != db.is_bool:
        return db.is_bool
    return da.bits >= db.bits


def _retype(e: PrimExpr, d) -> PrimExpr:
    if isinstance(e, IntImm) and (d.is_integer or d.is_bool):
        return IntImm(d, e.value)
    if isinstance(e, (IntImm, FloatImm)) and d.is_float:
        return FloatImm(d, float(e.value))
    return Cast(d, e)


def operands(a, b, node=None) -> tuple:
    """Two evaluated operands as PrimExprs of one dtype (literals take the other side's type)."""
    a_lit, b_lit = not isinstance(a, PrimExpr), not isinstance(b, PrimExpr)
    if a_lit and b_lit:
        a = to_prim(a, node)
        a_lit = False
    if a_lit:
        a = to_prim(a, node, b.dtype)
    elif b_lit:
        b = to_prim(b, node, a.dtype)
    return match_types(a, b)


def binary(cls, a, b, node=None) -> PrimExpr:
    """Build ``cls(a, b)`` from evaluated operands."""
    a, b = operands(a, b, node)
    return cls(a, b)


def dim_text(ctx: Context, node):
    """A dimension TVM printed as a string expression: ``"n + 8"``, ``"T.min(5, n) - 3"``.

    Its names must already be defined; errors are reported at the string.
    """
    text = node.value
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise error(node, f"{text!r} is neither a variable name nor an expression") from None
    try:
        v = expr(ctx, tree.body)
    except ParseError as err:
        raise error(node, f"in dimension {text!r}: {err.message}") from None
    if type(v) is int or (isinstance(v, PrimExpr) and v.dtype.is_integer):
        return v
    raise error(node, f"dimension {text!r} is not an integer expression")


def span(lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    """The extent of ``[lo, hi)`` as the printer writes it back.

    Constants fold; ``0:n`` is ``n``; ``m:m + e`` is ``e``; anything else is ``hi - lo``.
    """
    from ..structural import same_ir

    lo, hi = match_types(lo, hi)
    if isinstance(lo, IntImm) and isinstance(hi, IntImm):
        return IntImm(hi.dtype, hi.value - lo.value)
    if isinstance(lo, IntImm) and lo.value == 0:
        return hi
    if isinstance(hi, Add) and same_ir(hi.a, lo):
        return hi.b
    return Sub(hi, lo)


def boolean(value, node) -> PrimExpr:
    """A bool PrimExpr from an evaluated operand of ``and``/``or``/``not``."""
    if isinstance(value, bool):
        return IntImm(dt.bool_, int(value))
    return to_prim(value, node)


# ---------------------------------------------------------------------------- handlers

def _name(ctx, node):
    return ctx.lookup(node.id, node)


def _constant(ctx, node):
    value = node.value
    if isinstance(value, (_NUMBER, str)):
        return value
    raise error(node, f"unsupported literal {value!r}")


def _binop(ctx, node):
    left, right = expr(ctx, node.left), expr(ctx, node.right)
    intrinsic = BITOPS.get(type(node.op))
    if intrinsic is not None:
        return bitwise(intrinsic, left, right, node)
    cls = _BINOPS.get(type(node.op))
    if cls is None:
        raise error(node, f"unsupported operator in {describe(node)!r}; expected + - * / // % & | ^ << >>")
    return binary(cls, left, right, node)


def bitwise(intrinsic: str, a, b, node) -> PrimExpr:
    """``a & b``, ``a << b``...: the intrinsic call on integer or bool operands of one dtype.

    Two Python int literals fold, as Python evaluates them in TVMScript.
    """
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
        return _PY_BITOPS[intrinsic](a, b)
    a, b = operands(a, b, node)
    if a.dtype.is_float:
        raise error(node, f"bitwise operator on {a.dtype} operands in {describe(node)!r}; expected integers or bools")
    return Call(a.dtype, intrinsic, (a, b))


def _invert(value, node):
    """``~x``: ``tir.bitwise_not`` (a Python int literal is complemented right away)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return ~value
    value = to_prim(value, node.operand)
    if value.dtype.is_float:
        raise error(node, f"'~' on a {value.dtype} operand; expected an integer or bool")
    return Call(value.dtype, "bitwise_not", (value,))


def _unaryop(ctx, node):
    value = expr(ctx, node.operand)
    op = type(node.op)
    if op is ast.Not:
        return not value if isinstance(value, bool) else Not(boolean(value, node))
    if op is ast.UAdd:
        return value
    if op is ast.Invert:
        return _invert(value, node)
    if op is not ast.USub:
        raise error(node, "unsupported unary operator; expected -, +, ~ or not")
    if isinstance(value, _NUMBER) and not isinstance(value, bool):
        return -value
    value = to_prim(value, node.operand)
    if isinstance(value, IntImm):
        return IntImm(value.dtype, -value.value)
    if isinstance(value, FloatImm):
        return FloatImm(value.dtype, -value.value)
    return -value


def _compare(ctx, node):
    left = expr(ctx, node.left)
    out = None
    for op, right_node in zip(node.ops, node.comparators):
        cls = _CMPOPS.get(type(op))
        if cls is None:
            raise error(node, "unsupported comparison; expected == != < <= > >=")
        right = expr(ctx, right_node)
        term = binary(cls, left, right, node)
        out = term if out is None else And(out, term)
        left = right
    return out


def _boolop(ctx, node):
    cls = And if isinstance(node.op, ast.And) else Or
    values = [boolean(expr(ctx, v), v) for v in node.values]
    out = values[0]
    for v in values[1:]:
        out = cls(out, v)
    return out


def _ifexp(ctx, node):
    cond = boolean(expr(ctx, node.test), node.test)
    return binary_select(cond, expr(ctx, node.body), expr(ctx, node.orelse), node)


def binary_select(cond, t, f, node) -> PrimExpr:
    """``Select(cond, t, f)`` with literal branches typed like the other branch."""
    t, f = _same_type_pair(t, f, node)
    return Select(cond, t, f)


def _same_type_pair(t, f, node):
    return operands(t, f, node)


def _subscript(ctx, node):
    target = expr(ctx, node.value)
    if not isinstance(target, Buffer):
        raise error(node, f"cannot index {describe(node.value)!r}; expected a buffer")
    return BufferLoad(target, indices(ctx, target, node.slice, node))


def index_nodes(slice_node) -> list:
    """The index expressions of ``A[i, j]`` (``A[()]`` has none)."""
    if isinstance(slice_node, ast.Tuple):
        return list(slice_node.elts)
    return [slice_node]


def indices(ctx, buffer: Buffer, slice_node, node) -> tuple:
    """Point indices of a buffer access, checked against the buffer's rank."""
    nodes = index_nodes(slice_node)
    if len(nodes) != len(buffer.shape):
        raise error(node, f"buffer {buffer.name!r} has rank {len(buffer.shape)}, accessed with {len(nodes)} indices")
    out = []
    for n in nodes:
        out.append(_vector_slice(ctx, n) if isinstance(n, ast.Slice) else prim(ctx, n))
    return tuple(out)


def _vector_slice(ctx, node: ast.Slice) -> Ramp:
    """``buf[i:i + 4]`` (``buf[i:i + 48:6]``) in an access: TVM's print of the vector index
    ``T.Ramp(i, 1, 4)`` (``T.Ramp(i, 6, 8)``): the stop is the start plus lanes * stride."""
    if node.lower is None or node.upper is None:
        raise error(node, "a slice in an access is a vector index: start:start + lanes (or use T.Ramp)")
    start, stop = prim(ctx, node.lower), prim(ctx, node.upper)
    step = 1 if node.step is None else expr(ctx, node.step)
    step = getattr(step, "value", step)
    span = None
    if isinstance(stop, Add) and isinstance(stop.b, IntImm) and stop.a == start:
        span = stop.b.value
    elif isinstance(start, IntImm) and isinstance(stop, IntImm):
        span = stop.value - start.value
    if not start.dtype.is_integer:
        raise error(node, f"a vector slice needs integer bounds, got {start.dtype}")
    if span is None or type(step) is not int or step < 1 or span % step or span // step < 2:
        raise error(node, f"a vector slice needs a constant length of at least 2 lanes: {describe(node)!r}")
    return Ramp(start, IntImm(start.dtype, step), span // step)


def _call(ctx, node):
    from .tir_calls import call_handler

    name = dotted(node.func)
    handler = call_handler(name)
    if handler is None:
        raise error(node, f"unknown function {name or describe(node.func)!r} in a TIR expression")
    return handler(ctx, node)


def _attribute(ctx, node):
    if node.attr == "data" and isinstance(node.value, ast.Name):
        found = ctx.lookup(node.value.id, node.value)
        if isinstance(found, Buffer):
            # ``buf.data``: the buffer's storage, an argument of packed calls
            zeros = tuple(IntImm(dt.int64, 0) for _ in found.shape)
            return Call(dt.handle, "buffer_data", (BufferLoad(found, zeros),))
    raise error(node, f"unexpected {describe(node)!r} in a TIR expression")


_HANDLERS = {
    ast.Name: _name,
    ast.Constant: _constant,
    ast.BinOp: _binop,
    ast.UnaryOp: _unaryop,
    ast.Compare: _compare,
    ast.BoolOp: _boolop,
    ast.IfExp: _ifexp,
    ast.Subscript: _subscript,
    ast.Call: _call,
    ast.Attribute: _attribute,
}
