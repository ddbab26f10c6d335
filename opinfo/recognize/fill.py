"""Data-free functions: a constant fill or an identity-like 0/1 diagonal.

A PrimFunc whose only parameter is its output reads nothing: its result is one constant
tensor. Two forms are recognised here, by running the function with the interpreter (on
two differently initialised outputs, so that every element must be written) and comparing
exactly with numpy:

- every element the same value ``v`` -> :class:`Filled` (``np.full``). The value reported is
  the literal the function stores (the printed constant, closer to the Relax value than its
  rounding to the dtype); a function storing no literal equal to ``v`` is not claimed. Only
  floating-point outputs are claimed: an integer fill may come from a truncated float.
- a rank-2 output of zeros and ones equal to ``np.eye(n, m, k)`` -> :class:`Diagonal`
  (TVM's ``if_then_else(i == j - k, 1, 0)``), with at least one 1 and one 0 (a constant
  one is a fill).

Symbolic extents are bound to two sizes and both runs must agree on the reading. What op
the tensor is (``full``, ``full_like``, ``ones``, ``eye``, ``eye_like``, ...) is not
decidable from the function: that is up to the graph (:mod:`opinfo.graph_naming`).
"""
from __future__ import annotations

import math

import attrs
import numpy as np

from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.interp_data import np_dtype
from tir.stmt import BufferStore

from ..affine import float_of
from .running import above_constants, concrete_shapes, run

SIZES = (7, 10)
"""Values bound to symbolic extents (two, so that a reading must hold for both; a third
beyond twice every integer constant of the body, so that a test ``i < 12`` cutting a
diagonal short bites whatever the diagonal's offset)."""
MAX_ELEMENTS = 1 << 22
"""Largest output run; a function whose constants ask for more is not claimed."""


@attrs.frozen
class Filled:
    """Every element is ``value``."""

    value: float
    dtype: str


@attrs.frozen
class Diagonal:
    """``np.eye(n, m, k)`` (n, m from the output's shape)."""

    k: int
    dtype: str


def _literals(func: PrimFunc) -> list:
    """Constants stored as they are (``buf[...] = T.float32(-2.5)``, through casts)."""
    found = []

    def visit(n):
        if isinstance(n, BufferStore):
            v = float_of(n.value)
            if v is not None:
                found.append(v)
    post_order_visit(func.body, visit)
    return found


def _evaluations(func: PrimFunc) -> "list | None":
    """The output of ``func`` per binding of its symbolic extents, or None when it cannot
    be run, is empty, or depends on what the output held before."""
    buf = func.buffers[0]
    try:
        dtype = np_dtype(buf.dtype)
    except Exception:
        return None
    symbolic = any(not isinstance(getattr(s, "value", None), int) for s in buf.shape)
    outs = []
    sizes = SIZES + (max(2 * above_constants(func) + 1, SIZES[-1] + 1),) if symbolic else SIZES[:1]
    for size in sizes:
        shapes = concrete_shapes([buf], size)
        if shapes is None or any(d <= 0 for d in shapes[0]) or int(np.prod(shapes[0])) > MAX_ELEMENTS:
            return None
        results = []
        for fill in (0, 3):
            start = np.full(shapes[0], fill).astype(dtype)
            got = run(func, [start])
            if got is None:
                return None
            results.append(got)
        if not np.array_equal(results[0], results[1]):
            return None
        outs.append(results[0])
    return outs


def recognize_fill(func: PrimFunc) -> "Filled | Diagonal | None":
    """What constant tensor ``func`` writes, or None (see the module doc)."""
    if len(func.params) != 1 or len(func.buffers) != 1:
        return None
    buf = func.buffers[0]
    if buf.dtype.lanes != 1 or buf.dtype.is_handle or buf.dtype.code == "bfloat":
        return None
    outs = _evaluations(func)
    if not outs:
        return None
    dtype = str(buf.dtype)
    flat = [o.reshape(-1) for o in outs]
    if all(f.size and np.all(f == f[0]) for f in flat):
        return _filled(func, outs, dtype)
    if len(buf.shape) != 2:
        return None
    ks = set()
    for o in outs:
        ones = np.argwhere(o == 1)
        zeros = np.count_nonzero(o == 0)
        if not len(ones) or not zeros or len(ones) + zeros != o.size:
            return None
        diag = {int(j - i) for i, j in ones}
        if len(diag) != 1:
            return None
        k = diag.pop()
        if not np.array_equal(o, np.eye(o.shape[0], o.shape[1], k, dtype=o.dtype)):
            return None
        ks.add(k)
    if len(ks) != 1:
        return None
    return Diagonal(ks.pop(), dtype)


def _filled(func: PrimFunc, outs: list, dtype: str) -> "Filled | None":
    value = outs[0].reshape(-1)[0]
    if any(o.reshape(-1)[0] != value for o in outs[1:]):
        return None
    if not func.buffers[0].dtype.code == "float":
        return None
    lits = {v for v in _literals(func) if math.isfinite(v)
            and np.asarray(v).astype(outs[0].dtype) == value}
    if len(lits) != 1:
        return None
    return Filled(lits.pop(), dtype)
