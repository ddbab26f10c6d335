"""Intrinsics of the mini TIR evaluated with numpy, in the dtype of the call.

Every function takes numpy values (arrays or scalars) already evaluated and returns a value
of the call's dtype. ``if_then_else`` is not here: it is lazy and lives in the evaluator.
"""
from __future__ import annotations

import math

import numpy as np


def _erf(x):
    try:
        from scipy.special import erf
    except ImportError:  # scipy is optional: fall back to the scalar math.erf
        return np.vectorize(math.erf, otypes=[np.float64])(x)
    return erf(x)


def _sign(x):
    return np.sign(x)


def _round(x):
    # TVM lowers tir.round and tir.nearbyint to llvm.nearbyint: round half to even.
    return np.rint(x)


def _fma(a, b, c):
    return a * b + c


def _clz(x):
    bits = x.dtype.itemsize * 8
    u = np.asarray(x).astype(f"uint{bits}")
    out = np.full(u.shape, bits, dtype=np.int64)
    for shift in range(bits):
        set_ = (u >> np.uint64(bits - 1 - shift)).astype(bool) & (out == bits)
        out[set_] = shift
    return out


def _popcount(x):
    bits = x.dtype.itemsize * 8
    u = np.asarray(x).astype(f"uint{bits}")
    count = np.zeros(u.shape, dtype=np.int64)
    for shift in range(bits):
        count += (u >> np.uint64(shift)).astype(np.int64) & 1
    return count


UNARY = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "erf": _erf,
    "fabs": np.abs,
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": _round,
    "nearbyint": _round,
    "sin": np.sin,
    "cos": np.cos,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "sign": _sign,
    "bitwise_not": np.invert,
    "clz": _clz,
    "popcount": _popcount,
}

BINARY = {
    "pow": np.power,
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "ldexp": lambda a, b: np.ldexp(a, b.astype(np.int32)),
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "shift_left": np.left_shift,
    "shift_right": np.right_shift,
}

TERNARY = {"fma": _fma}

NAMES = frozenset(UNARY) | frozenset(BINARY) | frozenset(TERNARY) | {
    "if_then_else", "max_value", "min_value", "infinity", "reinterpret", "likely", "assume",
}


def apply(op: str, args: list, npdtype: np.dtype):
    """Apply the numpy version of intrinsic ``op`` to evaluated ``args``; the result has ``npdtype``.

    Raises KeyError for an unknown intrinsic.
    """
    table = {1: UNARY, 2: BINARY, 3: TERNARY}.get(len(args), {})
    fn = table[op]
    if op in _LIBM and npdtype == np.float16:
        # TVM's build computes a float16 libm function in float (its libm result, nearly
        # always the correctly rounded one) and rounds that to float16: numpy's own float16
        # loops are not correctly rounded in float
        out = fn(*(np.asarray(a, dtype=np.float64) for a in args)).astype(np.float32)
    else:
        out = fn(*args)
    return _as_dtype(out, npdtype)


_LIBM = frozenset(("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "erf", "sin", "cos", "asin",
                   "acos", "atan", "asinh", "acosh", "pow", "atan2", "hypot"))


def _as_dtype(value, npdtype: np.dtype):
    if isinstance(value, np.ndarray):
        return value if value.dtype == npdtype else value.astype(npdtype)
    return npdtype.type(value)


def extreme(op: str, npdtype: np.dtype):
    """``max_value``/``min_value``/``infinity`` of a dtype as a numpy scalar."""
    if op == "infinity":
        return npdtype.type(np.inf)
    if npdtype.kind == "b":
        return np.bool_(op == "max_value")
    info = np.finfo(npdtype) if npdtype.kind == "f" else np.iinfo(npdtype)
    return npdtype.type(info.max if op == "max_value" else info.min)
