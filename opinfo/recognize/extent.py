"""Comparing extents and counts that may be symbolic (``n * 8``)."""
from __future__ import annotations

import math

from ..affine import SympyConverter, const_of, float_of
from tir.expr import Cast

_CONV = SympyConverter()


def product(extents) -> "int | None":
    vals = [const_of(e) for e in extents]
    return None if any(v is None for v in vals) else math.prod(vals)


def same_extent(count_expr, extents) -> bool:
    """Whether ``count_expr`` (a float or int constant, or a symbolic product, maybe cast)
    equals the product of ``extents``."""
    n = product(extents)
    v = float_of(count_expr)
    if n is not None and v is not None:
        return v == float(n)
    e = count_expr
    while isinstance(e, Cast):
        e = e.value
    try:
        lhs = _CONV(e)
        rhs = 1
        for x in extents:
            rhs = rhs * _CONV(x)
        return (lhs - rhs).expand() == 0
    except (ValueError, TypeError):
        return False
