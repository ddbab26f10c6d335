"""C99 text of mini-TIR expressions: types, literals, operators and math.h intrinsics.

Names from the IR never reach C as they are: :class:`Namer` turns each binder into a fresh
identifier made only of ``[A-Za-z0-9_]``, so a buffer named ``x; system("...")`` cannot
inject code.
"""
from __future__ import annotations

import math
import re

import numpy as np

from . import expr as E
from .dtype import DataType
from .intrinsics import legalized

C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "_Float16", "float32": "float", "float64": "double",
    "bfloat16": "float",  # held as float (as the interpreter holds it), rounded where stored or cast
}

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool main".split()
)


class CodegenError(ValueError):
    """The IR uses something the C emitter cannot express."""


def c_type(d: DataType) -> str:
    """The C type holding one value of ``d``."""
    t = C_TYPES.get(str(d))
    if t is None:
        raise CodegenError(f"the C engine does not support dtype {d}")
    return t


class Namer:
    """Fresh, safe C identifiers for IR binders (compared by identity)."""

    def __init__(self):
        self._names: dict = {}
        self._used: set = set()

    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint or "v")[:40] or "v"
        if base[0].isdigit() or base.startswith("_") or base in _C_KEYWORDS or base.startswith("tir_"):
            base = "v_" + base.lstrip("_")
        name, i = base, 1
        while name in self._used:
            name, i = f"{base}_{i}", i + 1
        self._used.add(name)
        return name

    def __call__(self, node, hint: str) -> str:
        key = id(node)
        if key not in self._names:
            self._names[key] = (node, self.fresh(hint))
        return self._names[key][1]


def literal(value, d: DataType) -> str:
    """A C literal of ``value`` typed ``d``."""
    if d.is_bool:
        return "true" if value else "false"
    if d.is_integer:
        v = int(value)
        if d.bits == 64 and v == -(2 ** 63):
            return "INT64_MIN"
        if d.is_int and d.bits in (32, 64) and -(2 ** 31) < v < 2 ** 31:
            return str(v) if v >= 0 else f"({v})"
        suffix = {64: "LL"}.get(d.bits, "") if d.is_int else {64: "ULL"}.get(d.bits, "U")
        return f"(({c_type(d)}){v}{suffix})"
    v = float(value)
    if math.isnan(v):
        text = "NAN"
    elif math.isinf(v):
        text = "INFINITY" if v > 0 else "(-INFINITY)"
    else:
        text = repr(v) if d.bits == 64 else repr(v) + "f"
    if d.bits in (32, 64):
        return text if not text.startswith("-") else f"({text})"
    return f"(({c_type(d)}){text})"


_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=",
        E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||"}

# name -> C function for float/double (float16 goes through float).
_MATH = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sqrt": "sqrt", "tanh": "tanh", "erf": "erf", "fabs": "fabs", "floor": "floor",
    "ceil": "ceil", "trunc": "trunc", "round": "nearbyint", "nearbyint": "nearbyint", "sin": "sin",
    "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
    "cosh": "cosh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "pow": "pow",
    "atan2": "atan2", "fmod": "fmod", "hypot": "hypot", "copysign": "copysign",
    "nextafter": "nextafter",
}


def _half(text: str, d: DataType) -> str:
    """A float16 result rounded to float16 where it is computed: gcc evaluates ``_Float16``
    arithmetic in float and, with ``-fexcess-precision=standard``, rounds only at casts and
    assignments; ``floor(x / y)`` must floor the float16 quotient, as TVM's build does."""
    return f"((_Float16){text})" if d.code == "float" and d.bits == 16 else text


def bf16_round(text: str, d: DataType) -> str:
    """``text`` rounded to ``d`` when ``d`` is bfloat16: TVM's build computes bfloat16 in float
    and rounds (to nearest, ties to even) where a value is stored or cast."""
    return f"tir_round_bf16({text})" if d.code == "bfloat" else text


def suffix_of(d: DataType) -> str:
    """Suffix of the helper functions for dtype ``d`` (``i64``, ``f32``...)."""
    return {"int": "i", "uint": "u", "float": "f", "bfloat": "bf", "bool": "b"}[d.code] + (str(d.bits) if not d.is_bool else "")


class ExprPrinter:
    """Prints expressions; ``load`` and ``var`` callbacks decide how buffers and names print."""

    def __init__(self, var_name, load):
        self.var_name = var_name
        self.load = load

    def __call__(self, e) -> str:
        method = getattr(self, "_" + type(e).__name__.lower(), None)
        if method is None:
            if isinstance(e, E.BinaryOp):
                return self._binary(e)
            raise CodegenError(f"the C engine cannot express {type(e).__name__}")
        return method(e)

    def _var(self, e):
        return self.var_name(e)

    _sizevar = _var

    def _intimm(self, e):
        return literal(e.value, e.dtype)

    def _floatimm(self, e):
        return literal(e.value, e.dtype)

    def _stringimm(self, e):
        raise CodegenError("string constants have no C value here")

    def _binary(self, e):
        a, b, d = self(e.a), self(e.b), e.a.dtype
        op = _OPS.get(type(e))
        if op is not None:
            return _half(f"({a} {op} {b})", e.dtype)
        name = type(e).__name__.lower()
        if d.is_float and type(e) in (E.Div,):
            return _half(f"({a} / {b})", e.dtype)
        return f"tir_{name}_{suffix_of(d)}({a}, {b})"

    def _not(self, e):
        return f"(!{self(e.a)})"

    def _select(self, e):
        return f"({self(e.condition)} ? {self(e.true_value)} : {self(e.false_value)})"

    def _cast(self, e):
        if e.dtype.is_bool:
            return f"({self(e.value)} != 0)"
        if e.value.dtype.is_float and e.dtype.code in ("int", "uint") and e.dtype.bits == 8:
            return f"tir_f2{suffix_of(e.dtype)}((double)({self(e.value)}))"  # saturating: see prelude
        return bf16_round(f"(({c_type(e.dtype)}){self(e.value)})", e.dtype)

    def _bufferload(self, e):
        return self.load(e)

    def _let(self, e):
        name = self.var_name(e.var)
        return f"({{ {c_type(e.var.dtype)} {name} = {self(e.value)}; {self(e.body)}; }})"

    def _call(self, e):
        op, d = e.op, e.dtype
        if op == "if_then_else":
            c, t, f = (self(a) for a in e.args)
            return f"({c} ? {t} : {f})"
        if op in ("max_value", "min_value"):
            return self(E.max_value(d) if op == "max_value" else E.min_value(d))
        if op == "infinity":
            return literal(float("inf"), d)
        if op in ("likely", "assume"):
            return self(e.args[0])
        expanded = legalized(e)
        if expanded is not None:  # computed from other operations, as TVM's build does
            return self(expanded)
        if op == "reinterpret":
            # the bits through a union (well-defined in C99, unlike a pointer cast)
            if "bfloat" in (e.args[0].dtype.code, d.code):
                raise CodegenError("T.reinterpret of bfloat16 is not supported by the C engine")
            src, t = c_type(e.args[0].dtype), c_type(d)
            return f"((union {{ {src} a; {t} b; }}){{ .a = {self(e.args[0])} }}).b"
        args = [self(a) for a in e.args]
        return intrinsic(op, d, e.args, args)


def intrinsic(op: str, d: DataType, ir_args, args) -> str:
    """C text of intrinsic ``op`` with printed ``args``; the result has type ``d``."""
    if op in ("isnan", "isinf", "isfinite"):
        return f"({op}({args[0]}) != 0)"
    if op in ("abs", "fabs") and not d.is_float:
        return f"tir_abs_{suffix_of(d)}({args[0]})"
    if op == "sign":
        x = args[0]
        return f"(({c_type(d)})(({x}) > 0) - ({c_type(d)})(({x}) < 0))"
    if op in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
        sym = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "shift_left": "<<", "shift_right": ">>"}[op]
        return f"(({c_type(d)})({args[0]} {sym} {args[1]}))"
    if op == "bitwise_not":
        return f"(({c_type(d)})(~{args[0]}))"
    if op == "fma":
        return f"(({args[0]}) * ({args[1]}) + ({args[2]}))"
    if op in ("popcount", "clz"):
        src = ir_args[0].dtype
        if src.is_float or src.is_bool:
            raise CodegenError(f"intrinsic {op!r} on {src} is not supported by the C engine")
        bits = src.bits
        x = f"((unsigned long long)(uint{bits}_t)({args[0]}))"
        if op == "popcount":
            return f"(({c_type(d)})__builtin_popcountll({x}))"
        # clz of 0 is the width (LLVM's ctlz with zero allowed, as the interpreter counts)
        return f"(({c_type(d)})({x} == 0ULL ? {bits} : __builtin_clzll({x}) - {64 - bits}))"
    if op == "ldexp" and d.is_float:
        f = "" if d.bits == 64 else "f"
        x = args[0] if d.bits != 16 else f"(float)({args[0]})"
        return f"(({c_type(d)})ldexp{f}({x}, (int)({args[1]})))"
    if not d.is_float:
        raise CodegenError(f"intrinsic {op!r} on {d} is not supported by the C engine")
    t = c_type(d)
    f = "" if d.bits == 64 else "f"
    wide = [a if d.bits != 16 else f"(float)({a})" for a in args]
    if op in _MATH:
        text = f"{_MATH[op]}{f}({', '.join(wide)})"
    else:
        raise CodegenError(f"intrinsic {op!r} is not supported by the C engine")
    return f"(({t}){text})"


def _helpers_for(suffix: str, t: str, is_int: bool, unsigned: bool) -> str:
    lines = [
        f"static inline {t} tir_min_{suffix}({t} a, {t} b) {{ return a < b ? a : b; }}",
        f"static inline {t} tir_max_{suffix}({t} a, {t} b) {{ return a > b ? a : b; }}",
    ]
    if is_int:
        lines += [
            f"static inline {t} tir_div_{suffix}({t} a, {t} b) {{ return a / b; }}",
            f"static inline {t} tir_mod_{suffix}({t} a, {t} b) {{ return a % b; }}",
        ]
        if unsigned:
            lines += [
                f"static inline {t} tir_floordiv_{suffix}({t} a, {t} b) {{ return a / b; }}",
                f"static inline {t} tir_floormod_{suffix}({t} a, {t} b) {{ return a % b; }}",
                f"static inline {t} tir_abs_{suffix}({t} a) {{ return a; }}",
            ]
        else:
            lines += [
                f"static inline {t} tir_floordiv_{suffix}({t} a, {t} b) "
                f"{{ {t} q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }}",
                f"static inline {t} tir_floormod_{suffix}({t} a, {t} b) "
                f"{{ {t} r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }}",
                f"static inline {t} tir_abs_{suffix}({t} a) {{ return a < 0 ? -a : a; }}",
            ]
    else:
        w = "double" if t == "double" else "float"
        f = "" if t == "double" else "f"
        lines += [
            f"static inline {t} tir_mod_{suffix}({t} a, {t} b) {{ return ({t})fmod{f}(({w})a, ({w})b); }}",
            f"static inline {t} tir_floordiv_{suffix}({t} a, {t} b) {{ return ({t})floor{f}(({w})a / ({w})b); }}",
            f"static inline {t} tir_floormod_{suffix}({t} a, {t} b) "
            f"{{ return ({t})(({w})a - floor{f}(({w})a / ({w})b) * ({w})b); }}",
        ]
    return "\n".join(lines)


def prelude() -> str:
    """Includes and the typed helper functions (min, max, floordiv, floormod...)."""
    parts = ["#include <stdint.h>", "#include <stdbool.h>", "#include <stdlib.h>", "#include <math.h>", ""]
    for name, t in C_TYPES.items():
        if name == "bool":
            continue
        d = np.dtype(_dt(name).numpy)
        parts.append(_helpers_for(suffix_of(_dt(name)), t, d.kind in "iu", d.kind == "u"))
    # float -> 8-bit integer saturates, as TVM's vectorised x86 build packs it (the
    # interpreter's _saturate_byte): truncated to int32 (x86's INT32_MIN out of range), clamped
    parts.append("static inline int32_t tir_cvtt_i32(double x) { return (x != x || x < -2147483648.0 || "
                 "x >= 2147483648.0) ? INT32_MIN : (int32_t)x; }")
    parts.append("static inline uint8_t tir_f2u8(double x) { int32_t v = tir_cvtt_i32(x); "
                 "return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }")
    parts.append("static inline int8_t tir_f2i8(double x) { int32_t v = tir_cvtt_i32(x); "
                 "return v < -128 ? -128 : v > 127 ? 127 : (int8_t)v; }")
    # float -> bfloat16, to nearest with ties to even (NaN kept), the value held as float
    parts.append("static inline float tir_round_bf16(float x) { union { float f; uint32_t u; } v = { .f = x }; "
                 "if (x != x) return x; v.u = (v.u + 0x7FFFu + ((v.u >> 16) & 1u)) & 0xFFFF0000u; return v.f; }")
    parts.append("static inline bool tir_min_b(bool a, bool b) { return a && b; }")
    parts.append("static inline bool tir_max_b(bool a, bool b) { return a || b; }")
    return "\n".join(parts) + "\n"


def _dt(name: str) -> DataType:
    from .dtype import dtype

    return dtype(name)
