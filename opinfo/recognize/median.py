"""median: recognised by running the function (its sort is a call into TVM's runtime).

TVM legalizes ``median(x, axis, keepdims)`` as an argsort (``T.call_packed(
"tvm.contrib.sort.argsort", ...)``, run by the interpreter, :mod:`tir.interp_packed`)
followed by gathers at the lower-median position ``(k - 1) // 2`` of the ``k`` sorted
elements. With ``axis=None`` the data is flattened in row-major order and one output, the
value, is written: shape ``(1,)`` with ``keepdims`` and ``()`` without. With one axis the
function writes the value and the index of that element along the axis, of the input's
shape with the axis set to 1 (``keepdims``) or dropped.

Only a function that makes exactly that runtime call, takes one floating-point input and
writes one or two outputs is tried. Every (axis, keepdims) whose output shapes match is
run against numpy on distinct random values and on values with many ties (the index
output of a descending sort picks the same value as the ascending one at the middle of an
odd extent, but another of equal elements), with every symbolic extent bound to each of
:data:`SYMBOLIC_VALUES` (a gather position written for one extent, ``1`` for ``(n - 1) // 2``,
shows at another); the answer is given only when exactly one reading reproduces every
output on every run (an axis of extent 1 read with ``keepdims`` copies the input whatever
it is: such readings are several and the function abstains).
"""
from __future__ import annotations

import numpy as np

from tir.expr import Call, StringImm
from tir.function import PrimFunc
from tir.functor import pre_order_visit
from tir.intrinsics import CALL_STATEMENTS

from ..info import OpInfo, Operand
from .running import concrete_shapes, poisoned, run_all, signature

ARGSORT = "tvm.contrib.sort.argsort"
MAX_ELEMENTS = 100_000
SYMBOLIC_VALUES = (3, 4, 5, 8)


def _runtime_calls(func: PrimFunc) -> list:
    found = []

    def visit(n):
        if isinstance(n, Call) and n.op in CALL_STATEMENTS:
            found.append(n.args[0].value if n.args and isinstance(n.args[0], StringImm) else None)
        return True

    pre_order_visit(func.body, visit)
    return found


def _readings(shape: tuple, outs: list) -> list:
    """(axis or None, keepdims) whose TVM output shapes are ``outs``."""
    found = []
    if len(outs) == 1 and outs[0] in ((1,), ()):
        found.append((None, outs[0] == (1,)))
    if len(outs) == 2 and outs[0] == outs[1]:
        for a in range(len(shape)):
            if outs[0] == shape[:a] + (1,) + shape[a + 1:]:
                found.append((a, True))
            if outs[0] == shape[:a] + shape[a + 1:]:
                found.append((a, False))
    return found


def _reference(x: np.ndarray, axis, keepdims: bool) -> list:
    if axis is None:
        flat = np.sort(x.reshape(-1), kind="stable")
        v = flat[(flat.size - 1) // 2]
        return [np.full((1,) if keepdims else (), v, x.dtype)]
    k = x.shape[axis]
    pos = (k - 1) // 2
    idx = np.take(np.argsort(x, axis=axis, kind="stable"), [pos], axis=axis)
    val = np.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        idx, val = np.squeeze(idx, axis), np.squeeze(val, axis)
    return [val, idx]


MAX_SHIFTS = 64
"""Runs with cyclically shifted distinct values (at most)."""


def _kept(func: PrimFunc, bufs: list, shapes: list) -> list:
    """The readings (axis, keepdims) of these concrete shapes that reproduce every output
    on distinct values and on values with ties."""
    cands = _readings(shapes[0], shapes[1:])
    rng = np.random.default_rng(11)
    dtype = str(bufs[0].dtype)
    size = int(np.prod(shapes[0]))
    distinct = (rng.permutation(size).astype("float64") - size / 2).reshape(shapes[0])
    # distinct values shifted cyclically over the flat positions: each position holds the
    # median in some run, so an element read twice or never shows (a random order leaves
    # most positions away from the median, where a wrong reading changes nothing)
    step = max(1, size // MAX_SHIFTS)
    shifts = [((np.arange(size) + r) % size - size / 2).astype("float64").reshape(shapes[0])
              for r in range(0, size, step)]
    for x in [distinct, rng.integers(0, 3, shapes[0]), rng.integers(-1, 2, shapes[0])] + shifts:
        x = x.astype(dtype)
        ran = run_all(func, [x] + [poisoned(s, str(b.dtype)) for s, b in zip(shapes[1:], bufs[1:])])
        if ran is None:
            return []
        got = ran[1:]
        cands = [(axis, keep) for axis, keep in cands
                 if all(g.shape == r.shape and np.array_equal(g, r.astype(g.dtype))
                        for g, r in zip(got, _reference(x, axis, keep)))]
    return cands


def recognize_median(func: PrimFunc) -> "OpInfo | None":
    """The median ``func`` computes, or None (see the module doc)."""
    if _runtime_calls(func) != [ARGSORT]:
        return None
    bufs = signature(func)
    if bufs is None or len(bufs) not in (2, 3) or not bufs[0].dtype.is_float:
        return None
    if len(bufs) == 3 and not (bufs[1].dtype == bufs[0].dtype and bufs[2].dtype.is_int):
        return None
    if len(bufs) == 2 and bufs[1].dtype != bufs[0].dtype:
        return None
    kept = None
    bindings = {tuple(concrete_shapes(bufs, v) or ()) for v in SYMBOLIC_VALUES}
    for shapes in sorted(bindings):
        if not shapes or int(np.prod(shapes[0])) > MAX_ELEMENTS or int(np.prod(shapes[0])) < 1:
            return None
        found = _kept(func, bufs, list(shapes))
        kept = found if kept is None else [c for c in kept if c in found]
        if not kept:
            return None
    if kept is None or len(kept) != 1:
        return None
    axis, keepdims = kept[0]
    return OpInfo("median", {"axis": None if axis is None else [axis], "keepdims": keepdims},
                  (Operand("data", bufs[0].name, 0),), Operand("output", bufs[1].name, 1))
