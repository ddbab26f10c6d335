"""Expressions as TVMScript text, with the fewest parentheses Python needs."""
from __future__ import annotations

import json
import math

from .. import expr as E
from ..intrinsics import BINARY_MATH, BOOL_UNARY, RUNTIME_CALLS, UNARY_MATH

OR, AND, NOT, CMP, BIT_OR, BIT_XOR, BIT_AND, SHIFT, ADD, MUL, UNARY, ATOM = range(1, 13)
"""Python's operator precedences, loosest first."""

_INFIX = {
    E.Add: ("+", ADD), E.Sub: ("-", ADD), E.Mul: ("*", MUL), E.FloorDiv: ("//", MUL),
    E.FloorMod: ("%", MUL), E.EQ: ("==", CMP), E.NE: ("!=", CMP), E.LT: ("<", CMP),
    E.LE: ("<=", CMP), E.GT: (">", CMP), E.GE: (">=", CMP), E.And: ("and", AND), E.Or: ("or", OR),
}
_NAMED = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod"}
_BITWISE = {
    "bitwise_or": ("|", BIT_OR), "bitwise_xor": ("^", BIT_XOR), "bitwise_and": ("&", BIT_AND),
    "shift_left": ("<<", SHIFT), "shift_right": (">>", SHIFT),
}
"""Intrinsic calls TVM prints as Python's bitwise operators."""


def float_text(value: float) -> str:
    """A float literal that reads back exactly."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if value.is_integer() and abs(value) >= 1e16:
        return f"{value:.1f}"  # all digits, as TVM prints huge integral values
    return repr(float(value))


class ExprPrinter:
    """Prints PrimExprs; ``bare_int64`` prints int64 constants as plain numbers (Relax shapes)."""

    def __init__(self, namer, bare_int64: bool = False):
        self.namer = namer
        self.bare_int64 = bare_int64

    def __call__(self, e) -> str:
        return self.text(e)[0]

    def text(self, e):
        """(text, precedence) of an expression."""
        handler = _HANDLERS.get(type(e))
        if handler is not None:
            return handler(self, e)
        if isinstance(e, E.Var):
            return self.namer(e), ATOM
        raise TypeError(f"cannot print {type(e).__name__} as a TIR expression")

    def operand(self, e, prec: int, strict: bool) -> str:
        """``e`` as an operand at ``prec``; parenthesised when it binds less tightly."""
        text, p = self.text(e)
        if p < prec or (strict and p == prec):
            return f"({text})"
        return text

    def args(self, *items) -> str:
        return ", ".join(self(a) for a in items)


def _int(p, e):
    d = e.dtype
    if d.is_bool:
        return f"T.bool({bool(e.value)})", ATOM
    if str(d) == "int32" or (p.bare_int64 and str(d) == "int64"):
        return str(e.value), (UNARY if e.value < 0 else ATOM)
    return f"T.{d}({e.value})", ATOM


def _float(p, e):
    return f"T.{e.dtype}({float_text(e.value)})", ATOM


def _string(p, e):
    return json.dumps(e.value), ATOM


def _infix(p, e):
    op, prec = _INFIX[type(e)]
    if isinstance(e, E.CmpOp) and not isinstance(e, (E.And, E.Or)):
        return f"{p.operand(e.a, prec, True)} {op} {p.operand(e.b, prec, True)}", prec
    return f"{p.operand(e.a, prec, False)} {op} {p.operand(e.b, prec, True)}", prec


def _div(p, e):
    if e.dtype.is_float:
        return f"{p.operand(e.a, MUL, False)} / {p.operand(e.b, MUL, True)}", MUL
    return f"T.Div({p.args(e.a, e.b)})", ATOM


def _named(p, e):
    return f"{_NAMED[type(e)]}({p.args(e.a, e.b)})", ATOM


def _not(p, e):
    return f"not {p.operand(e.a, NOT, False)}", NOT


def _select(p, e):
    return f"T.Select({p.args(e.condition, e.true_value, e.false_value)})", ATOM


def _cast(p, e):
    return f'T.Cast("{e.dtype}", {p(e.value)})', ATOM


def _ramp(p, e):
    return f"T.Ramp({p.args(e.base, e.stride)}, {e.lanes})", ATOM


def _broadcast(p, e):
    return f"T.Broadcast({p(e.value)}, {e.lanes})", ATOM


def _load(p, e):
    idx = p.args(*e.indices) if e.indices else "()"
    return f"{p.namer(e.buffer)}[{idx}]", ATOM


def _call(p, e):
    args = e.args
    known = _is_known_call(e)
    if known and e.op in _BITWISE and not e.dtype.is_float:
        op, prec = _BITWISE[e.op]
        return f"{p.operand(args[0], prec, False)} {op} {p.operand(args[1], prec, True)}", prec
    if known and e.op == "bitwise_not" and not e.dtype.is_float:
        return f"~{p.operand(args[0], UNARY, False)}", UNARY
    if known:
        return f"T.{e.op}({p.args(*args)})", ATOM
    if e.op == "reinterpret" and len(args) == 1:
        return f'T.reinterpret("{e.dtype}", {p(args[0])})', ATOM
    if e.op == "buffer_data" and len(args) == 1 and isinstance(args[0], E.BufferLoad):
        return f"{p.namer(args[0].buffer)}.data", ATOM
    if e.op in RUNTIME_CALLS and str(e.dtype) == RUNTIME_CALLS[e.op]:
        return f"T.{e.op}({p.args(*args)})", ATOM
    if e.op == "call_extern" and args and isinstance(args[0], E.StringImm):
        return f'T.call_extern("{e.dtype}", {p.args(*args)})', ATOM
    rest = "".join(", " + p(a) for a in args)
    return f'T.call_intrin("{e.dtype}", "{e.op}"{rest})', ATOM


def _let(p, e):
    """``T.Let(body, where={v: value})``, as TVM prints a let expression."""
    return f"T.Let({p(e.body)}, where={{{p.namer(e.var)}: {p(e.value)}}})", ATOM


def _is_known_call(e) -> bool:
    args, op = e.args, e.op
    if op == "if_then_else":
        return len(args) == 3 and args[1].dtype == e.dtype == args[2].dtype and args[0].dtype.is_bool
    if op == "likely":
        return len(args) == 1 and e.dtype.is_bool and args[0].dtype.is_bool
    if op in UNARY_MATH:
        return len(args) == 1 and args[0].dtype == e.dtype
    if op in BOOL_UNARY:
        return len(args) == 1 and e.dtype.is_bool
    if op in BINARY_MATH:
        return len(args) == 2 and args[0].dtype == args[1].dtype == e.dtype
    return False


_HANDLERS = {
    E.IntImm: _int, E.FloatImm: _float, E.StringImm: _string, E.Div: _div, E.Not: _not,
    E.Select: _select, E.Cast: _cast, E.BufferLoad: _load, E.Call: _call, E.Let: _let,
    E.Ramp: _ramp, E.Broadcast: _broadcast,
}
_HANDLERS.update({cls: _infix for cls in _INFIX})
_HANDLERS.update({cls: _named for cls in _NAMED})
