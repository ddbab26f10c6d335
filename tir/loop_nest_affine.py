"""Linear (affine) facts about index expressions, used to schedule loop nests in C.

``linear_coeffs(e)`` writes an integer expression as ``sum(c_v * v) + c0`` with constant
``c_v`` when it can (Add, Sub, Mul by a constant, Let-free), else None.
"""
from __future__ import annotations

from . import expr as E
from .functor import substitute


def linear_coeffs(e) -> "dict | None":
    """{var: coefficient, None: constant} for an affine integer expression, else None."""
    if isinstance(e, E.IntImm):
        return {None: e.value}
    if isinstance(e, E.Var):
        return {e: 1}
    if isinstance(e, E.Cast) and e.dtype.is_integer and e.value.dtype.is_integer:
        return linear_coeffs(e.value)
    if isinstance(e, (E.Add, E.Sub)):
        a, b = linear_coeffs(e.a), linear_coeffs(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, E.Add) else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, E.Mul):
        a, b = linear_coeffs(e.a), linear_coeffs(e.b)
        if a is None or b is None:
            return None
        if set(a) == {None}:
            a, b = b, a
        if set(b) != {None}:
            return None
        return {k: v * b[None] for k, v in a.items()}
    return None


def coeff_of(e, var) -> "int | None":
    """The constant coefficient of ``var`` in ``e`` (0 if absent), or None if not affine in it."""
    lin = linear_coeffs(e)
    if lin is None:
        from .loop_nest import free_vars

        return 0 if var not in free_vars(e) else None
    return lin.get(var, 0)


def flat_offset(load_or_store, bindings: dict):
    """The element offset of an access as an expression of loop variables (compact layout)."""
    buf = load_or_store.buffer
    strides = list(buf.strides) or _compact(buf.shape)
    total = None
    for idx, stride in zip(load_or_store.indices, strides):
        idx = E.cast(substitute(idx, bindings), "int64")
        term = idx * E.cast(stride, "int64") if not _is_one(stride) else idx
        total = term if total is None else total + term
    return total


def _is_one(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def _compact(shape) -> list:
    out, acc = [], None
    for s in reversed(shape):
        out.append(acc if acc is not None else E.IntImm(s.dtype, 1))
        acc = s if acc is None else acc * s
    return list(reversed(out))
