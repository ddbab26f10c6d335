"""``std`` (axis, keepdims): Relax legalizes it as ``sqrt`` of the variance blocks, all in one
PrimFunc. Recognized whole, so that it is not read as a variance followed by a sqrt (the
fused kernel of two ops that TVM's FuseOps would also make of them: the one-op reading is
preferred, as a single Relax op explains the PrimFunc with fewer ops)."""
from __future__ import annotations

from tir.expr import Call

from .common import Match, Space, strip
from .reduce import match_variance


def match_std(expr, space: Space, ctx) -> "Match | None":
    """``sqrt(variance(x))`` at the root."""
    e = strip(expr)
    if not (isinstance(e, Call) and e.op == "sqrt" and len(e.args) == 1):
        return None
    var = match_variance(e.args[0], space, ctx)
    if var is None:
        return None
    return Match("std", var.attrs, var.inputs, assumed=var.assumed, unconventional=var.unconventional)
