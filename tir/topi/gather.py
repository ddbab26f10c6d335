"""Gathers, scatters and other index-driven ops (``gather_elements``, ``gather_nd``,
``scatter_elements``, ``scatter_nd``, ``one_hot``, ``split``, ...) as TVM's topi writes them.

Gathers and creations are ``te.compute`` blocks. The scatters, ``index_put`` and
``bucketize`` are TVM ir_builder externs: one opaque block of loops over flat positions
(``out[v // 7, v % 7] = x[v // 7, v % 7]``) that first copies ``data`` to the output, then
walks the indices in TVM's order: where two updates hit one element, the later one wins.
"""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import TRUE, Builder, index
from ..expr import (EQ, LE, LT, Cast, Max, Min, Or, Select, Var, as_int, call, cast, const, if_then_else,
                    logical_and)
from ..stmt import AllocateBuffer, AttrStmt, Block, BlockRealize, BufferStore, For, ForKind, IfThenElse, While, seq
from .common import OpError, ShapeError, add, mul, normalize_axis, static, sub
from .transform import _ax, permute_dims


def _prod(extents):
    total = index(1)
    for e in extents:
        total = mul(total, e)
    return total


def _unravel(flat, shape) -> tuple:
    """Coordinates of row-major position ``flat`` in ``shape`` (``v // 4 // 4, v // 4 % 4, v % 4``)."""
    if not shape:
        return ()
    coords = []
    for e in reversed(shape[1:]):
        coords.append(flat % index(e))
        flat = flat // index(e)
    return (flat,) + tuple(reversed(coords))


def _int_indices(op: str, buf: Buffer, arg: str = "indices") -> None:
    if not buf.dtype.is_integer:
        raise ShapeError(op, arg, f"must be an integer tensor, got {buf.dtype}")


# ---------------------------------------------------------------- opaque ir_builder externs
def _loop(var_name: str, extent, body, parallel=False) -> For:
    """A loop over ``range(extent)`` (``T.parallel`` or serial); ``body`` maps its variable to the body."""
    v = Var(var_name, dt.int64)
    kind = ForKind.PARALLEL if parallel else ForKind.SERIAL
    return For(v, index(0), index(extent), kind, body(v))


def _extern(b: Builder, name: str, *stmts) -> None:
    """One opaque block ``name`` (no iteration variables, ``pragma_scope = seq``) around ``stmts``."""
    body = AttrStmt({"pragma_scope": "seq"}, seq(*stmts))
    b.stmts.append(BlockRealize((), TRUE, Block(b.unique(name), (), (), (), body)))


def _copy(out: Buffer, data: Buffer, parallel=True):
    """``out[i] = data[i]`` over the flat positions of ``data``."""
    return _loop("v", _prod(data.shape), lambda v: BufferStore(out, data[_unravel(v, data.shape)],
                                                               _unravel(v, out.shape)), parallel)


def _flat_load(buf: Buffer, flat):
    return buf[_unravel(flat, buf.shape)]


def _wrapped(k, extent):
    """``k + (k < 0) * extent``: a negative index counted from the end (in int64)."""
    k = cast(k, dt.int64)
    return k + Cast(dt.int64, LT(k, index(0))) * index(extent)


def _mean(old, new):
    """``(old + new) / 2``: TVM halves the pair, whatever came before (a truncating divide on integers)."""
    return (old + new) / const(2.0 if old.dtype.is_float else 2, old.dtype)


SCATTER_ND_REDUCTIONS = {
    "update": lambda old, new: new,
    "add": lambda old, new: old + new,
    "mul": lambda old, new: old * new,
    "min": Min,
    "max": Max,
}
"""How ``scatter_nd`` (and ``index_put``: update, add) combines the element with the update."""
SCATTER_ELEMENTS_REDUCTIONS = {**SCATTER_ND_REDUCTIONS, "mean": _mean}
"""``scatter_elements`` has ``mean`` too."""


def _combiner(op: str, reduction: str, table: dict):
    if reduction not in table:
        raise OpError(op, "reduction", f"expected one of {', '.join(table)}, got {reduction!r}")
    return table[reduction]


def _store_combined(out: Buffer, flat, value, combine):
    """``out[flat] = combine(out[flat], value)``."""
    at = _unravel(flat, out.shape)
    return BufferStore(out, combine(out[at], value), at)


def _check_scatter(op: str, data: Buffer, updates: Buffer) -> None:
    if updates.dtype != data.dtype:
        raise OpError(op, "updates", f"dtype {updates.dtype} differs from the data's {data.dtype}")


def scatter_elements(b: Builder, data, indices, updates, *, axis=0, reduction="update"):
    """``scatter_elements.generic``: for each element of ``indices`` (the axis innermost),
    ``out[.., indices[p], ..] = f(out[.., indices[p], ..], updates[p])``, negative indices wrapped.

    Positions are flat, as TVM computes them: the indices' positions before and after ``axis``
    are taken as offsets into the data's (alike when the shapes agree off the axis)."""
    op = "scatter_elements"
    _int_indices(op, indices)
    _check_scatter(op, data, updates)
    combine = _combiner(op, reduction, SCATTER_ELEMENTS_REDUCTIONS)
    if indices.ndim != data.ndim or [as_int(e) for e in indices.shape] != [as_int(e) for e in updates.shape]:
        raise OpError(op, "indices", "indices and updates need one shape, of the data's rank")
    axis = normalize_axis(axis, data.ndim, op)
    out = b.alloc("out_buf", data.shape, data.dtype)
    after, ind_after = _prod(data.shape[axis + 1:]), _prod(indices.shape[axis + 1:])
    before_stride = mul(data.shape[axis], after)
    ind_before_stride = mul(indices.shape[axis], ind_after)

    def per_line(fused):
        i, j = fused // ind_after, fused % ind_after

        def per_k(k):
            at1 = add(add(mul(i, ind_before_stride), j), mul(k, ind_after))
            at2 = add(mul(i, before_stride), j) + _wrapped(_flat_load(indices, at1), data.shape[axis]) * after
            return _store_combined(out, at2, _flat_load(updates, at1), combine)

        return _loop("v_1", indices.shape[axis], per_k)

    _extern(b, "scatter_elements_generic", _copy(out, data),
            _loop("v", mul(_prod(indices.shape[:axis]), ind_after), per_line, parallel=True))
    return out


def scatter_nd(b: Builder, data, indices, updates, *, reduction="update"):
    """``scatter_nd_generic`` after ``T_transpose`` of ``indices`` (index depth first):
    ``out[indices[l.., :], r..] = f(out[...], updates[l.., r..])``; indices are not wrapped."""
    op = "scatter_nd"
    _int_indices(op, indices)
    _check_scatter(op, data, updates)
    combine = _combiner(op, reduction, SCATTER_ND_REDUCTIONS)
    depth = as_int(indices.shape[-1]) if indices.ndim else None
    if depth is None or not 1 <= depth <= data.ndim:
        raise OpError(op, "indices", f"last extent must be 1..{data.ndim}, got {indices.shape}")
    want = [as_int(e) for e in list(indices.shape[:-1]) + list(data.shape[depth:])]
    if [as_int(e) for e in updates.shape] != want:
        raise OpError(op, "updates", f"shape must be {want}")
    ind = permute_dims(b, indices, [indices.ndim - 1] + list(range(indices.ndim - 1)))
    out = b.alloc("out_buf", data.shape, data.dtype)
    lines, inner = _prod(ind.shape[1:]), _prod(data.shape[depth:])

    def per_update(i, j):
        at, offset = j, inner
        for level in reversed(range(depth)):
            at = add(at, mul(offset, cast(_flat_load(ind, add(i, mul(level, lines))), dt.int64)))
            offset = mul(offset, data.shape[level])
        return _store_combined(out, at, _flat_load(updates, add(mul(i, inner), j)), combine)

    _extern(b, "scatter_nd_generic", _copy(out, data, parallel=False),
            _loop("v", lines, lambda i: _loop("v_1", inner, lambda j: per_update(i, j), parallel=True)))
    return out


def index_put(b: Builder, data, *indices_and_values, accumulate=False):
    """``index_put_generic``: ``out[i0[k], i1[k], ...] = values[k]`` (``+=`` when
    ``accumulate``), one index tensor per data dimension, broadcast together, negative wrapped."""
    op = "index_put"
    if len(indices_and_values) != data.ndim + 1:
        raise OpError(op, "indices", f"expected {data.ndim} index tensors and the values, "
                                     f"got {len(indices_and_values)} tensors")
    *indices, values = indices_and_values
    for t in indices:
        _int_indices(op, t)
    _check_scatter(op, data, values)
    shapes = [[static(e, op, "indices") for e in t.shape] for t in indices]
    rank = max(len(s) for s in shapes)
    wide = [[1] * (rank - len(s)) + s for s in shapes]
    bshape = [max(col) for col in zip(*wide)]
    if any(e not in (1, m) for s in wide for e, m in zip(s, bshape)):
        raise OpError(op, "indices", f"cannot broadcast index shapes {shapes}")
    combine = SCATTER_ND_REDUCTIONS["add" if accumulate else "update"]
    out = b.alloc("out_buf", data.shape, data.dtype)

    def put(k):
        pos = _unravel(k, bshape) if bshape else ()
        flat, stride = index(0), index(1)
        for dim in reversed(range(data.ndim)):
            lead = rank - len(shapes[dim])
            at = tuple(index(0) if e == 1 else pos[lead + d] for d, e in enumerate(shapes[dim]))
            flat = add(flat, mul(_wrapped(indices[dim][at], data.shape[dim]), stride))
            stride = mul(stride, data.shape[dim])
        return _store_combined(out, flat, _flat_load(values, k), combine)

    _extern(b, "index_put_generic", _copy(out, data), _loop("v", _prod(bshape), put, parallel=True))
    return out


def _as_type(extent, dtype):
    """``extent`` as a ``dtype`` value (a constant when it is one)."""
    value = as_int(extent)
    return const(value, dtype) if value is not None else cast(extent, dtype)


def bucketize(b: Builder, input_tensor, boundaries, *, out_int32=False, right=False):
    """``searchsorted(boundaries, input)``: a binary search per element (``lo`` and ``hi`` in
    one-element local buffers) for the first boundary ``>= x`` (``> x`` when ``right``)."""
    if boundaries.ndim != 1:
        raise OpError("bucketize", "boundaries", f"must be one-dimensional, got rank {boundaries.ndim}")
    odt = dt.int32 if out_int32 else dt.int64
    out = b.alloc("searchsorted", input_tensor.shape, odt)
    lo, hi = Buffer("buffer", (index(1),), odt, scope="local"), Buffer("buffer_1", (index(1),), odt, scope="local")
    zero, one = index(0), const(1, odt)

    def search(v):
        low, high = lo[zero], hi[zero]
        mid = low + call("shift_right", high - low, one)
        probe = boundaries[(cast(mid, dt.int64),)]
        below = LE(probe, _flat_load(input_tensor, v)) if right else LT(probe, _flat_load(input_tensor, v))
        step = IfThenElse(below, BufferStore(lo, mid + one, (zero,)), BufferStore(hi, mid, (zero,)))
        body = seq(BufferStore(lo, const(0, odt), (zero,)),
                   BufferStore(hi, _as_type(boundaries.shape[0], odt), (zero,)),
                   While(LT(low, high), step),
                   BufferStore(out, low, _unravel(v, out.shape)))
        return AllocateBuffer(lo, AllocateBuffer(hi, body))

    block = Block(b.unique("searchsorted"), (), (), (), _loop("v", _prod(input_tensor.shape), search, True))
    b.stmts.append(BlockRealize((), TRUE, block))
    return out


# ---------------------------------------------------------------- compute-style ops
def gather_elements(b: Builder, data, indices, *, axis=0):
    """``T_gather``: ``data[.., indices[i], ..]`` over ``indices``' shape (no wrapping)."""
    _int_indices("gather_elements", indices)
    if indices.ndim != data.ndim:
        raise OpError("gather_elements", "indices", f"rank {indices.ndim} differs from the data's {data.ndim}")
    axis = normalize_axis(axis, data.ndim, "gather_elements")
    return b.compute("T_gather", indices.shape,
                     lambda *i: data[tuple(indices[i] if d == axis else v for d, v in enumerate(i))],
                     names=_ax(indices.ndim))


def gather_nd(b: Builder, data, indices, *, batch_dims=0):
    """``T_gather_nd`` reading ``T_transpose`` of ``indices`` (index depth first):
    ``out[b.., l.., r..] = data[b.., indices[b.., l.., :], r..]``."""
    _int_indices("gather_nd", indices)
    depth = as_int(indices.shape[-1]) if indices.ndim else None
    if depth is None or batch_dims < 0 or depth + batch_dims > data.ndim:
        raise OpError("gather_nd", "indices", f"last extent + batch_dims must be at most {data.ndim}")
    ind = permute_dims(b, indices, [indices.ndim - 1] + list(range(indices.ndim - 1)))
    lead = indices.ndim - 1
    shape = list(ind.shape[1:]) + list(data.shape[depth + batch_dims:])

    def body(*o):
        picks = tuple(ind[(index(k),) + tuple(o[:lead])] for k in range(depth))
        return data[tuple(o[:batch_dims]) + picks + tuple(o[lead:])]

    return b.compute("T_gather_nd", shape, body, names=_ax(len(shape)))


def one_hot(b: Builder, indices, *, depth=1, axis=-1, on_value=1.0, off_value=0.0):
    """``T_one_hot``: ``Select(indices[i..] == v_axis, on, off)``; the values' type is that of
    Relax's ``PrimValue`` of them (float64 for Python floats, int64 for ints)."""
    _int_indices("one_hot", indices)
    if not isinstance(depth, int) or depth < 1:
        raise OpError("one_hot", "depth", f"must be a positive integer, got {depth!r}")
    if isinstance(on_value, float) != isinstance(off_value, float):
        raise OpError("one_hot", "on_value", "on_value and off_value must have one type")
    vdt = dt.float64 if isinstance(on_value, float) else dt.int64
    axis = indices.ndim if axis == -1 else normalize_axis(axis, indices.ndim + 1, "one_hot")
    shape = list(indices.shape[:axis]) + [index(depth)] + list(indices.shape[axis:])

    def body(*i):
        rest = tuple(v for d, v in enumerate(i) if d != axis)
        return Select(EQ(cast(indices[rest], dt.int64), i[axis]), const(on_value, vdt), const(off_value, vdt))

    return b.compute("T_one_hot", shape, body, names=_ax(len(shape)))


def _split_bounds(x: Buffer, indices_or_sections, axis: int) -> "tuple[list, str]":
    """Begin of each piece and the block name: ``T_split`` at indices, ``T_split_sections``
    for ``n`` pieces of ``ceil(extent / n)`` (the last one shorter)."""
    extent = x.shape[axis]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n < 1:
            raise OpError("split", "indices_or_sections", f"must be positive, got {n}")
        padded = add(extent, n - 1)
        size = index(as_int(padded) // n) if as_int(padded) is not None else padded // index(n)
        return [mul(size, k) for k in range(n)] + [extent], "T_split_sections"
    cuts = list(indices_or_sections)
    limit = as_int(extent)
    if any(not isinstance(c, int) for c in cuts) or cuts != sorted(cuts) or cuts and (
            cuts[0] < 0 or limit is not None and cuts[-1] > limit):
        raise OpError("split", "indices_or_sections", f"{cuts} must be ascending indices within {extent}")
    return [index(0)] + [index(c) for c in cuts] + [extent], "T_split"


def split(b: Builder, x, *, indices_or_sections=1, axis=0):
    """``T_split`` / ``T_split_sections``: one copy per piece, ``x[.., v + begin, ..]``."""
    axis = normalize_axis(axis, x.ndim, "split")
    bounds, name = _split_bounds(x, indices_or_sections, axis)
    outs = []
    for begin, end in zip(bounds, bounds[1:]):
        length = sub(end, begin)
        if as_int(length) is not None and as_int(length) < 0:
            raise OpError("split", "indices_or_sections", f"a piece of {as_int(x.shape[axis])} would be negative")
        shape = [length if d == axis else e for d, e in enumerate(x.shape)]
        outs.append(b.compute(name, shape, lambda *i, s=begin: x[tuple(add(v, s) if d == axis else v
                                                                        for d, v in enumerate(i))],
                              names=_ax(x.ndim)))
    return tuple(outs)


def meshgrid(b: Builder, *xs, indexing="ij"):
    """``T_meshgrid``: output ``k`` is ``xs[k][v_k]`` over the grid (``xy`` swaps the first two axes)."""
    if not xs or any(t.ndim > 1 for t in xs):
        raise OpError("meshgrid", "inputs", "needs one or more tensors of rank 0 or 1")
    if indexing not in ("ij", "xy"):
        raise OpError("meshgrid", "indexing", f"expected 'ij' or 'xy', got {indexing!r}")
    swap = indexing == "xy" and len(xs) >= 2
    src = [(1 - k if swap and k < 2 else k) for k in range(len(xs))]
    shape = [xs[s].shape[0] if xs[s].ndim else index(1) for s in src]
    return tuple(b.compute("T_meshgrid", shape, lambda *i, t=t, s=s: t[(i[s],) if t.ndim else ()],
                           names=_ax(len(shape))) for t, s in zip(xs, src))


def reverse_sequence(b: Builder, x, seq_lengths, *, seq_axis=1, batch_axis=0):
    """``T_reverse_sequence``: along ``seq_axis``, the first ``seq_lengths[batch]`` elements
    reversed (lengths of 0 or 1 and positions past the length kept; a length past the extent
    reverses the whole axis)."""
    _int_indices("reverse_sequence", seq_lengths, "seq_lengths")
    seq_axis = normalize_axis(seq_axis, x.ndim, "reverse_sequence", "seq_axis")
    batch_axis = normalize_axis(batch_axis, x.ndim, "reverse_sequence", "batch_axis")
    if seq_lengths.ndim != 1 or as_int(seq_lengths.shape[0]) != as_int(x.shape[batch_axis]):
        raise OpError("reverse_sequence", "seq_lengths", "must be a vector over the batch axis")
    n = x.shape[seq_axis]

    def body(*i):
        length, v = cast(seq_lengths[i[batch_axis]], dt.int64), i[seq_axis]
        flipped = if_then_else(LT(n, length), sub(sub(n, 1), v), length - v - index(1))
        at = if_then_else(Or(LE(length, index(1)), LE(length, v)), v, flipped)
        return x[tuple(at if d == seq_axis else u for d, u in enumerate(i))]

    return b.compute("T_reverse_sequence", x.shape, body, names=_ax(x.ndim))


def _slice_mask(b: Builder, n: int, mask: Buffer, arange: Buffer, start: int, end: int, step: int) -> Buffer:
    """``mask`` (all true) ``and start <= i``, ``and i < end``, ``and (i - start) % step == 0``,
    each only where it can fail (TVM's chain of 1-D blocks)."""
    def one_d(name, fn):
        return b.compute(name, [n], fn, names=["ax0"])

    def narrow(mask, test):
        return one_d("T_logical_and", lambda i: logical_and(mask[i], test[i]))

    if start != 0:
        mask = narrow(mask, one_d("T_greater_equal", lambda i: LE(index(start), arange[i])))
    if end != n:
        mask = narrow(mask, one_d("T_less", lambda i: LT(arange[i], index(end))))
    if step != 1:
        diff = one_d("T_subtract", lambda i: sub(arange[i], start))
        mod = one_d("T_floor_mod", lambda i: diff[i] % index(step))
        mask = narrow(mask, one_d("T_equal", lambda i: EQ(mod[i], index(0))))
    return mask


def _slice_source(b: Builder, n: int, arange: Buffer, start: int, step: int) -> Buffer:
    """``compute[i] = clip((i - start + step - 1) // step, 0, n - 1)``: the source element of
    position ``i`` (clipped to the destination's extent, past the source's where masked off)."""
    def one_d(name, fn, loop="ax0"):
        return b.compute(name, [n], fn, names=[loop])

    shifted = one_d("T_subtract", lambda i: sub(arange[i], start))
    rounded = one_d("T_add", lambda i: add(shifted[i], step - 1))
    pos = one_d("T_floor_divide", lambda i: rounded[i] // index(step) if step != 1 else rounded[i])
    return one_d("compute", lambda i: Max(Min(pos[i], index(n - 1)), index(0)), loop="i0")


def slice_scatter(b: Builder, x, src, *, axis=0, start=0, end=None, step=1):
    """``T_where(mask, T_take(src, source index), x)`` along ``axis``: ``src`` written over
    ``x[.., start:end:step, ..]`` (see :func:`_slice_mask` and :func:`_slice_source`)."""
    axis = normalize_axis(axis, x.ndim, "slice_scatter")
    n = static(x.shape[axis], "slice_scatter", "data")
    end = n if end is None else end
    if not (isinstance(step, int) and step >= 1 and 0 <= start <= end <= n):
        raise OpError("slice_scatter", "start", f"needs 0 <= start <= end <= {n} and step >= 1")
    if src.ndim != x.ndim or as_int(src.shape[axis]) != len(range(start, end, step)):
        raise OpError("slice_scatter", "src", f"extent along the axis must be {len(range(start, end, step))}")
    names = _ax(x.ndim)
    everywhere = b.compute("T_full", [n], lambda i: TRUE, names=["ax0"])
    arange = b.compute("T_arange", [n], lambda i: cast(i, dt.int64), names=["ax0"])
    mask = _slice_mask(b, n, everywhere, arange, start, end, step)
    wide = [n if d == axis else 1 for d in range(x.ndim)]
    row = b.compute("T_reshape", wide, lambda *i: mask[(i[axis] % index(n),)], names=names)
    full_mask = b.compute("T_broadcast_to", x.shape,
                          lambda *i: row[tuple(v if d == axis else index(0) for d, v in enumerate(i))], names=names)
    at = _slice_source(b, n, arange, start, step)
    taken = b.compute("T_take", x.shape, lambda *i: src[tuple(at[(v,)] if d == axis else v for d, v in enumerate(i))],
                      names=names)
    return b.compute("T_where", x.shape,
                     lambda *i: Select(LT(index(0), cast(full_mask[i], dt.int64)), taken[i], x[i]), names=names)


def eye(b: Builder, *, n=1, m=None, k=0, dtype="float32"):
    """``eye``: ``if_then_else(i == j - k, 1, 0)`` over ``(n, m)``."""
    m = n if m is None else m
    if not all(isinstance(v, int) for v in (n, m, k)) or n < 0 or m < 0:
        raise OpError("eye", "n", f"n, m must be non-negative integers and k an integer, got {n!r}, {m!r}, {k!r}")
    d = dt.dtype(dtype)
    one, zero = (const(1.0, d), const(0.0, d)) if d.is_float else (const(1, d), const(0, d))
    return b.compute("eye", [n, m], lambda i, j: if_then_else(EQ(i, sub(j, k) if k >= 0 else add(j, -k)), one, zero),
                     names=["i", "j"])


def full(b: Builder, *, shape=(), fill_value=0.0, dtype="float32"):
    """``T_full``: ``fill_value`` (cast to ``dtype``) everywhere."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    if any(not isinstance(e, int) or e < 0 for e in shape):
        raise OpError("full", "shape", f"must be non-negative integers, got {shape!r}")
    d = dt.dtype(dtype)
    value = const(float(fill_value) if d.is_float else int(fill_value), d)
    return b.compute("T_full", shape, lambda *i: value, names=_ax(len(shape)))


OPS: dict = {
    "gather_elements": gather_elements, "gather_nd": gather_nd, "scatter_elements": scatter_elements,
    "scatter_nd": scatter_nd, "one_hot": one_hot, "split": split, "meshgrid": meshgrid, "bucketize": bucketize,
    "reverse_sequence": reverse_sequence, "slice_scatter": slice_scatter, "index_put": index_put, "eye": eye,
    "full": full,
}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""
