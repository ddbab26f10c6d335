"""Data movement: permute_dims, reshape, expand_dims, squeeze, concat, stack, strided_slice,
nn.pad, take, broadcast_to, tile, flip — one injective block each, as TVM's topi writes them."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder
from ..expr import EQ, LE, FloorDiv, FloorMod, IntImm, Max, Min, Select, as_int, cast, if_then_else
from .. import dtype as dt
from .broadcast import broadcast_index, broadcast_shape
from .common import OpError, ShapeError, add, differ, index, mul, normalize_axis, pad, static, sub


def _ax(n):
    return [f"ax{d}" for d in range(n)]


def permute_dims(b: Builder, x: Buffer, axes=None) -> Buffer:
    """``T_transpose``: output dim ``i`` is input dim ``axes[i]`` (reversed when None)."""
    axes = list(range(x.ndim))[::-1] if axes is None else [normalize_axis(a, x.ndim, "permute_dims", "axes")
                                                           for a in axes]
    if sorted(axes) != list(range(x.ndim)):
        raise OpError("permute_dims", "axes", f"{axes} is not a permutation of {x.ndim} axes")
    inv = {a: i for i, a in enumerate(axes)}
    return b.compute("T_transpose", [x.shape[a] for a in axes],
                     lambda *i: x[tuple(i[inv[d]] for d in range(x.ndim))], names=_ax(x.ndim))


def _ravel(idx, shape):
    flat = idx[0] if idx else index(0)
    for v, e in zip(idx[1:], shape[1:]):
        flat = add(mul(flat, e), v)
    return flat


def _unravel(flat, shape):
    out = []
    for e in reversed(shape):
        out.append(FloorMod(flat, index(e)) if as_int(e) != 1 else index(0))
        flat = FloorDiv(flat, index(e)) if as_int(e) != 1 else flat
    return tuple(reversed(out))


def reshape_shape(x: Buffer, shape) -> list:
    """``shape`` with one ``-1`` inferred; the element count must match."""
    shape = [shape] if isinstance(shape, int) else list(shape)
    total = 1
    for e in x.shape:
        total *= static(e, "reshape", "data")
    if shape.count(-1) > 1:
        raise OpError("reshape", "shape", f"at most one -1 allowed, got {shape}")
    known = 1
    for e in shape:
        known *= e if e != -1 else 1
    if -1 in shape:
        if known == 0 or total % known:
            raise OpError("reshape", "shape", f"cannot infer -1 in {shape} for {total} elements")
        shape = [total // known if e == -1 else e for e in shape]
    if any(e < 0 for e in shape) or _prod(shape) != total:
        raise OpError("reshape", "shape", f"{shape} has {_prod(shape)} elements, the input has {total}")
    return shape


def _prod(shape):
    n = 1
    for e in shape:
        n *= e
    return n


def reshape(b: Builder, x: Buffer, shape, name: str = "T_reshape") -> Buffer:
    """``T_reshape``: the output index raveled, then unraveled in the input shape."""
    new = reshape_shape(x, shape)
    return b.compute(name, new, lambda *i: x[_unravel(_ravel(i, new), x.shape)], names=_ax(len(new)))


def expand_dims(b: Builder, x: Buffer, axis) -> Buffer:
    """``expand_dims``: unit dimensions inserted at ``axis`` (positions in the output)."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    rank = x.ndim + len(axes)
    new = sorted({normalize_axis(a, rank, "expand_dims") for a in axes})
    if len(new) != len(axes):
        raise OpError("expand_dims", "axis", f"repeated axis in {axis!r}")
    shape, it = [], iter(x.shape)
    for d in range(rank):
        shape.append(index(1) if d in new else next(it))
    keep = [d for d in range(rank) if d not in new]
    return b.compute("expand_dims", shape, lambda *i: x[tuple(i[d] for d in keep)])


def squeeze(b: Builder, x: Buffer, axis=None) -> Buffer:
    """``T_squeeze``: unit dimensions removed (all of them when ``axis`` is None)."""
    if axis is None:
        drop = [d for d, e in enumerate(x.shape) if as_int(e) == 1]
    else:
        drop = [normalize_axis(a, x.ndim, "squeeze") for a in ([axis] if isinstance(axis, int) else axis)]
        bad = [d for d in drop if as_int(x.shape[d]) != 1]
        if bad:
            raise OpError("squeeze", "axis", f"dimension {bad[0]} has extent {x.shape[bad[0]]}, not 1")
    keep = [d for d in range(x.ndim) if d not in drop]

    def body(*i):
        pos = dict(zip(keep, i))
        return x[tuple(pos.get(d, index(0)) for d in range(x.ndim))]

    return b.compute("T_squeeze", [x.shape[d] for d in keep], body, names=_ax(len(keep)))


def concat(b: Builder, *xs: Buffer, axis=0) -> Buffer:
    """``T_concat``: nested ``if_then_else`` from the last input down to the first."""
    if not xs:
        raise OpError("concat", "inputs", "needs at least one tensor")
    axis = normalize_axis(axis, xs[0].ndim, "concat")
    for k, t in enumerate(xs[1:], 1):
        if t.ndim != xs[0].ndim or t.dtype != xs[0].dtype:
            raise OpError("concat", f"input {k}", f"rank/dtype {t.ndim}/{t.dtype} differs from input 0")
        for d in range(t.ndim):
            if d != axis and as_int(t.shape[d]) != as_int(xs[0].shape[d]):
                error = ShapeError if differ(t.shape[d], xs[0].shape[d]) else OpError
                raise error("concat", f"input {k}", f"extent {t.shape[d]} of dim {d} differs from {xs[0].shape[d]}")
    offsets, total = [], index(0)
    for t in xs:
        offsets.append(total)
        total = add(total, t.shape[axis])
    shape = list(xs[0].shape)
    shape[axis] = total

    def body(*i):
        def load(k):
            idx = list(i)
            idx[axis] = sub(i[axis], offsets[k])
            return xs[k][tuple(idx)]

        out = load(0)
        for k in range(1, len(xs)):
            out = if_then_else(LE(offsets[k], i[axis]), load(k), out)
        return out

    return b.compute("T_concat", shape, body, names=_ax(len(shape)))


def stack(b: Builder, *xs: Buffer, axis=0) -> Buffer:
    """``T_stack``: a new axis selecting the input (``if_then_else`` on its index)."""
    if not xs:
        raise OpError("stack", "inputs", "needs at least one tensor")
    for k, t in enumerate(xs[1:], 1):
        if [as_int(e) for e in t.shape] != [as_int(e) for e in xs[0].shape] or t.dtype != xs[0].dtype:
            static = t.ndim != xs[0].ndim or any(differ(a, c) for a, c in zip(t.shape, xs[0].shape))
            raise (ShapeError if static else OpError)("stack", f"input {k}", "all inputs must have one shape and dtype")
    axis = normalize_axis(axis, xs[0].ndim + 1, "stack")
    shape = list(xs[0].shape)
    shape.insert(axis, index(len(xs)))

    def body(*i):
        idx = tuple(v for d, v in enumerate(i) if d != axis)
        out = xs[0][idx]
        for k in range(1, len(xs)):
            out = if_then_else(EQ(i[axis], index(k)), xs[k][idx], out)
        return out

    return b.compute("T_stack", shape, body, names=_ax(len(shape)))


def strided_slice(b: Builder, x: Buffer, axes, begin, end, strides=None, assume_inbound=False) -> Buffer:
    """``T_strided_slice_with_axes``: ``x[v * stride + begin]`` on the sliced axes (numpy clamping)."""
    axes = [normalize_axis(a, x.ndim, "strided_slice", "axes") for a in axes]
    strides = list(strides) if strides else [1] * len(axes)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise OpError("strided_slice", "begin", "axes, begin, end and strides must have one length")
    shape, starts, steps = list(x.shape), {}, {}
    for a, s, e, st in zip(axes, begin, end, strides):
        if st == 0:
            raise OpError("strided_slice", "strides", "a stride cannot be 0")
        lo, hi, step = slice(s, e, st).indices(static(x.shape[a], "strided_slice", "data"))
        shape[a] = index(max(0, len(range(lo, hi, step))))
        starts[a], steps[a] = lo, step

    def body(*i):
        return x[tuple(add(mul(v, steps[d]), starts[d]) if d in starts else v for d, v in enumerate(i))]

    return b.compute("T_strided_slice_with_axes", shape, body, names=_ax(x.ndim))


def nn_pad(b: Builder, x: Buffer, pad_width, pad_value=0.0, pad_mode="constant") -> Buffer:
    """``PadInput``: constant padding; ``pad_width`` is ``[before0, after0, before1, after1, ...]``.
    ``reflect`` / ``replicate`` / ``circular`` (``ReflectPadInput`` / ``ReplicatePadInput`` /
    ``CircularPadInput``) read the data at a mirrored, clamped or wrapped index instead (numpy's
    ``reflect`` / ``edge`` / ``wrap``, reflect and circular widths below the extent); ``pad_value`` is unused."""
    pw = list(pad_width)
    if len(pw) != 2 * x.ndim:
        raise OpError("nn.pad", "pad_width", f"expected {2 * x.ndim} integers, got {len(pw)}")
    if pad_mode == "constant":
        return pad(b, x, pw[0::2], pw[1::2], float(pad_value) if x.dtype.is_float else pad_value, name="PadInput")
    if pad_mode not in _PAD_INDEX:
        raise OpError("nn.pad", "pad_mode", f"expected constant, reflect, replicate or circular, got {pad_mode!r}")
    before, after = pw[0::2], pw[1::2]
    for n, lo, hi in zip(x.shape, before, after):
        limit = as_int(n)
        if lo < 0 or hi < 0 or pad_mode != "replicate" and limit is not None and max(lo, hi) >= limit:
            raise OpError("nn.pad", "pad_width", f"{pad_mode} widths must be non-negative"
                          + ("" if pad_mode == "replicate" else " and below the extent"))
    index_of = _PAD_INDEX[pad_mode]
    shape = [add(add(n, lo), hi) for n, lo, hi in zip(x.shape, before, after)]

    def body(*i):
        return x[tuple(index_of(sub(v, lo), n) for v, n, lo in zip(i, x.shape, before))]

    name = {"reflect": "ReflectPadInput", "replicate": "ReplicatePadInput", "circular": "CircularPadInput"}[pad_mode]
    return b.compute(name, shape, body, names=_ax(x.ndim))


def _abs(p):
    return Select(LE(index(0), p), p, sub(index(0), p))


def _reflect_index(p, n):
    """``n - 1 - |n - 1 - |p||``: the data mirrored about its first and last element."""
    return sub(sub(n, 1), _abs(sub(sub(n, 1), _abs(p))))


_PAD_INDEX = {
    "reflect": _reflect_index,
    "replicate": lambda p, n: Max(index(0), Min(sub(n, 1), p)),
    "circular": lambda p, n: FloorMod(add(p, n), index(n)),
}


def take(b: Builder, x: Buffer, indices: Buffer, axis=None, mode="fast") -> Buffer:
    """``T_take``: ``x[..., indices[j...], ...]`` (``clip`` clamps, ``wrap`` wraps the index)."""
    if not indices.dtype.is_integer:
        raise ShapeError("take", "indices", f"must be an integer tensor, got {indices.dtype}")
    if axis is None:
        raise OpError("take", "axis", "axis=None (flattened take) is not supported")
    axis = normalize_axis(axis, x.ndim, "take")
    shape = list(x.shape[:axis]) + list(indices.shape) + list(x.shape[axis + 1:])
    nidx = indices.ndim

    def body(*i):
        pos = indices[tuple(i[axis:axis + nidx])]
        pos = cast(pos, dt.int64) if pos.dtype != dt.int64 and mode != "fast" else pos
        if mode == "clip":
            pos = Min(Max(pos, index(0)), sub(x.shape[axis], 1))
        elif mode == "wrap":
            pos = FloorMod(pos, index(x.shape[axis]))
        elif mode != "fast":
            raise OpError("take", "mode", f"expected 'fast', 'clip' or 'wrap', got {mode!r}")
        return x[tuple(i[:axis]) + (pos,) + tuple(i[axis + nidx:])]

    return b.compute("T_take", shape, body, names=_ax(len(shape)))


def broadcast_to(b: Builder, x: Buffer, shape) -> Buffer:
    """``T_broadcast_to``."""
    target = [index(e) for e in shape]
    if len(target) < x.ndim or [as_int(e) for e in broadcast_shape([x.shape, target], "broadcast_to")] != \
            [as_int(e) for e in target]:
        raise OpError("broadcast_to", "shape", f"cannot broadcast {[as_int(e) for e in x.shape]} to {list(shape)}")
    return b.compute("T_broadcast_to", target, lambda *i: x[broadcast_index(x.shape, i, target)],
                     names=_ax(len(target)))


def tile(b: Builder, x: Buffer, repeats) -> Buffer:
    """``T_tile``: ``x[v % extent]`` over the repeated shape."""
    reps = [repeats] if isinstance(repeats, int) else list(repeats)
    if any(r < 0 for r in reps):
        raise OpError("tile", "repeats", f"must be non-negative, got {repeats!r}")
    rank = max(len(reps), x.ndim)
    reps = [1] * (rank - len(reps)) + reps
    xs = [index(1)] * (rank - x.ndim) + list(x.shape)
    shape = [mul(e, r) for e, r in zip(xs, reps)]
    off = rank - x.ndim

    def at(v, extent):
        # TVM's simplifier folds ``v % 1`` to 0 (and keeps ``v % n`` otherwise)
        return index(0) if isinstance(extent, IntImm) and extent.value == 1 else FloorMod(v, index(extent))

    return b.compute("T_tile", shape, lambda *i: x[tuple(at(i[d + off], x.shape[d]) for d in range(x.ndim))],
                     names=_ax(rank))


def flip(b: Builder, x: Buffer, axis=0) -> Buffer:
    """``T_reverse_sequence``: ``x[extent - 1 - v]`` along ``axis``."""
    axis = normalize_axis(axis, x.ndim, "flip")
    last = sub(x.shape[axis], 1)
    return b.compute("T_reverse_sequence", x.shape,
                     lambda *i: x[tuple(last - v if d == axis else v for d, v in enumerate(i))],
                     names=_ax(x.ndim))


def repeat(b: Builder, x: Buffer, repeats: int, axis=None) -> Buffer:
    """``T_repeat``: each element ``repeats`` times along ``axis`` (``x[.., v // repeats, ..]``);
    ``axis=None`` repeats the flattened tensor."""
    if not isinstance(repeats, int) or repeats < 1:
        raise OpError("repeat", "repeats", f"must be a positive integer, got {repeats!r}")
    if axis is None:
        if x.ndim != 1:
            raise OpError("repeat", "axis", "None (flatten first) is lowered for vectors only; reshape first")
        axis = 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    shape = [mul(e, repeats) if d == axis else e for d, e in enumerate(x.shape)]
    return b.compute("T_repeat", shape,
                     lambda *i: x[tuple(FloorDiv(v, index(repeats)) if d == axis else v for d, v in enumerate(i))],
                     names=_ax(x.ndim))


def trilu(b: Builder, x: Buffer, k: int, upper: bool) -> Buffer:
    """``trilu``: ``x`` where the element lies on or below (``tril``) / above (``triu``) the
    ``k``-th diagonal of the last two axes, 0 elsewhere."""
    op = "triu" if upper else "tril"
    if x.ndim < 2:
        raise OpError(op, "shape", f"expects at least 2 dimensions, got {x.ndim}")
    if not isinstance(k, int):
        raise OpError(op, "k", f"must be an integer, got {k!r}")

    def body(*i):
        row, col = i[-2], i[-1]
        keep = LE(add(row, k), col) if upper else LE(col, add(row, k))
        return Select(keep, x[i], cast(0, x.dtype))

    return b.compute("trilu", x.shape, body, names=[f"i{d}" for d in range(x.ndim)])
