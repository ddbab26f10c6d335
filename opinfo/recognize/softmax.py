"""``nn.softmax`` and ``nn.log_softmax`` (axis), recognised by what the blocks compute.

TVM writes softmax as four blocks (max, exp, sum of exp, divide) and log_softmax as
three; after inlining the intermediates the output is one expression with a max and a
sum reduction over the same axis. The axis is the one along which the expression equals
the numpy softmax of the data operand at sample positions (see :mod:`.numeric`).
"""
from __future__ import annotations

import numpy as np

from .common import Match, Space
from .numeric import Check, claim, data_operands, signature


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
        if len(found) == 1:
            name, axis = found[0]
            return Match(name, {"axis": axis}, (("data", data.expr, check.space),))
        if found:
            return None
    return None
