"""scatter_elements (attributes ``axis``, ``reduction``), recognised from what it computes.

TVM lowers ``scatter_elements(data, indices, updates)`` with its ir_builder: one opaque
block that copies ``data`` to the output, then walks every element of ``indices`` and
combines ``updates`` into the output at that element's position with the index along
``axis`` replaced by the loaded (negative-wrapped) index. The index arithmetic is flattened
and rewritten by TVM's simplifier; what does not change is the meaning. So the function is
run (:func:`tir.interp.interpret`) on random inputs, one set of valid indices per candidate
axis, and compared with a reference of every (axis, reduction); it is named only when
exactly one reading agrees with every run.

The signature comes first: four buffers ``data``, ``indices`` (integer, ``data``'s rank),
``updates`` (``indices``' shape, ``data``'s dtype) and the output (``data``'s shape and dtype),
in Relax's argument order.
"""
from __future__ import annotations

import numpy as np

from tir.interp_data import np_dtype

from ..affine import const_of
from ..info import OpInfo, Operand
from .running import concrete_shapes, poisoned, run

TRIALS = 3
"""Runs per candidate axis."""
MAX_ELEMENTS = 1 << 17
"""Larger buffers are not run (the interpreter walks the scatter loop element by element:
about 80 us per element, 10 s at this limit; 1 << 14 refused a 128 x 256 scatter)."""
REDUCTIONS = {
    "update": lambda o, u: u, "add": np.add, "mul": np.multiply,
    "mean": lambda o, u: (o + u) / 2, "max": np.maximum, "min": np.minimum,
}


def concrete_bindings(bufs) -> "list | None":
    """Concrete shapes: each symbolic extent bound to one value larger than every constant
    extent (so data can hold the indices' positions)."""
    consts = [const_of(s) for b in bufs for s in b.shape]
    return concrete_shapes(bufs, max([c for c in consts if c is not None] + [2]) + 1)


def _signature_ok(bufs) -> bool:
    data, ind, upd, out = bufs
    if not ind.dtype.is_integer or upd.dtype != data.dtype or out.dtype != data.dtype:
        return False
    if len(ind.shape) != len(data.shape) or len(upd.shape) != len(ind.shape) or not data.shape:
        return False
    same = lambda a, b: len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))
    return same(out.shape, data.shape) and same(upd.shape, ind.shape)


def reference(data, ind, upd, axis, reduction):
    """numpy scatter_elements, elements taken in row-major order; None on an invalid index."""
    out = data.copy()
    combine = REDUCTIONS[reduction]
    dim = data.shape[axis]
    for pos in np.ndindex(ind.shape):
        i = int(ind[pos])
        if not -dim <= i < dim or any(p >= s for p, s in zip(pos, data.shape)):
            return None
        at = pos[:axis] + (i % dim,) + pos[axis + 1:]
        out[at] = combine(out[at], upd[pos])
    return out


def run_scatter(func, arrays) -> "np.ndarray | None":
    return run(func, arrays, 3)


def _inputs(rng, shapes, dtypes, axis):
    (ds, is_, us, os_), (dd, idt, ud, od) = shapes, dtypes
    data = rng.standard_normal(ds).astype(dd) if np.issubdtype(dd, np.floating) else \
        rng.integers(-9, 9, ds).astype(dd)
    upd = rng.standard_normal(us).astype(ud) if np.issubdtype(ud, np.floating) else \
        rng.integers(-9, 9, us).astype(ud)
    ind = rng.integers(-ds[axis], ds[axis], is_).astype(idt)
    return [data, ind, upd, poisoned(os_, od)]


def same_shape(a, b) -> bool:
    """Two shapes (extents as PrimExprs or ints) alike, extent by extent."""
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))


def random_values(rng, shape, dtype):
    """Random values of ``dtype``: normal floats, small integers."""
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-5, 6, shape).astype(dtype)


def values_agree(got, want) -> bool:
    return got.shape == want.shape and bool(
        np.allclose(got.astype(float), want.astype(float), rtol=1e-5, atol=1e-6, equal_nan=True))


def _reading(func, bufs) -> "tuple | None":
    shapes = concrete_bindings(bufs)
    if shapes is None or max(int(np.prod(s)) for s in shapes) > MAX_ELEMENTS:
        return None
    dtypes = [np_dtype(b.dtype) for b in bufs]
    rank = len(shapes[0])
    candidates = {(a, r): 0 for a in range(rank) for r in REDUCTIONS}
    rng = np.random.default_rng(29)
    for axis in range(rank):
        for _ in range(TRIALS):
            arrays = _inputs(rng, shapes, dtypes, axis)
            got = run_scatter(func, arrays)
            if got is None:
                candidates = {c: n for c, n in candidates.items() if c[0] != axis}
                continue
            for (a, r), n in list(candidates.items()):
                want = reference(*arrays[:3], a, r)
                if want is None:
                    continue  # indices out of range for axis a: the op is undefined there
                if values_agree(got, want):
                    candidates[(a, r)] = n + 1
                else:
                    del candidates[(a, r)]
    if len(candidates) != 1:
        return None
    (reading, runs), = candidates.items()
    return reading if runs >= TRIALS else None


def recognize_scatter(func) -> tuple:
    """``(OpInfo,)`` for a scatter_elements function, else ()."""
    bufs = list(func.buffers)
    if len(bufs) != 4 or len(func.params) != 4 or not _signature_ok(bufs):
        return ()
    got = _reading(func, bufs)
    if got is None:
        return ()
    axis, reduction = got
    return scatter_op("scatter_elements", {"axis": axis, "reduction": reduction}, bufs)


def scatter_op(name: str, attrs: dict, bufs) -> tuple:
    """``(OpInfo,)`` of a scatter over parameters (data, indices, updates, output)."""
    roles = ("data", "indices", "updates")
    operands = tuple(Operand(role, b.name, k) for k, (role, b) in enumerate(zip(roles, bufs)))
    return (OpInfo(name, attrs, operands, Operand("output", bufs[3].name, 3)),)
