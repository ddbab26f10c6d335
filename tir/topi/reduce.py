"""Reductions (sum, mean, max, min, prod, variance, argmax, argmin) in TVM's forms: a
``<input>_red`` block over the kept axes ``ax...`` then the reduced ``k<axis>``."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, Reduction, Combiner
from .. import dtype as dt
from ..expr import (EQ, GT, LT, And, BufferLoad, Call, Cast, Or, Select, Var, as_int, const, max_value,
                    min_value)
from ..stmt import BufferStore, LetStmt, seq
from .broadcast import broadcast_index
from .common import OpError, index, normalize_axis

_COMBINERS = {"sum": Combiner.SUM, "max": Combiner.MAX, "min": Combiner.MIN, "prod": Combiner.PROD,
              "mean": Combiner.SUM}


def reduce_axes(op: str, ndim: int, axis) -> list:
    """Sorted, normalised reduction axes (None: all)."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = sorted({normalize_axis(a, ndim, op) for a in axes})
    if len(out) != len(axes):
        raise OpError(op, "axis", f"repeated axis in {axis!r}")
    return out


def _plan(b, x, axes, keepdims):
    """Output shape, loop names, reduction axes, and the input index from output + reduce vars."""
    kept = [d for d in range(x.ndim) if d not in axes]
    out_dims = list(range(x.ndim)) if keepdims else kept
    shape = [index(1) if d in axes else x.shape[d] for d in out_dims]
    rk = {d: b.reduce_axis(x.shape[d], f"k{d}") for d in axes}

    def source(o):
        pos = dict(zip(out_dims, o))
        return tuple(rk[d].var if d in axes else pos[d] for d in range(x.ndim))

    return shape, [f"ax{i}" for i in range(len(shape))], [rk[d] for d in axes], source


def reduce(b: Builder, op: str, x: Buffer, axis=None, keepdims=False) -> Buffer:
    """``sum``, ``max``, ``min``, ``prod`` or ``mean`` over ``axis``."""
    axes = reduce_axes(op, x.ndim, axis)
    shape, names, raxes, source = _plan(b, x, axes, keepdims)
    comb = _COMBINERS[op]
    red = b.compute(f"{x.name}_red", shape, lambda *o: Reduction(comb, x[source(o)], raxes), names=names)
    if op != "mean":
        return red
    count = _count(x, axes)
    return b.compute("T_divide", shape, lambda *o: red[o] / count, names=names)


def _count(x: Buffer, axes) -> "object":
    n = index(1)
    for d in axes:
        n = index(as_int(n) * as_int(x.shape[d])) if as_int(n) is not None and as_int(x.shape[d]) is not None \
            else (x.shape[d] if as_int(n) == 1 else n * x.shape[d])
    return const(float(as_int(n)), x.dtype) if as_int(n) is not None else Cast(x.dtype, n)


def variance(b: Builder, x: Buffer, axis=None, keepdims=False) -> Buffer:
    """``mean((x - mean(x))^2)`` in six blocks."""
    mean = reduce(b, "mean", x, axis, keepdims=True)
    names = [f"ax{d}" for d in range(x.ndim)]
    diff = b.compute("T_subtract", x.shape, lambda *i: x[i] - mean[broadcast_index(mean.shape, i, x.shape)],
                     names=names)
    sq = b.compute("T_multiply", x.shape, lambda *i: diff[i] * diff[i], names=names)
    return reduce(b, "mean", sq, axis, keepdims)


def std(b: Builder, x: Buffer, axis=None, keepdims=False) -> Buffer:
    """``sqrt(variance(x))``."""
    var = variance(b, x, axis, keepdims)
    return b.compute("compute", var.shape, lambda *i: Call(var.dtype, "sqrt", (var[i],)),
                     names=[f"i{d}" for d in range(len(var.shape))])


def arg_reduce(b: Builder, op: str, x: Buffer, axis=None, keepdims=False) -> Buffer:
    """``argmax``/``argmin``: a two-buffer (index, value) reduction, then a copy of the index."""
    axes = reduce_axes(op, x.ndim, None if axis is None else [axis])
    shape, names, raxes, source = _plan(b, x, axes, keepdims)
    idx_buf = b.alloc(f"{x.name}_red_temp_v0", shape, dt.int64)
    val_buf = b.alloc(f"{x.name}_red_temp_v1", shape, x.dtype)
    ivars = [Var(f"v_{n}", dt.int64) for n in names]
    better = GT if op == "argmax" else LT

    def make_body():
        o = tuple(ivars)
        pos = _flat_index([x.shape[d] for d in axes], [r.var for r in raxes])
        cur_i, cur_v, val = BufferLoad(idx_buf, o), BufferLoad(val_buf, o), x[source(o)]
        new_i = Var(f"v_{idx_buf.name}", dt.int64)
        new_v = Var(f"v_{val_buf.name}", x.dtype)
        keep = Or(better(cur_v, val), And(EQ(cur_v, val), LT(cur_i, pos)))
        body = LetStmt(new_i, Select(keep, cur_i, pos), LetStmt(new_v, Select(better(cur_v, val), cur_v, val), seq(
            BufferStore(idx_buf, new_i, o), BufferStore(val_buf, new_v, o))))
        start = min_value(x.dtype) if op == "argmax" else max_value(x.dtype)
        init = seq(BufferStore(idx_buf, const(-1, dt.int64), o), BufferStore(val_buf, start, o))
        return body, init, (idx_buf, val_buf)

    b.emit_block(b.unique(f"{x.name}_red_temp"), list(zip(names, ivars, shape)), raxes, make_body)
    return b.compute(f"{x.name}_red", shape, lambda *o: idx_buf[o], names=names)


def _flat_index(extents, vars_):
    """Row-major position of ``vars_`` in a box of ``extents`` (the single var for one axis)."""
    pos = vars_[0]
    for e, v in zip(extents[1:], vars_[1:]):
        pos = pos * e + v
    return pos
