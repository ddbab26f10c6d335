"""Names of the scalar intrinsics the reader and printer know (``T.exp(x)``, ``T.pow(a, b)``...)."""
from __future__ import annotations

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
