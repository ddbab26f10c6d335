"""A reshape read off its index forms: every data index is the row-major digit of the
output's flat position, whatever the symbolic extents are.

TVM lowers ``reshape`` by computing the flat output position ``F = ravel(out indices)``
and reading the data at ``unravel(F)``: the index of data dimension ``k`` (extent ``e``,
stride ``s`` = product of the later data extents) is written ``F // s % e`` or
``F % (s * e) // s`` (equal for ``F >= 0``), ``F // s`` for the first dimension (``F`` is
below the element count), ``F % e`` for the last, ``0`` for an extent of 1. When each index
is literally one of these forms with ``F`` equal, as a polynomial in the loop variables and
the symbols, to the row-major position of the output indices, and the element counts
agree, the copy is a row-major reshape for every value of the symbols: a proof, not a
sample (``(n, 3, 6, 5) -> (5, n * 18)`` reads ``x[(v0 * n * 18 + v1) // 90 % n, ...]``).
"""
from __future__ import annotations

import sympy

from tir.expr import FloorDiv, FloorMod, IntImm, Var

from .extent import sym


def _same(a, b) -> bool:
    return a is not None and b is not None and sympy.expand(a - b) == 0


def _digit(idx, flat, stride, extent, first: bool) -> bool:
    """Whether ``idx`` is the digit of ``flat`` at ``stride`` below ``extent`` (sympy)."""
    if isinstance(idx, IntImm):
        return idx.value == 0 and _same(extent, sympy.Integer(1))
    if isinstance(idx, FloorMod):
        inner = idx.a
        if not _same(sym(idx.b), extent):
            return False
        if isinstance(inner, FloorDiv):  # F // s % e
            return _same(sym(inner.b), stride) and _same(sym(inner.a), flat)
        return _same(stride, sympy.Integer(1)) and _same(sym(inner), flat)  # F % e, s == 1
    if isinstance(idx, FloorDiv):
        inner = idx.a
        if not _same(sym(idx.b), stride):
            return False
        if isinstance(inner, FloorMod):  # F % (s * e) // s
            return _same(sym(inner.b), stride * extent) and _same(sym(inner.a), flat)
        return first and _same(sym(inner), flat)  # F // s: the first dimension
    # the flat position itself: one data dimension, or the last with nothing above it
    return first and _same(stride, sympy.Integer(1)) and _same(sym(idx), flat)


def unravel_reshape(load, space) -> bool:
    """Whether ``load`` reads its data at the row-major unravelling of the output position."""
    ine = [sym(e) for e in load.buffer.shape]
    oute = [sym(e) for e in space.extents]
    if None in ine or None in oute or not ine or not all(isinstance(v, Var) for v in space.indices):
        return False
    if not _same(sympy.Mul(*ine), sympy.Mul(*oute)):
        return False
    flat, weight = sympy.Integer(0), sympy.Integer(1)
    for v, e in zip(reversed(space.indices), reversed(oute)):
        flat += sym(v) * weight
        weight *= e
    flat = sympy.expand(flat)
    stride = sympy.Integer(1)
    strides = []
    for e in reversed(ine):
        strides.insert(0, stride)
        stride = sympy.expand(stride * e)
    return all(_digit(idx, flat, s, e, k == 0) for k, (idx, s, e) in enumerate(zip(load.indices, strides, ine)))
