"""Unary elementwise ops and activations, as TVM's topi writes them: a ``compute`` block per
intrinsic (loops ``i0...``), ``T_*`` blocks (loops ``ax0...``) for the arithmetic steps."""
from __future__ import annotations

import math

from ..buffer import Buffer
from ..builder import Builder
from .. import dtype as dt
from ..expr import EQ, LT, And, Call, Cast, Max, Min, Not, Select, const
from .common import OpError


def _intrinsic(name):
    return lambda x: Call(x.dtype, name, (x,))


# op name -> intrinsic of the one "compute" block TVM emits for it.
INTRINSICS = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "sigmoid": "sigmoid",
    "tanh": "tanh", "erf": "erf", "abs": "fabs", "sin": "sin", "cos": "cos", "tan": "tan",
    "floor": "floor", "ceil": "ceil", "round": "nearbyint", "log2": "log2", "log10": "log10",
    "exp2": "exp2", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
    "trunc": "trunc", "isnan": "isnan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "bitwise_not": "bitwise_not",
}


def elementwise(b: Builder, name: str, x: Buffer, fn, loops: str = "i", dtype=None) -> Buffer:
    """``name[i...] = fn(x[i...])`` over the whole of ``x``."""
    names = [f"{loops}{d}" for d in range(x.ndim)]
    return b.compute(name, x.shape, lambda *i: fn(x[i]), names=names, dtype=dtype)


def unary(b: Builder, op: str, x: Buffer) -> Buffer:
    """A unary math op: one of :data:`INTRINSICS`, ``isinf``, ``isfinite``, ``logical_not``,
    ``negative``, ``square`` or ``sign``."""
    if op == "bitwise_not":  # TVM's block and loop names for it: T_bitwise_not over ax*
        return elementwise(b, "T_bitwise_not", x, _intrinsic(INTRINSICS[op]), loops="ax")
    if op in INTRINSICS:
        if op in ("abs",) and not x.dtype.is_float:
            return elementwise(b, "compute", x, lambda v: Select(LT(v, const(0, v.dtype)), v * const(-1, v.dtype), v))
        if op == "isnan":
            return elementwise(b, "compute", x, _isnan, dtype="bool")
        return elementwise(b, "compute", x, _intrinsic(INTRINSICS[op]))
    if op in ("isinf", "isfinite"):
        if not x.dtype.is_float:
            raise OpError(op, "dtype", f"expected a float tensor, got {x.dtype}")
        fn = _isinf if op == "isinf" else (lambda v: And(Not(_isinf(v)), Not(_isnan(v))))
        return elementwise(b, "compute", x, fn, dtype="bool")
    if op == "logical_not":
        return elementwise(b, "T_logical_not", x, Not, loops="ax")
    if op == "negative":
        return elementwise(b, "compute", x, lambda v: v * const(-1, v.dtype))
    if op == "square":
        return elementwise(b, "T_multiply", x, lambda v: v * v, loops="ax")
    if op == "sign":
        return elementwise(b, "T_sign", x, _sign, loops="ax")
    raise OpError(op, "op", "not a unary op")


def _isnan(v):
    return Call(dt.bool_, "isnan", (v,))


def _isinf(v):
    """TVM's ``isinf``: ``fabs(v) == inf and not isnan(v)``."""
    return And(EQ(Call(v.dtype, "fabs", (v,)), const(math.inf, v.dtype)), Not(_isnan(v)))


def _sign(v):
    zero = const(0, v.dtype)
    return Select(LT(zero, v), const(1, v.dtype), Select(LT(v, zero), const(-1, v.dtype), zero))


def astype(b: Builder, x: Buffer, dtype) -> Buffer:
    """``T.Cast(dtype, x)`` in a ``compute`` block."""
    return elementwise(b, "compute", x, lambda v: Cast(_dtype(dtype), v), dtype=dtype)


def _dtype(d):
    from ..dtype import dtype as parse

    try:
        return parse(d)
    except ValueError as err:
        raise OpError("astype", "dtype", str(err)) from None


def relu(b: Builder, x: Buffer) -> Buffer:
    """``T.max(x, 0)``."""
    return elementwise(b, "compute", x, lambda v: Max(v, const(0, v.dtype)))


def clip(b: Builder, x: Buffer, lo, hi) -> Buffer:
    """``T.max(T.min(x, hi), lo)`` (TVM's ``tir_clip``)."""
    if lo > hi:
        raise OpError("clip", "min", f"min {lo} is greater than max {hi}")
    return elementwise(b, "compute", x, lambda v: Max(Min(v, const(hi, v.dtype)), const(lo, v.dtype)))


def leakyrelu(b: Builder, x: Buffer, alpha) -> Buffer:
    """``Select(0 < x, x, x * alpha)``."""
    return elementwise(b, "compute", x, lambda v: Select(LT(const(0, v.dtype), v), v, v * const(alpha, v.dtype)))


def softplus(b: Builder, x: Buffer, beta=1.0, threshold=20.0) -> Buffer:
    """``Select(threshold < x*beta, x, log(1 + exp(x*beta)) / beta)`` with the unit factors folded."""
    if beta <= 0:
        raise OpError("nn.softplus", "beta", f"must be positive, got {beta}")

    def fn(v):
        z = v if beta == 1 else v * const(beta, v.dtype)
        soft = Call(v.dtype, "log", (const(1.0, v.dtype) + Call(v.dtype, "exp", (z,)),))
        if beta != 1:
            soft = soft / const(beta, v.dtype)
        return Select(LT(const(threshold, v.dtype), z), v, soft)

    return elementwise(b, "compute", x, fn)


def _scale(b, name, x, fn):
    """A ``T_*`` block (loops ``ax...``) applying ``fn`` to each element of ``x``."""
    return elementwise(b, name, x, fn, loops="ax")


def gelu(b: Builder, x: Buffer) -> Buffer:
    """``x * (0.5 + erf(x / sqrt 2) * 0.5)`` in five blocks."""
    dt = x.dtype
    t1 = _scale(b, "T_multiply", x, lambda v: v * const(math.sqrt(0.5), dt))
    t2 = elementwise(b, "compute", t1, _intrinsic("erf"))
    t3 = _scale(b, "T_multiply", t2, lambda v: v * const(0.5, dt))
    t4 = _scale(b, "T_add", t3, lambda v: const(0.5, dt) + v)
    return _binary_same(b, "T_multiply", x, t4, lambda p, q: p * q)


def gelu_tanh(b: Builder, x: Buffer) -> Buffer:
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` in nine blocks."""
    dt = x.dtype
    half = _scale(b, "T_multiply", x, lambda v: const(0.5, dt) * v)
    scaled = _scale(b, "T_multiply", x, lambda v: const(math.sqrt(2 / math.pi), dt) * v)
    cube_c = _scale(b, "T_multiply", x, lambda v: const(0.044715, dt) * v)
    cube = _binary_same(b, "T_multiply", cube_c, x, lambda p, q: p * q)
    inner = _scale(b, "T_add", cube, lambda v: const(1.0, dt) + v)
    arg = _binary_same(b, "T_multiply", scaled, inner, lambda p, q: p * q)
    th = elementwise(b, "compute", arg, _intrinsic("tanh"))
    one_plus = _scale(b, "T_add", th, lambda v: const(1.0, dt) + v)
    return _binary_same(b, "T_multiply", half, one_plus, lambda p, q: p * q)


def silu(b: Builder, x: Buffer) -> Buffer:
    """``x * sigmoid(x)``."""
    sig = elementwise(b, "compute", x, _intrinsic("sigmoid"))
    return _binary_same(b, "T_multiply", x, sig, lambda p, q: p * q)


def selu(b: Builder, x: Buffer) -> Buffer:
    """``scale * (max(x, 0) + min(0, alpha * (exp(x) - 1)))`` in seven blocks."""
    dt = x.dtype
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    pos = _scale(b, "T_maximum", x, lambda v: Max(v, const(0.0, dt)))
    ex = elementwise(b, "compute", x, _intrinsic("exp"))
    em1 = _scale(b, "T_subtract", ex, lambda v: v - const(1.0, dt))
    neg = _scale(b, "T_multiply", em1, lambda v: const(alpha, dt) * v)
    negmin = _scale(b, "T_minimum", neg, lambda v: Min(const(0.0, dt), v))
    total = _binary_same(b, "T_add", pos, negmin, lambda p, q: p + q)
    return _scale(b, "T_multiply", total, lambda v: const(scale, dt) * v)


def _binary_same(b, name, x, y, fn):
    names = [f"ax{d}" for d in range(x.ndim)]
    return b.compute(name, x.shape, lambda *i: fn(x[i], y[i]), names=names)
