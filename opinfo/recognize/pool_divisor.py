"""The divisor of an average pool: which (reading, count_include_pad) it is TVM's formula for.

TVM divides each window sum by a count built per pooled dimension from
``start = o * stride - before`` and ``end = start + (kernel - 1) * dilation``:

* ``count_include_pad``: ``end`` is clipped to ``size + after - 1``;
* otherwise ``end`` is clipped to ``size - 1``, ``start`` moved up to the first tap inside
  the data (``start + max(ceil(-start / dilation), 0) * dilation``), and the product of the
  per-dimension counts to at least 1;

the per-dimension count being ``(end - start) / dilation + 1`` (truncating division).

The divisor must agree with a reading's formula on every output position (that is the
computation). When several readings agree there, the divisor *expression* can still tell
them apart beyond the output range (``min(o * 2 + 1, 11)`` names the input bound), so the
same comparison is repeated on a wider range of positions to break the tie; TVM's
rewrites of these expressions hold for all integers. Only the dimensions whose output
variable the expression still reads are widened: a factor TVM folded to a constant over a
blockized block's range (``min(1, 7 - 2 * w) + 1`` to 2 for ``w`` in [0, 4)) holds on the
output range alone.
"""
from __future__ import annotations

import numpy as np

from tir.expr import Var
from tir.functor import pre_order_visit

from ..probe import NotEvaluable, evaluate

MARGIN = 3


def axis_count(ax, after: int, include: bool, o):
    """TVM's count along one pooled dimension at output positions ``o`` (an array)."""
    start = o * ax.stride - ax.before
    end = start + (ax.kernel - 1) * ax.dilation
    if include:
        end = np.minimum(end, ax.size + after - 1)
    else:
        end = np.minimum(end, ax.size - 1)
        # the first tap inside the data, on the dilation grid
        start = start + np.maximum(np.ceil(-start / ax.dilation), 0) * ax.dilation
    return np.trunc((end - start) / ax.dilation) + 1


def tvm_divisor(axes, after, include: bool, grids):
    """TVM's divisor on the position grids (one array per pooled dimension)."""
    total = 1
    for ax, pa, o in zip(axes, after, grids):
        total = total * axis_count(ax, pa, include, o)
    return total if include else np.maximum(total, 1)


def _grids(axes, margins):
    ranges = [np.arange(-m, ax.out + m, dtype=float) for ax, m in zip(axes, margins)]
    return np.meshgrid(*ranges, indexing="ij")


def _free_vars(expr) -> list:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, Var) else True)
    return found


def observed(expr, out_vars, axes, margin: int):
    """The divisor expression's values on the grid, widened by ``margin`` along the
    dimensions whose variable it reads (None if it reads anything else)."""
    ids = {id(v) for v in out_vars}
    free = {id(v) for v in _free_vars(expr)}
    if not free <= ids:
        return None
    grids = _grids(axes, [margin if id(v) in free else 0 for v in out_vars])
    env = {v: g for v, g in zip(out_vars, grids)}
    try:
        val = evaluate(expr, env)
    except NotEvaluable:
        return None
    return np.broadcast_to(val, grids[0].shape), grids


def settle(expr, out_vars, axes, readings) -> list:
    """The (reading, include) pairs whose divisor formula ``expr`` is (see module doc)."""
    got = observed(expr, out_vars, axes, 0)
    if got is None:
        return []
    vals, grids = got
    keep = [(r, inc) for r in readings for inc in (False, True)
            if np.array_equal(tvm_divisor(axes, r.after, inc, grids), vals)]
    if len(keep) <= 1:
        return keep
    wide = observed(expr, out_vars, axes, MARGIN)
    vals, grids = wide
    tie = [(r, inc) for r, inc in keep if np.array_equal(tvm_divisor(axes, r.after, inc, grids), vals)]
    return tie or keep
