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
run against numpy on distinct random values; the answer is given only when exactly one
reading reproduces every output (an axis of extent 1 read with ``keepdims`` copies the
input whatever it is: such readings are several and the function abstains).
"""
from __future__ import annotations

import numpy as np

from tir.expr import Call, StringImm
from tir.function import PrimFunc
from tir.functor import pre_order_visit

from ..info import OpInfo, Operand
from .running import concrete_shapes, run

ARGSORT = "tvm.contrib.sort.argsort"
MAX_ELEMENTS = 100_000
SYMBOLIC_VALUE = 3


def _runtime_calls(func: PrimFunc) -> list:
    found = []

    def visit(n):
        if isinstance(n, Call) and n.op in ("call_packed", "call_cpacked", "call_extern"):
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


def recognize_median(func: PrimFunc) -> "OpInfo | None":
    """The median ``func`` computes, or None (see the module doc)."""
    if _runtime_calls(func) != [ARGSORT]:
        return None
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != len(func.params) or len(bufs) not in (2, 3) or not bufs[0].dtype.is_float:
        return None
    if len(bufs) == 3 and not (bufs[1].dtype == bufs[0].dtype and bufs[2].dtype.is_int):
        return None
    if len(bufs) == 2 and bufs[1].dtype != bufs[0].dtype:
        return None
    shapes = concrete_shapes(bufs, SYMBOLIC_VALUE)
    if shapes is None or int(np.prod(shapes[0])) > MAX_ELEMENTS or int(np.prod(shapes[0])) < 1:
        return None
    cands = _readings(shapes[0], shapes[1:])
    if not cands:
        return None
    rng = np.random.default_rng(11)
    dtype = str(bufs[0].dtype)
    size = int(np.prod(shapes[0]))
    x = (rng.permutation(size).astype("float64") - size / 2).reshape(shapes[0]).astype(dtype)  # distinct values
    outs = [np.zeros(s, str(b.dtype)) for s, b in zip(shapes[1:], bufs[1:])]
    got = [run(func, [x] + outs, out=k) for k in range(1, len(bufs))]
    if any(g is None for g in got):
        return None
    kept = [(axis, keep) for axis, keep in cands
            if all(np.array_equal(g, r.astype(g.dtype)) for g, r in zip(got, _reference(x, axis, keep)))]
    if len(kept) != 1:
        return None
    axis, keepdims = kept[0]
    return OpInfo("median", {"axis": None if axis is None else [axis], "keepdims": keepdims},
                  (Operand("data", bufs[0].name, 0),), Operand("output", bufs[1].name, 1))
