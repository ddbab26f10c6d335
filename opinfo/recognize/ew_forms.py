"""The intrinsics TVM's lowering of each elementwise op calls.

An elementwise op is identified by what it computes on sample values; this is the
structural check that goes with it: the expression may call only intrinsics that the
op's TVM form calls (topi and Relax's legalization, e.g. ``nn.gelu`` calls ``erf``,
``square`` calls nothing). ``power(x, 2.0)`` computes a square but calls ``pow``: it is
the Relax op ``power`` with a constant operand, not ``square``, and must not be named so.
``if_then_else`` is a select, allowed everywhere. Ops whose whole form is one arithmetic
node also fix that node: ``negative`` is ``x * -1``, so ``0 - x`` (Relax's ``subtract``
with a constant operand) is not named ``negative``.
"""
from __future__ import annotations

from tir.expr import And, BinaryOp, BufferLoad, Call, Max, Mod, Mul, Or
from tir.functor import pre_order_visit

from ..semantic import ArgReduce, Reduce

_CALLS = {
    "exp": {"exp"}, "log": {"log"}, "sqrt": {"sqrt"}, "rsqrt": {"rsqrt"}, "sigmoid": {"sigmoid"},
    "tanh": {"tanh"}, "erf": {"erf"}, "abs": {"fabs"}, "sin": {"sin"}, "cos": {"cos"}, "tan": {"tan"},
    "floor": {"floor"}, "ceil": {"ceil"}, "round": {"nearbyint", "round"}, "trunc": {"trunc"},
    "log1p": {"log1p"}, "negative": set(), "square": set(), "sign": set(),
    "nn.relu": set(), "nn.gelu": {"erf"}, "nn.gelu_tanh": {"tanh"}, "nn.silu": {"sigmoid"},
    "nn.selu": {"exp"}, "nn.leakyrelu": set(), "clip": set(), "nn.softplus": {"exp", "log", "log1p"},
    "add": set(), "subtract": set(), "multiply": set(), "divide": set(), "maximum": set(),
    "minimum": set(), "power": {"pow"}, "floor_divide": {"floor"}, "floor_mod": {"floor"},
    "equal": set(), "not_equal": set(), "less": set(), "less_equal": set(), "greater": set(),
    "greater_equal": set(), "where": set(), "astype": set(),
    "acos": {"acos"}, "acosh": {"acosh"}, "asin": {"asin"}, "asinh": {"asinh"}, "atan": {"atan"},
    "atanh": {"atanh"}, "cosh": {"cosh"}, "sinh": {"sinh"},
    "isnan": {"isnan"}, "isinf": {"isinf", "isnan", "fabs"}, "isfinite": {"isfinite", "isinf", "isnan", "fabs"},
    "bitwise_not": {"bitwise_not"}, "logical_not": set(),
    "logical_and": set(), "logical_or": set(), "mod": set(), "log_add_exp": {"exp", "log", "log1p", "fabs"},
    "bitwise_and": {"bitwise_and"}, "bitwise_or": {"bitwise_or"}, "bitwise_xor": {"bitwise_xor"},
    "left_shift": {"shift_left"}, "right_shift": {"shift_right"}, "atan2": {"atan2"},
}
_ANYWHERE = {"if_then_else"}
_ARITHMETIC = {"nn.relu": {Max}, "negative": {Mul}, "square": {Mul}, "logical_and": {And}, "logical_or": {Or},
               "logical_not": set(), "mod": {Mod}, "bitwise_not": set(), "bitwise_and": set(),
               "bitwise_or": set(), "bitwise_xor": set(), "left_shift": set(), "right_shift": set()}
"""Ops whose TVM form is one arithmetic node: the only arithmetic node types they may use
(relu is ``max(x, 0)``; leakyrelu with alpha 0 prints ``Select(0 < x, x, 0)``)."""


def calls_allowed(name: str, expr, leaves) -> bool:
    """Whether ``expr`` (outside its ``leaves``) calls only intrinsics of ``name``'s TVM form;
    an op missing from the table is never allowed."""
    allowed = _CALLS.get(name)
    if allowed is None or not called(expr, leaves) <= allowed | _ANYWHERE:
        return False
    nodes = _ARITHMETIC.get(name)
    return nodes is None or _arithmetic(expr, leaves) <= nodes


def _arithmetic(expr, leaves) -> set:
    """Types of the arithmetic nodes in ``expr`` outside its ``leaves``."""
    return _outside(expr, leaves, BinaryOp, type)


def called(expr, leaves) -> set:
    """Names of the intrinsics called in ``expr``, not looking into ``leaves``."""
    return _outside(expr, leaves, Call, lambda n: n.op)


def _outside(expr, leaves, node_type, key) -> set:
    """``key(n)`` of every ``node_type`` node of ``expr`` outside loads, reductions and ``leaves``."""
    stop = set(leaves)
    found = set()

    def visit(n):
        if isinstance(n, (BufferLoad, Reduce, ArgReduce)) or n in stop:
            return False
        if isinstance(n, node_type):
            found.add(key(n))
        return True

    pre_order_visit(expr, visit)
    return found
