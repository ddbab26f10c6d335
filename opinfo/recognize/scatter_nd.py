"""scatter_nd (attribute ``reduction``), recognised from what it computes.

Relax's ``scatter_nd(data, indices, updates, reduction)`` takes ``indices`` of shape
``(L..., K)`` (``K <= rank(data)``) and ``updates`` of shape ``(L...) + data.shape[K:]``: the
output is ``data`` with ``updates[l...]`` combined into ``out[indices[l..., :]]``. TVM lowers
it to a transpose of ``indices`` (index depth first) and one opaque ir_builder block
(``scatter_nd_generic``) whose flattened index arithmetic the simplifier rewrites; what does
not change is the meaning. So, like scatter_elements (:mod:`.scatter`), the function is run
(:func:`tir.interp.interpret`) on random inputs and compared with a numpy reference for each
reduction, and named only when exactly one reduction agrees with every run.

Indices are drawn without duplicates (every reduction is defined), then with duplicates
(which tell the reductions apart where combined twice). What ``update`` leaves at a repeated
index depends on the order of the writes (TVM's loop writes them in row-major order, the last
one wins; Relax does not define it), so on those runs ``update`` is judged in any order: each
written element must be one of the updates aimed at it, every other element the data's.

A function whose signature also fits scatter_elements (data ``(d, K)``, indices and updates
``(L, K)``...) can be both readings: :func:`recognize_scatters` names it only when exactly
one of the two recognizers claims it.
"""
from __future__ import annotations

import numpy as np

from tir.interp_data import np_dtype

from ..affine import const_of
from ..tags import tags
from .index_put import recognize_index_put
from .running import poisoned
from .scatter import concrete_bindings, random_values, recognize_scatter, run_scatter, same_shape, scatter_op, values_agree

TRIALS = 3
"""Runs per kind of indices (distinct, then with duplicates)..."""
MAX_TRIALS = 12
"""...continued up to this many while several reductions still agree (a few elements can
leave ``min`` and ``update`` alike by chance)."""
MAX_ELEMENTS = 1 << 17
"""Larger buffers are not run (the interpreter walks the scatter loop element by element; a
2,000 x 64 scatter_nd reads in 0.4 s, which 1 << 14 refused)."""
REDUCTIONS = {
    "update": lambda o, u: u, "add": np.add, "mul": np.multiply,
    "min": np.minimum, "max": np.maximum,
}


def _signature_ok(bufs) -> bool:
    data, ind, upd, out = bufs
    if not ind.dtype.is_integer or upd.dtype != data.dtype or out.dtype != data.dtype:
        return False
    if not data.shape or not ind.shape or not same_shape(out.shape, data.shape):
        return False
    depth = const_of(ind.shape[-1])
    if depth is None or not 1 <= depth <= len(data.shape):
        return False
    return same_shape(upd.shape, tuple(ind.shape[:-1]) + tuple(data.shape[depth:]))


def reference(data, ind, upd, reduction):
    """numpy scatter_nd, index tuples taken in row-major order; None on an invalid index."""
    out = data.copy()
    combine = REDUCTIONS[reduction]
    depth = ind.shape[-1]
    for pos in np.ndindex(ind.shape[:-1]):
        at = tuple(int(i) for i in ind[pos])
        if any(not 0 <= i < s for i, s in zip(at, data.shape[:depth])):
            return None
        out[at] = combine(out[at], upd[pos])
    return out


def update_any_order(data, ind, upd, got) -> bool:
    """Whether ``got`` is ``update``'s output for some order of the writes (elementwise)."""
    depth = ind.shape[-1]
    aimed = {}
    for pos in np.ndindex(ind.shape[:-1]):
        aimed.setdefault(tuple(int(i) for i in ind[pos]), []).append(upd[pos])
    want = data.copy()
    for at, values in aimed.items():
        if any(not 0 <= i < s for i, s in zip(at, data.shape[:depth])):
            return False
        close = [np.isclose(np.asarray(got[at], float), np.asarray(v, float), rtol=1e-5, atol=1e-6)
                 for v in values]
        if not np.logical_or.reduce(close).all():
            return False
        want[at] = got[at]
    return values_agree(got, want)


def _indices(rng, shapes, idt, duplicates) -> "np.ndarray | None":
    """Index tuples for data of ``shapes[0]``: all distinct, or with at least one repeated;
    None when the shapes allow no such set."""
    ds, is_ = shapes[0], shapes[1]
    depth, count = is_[-1], int(np.prod(is_[:-1]))
    places = int(np.prod(ds[:depth]))
    if duplicates:
        if count < 2:
            return None
        pool = rng.choice(places, max(1, min(places, count // 2)), replace=False)
        flat = rng.choice(pool, count)
        if len(set(flat.tolist())) == count:
            flat[-1] = flat[0]
    else:
        if count > places:
            return None
        flat = rng.choice(places, count, replace=False)
    tuples = np.stack(np.unravel_index(flat, ds[:depth]), axis=-1) if count else \
        np.zeros((0, depth), np.int64)
    return tuples.reshape(is_).astype(idt)


def _reading(func, bufs) -> "str | None":
    shapes = concrete_bindings(bufs)
    if shapes is None or max(int(np.prod(s)) for s in shapes) > MAX_ELEMENTS:
        return None
    dtypes = [np_dtype(b.dtype) for b in bufs]
    runs = {r: 0 for r in REDUCTIONS}
    rng = np.random.default_rng(31)
    for duplicates in (False, True):
        for trial in range(MAX_TRIALS):
            if trial >= TRIALS and len(runs) <= 1:
                break
            ind = _indices(rng, shapes, dtypes[1], duplicates)
            if ind is None:
                break
            arrays = [random_values(rng, shapes[0], dtypes[0]), ind, random_values(rng, shapes[2], dtypes[2]),
                      poisoned(shapes[3], dtypes[3])]
            got = run_scatter(func, arrays)
            if got is None:
                return None  # valid indices for scatter_nd: any scatter_nd runs on them
            for r in list(runs):
                if duplicates and r == "update":
                    agrees = update_any_order(*arrays[:3], got)
                else:
                    want = reference(*arrays[:3], r)
                    agrees = want is not None and values_agree(got, want)
                if agrees:
                    runs[r] += 1
                else:
                    del runs[r]
    if len(runs) != 1:
        return None
    (reduction, n), = runs.items()
    return reduction if n >= TRIALS else None


def recognize_scatter_nd(func) -> tuple:
    """``(OpInfo,)`` for a scatter_nd function, else ()."""
    bufs = list(func.buffers)
    if len(bufs) != 4 or len(func.params) != 4 or not _signature_ok(bufs):
        return ()
    reduction = _reading(func, bufs)
    if reduction is None:
        return ()
    return scatter_op("scatter_nd", {"reduction": reduction}, bufs)


def recognize_scatters(func) -> tuple:
    """scatter_elements or scatter_nd, named only when exactly one of them claims ``func``
    (a function both read alike, e.g. data ``(d, 1)`` with indices and updates ``(L, 1)``,
    is not named), and only under that op's compute tag: ``index_put(accumulate=True)``
    on one axis computes what ``scatter_elements(reduction="add")`` does, in a block
    TVM names ``index_put_generic``, under which it is read as index_put
    (:mod:`.index_put`)."""
    found = set(tags(func))
    if "index_put_generic" in found:
        return recognize_index_put(func)
    elements = recognize_scatter(func) if "scatter_elements_generic" in found else ()
    nd = recognize_scatter_nd(func) if "scatter_nd_generic" in found else ()
    if elements and nd:
        return ()
    return elements or nd
