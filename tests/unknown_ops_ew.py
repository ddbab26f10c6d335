"""Elementwise cases of the unknown-ops bench (see :mod:`unknown_ops`): Relax ops outside
the corpus (log_add_exp, atan2, mod, isinf, ...), activations written as one block
that are no Relax op (hardswish, elu, mish, log_sigmoid), variants of known ops (gelu in
float16, clip bounds) and binary ops with a constant operand."""
from __future__ import annotations

import math

from tir import dtype as dt
from tir.builder import Builder
from tir.function import PrimFunc
from tir.expr import EQ, NE, Call, Cast, Max, Min, Mod, Not, Select, const

from unknown_ops import F32, Case, _one

_X = [((2, 3, 4), F32)]


def _call(op, *args, dtype=F32):
    return Call(dt.dtype(dtype), op, args)


def unary(fn, dtype=F32) -> "PrimFunc":
    """One ``compute`` block ``fn(x[i...])``."""
    return _one("compute", [((2, 3, 4), dtype)], lambda x: lambda *i: fn(x[i]), (2, 3, 4),
                names=["i0", "i1", "i2"])


def binary(fn, dtype=F32, out_dtype=None) -> "PrimFunc":
    """One ``T_*`` block ``fn(a[i...], b[i...])`` over two (2, 3, 4) inputs."""
    return _one("T_op", [((2, 3, 4), dtype), ((2, 3, 4), dtype)], lambda a, b: lambda *i: fn(a[i], b[i]),
                (2, 3, 4), dtype=out_dtype)


def c(v, dtype=F32):
    return const(v, dtype)


def hardswish(x):
    return x * Min(Max(x + c(3.0), c(0.0)), c(6.0)) / c(6.0)


def hard_sigmoid(x):
    return Max(c(0.0), Min(c(1.0), x * c(0.2) + c(0.5)))


def elu(x):
    return Select(x > c(0.0), x, c(1.0) * (_call("exp", x) - c(1.0)))


def mish(x):
    return x * _call("tanh", _call("log", c(1.0) + _call("exp", x)))


def log_sigmoid(x):
    return _call("log", _call("sigmoid", x))


def softsign(x):
    return x / (c(1.0) + _call("fabs", x))


def gelu_sigmoid(x):
    return x * _call("sigmoid", c(1.702) * x)


def gelu_f16(x):
    """TVM's float16 gelu: erf computed in float32."""
    erf = Cast(dt.dtype("float16"), _call("erf", Cast(dt.dtype(F32), x * c(0.5 ** 0.5, "float16"))))
    return x * (c(0.5, "float16") + erf * c(0.5, "float16"))


def gelu_regrouped(x):
    return c(0.5) * x * (c(1.0) + _call("erf", x / c(math.sqrt(2.0))))


def isinf_tvm(x):
    """TVM's ``isinf``: ``fabs(x) == inf and not isnan(x)``."""
    return EQ(_call("fabs", x), c(float("inf"))) & Not(_call("isnan", x, dtype="bool"))


def log_add_exp(a, b):
    return Max(a, b) + _call("log1p", _call("exp", c(0.0) - _call("fabs", a - b)))




def quantize(x):
    """``relax.quantize`` to int8 with constant scale 0.5 and zero point 3."""
    v = Max(Min(_call("round", x / c(0.5)) + c(3.0), c(127.0)), c(-128.0))
    return Cast(dt.dtype("int8"), v)


def dequantize_per_channel() -> "PrimFunc":
    """``relax.dequantize`` (axis 1) with scale and zero-point tensors."""
    shape = (2, 3, 4)
    return _one("dequantized", [(shape, "int8"), ((3,), F32), ((3,), "int8")],
                lambda x, s, z: lambda *i: (Cast(dt.dtype(F32), x[i]) - Cast(dt.dtype(F32), z[i[1]])) * s[i[1]],
                shape, dtype=F32)


def erf_f16() -> "PrimFunc":
    """Relax's float16 ``erf``: cast to float32, erf, cast back, as three blocks."""
    b = Builder()
    x = b.placeholder((2, 3), "float16", "x")
    up = b.compute("T_cast", (2, 3), lambda *i: Cast(dt.dtype(F32), x[i]), names=["ax0", "ax1"])
    e = b.compute("compute", (2, 3), lambda *i: _call("erf", up[i]))
    out = b.compute("T_cast", (2, 3), lambda *i: Cast(dt.dtype("float16"), e[i]), names=["ax0", "ax1"])
    return b.build([x], [out])


def where_scalar() -> "PrimFunc":
    """``where(cond, x, 0.0)`` with the constant folded in: two tensor operands."""
    return _one("T_where", [((2, 3), "bool"), ((2, 3), F32)],
                lambda cnd, x: lambda *i: Select(cnd[i], x[i], c(0.0)), (2, 3))


def with_constant(fn) -> "PrimFunc":
    """A binary op whose second operand Relax folded into a scalar constant."""
    return unary(fn)


def ew_cases() -> list:
    """The elementwise cases."""
    return [
        Case("hardswish (one block)", lambda: unary(hardswish)),
        Case("hard_sigmoid (one block)", lambda: unary(hard_sigmoid)),
        Case("elu (one block)", lambda: unary(elu)),
        Case("mish (one block)", lambda: unary(mish)),
        Case("log_sigmoid (one block)", lambda: unary(log_sigmoid)),
        Case("softsign (one block)", lambda: unary(softsign)),
        Case("gelu ~ x*sigmoid(1.702x)", lambda: unary(gelu_sigmoid)),
        Case("nn.gelu (float16, TVM form)", lambda: unary(gelu_f16, "float16"), ((("nn.gelu", {}),),)),
        Case("nn.gelu (regrouped)", lambda: unary(gelu_regrouped), ((("nn.gelu", {}),),)),
        Case("sigmoid as 1/(1+exp(-x))", lambda: unary(lambda x: c(1.0) / (c(1.0) + _call("exp", c(0.0) - x))),
             ((("sigmoid", {}),),)),
        Case("acosh", lambda: unary(lambda x: _call("acosh", x)), ((("acosh", {}),),)),
        Case("atan", lambda: unary(lambda x: _call("atan", x)), ((("atan", {}),),)),
        Case("sinh", lambda: unary(lambda x: _call("sinh", x)), ((("sinh", {}),),)),
        Case("isinf", lambda: unary(lambda x: _call("isinf", x, dtype="bool")), ((("isinf", {}),),)),
        Case("isinf (TVM form)", lambda: unary(isinf_tvm), ((("isinf", {}),),)),
        Case("isfinite (TVM form)", lambda: unary(lambda x: Not(isinf_tvm(x)) & Not(_call("isnan", x, dtype="bool"))),
             ((("isfinite", {}),),)),
        Case("isnan", lambda: unary(lambda x: _call("isnan", x, dtype="bool")), ((("isnan", {}),),)),
        Case("logical_not", lambda: unary(lambda x: Not(x), "bool"), ((("logical_not", {}),),)),
        Case("bitwise_not", lambda: unary(lambda x: _call("bitwise_not", x, dtype="int32"), "int32"),
             ((("bitwise_not", {}),),)),
        Case("right_shift", lambda: binary(lambda a, b: _call("shift_right", a, b, dtype="int32"), "int32"),
             ((("right_shift", {}),),)),
        Case("exp2", lambda: unary(lambda x: _call("exp2", x))),
        Case("log_add_exp", lambda: binary(log_add_exp), ((("log_add_exp", {}),),)),
        Case("atan2", lambda: binary(lambda a, b: _call("atan2", a, b)), ((("atan2", {}),),)),
        Case("mod (truncated)", lambda: binary(lambda a, b: Mod(a, b)), ((("mod", {}),),)),
        Case("bitwise_and", lambda: binary(lambda a, b: _call("bitwise_and", a, b, dtype="int32"), "int32"),
             ((("bitwise_and", {}),),)),
        Case("logical_xor", lambda: binary(lambda a, b: _call("bitwise_xor", a, b, dtype="bool"), "bool")),
        Case("clip(-2.5, 3.25)", lambda: unary(lambda x: Max(Min(x, c(3.25)), c(-2.5))),
             ((("clip", {"min": -2.5, "max": 3.25}),),)),
        Case("clip int32 (-3, 7)", lambda: unary(lambda x: Max(Min(x, c(7, "int32")), c(-3, "int32")), "int32"),
             ((("clip", {"min": -3, "max": 7}),),)),
        Case("quantize (constant scale, zero point)", lambda: unary(quantize)),
        Case("dequantize (per channel)", dequantize_per_channel),
        Case("dequantize (constant 0.5, 3)", lambda: unary(
            lambda x: (Cast(dt.dtype(F32), x) - c(3.0)) * c(0.5), "int8")),
        Case("logical_and", lambda: binary(lambda a, b: a & b, "bool"), ((("logical_and", {}),),)),
        Case("logical_or", lambda: binary(lambda a, b: a | b, "bool"), ((("logical_or", {}),),)),
        Case("not_equal on bools", lambda: binary(lambda a, b: NE(a, b), "bool", out_dtype="bool"),
             ((("not_equal", {}),),)),
        Case("floor_mod (known)", lambda: binary(lambda a, b: a - _call("floor", a / b) * b),
             ((("floor_mod", {}),),)),
        Case("greater (known)", lambda: binary(lambda a, b: a > b, out_dtype="bool"), ((("greater", {}),),)),
        Case("erf (float16, three blocks)", erf_f16, ((("erf", {}),),)),
        Case("where(cond, x, 0.0)", where_scalar),
        Case("add(x, 2.0)", lambda: with_constant(lambda x: x + c(2.0)), ((("add", {}),),)),
        Case("multiply(x, 0.01)", lambda: with_constant(lambda x: x * c(0.01)), ((("multiply", {}),),)),
        Case("power(x, 2.0)", lambda: with_constant(lambda x: _call("pow", x, c(2.0))), ((("power", {}),),)),
        Case("power(x, 0.5)", lambda: with_constant(lambda x: _call("pow", x, c(0.5))), ((("power", {}),),)),
        Case("subtract(0, x)", lambda: with_constant(lambda x: c(0.0) - x), ((("subtract", {}),),)),
        Case("divide(6, x)", lambda: with_constant(lambda x: c(6.0) / x), ((("divide", {}),),)),
        Case("clip(x, -inf, 6) is not minimum", lambda: unary(lambda x: Max(Min(x, c(6.0)), c(float("-inf"))))),
        Case("x * 0.5 + 1.0 (two ops in one block)", lambda: unary(lambda x: x * c(0.5) + c(1.0))),
        Case("maximum(x, 0.0) == nn.relu", lambda: with_constant(lambda x: Max(x, c(0.0))),
             ((("nn.relu", {}),),)),
    ]
