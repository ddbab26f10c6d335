"""Half-precision functions compared in single precision.

A float16 reduction scheduled with ``rfactor`` (dlight's GEMV and row reductions: each
thread sums a stripe, then the stripes are summed) adds its terms in another order than the
op lowered afresh. In half precision that alone moves a sum of 256 products near 250 by one
or two units (the spacing of float16 there is 0.25), past any tolerance that still tells a
missing term apart from rounding. :func:`verify` compares the two functions once more with
every half-precision buffer, constant and value made single precision: computing the same
arithmetic, they then agree to single-precision rounding; computing something else, they
differ as much as before.

Only functions that convert no float to another float width are promoted: where a function
computes in float32 and rounds to float16 (or the reverse) on purpose, its precision is part
of what it computes, and the promoted copy would hide it.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir import dtype as dt
from tir.buffer import Buffer
from tir.expr import Call, Cast, FloatImm, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, transform

def _half(dtype) -> bool:
    return dtype is not None and dtype.is_float and dtype.bits == 16


def _single(dtype):
    return dt.dtype(f"float32x{dtype.lanes}") if dtype.lanes > 1 else dt.float32


def converts_floats(func: PrimFunc) -> bool:
    """Whether ``func`` casts a float value to another float width."""
    found = []

    def visit(n):
        if isinstance(n, Cast) and n.dtype.is_float and n.value.dtype.is_float and n.dtype.bits != n.value.dtype.bits:
            found.append(n)
    post_order_visit(func.body, visit)
    return bool(found)


def holds_half(func: PrimFunc) -> bool:
    """Whether some buffer of ``func`` holds half-precision floats."""
    return any(_half(b.dtype) for b in func.buffers)


def promoted(func: PrimFunc) -> "PrimFunc | None":
    """``func`` computing in float32 wherever it computes in a 16-bit float, or None when it
    converts between float widths (see the module doc) or holds no half-precision buffer."""
    if not holds_half(func) or converts_floats(func):
        return None

    def post(n):
        if isinstance(n, Buffer) and _half(n.dtype):
            return attrs.evolve(n, dtype=_single(n.dtype))
        if isinstance(n, FloatImm) and _half(n.dtype):
            return FloatImm(_single(n.dtype), n.value)
        if isinstance(n, (Cast, Call, Var)) and _half(n.dtype):
            return attrs.evolve(n, dtype=_single(n.dtype))
        return None
    return transform(func, post)


def single(arrays: list, funcs_buffers) -> list:
    """``arrays`` with those a half-precision buffer holds as float32 (exactly)."""
    return [a.astype(np.float32) if _half(b.dtype) else a for a, b in zip(arrays, funcs_buffers)]
