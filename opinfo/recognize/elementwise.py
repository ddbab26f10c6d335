"""Elementwise ops identified by what they compute on sample values.

``identify_unary(f, consts)`` / ``identify_binary(f)`` compare a scalar function (given
as a callable on numpy arrays) with the reference of every known op. Parameters are
recovered from the function itself (leakyrelu's alpha, clip bounds) or, where sampling
cannot see them (softplus threshold), from the constants of the expression, and then
verified.
"""
from __future__ import annotations

import math

import numpy as np

_ERF = np.vectorize(math.erf, otypes=[float])
XS = np.array([-7.3, -3.1, -2.2, -1.3, -0.7, -0.35, -0.05, 0.05, 0.3, 0.65, 1.2, 1.7, 2.6,
               3.9, 5.2, 6.6, 9.4, 23.7])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _gelu(x):
    return 0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "tanh": np.tanh, "erf": _ERF,
    "abs": np.abs, "negative": np.negative, "sin": np.sin, "cos": np.cos, "floor": np.floor,
    "ceil": np.ceil, "round": np.rint, "square": np.square, "sign": np.sign,
    "nn.relu": lambda x: np.maximum(x, 0.0), "nn.gelu": _gelu, "nn.gelu_tanh": _gelu_tanh,
    "nn.silu": lambda x: x / (1.0 + np.exp(-x)),
    "nn.selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1.0)),
    "tan": np.tan, "log1p": np.log1p, "trunc": np.trunc,
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh,
}
PIECEWISE = {"nn.relu", "abs", "negative", "sign", "floor", "ceil", "round", "trunc", "square"}
"""Ops also compared on large values: clip(x, 0, 1e4) is relu on the ordinary samples."""
BIG = np.array([-1e6, -3e4, 3e4, 1e6])
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
"""Ops that are constant on ordinary numbers: told apart on special values."""
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, 1.5, -2.0])
INTEGER_UNARY = {"bitwise_not": lambda x: np.invert(x.astype(np.int64))}
BOOL_UNARY = {"logical_not": np.logical_not}
BOOL_BINARY = {
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
"""Binary ops on bool operands. logical_xor and the bitwise ops are left out: on bools
TVM writes them all as the same ``bitwise_*`` call, so the IR does not tell them apart."""
INTEGER_BINARY = {
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
}

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "power": np.power,
    "floor_divide": lambda a, b: np.floor(a / b), "floor_mod": lambda a, b: a - np.floor(a / b) * b,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "mod": np.fmod, "log_add_exp": np.logaddexp, "atan2": np.arctan2,
}
COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "equal", "not_equal", "log_add_exp",
               "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor"}


def close(a, b, rtol: float = 2e-5, atol: float = 1e-6) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return False
    if not fa.any():
        return False
    return bool(np.allclose(a[fa], b[fa], rtol=rtol, atol=atol))


def identify_unary(f, consts, compare_consts, integer=False, boolean=False) -> "tuple | None":
    """(op name, attrs) of a one-input function ``f``, or None."""
    if boolean:
        xs = np.array([0.0, 1.0, 1.0, 0.0])
        return _first(BOOL_UNARY, lambda ref: np.array_equal(f(xs), ref(xs).astype(float)))
    xs = np.round(XS) if integer else XS
    ys = f(xs)
    for name, ref in UNARY.items():
        with np.errstate(all="ignore"):
            if close(ys, ref(xs)) and (name not in PIECEWISE or close(f(BIG), ref(BIG))):
                return name, {}
    if integer:
        got = _first(INTEGER_UNARY, lambda ref: np.array_equal(ys, ref(xs).astype(float)))
        if got:
            return got
    else:
        with np.errstate(all="ignore"):
            got = _first(PREDICATES, lambda ref: np.array_equal(f(SPECIAL), ref(SPECIAL).astype(float))
                         and np.array_equal(ys, ref(xs).astype(float)))
        if got:
            return got
    # An integer clip's bounds are the float attributes truncated to the input's type
    # (clip(x, -2.5, 0.5) on int32 is written max(min(x, 0), -2)): not recoverable.
    return (_leakyrelu(f, xs, ys, consts) or (None if integer else _clip(f, xs, ys, consts))
            or _softplus(f, consts, compare_consts))


def _first(table, matches):
    """(name, {}) of the first entry of ``table`` whose reference ``matches``, or None."""
    for name, ref in table.items():
        with np.errstate(all="ignore"):
            if matches(ref):
                return name, {}
    return None


def _snap(value, consts):
    for c in consts:
        if c != 0 and math.isclose(c, value, rel_tol=1e-5, abs_tol=1e-9):
            return c
    return value


def _leakyrelu(f, xs, ys, consts):
    alpha = _snap(float(f(np.array([-2.0]))[0]) / -2.0, consts)
    if not np.isfinite(alpha) or alpha in (0.0, 1.0) or alpha not in consts:
        return None  # alpha is a constant of the form: x + 1e-6 has slope 0.9999995 below 0
    if not close(ys, np.where(xs > 0, xs, alpha * xs)):
        return None
    return "nn.leakyrelu", {"alpha": alpha}


def _clip(f, xs, ys, consts):
    lo = _snap(float(f(np.array([-1e30]))[0]), consts)
    hi = _snap(float(f(np.array([1e30]))[0]), consts)
    if lo not in consts or hi not in consts or not lo < hi:
        return None
    probe = np.concatenate([xs, np.linspace(lo - 1, hi + 1, 23)])
    if not close(f(probe), np.clip(probe, lo, hi)):
        return None
    return "clip", {"min": lo, "max": hi}


def _softplus_ref(x, beta, threshold):
    with np.errstate(all="ignore"):
        return np.where(x * beta > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def _softplus(f, consts, compare_consts):
    xs = np.concatenate([XS, XS / 3])
    ys = f(xs)
    for beta in [1.0] + [c for c in consts if c > 0]:
        for thr in compare_consts:
            if not close(ys, _softplus_ref(xs, beta, thr)):
                continue
            edge = np.array([thr / beta - 0.5, thr / beta + 0.5, thr / beta + 3])
            if close(f(edge), _softplus_ref(edge, beta, thr)):
                return "nn.softplus", {"beta": beta, "threshold": thr}
    return None


def identify_binary(f, integer=False, boolean=False) -> "tuple | None":
    """(op name, swapped) of a two-input function, or None."""
    if boolean:
        a = np.array([0.0, 0.0, 1.0, 1.0])
        b = np.array([0.0, 1.0, 0.0, 1.0])
        return _identify_exact(f, a, b, BOOL_BINARY)
    if integer:
        rng = np.random.default_rng(11)
        a = rng.integers(-40, 40, 24).astype(float)
        b = rng.integers(0, 5, 24).astype(float)
        got = _identify_exact(f, a, b, INTEGER_BINARY, cast=lambda v: v.astype(np.int64))
        if got:
            return got
    rng = np.random.default_rng(7)
    a = rng.uniform(-4, 4, 24)
    b = rng.uniform(0.3, 3, 24) * rng.choice([-1, 1], 24)
    if integer:
        a, b = np.round(a * 3), np.where(np.round(b * 2) == 0, 1, np.round(b * 2))
    a[:4] = b[:4]
    pa = np.abs(a) + 0.2
    for swapped in (False, True):
        x, y = (b, a) if swapped else (a, b)
        got = f(a, b)
        got_pos = f(pa, b) if not swapped else f(a, np.abs(b) + 0.2)
        for name, ref in BINARY.items():
            if swapped and name in COMMUTATIVE:
                continue
            if integer and name == "divide":
                ref = _trunc_divide  # TVM's divide on integers truncates (T.Div)
            with np.errstate(all="ignore"):
                if name == "power":
                    xx, yy = ((np.abs(b) + 0.2), a) if swapped else (pa, b)
                    if close(got_pos, ref(xx, yy)):
                        return name, swapped
                    continue
                if close(got, ref(x, y)):
                    return name, swapped
    return None


def _trunc_divide(a, b):
    return np.trunc(a / b)


def _identify_exact(f, a, b, table, cast=lambda v: v):
    """(op name, swapped) for ops of ``table`` compared exactly on samples ``a``, ``b``."""
    got = f(a, b)
    for swapped in (False, True):
        x, y = (b, a) if swapped else (a, b)
        for name, ref in table.items():
            if swapped and name in COMMUTATIVE:
                continue
            with np.errstate(all="ignore"):
                if np.array_equal(got, np.asarray(ref(cast(x), cast(y))).astype(float)):
                    return name, swapped
    return None
