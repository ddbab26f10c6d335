"""``nn.softmax`` and ``nn.log_softmax`` (axis), recognised by what the blocks compute.

TVM writes softmax as four blocks (max, exp, sum of exp, divide) and log_softmax as
three; after inlining the intermediates the output is one expression with a max and a
sum reduction over the same axis. The axis is the one along which the expression equals
the numpy softmax of the data operand at sample positions (see :mod:`.numeric`).

Along an axis of extent 1 softmax is 1 and log_softmax 0 whatever the data, so no sample
tells that axis from another unit one: it is read from the loops instead, as the one place
where every max and sum reduction's variable indexes the data (the values must still be
those of the op).
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad

from ..semantic import Reduce
from .common import Match, Space
from .numeric import Check, claim, data_operands, signature
from .sample import extent_value, visit_once


def _softmax(check: Check, data, axis: int, scale: float) -> np.ndarray:
    around = check.around(data.buffer, [axis], scale)
    peak = around.max(axis=1)
    total = np.exp(around - peak[:, None]).sum(axis=1)
    x = check.at_points(data.buffer, list(range(len(check.extents))), scale)
    return np.exp(x - peak) / total


def _log_softmax(check: Check, data, axis: int, scale: float) -> np.ndarray:
    around = check.around(data.buffer, [axis], scale)
    peak = around.max(axis=1)
    total = np.exp(around - peak[:, None]).sum(axis=1)
    x = check.at_points(data.buffer, list(range(len(check.extents))), scale)
    return x - peak - np.log(total)


_REFERENCES = (("nn.softmax", _softmax), ("nn.log_softmax", _log_softmax))


def match_softmax(expr, space: Space, ctx) -> "Match | None":
    """softmax / log_softmax of one data operand along one (non-unit) axis."""
    return claim(expr, space, ctx, _find, _wanted)


def _wanted(expr, ctx) -> bool:
    """A max and a sum reduction and an exp, in a float expression."""
    reds, calls = signature(expr)
    return {"max", "sum"} <= reds and "exp" in calls and expr.dtype.is_float


def _find(check: Check) -> "Match | None":
    for data in data_operands(check):
        found = [(name, axis) for name, ref in _REFERENCES for axis in range(len(check.extents))
                 if check.extents[axis] > 1
                 and check.matches(data, lambda s, r=ref, a=axis: r(check, data, a, s))]
        if not found:
            unit = _unit_axis(check, data)
            if unit is not None:
                found = [(name, unit) for name, ref in _REFERENCES
                         if check.matches(data, lambda s, r=ref: r(check, data, unit, s))]
        if len(found) == 1:
            name, axis = found[0]
            return Match(name, {"axis": axis}, (("data", data.expr, check.space),))
        if found:
            return None
    return None


def _unit_axis(check: Check, data) -> "int | None":
    """The axis of extent 1 that the expression's max and sum reductions run over: every
    reduction has one variable, of extent 1, and every read of the data holds the output's
    indices except, for a read inside a reduction, that variable at one common place."""
    space = check.space
    reds, loads = [], []

    def visit(n):
        if isinstance(n, Reduce):
            reds.append(n)
        elif isinstance(n, BufferLoad) and n.buffer is data.buffer:
            loads.append(n)
        return True

    visit_once(check.expr, visit)
    if {r.combiner for r in reds} != {"max", "sum"} or any(len(r.axes) != 1 for r in reds):
        return None
    rvars = {id(r.axes[0].var) for r in reds}
    if any(check.extents[d] is None for d in range(space.rank)):
        return None
    places = set()
    for load in loads:
        if len(load.indices) != space.rank:
            return None
        for d, (i, o) in enumerate(zip(load.indices, space.indices)):
            if id(i) in rvars:
                places.add(d)
            elif i is not o:
                return None
    if len(places) != 1:
        return None
    axis = places.pop()
    if check.extents[axis] != 1 or any(extent_value(r.axes[0].dom.extent, check.sym) != 1 for r in reds):
        return None
    return axis
