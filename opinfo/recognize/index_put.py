"""index_put (attribute ``accumulate``), recognised from what it computes under its tag.

Relax's ``index_put(data, (i_0, ..., i_{r-1}), values, accumulate)`` takes one integer index
tensor per axis of ``data`` (broadcast together, numpy style) and writes (or, with
``accumulate``, adds) ``values`` at the positions ``(i_0[l], ..., i_{r-1}[l])``, negative
indices counting from the end. TVM lowers it with its ir_builder into one opaque block that
copies ``data`` and then walks the broadcast index positions, like scatter_elements; for a
one-dimensional ``data`` the two compute the same (``update`` / ``add`` along axis 0), so
the loops cannot tell them apart. TVM's compute tag can: the block is named
``index_put_generic`` (``index_put.generic``), and only under that tag is the function read
as index_put.

What it computes is then checked by running it (:func:`tir.interp.interpret`) against a
numpy reference for ``accumulate`` False and True: first on index tuples that are all
distinct (where writing and adding differ wherever ``data`` is not zero), then with a
repeated tuple (where adding must add twice; a repeated write may leave either value, the
order is not defined by Relax). The name is given only when exactly one reading agrees with
every run.

Signature, in Relax's argument order: ``data``, ``r`` integer index tensors (``r`` the rank
of ``data``, their shapes broadcastable), ``values`` (``data``'s dtype, as many elements as
the broadcast index shape, or broadcastable to it) and the output (``data``'s shape and
dtype).
"""
from __future__ import annotations

import numpy as np

from tir.interp_data import np_dtype

from ..info import OpInfo, Operand
from ..tags import tags
from .running import poisoned, run
from .scatter import concrete_bindings, random_values, same_shape, values_agree

TAG = "index_put_generic"
TRIALS = 3
"""Runs on distinct index tuples, then on index tuples with a repeat."""
MAX_ELEMENTS = 1 << 17
"""Larger buffers are not run (the interpreter walks the loops element by element; a 300 x 400
index_put reads in 0.6 s, which 1 << 14 refused)."""


def _signature_ok(bufs) -> bool:
    data, out, values, index = bufs[0], bufs[-1], bufs[-2], bufs[1:-2]
    if not data.shape or len(index) != len(data.shape):
        return False
    if values.dtype != data.dtype or out.dtype != data.dtype or not same_shape(out.shape, data.shape):
        return False
    return all(b.dtype.is_integer for b in index)


def _broadcast(index_shapes, values_shape) -> "tuple | None":
    """The broadcast index shape, when the index shapes broadcast together and ``values``
    fits it (as many elements, read flat, or numpy-broadcastable to it); else None."""
    try:
        shape = np.broadcast_shapes(*index_shapes)
    except ValueError:
        return None
    n = int(np.prod(shape))
    if int(np.prod(values_shape)) == n:
        return shape
    try:
        return shape if np.broadcast_shapes(values_shape, shape) == shape else None
    except ValueError:
        return None


def _positions(index, values) -> tuple:
    """(index arrays broadcast together, their shape, ``values`` laid out on that shape)."""
    idx = np.broadcast_arrays(*index)
    shape = idx[0].shape
    vals = values.reshape(shape) if values.size == int(np.prod(shape)) else np.broadcast_to(values, shape)
    return idx, shape, vals


def reference(data, index, values, accumulate: bool):
    """numpy index_put, positions taken in row-major order; None on an invalid index."""
    out = data.copy()
    idx, shape, vals = _positions(index, values)
    for pos in np.ndindex(shape):
        at = tuple(int(i[pos]) for i in idx)
        if any(not -d <= a < d for a, d in zip(at, data.shape)):
            return None
        at = tuple(a % d for a, d in zip(at, data.shape))
        out[at] = out[at] + vals[pos] if accumulate else vals[pos]
    return out


def _write_any_order(data, index, values, got) -> bool:
    """Whether ``got`` is index_put(accumulate=False)'s output for some order of writes."""
    idx, shape, vals = _positions(index, values)
    aimed = {}
    for pos in np.ndindex(shape):
        at = tuple(int(i[pos]) % d for i, d in zip(idx, data.shape))
        aimed.setdefault(at, []).append(vals[pos])
    want = data.copy()
    for at, vs in aimed.items():
        if not any(np.isclose(float(got[at]), float(v), rtol=1e-5, atol=1e-6) for v in vs):
            return False
        want[at] = got[at]
    return values_agree(got, want)


def _index_arrays(rng, data_shape, index_shapes, dtypes, duplicates) -> "list | None":
    """One index array per axis: the broadcast positions aim at distinct elements of
    ``data`` (or, with ``duplicates``, two of them at one element), each index drawn as its
    positive or negative spelling. Only index shapes equal to the broadcast shape are drawn
    freely; None when the shapes leave no such choice."""
    shape = np.broadcast_shapes(*index_shapes)
    if any(tuple(s) != tuple(shape) for s in index_shapes):
        return None
    count, places = int(np.prod(shape)), int(np.prod(data_shape))
    if duplicates:
        if count < 2:
            return None
        flat = rng.choice(places, count, replace=count > places)
        flat[-1] = flat[0]
    else:
        if count > places:
            return None
        flat = rng.choice(places, count, replace=False)
    coords = np.unravel_index(flat, data_shape)
    out = []
    for c, d, dt in zip(coords, data_shape, dtypes):
        neg = rng.integers(0, 2, c.shape).astype(bool)
        out.append(np.where(neg, c - d, c).reshape(shape).astype(dt))
    return out


def _reading(func, bufs) -> "bool | None":
    shapes = concrete_bindings(bufs)
    if shapes is None or max(int(np.prod(s)) for s in shapes) > MAX_ELEMENTS:
        return None
    if _broadcast(shapes[1:-2], shapes[-2]) is None:
        return None
    dtypes = [np_dtype(b.dtype) for b in bufs]
    runs = {False: 0, True: 0}
    rng = np.random.default_rng(37)

    def trials():
        """(index arrays, with a repeated tuple, counted): the random draws, then (not counted)
        the wrap-around edges while a reading stands."""
        for duplicates in (False, True):
            for _ in range(TRIALS):
                index = _index_arrays(rng, shapes[0], shapes[1:-2], dtypes[1:-2], duplicates)
                if index is None:
                    break
                yield index, duplicates, True
        for index in _edge_indices(rng, shapes[0], shapes[1:-2], dtypes[1:-2]) if runs else ():
            yield index, False, False

    for index, duplicates, counted in trials():
        data = random_values(rng, shapes[0], dtypes[0])
        data[data == 0] = 1  # adding and writing differ only where data is not zero
        values = random_values(rng, shapes[-2], dtypes[-2])
        got = run(func, [data, *index, values, poisoned(shapes[-1], dtypes[-1])], -1)
        if got is None:
            return None  # valid indices: index_put runs on them
        for acc in list(runs):
            if duplicates and not acc:
                agrees = _write_any_order(data, index, values, got)
            else:
                want = reference(data, index, values, acc)
                agrees = want is not None and values_agree(got, want)
            if not agrees:
                del runs[acc]
            elif counted:
                runs[acc] += 1
    if len(runs) != 1:
        return None
    (accumulate, n), = runs.items()
    return accumulate if n >= TRIALS else None


def _edge_indices(rng, data_shape, index_shapes, dtypes) -> list:
    """Index arrays (distinct positions) whose first position holds, on one axis of extent
    ``d``, each of the values where a negative index's wrap-around turns: ``0``, ``-1``,
    ``d - 1`` and ``-d``. Random draws may never hold one (a wrap test written ``< 1``
    instead of ``< 0`` differs only at index 0)."""
    out = []
    for axis, d in enumerate(data_shape):
        for edge in sorted({0, -1, d - 1, -d}):
            for _ in range(8):  # redraw until the other positions stay distinct
                index = _index_arrays(rng, data_shape, index_shapes, dtypes, False)
                if index is None:
                    return out
                index[axis].flat[0] = edge
                flat = np.ravel_multi_index(tuple(np.mod(i, e).ravel() for i, e in zip(index, data_shape)), data_shape)
                if len(set(flat.tolist())) == flat.size:
                    out.append(index)
                    break
    return out


def recognize_index_put(func) -> tuple:
    """``(OpInfo,)`` for an index_put function (under TVM's ``index_put_generic`` tag),
    else ()."""
    if TAG not in tags(func):
        return ()
    bufs = list(func.buffers)
    if len(bufs) < 4 or len(bufs) != len(func.params) or not _signature_ok(bufs):
        return ()
    accumulate = _reading(func, bufs)
    if accumulate is None:
        return ()
    operands = [Operand("data", bufs[0].name, 0)]
    operands += [Operand("indices", b.name, k) for k, b in enumerate(bufs[1:-2], 1)]
    operands.append(Operand("values", bufs[-2].name, len(bufs) - 2))
    return (OpInfo("index_put", {"accumulate": bool(accumulate)}, tuple(operands),
                   Operand("output", bufs[-1].name, len(bufs) - 1)),)
