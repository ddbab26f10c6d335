"""strided_slice of data with a symbolic extent (a batch ``n``), constant begin, end and
strides.

TVM clamps each bound into the axis before slicing it (topi's dynamic strided_slice): with a
positive stride, begin 3 becomes ``T.min(3, n)`` and begin -12 ``T.min(T.max(n - 12, 0), n)``;
with a negative stride ``T.min(7, n - 1)`` and ``T.min(T.max(n - 4, -1), n - 1)``. The read
index is that clamped begin plus ``stride * v``; the loop extent is the element count, in
whatever form TVM's simplifier left it (``(T.min(8, n) + 2 - T.min(3, n)) // 3``).

Begin and end are read from the integer constants of those forms and checked against the
slice they define for every value of ``n`` (:func:`_symbolic_axis`), so what is reported computes
exactly what the function does. Axes are reported as the constant-extent reader
(:func:`.movement._slice_or_flip`) reports them: only the axes the slice changes. An axis of
constant extent read whole may or may not have been listed by the user: such a slice is
reported only inside a network, whose importer lists the axes it slices
(:func:`whole_axes_assumed`).
"""
from __future__ import annotations

import numpy as np

from tir.expr import Add, Cast, IntImm, Min, Mul, Sub, Var
from tir.functor import pre_order_visit, substitute

from ..affine import const_of
from ..probe import NotEvaluable, evaluate
from .common import Match, Space
from .extent import always_equal, sym
from .movement_index import data_operand
from .symbolic import mentions

WHOLE = "whole"
"""An axis the slice leaves as it is (begin 0, end the extent, stride 1)."""

MAX_POINTS = 4096
"""The most values of ``n`` checked; bounds with larger constants are not read."""


def match_symbolic_slice(load, space: Space) -> "Match | None":
    """strided_slice of the parameter ``load`` reads, when some extent is symbolic."""
    n = _one_symbol(load, space)
    if n is None or len(load.indices) != space.rank:
        return None
    axes, begin, end, strides = [], [], [], []
    constant = []  # the data's extents, None where symbolic
    for d, idx in enumerate(load.indices):
        got = _axis(idx, d, load.buffer.shape[d], space, n)
        if got is None:
            return None
        constant.append(const_of(load.buffer.shape[d]))
        if got is WHOLE:
            continue
        axes.append(d)
        for out, value in zip((begin, end, strides), got):
            out.append(value)
    if not axes:
        return None
    return Match("strided_slice", {"axes": axes, "begin": begin, "end": end, "strides": strides},
                 data_operand(load, space), assumed=whole_axes_assumed(constant, axes))


def whole_axes_assumed(ine, changed) -> tuple:
    """``("axes",)`` when an axis of constant extent is read whole: it may have been listed
    (begin 0, end the extent, stride 1) or not, and the loops are the same. Generated
    slices list such an axis about one time in seven when one is there; importers list only
    the axes they slice (the convention, reported inside a network). A symbolic axis read
    whole was not listed: a listed one shows TVM's clamps of its constant bounds."""
    return ("axes",) if any(e is not None and d not in changed for d, e in enumerate(ine)) else ()


def _one_symbol(load, space) -> "Var | None":
    """The one variable (not a loop variable) of the data's and the output's extents."""
    found = {}

    def visit(node):
        if isinstance(node, Var):
            found[id(node)] = node
        return True

    for e in (*load.buffer.shape, *space.extents):
        pre_order_visit(e, visit)
    loops = {id(v) for v in space.indices}
    symbols = [v for k, v in found.items() if k not in loops]
    return symbols[0] if len(symbols) == 1 else None


def _axis(idx, d, in_ext, space, n) -> "tuple | str | None":
    """(begin, end, stride) of axis ``d`` read at ``idx``, WHOLE, or None when unsure."""
    v, out_ext = space.indices[d], space.extents[d]
    stride = _coefficient(idx, v, space.indices)
    if not stride:
        return None
    offset, c_in, c_out = const_of(_at_zero(idx, v)), const_of(in_ext), const_of(out_ext)
    if None not in (offset, c_in, c_out):
        return _constant_axis(offset, stride, c_in, c_out)
    if (stride, offset) == (1, 0) and always_equal(sym(in_ext), sym(out_ext)):
        return WHOLE
    return _symbolic_axis(idx, v, stride, in_ext, out_ext, space, n)


def _constant_axis(offset, stride, c_in, c_out) -> "tuple | str | None":
    """As the constant-extent reader: end is one past the last element read."""
    if (stride, offset) == (1, 0) and c_in == c_out:
        return WHOLE
    last = offset + stride * (c_out - 1)
    if stride < 0 or c_out < 1 or offset < 0 or last >= c_in:
        return None
    return offset, last + 1, stride


def _coefficient(e, v, loop_vars) -> "int | None":
    """``c`` when ``e`` is ``c * v`` plus terms free of the loop variables, else None."""
    if not mentions(e, loop_vars):
        return 0
    if e is v:
        return 1
    if isinstance(e, Cast) and not e.dtype.is_float:
        return _coefficient(e.value, v, loop_vars)
    if isinstance(e, (Add, Sub)):
        a, b = _coefficient(e.a, v, loop_vars), _coefficient(e.b, v, loop_vars)
        if a is None or b is None:
            return None
        return a + b if isinstance(e, Add) else a - b
    if isinstance(e, Mul):
        for x, k in ((e.a, e.b), (e.b, e.a)):
            c, inner = const_of(k), _coefficient(x, v, loop_vars)
            if c is not None and inner is not None:
                return c * inner
    return None


def _at_zero(idx, v):
    """``idx`` with ``v`` at 0: the offset (a loop-free expression, maybe symbolic)."""
    return substitute(idx, {v: IntImm(v.dtype, 0)})


def _symbolic_axis(idx, v, stride, in_ext, out_ext, space, n) -> "tuple | None":
    """(begin, end, stride) of an axis with a symbolic offset or extent: the one begin whose
    clamp is the offset and the one end whose element count from it is the extent, for every
    ``n``. Several ends can give the same count (ends 2, 3 and 4 by stride 3 from 1): then
    the one whose clamp TVM wrote in the extent (``T.min(4, n)``) is read, else none.

    The offsets and counts, TVM's and ours, are built of ``n``, the constants, +, -, min, max
    and floor division by a constant: affine in ``n`` on each residue class beyond their
    breakpoints, which lie within the constants' reach. Checking every ``n`` up to
    ``top`` (two periods past that reach) is then a proof, not a sample."""
    consts = _constants(idx) | _constants(out_ext) | _constants(in_ext)
    reach = sum(abs(c) for c in consts) + 2
    top = 4 * reach + 2 * abs(stride) + 8
    if top > MAX_POINTS:
        return None
    env = {u: np.zeros(1) for u in space.indices}
    env[n] = np.arange(1, top + 1, dtype=float)
    try:
        offset, count, size = (_on_grid(e, env, n) for e in (_at_zero(idx, v), out_ext, in_ext))
        forms = [_on_grid(e, env, n) for e in _clamps(out_ext, n)]
    except NotEvaluable:
        return None
    bounds = np.arange(-reach, reach + 1)
    clamped = _clamp(bounds[:, None], stride, size[None, :])
    begins = bounds[(clamped == offset).all(axis=1)]
    if len(begins) != 1:
        return None
    counts = _count(offset[None, :], clamped, stride)
    ends = bounds[(counts == np.maximum(count, 0)).all(axis=1)]
    if len(ends) > 1:
        written = [any(np.array_equal(c, f) for f in forms) for c in clamped]
        ends = [e for e in ends if written[e + reach]]
    return (int(begins[0]), int(ends[0]), stride) if len(ends) == 1 else None


def _on_grid(e, env, n):
    """The values of the loop-free expression ``e`` at every ``n`` of ``env``."""
    return np.broadcast_to(evaluate(e, env), env[n].shape)


def _clamps(e, n) -> list:
    """The ``T.min`` nodes of ``e`` that involve ``n``: where TVM writes a clamped bound."""
    out = []

    def visit(node):
        if isinstance(node, Min) and mentions(node, [n]):
            out.append(node)
        return True

    pre_order_visit(e, visit)
    return out


def _constants(e) -> set:
    """The integer constants of ``e``."""
    out = set()

    def visit(node):
        if isinstance(node, IntImm):
            out.add(node.value)
        return True

    pre_order_visit(e, visit)
    return out


def _clamp(bound, stride, size):
    """TVM's clamp of slice bounds (an array, broadcast against ``size``, the axis' extent
    at each ``n``): a negative bound counts from the end; the result lies in ``[0, size]``
    for a positive stride and in ``[-1, size - 1]`` for a negative one."""
    at = np.where(bound < 0, size + bound, bound)
    return np.clip(at, 0, size) if stride > 0 else np.clip(at, -1, size - 1)


def _count(begin, end, stride):
    """The number of elements from ``begin`` towards ``end`` (excluded) by ``stride``."""
    span = end - begin if stride > 0 else begin - end
    return np.maximum(-(-span // abs(stride)), 0)
