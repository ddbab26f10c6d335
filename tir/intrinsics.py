"""Names of the scalar intrinsics the reader and printer know (``T.exp(x)``, ``T.pow(a, b)``...),
and the ones TVM's build computes from others (:func:`legalized`, shared by both engines)."""
from __future__ import annotations

from functools import lru_cache

UNARY_MATH = frozenset((
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "tanh",
    "sigmoid", "erf", "fabs", "floor", "ceil", "round", "nearbyint", "trunc", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "popcount",
    "clz", "bitwise_not",
))
"""Intrinsics of one argument whose result has the argument's dtype."""

BOOL_UNARY = frozenset(("isnan", "isinf", "isfinite"))
"""Intrinsics of one argument with a bool result."""

BINARY_MATH = frozenset((
    "pow", "atan2", "fmod", "hypot", "copysign", "nextafter", "ldexp", "shift_left",
    "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor",
))
"""Intrinsics of two arguments of one dtype, with that dtype."""

RUNTIME_CALLS = {"call_packed": "int32", "call_cpacked": "int32", "tvm_stack_make_array": "handle",
                 "tvm_stack_make_shape": "handle"}
"""Calls into TVM's runtime that TVM writes into opaque blocks (``T.call_packed(
"tvm.contrib.sort.argsort", T.tvm_stack_make_array(...), ...)``), with their result dtype:
read, printed back and analysed as opaque; never executed here."""

CALL_STATEMENTS = frozenset(("call_packed", "call_cpacked", "call_extern"))
"""Calls of a named outside function, written as statements of their own (not T.evaluate)."""



LEGALIZED = frozenset(("rsqrt", "sigmoid", "tanh", "tan", "sinh", "cosh", "atanh", "exp10"))
"""Float intrinsics TVM's build computes from others, operation by operation in the call's
dtype (its legalization for LLVM); both engines run :func:`legalized` for them, so a float16
``tanh`` rounds where TVM's does (measured against TVM 0.27: every float16 element equal)."""


def legalized(call):
    """The expression TVM's build computes for intrinsic ``call`` (a :class:`~tir.expr.Call`
    of :data:`LEGALIZED` on one float), or None to compute the call as one operation."""
    if call.op not in LEGALIZED or not call.dtype.is_float or len(call.args) != 1:
        return None
    return _legalized(call)


@lru_cache(maxsize=4096)
def _legalized(call):
    from . import expr as E

    x, d = call.args[0], call.dtype
    c = lambda v: E.FloatImm(d, v)  # noqa: E731
    exp = lambda v: E.Call(d, "exp", (v,))  # noqa: E731
    log = lambda v: E.Call(d, "log", (v,))  # noqa: E731
    neg = E.Mul(c(-1.0), x)  # exact: -x
    op = call.op
    if op == "rsqrt":
        return E.Div(c(1.0), E.Call(d, "sqrt", (x,)))
    if op == "sigmoid":
        return E.Div(c(1.0), E.Add(c(1.0), exp(neg)))
    if op == "tanh":
        down, up = exp(E.Mul(c(-2.0), x)), exp(E.Mul(c(2.0), x))
        positive = E.Div(E.Sub(c(1.0), down), E.Add(c(1.0), down))
        negative = E.Div(E.Sub(up, c(1.0)), E.Add(up, c(1.0)))
        return E.Select(E.GE(x, c(0.0)), positive, negative)
    if op == "tan":
        return E.Div(E.Call(d, "sin", (x,)), E.Call(d, "cos", (x,)))
    if op in ("sinh", "cosh"):
        up, down = exp(x), exp(neg)
        return E.Div(E.Sub(up, down) if op == "sinh" else E.Add(up, down), c(2.0))
    if op == "atanh":
        return E.Mul(c(0.5), E.Sub(log(E.Add(c(1.0), x)), log(E.Sub(c(1.0), x))))
    return exp(E.Mul(x, c(2.302585093)))  # exp10
