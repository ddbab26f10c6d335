"""``nn.softmax`` (maxelem, exp, expsum, norm blocks) and ``nn.log_softmax`` (maxelem, sum of
exp, subtract-log), reducing one axis like TVM's topi."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, max_, sum_
from ..expr import Call
from .common import normalize_axis


def _setup(b, x, axis, op):
    axis = normalize_axis(axis, x.ndim, op)
    outer = [d for d in range(x.ndim) if d != axis]
    k = b.reduce_axis(x.shape[axis], "k")
    names = [f"i{d}" for d in range(len(outer))]

    def full(o, kv):
        idx = list(o)
        idx.insert(axis, kv)
        return tuple(idx)

    def reduced(i):
        return tuple(v for d, v in enumerate(i) if d != axis)

    return axis, [x.shape[d] for d in outer], k, names, full, reduced


def softmax(b: Builder, x: Buffer, axis=-1) -> Buffer:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    axis, rshape, k, rnames, full, reduced = _setup(b, x, axis, "nn.softmax")
    names = [f"i{d}" for d in range(x.ndim)]
    mx = b.compute("T_softmax_maxelem", rshape, lambda *o: max_(x[full(o, k.var)], k), names=rnames)
    ex = b.compute("T_softmax_exp", x.shape, lambda *i: Call(x.dtype, "exp", (x[i] - mx[reduced(i)],)),
                   names=names)
    k2 = b.reduce_axis(x.shape[axis], "k")
    total = b.compute("T_softmax_expsum", rshape, lambda *o: sum_(ex[full(o, k2.var)], k2), names=rnames)
    return b.compute("T_softmax_norm", x.shape, lambda *i: ex[i] / total[reduced(i)], names=names,
                     annotations={"axis": axis})


def log_softmax(b: Builder, x: Buffer, axis=-1) -> Buffer:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    axis, rshape, k, rnames, full, reduced = _setup(b, x, axis, "nn.log_softmax")
    names = [f"i{d}" for d in range(x.ndim)]
    mx = b.compute("T_softmax_maxelem", rshape, lambda *o: max_(x[full(o, k.var)], k), names=rnames)
    k2 = b.reduce_axis(x.shape[axis], "k")
    total = b.compute("compute", rshape, lambda *o: sum_(
        Call(x.dtype, "exp", (x[full(o, k2.var)] - mx[o],)), k2), names=rnames)
    return b.compute("compute", x.shape, lambda *i: x[i] - mx[reduced(i)] - Call(
        x.dtype, "log", (total[reduced(i)],)), names=names, annotations={"axis": axis})
