"""Choosing among resize attributes (2-D and 3-D) that compute the same function on a given shape.

``half_pixel`` with ``round`` and ``asymmetric`` read the same pixels when upscaling by
two, as do several roundings when no position falls on .5. The numbers cannot tell them
apart; the way the expression is written can: TVM's asymmetric upscaling divides
integers, ``floor`` adds an epsilon, ``round_prefer_ceil`` is ``floor(x + 0.5)``. Each
equivalent candidate is lowered with :func:`tir.topi.lower` (which writes the loops as TVM
does) and the first whose intrinsics and float constants (at the precision of their type:
TVM folds scales to float32) are the expression's wins. When none is written alike the
reading is not proven and the recognizer abstains. Candidates written alike are aliases
(``pytorch_half_pixel`` is ``half_pixel`` for outputs longer than one, rounding ``""`` is
the rounding it defaults to): the first in Relax's default-first order is reported.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

import tir
from tir.expr import Call, Div, FloatImm, FloorDiv
from tir.functor import pre_order_visit

from ..semantic import Semantics
from .common import strip

def fingerprint(expr) -> Counter:
    """How often each intrinsic, float constant and integer division (floor or truncating: TVM
    0.27 prints the asymmetric upscaling's as ``T.Div``) occurs in ``expr``."""
    seen: Counter = Counter()

    def visit(n):
        if isinstance(n, Call):
            seen[("call", n.op)] += 1
        elif isinstance(n, FloatImm):
            seen[("float", _typed(n))] += 1
        elif isinstance(n, FloorDiv) or isinstance(n, Div) and not n.dtype.is_float:
            seen[("intdiv",)] += 1
        return True

    pre_order_visit(strip(expr), visit)
    return seen


def _typed(n: FloatImm) -> float:
    """A float constant's value rounded to its type (tir.topi keeps Python floats)."""
    bits = n.dtype.bits
    return float(np.float32(n.value)) if bits == 32 else float(np.float16(n.value)) if bits == 16 else n.value


def _lowered(op: str, x, shape, out_dtype, size, layout, attrs) -> "Counter | None":
    kwargs = {k: v for k, v in attrs.items() if k != "cubic_exclude" or v}
    if out_dtype != x.dtype:
        kwargs["out_dtype"] = str(out_dtype)
    try:
        func = tir.topi.lower(op, [(shape, str(x.dtype))], size=size, layout=layout, **kwargs)
    except ValueError:
        return None
    sem = Semantics(func)
    outs = sem.outputs()
    return fingerprint(sem.meaning(outs[0])) if len(outs) == 1 else None


def _plain(attrs: dict) -> tuple:
    """``attrs`` with aliases resolved: pytorch_half_pixel is half_pixel (for outputs longer
    than one; shorter ones compute differently), rounding "" the rounding it defaults to."""
    mode = attrs["coordinate_transformation_mode"]
    rounding = attrs["rounding_method"] or ("round" if mode == "align_corners" else "floor")
    mode = "half_pixel" if mode == "pytorch_half_pixel" else mode
    return tuple(sorted({**attrs, "coordinate_transformation_mode": mode, "rounding_method": rounding}.items()))


def written_like(flavour, expr, x, size, layout, passing: list) -> "dict | None":
    """The candidate of ``passing`` (equivalent attribute sets, default-first) written as
    ``expr`` is, ``flavour`` (:class:`tir.topi.resize.Flavour`) naming the op. None when none
    is written alike, when candidates that are not aliases of one another are (TVM's
    simplifier folds a scale of one away: an unchanged axis reads alike in every mode). A
    blocked layout (``NCHW4c``) is compared with its plain layout, which TVM writes with the
    same intrinsics and constants."""
    if len(passing) == 1:
        return passing[0]
    plain, shape = layout, list(x.shape)
    if layout not in flavour.layouts:
        plain, shape = flavour.layouts[0], shape[:-1]
    want = fingerprint(expr)
    alike = [a for a in passing if _lowered(flavour.op, x, shape, expr.dtype, size, plain, a) == want]
    if not alike or len({_plain(a) for a in alike}) > 1:
        return None
    return alike[0]
