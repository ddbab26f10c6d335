"""Choosing among resize attributes that compute the same function on a given shape.

``half_pixel`` with ``round`` and ``asymmetric`` read the same pixels when upscaling by
two, as do several roundings when no position falls on .5. The numbers cannot tell them
apart; the way the expression is written can: TVM's asymmetric upscaling divides
integers, ``floor`` adds an epsilon, ``round_prefer_ceil`` is ``floor(x + 0.5)``. Each
equivalent candidate is lowered with :func:`tir.topi.lower` (which writes the loops as TVM
does) and the first whose intrinsics and float constants are the expression's wins; when
none is written alike, the first in Relax's default-first order.
"""
from __future__ import annotations

from collections import Counter

import tir
from tir.expr import Call, FloatImm, FloorDiv
from tir.functor import pre_order_visit

from ..semantic import Semantics
from .common import strip

_TOPI_LAYOUTS = ("NCHW", "NHWC")


def fingerprint(expr) -> Counter:
    """How often each intrinsic, float constant and integer division occurs in ``expr``."""
    seen: Counter = Counter()

    def visit(n):
        if isinstance(n, Call):
            seen[("call", n.op)] += 1
        elif isinstance(n, FloatImm):
            seen[("float", n.value)] += 1
        elif isinstance(n, FloorDiv):
            seen[("floordiv",)] += 1
        return True

    pre_order_visit(strip(expr), visit)
    return seen


def _lowered(x, out_dtype, size, layout, attrs) -> "Counter | None":
    kwargs = {k: v for k, v in attrs.items() if k != "cubic_exclude" or v}
    if out_dtype != x.dtype:
        kwargs["out_dtype"] = str(out_dtype)
    try:
        func = tir.topi.lower("image.resize2d", [(x.shape, str(x.dtype))], size=size, layout=layout, **kwargs)
    except ValueError:
        return None
    sem = Semantics(func)
    outs = sem.outputs()
    return fingerprint(sem.meaning(outs[0])) if len(outs) == 1 else None


def written_like(expr, x, size, layout, passing: list) -> dict:
    """The candidate of ``passing`` (equivalent attribute sets, default-first) written as
    ``expr`` is, else the first."""
    if len(passing) == 1 or layout not in _TOPI_LAYOUTS:
        return passing[0]
    want = fingerprint(expr)
    for attrs in passing:
        if _lowered(x, expr.dtype, size, layout, attrs) == want:
            return attrs
    return passing[0]
