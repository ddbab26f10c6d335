"""``matmul`` with numpy semantics (vectors, batches, broadcast batches), as Relax legalizes it:
one ``matmul`` reduction block over ``i0...`` and ``k``."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, sum_
from ..expr import as_int
from .broadcast import broadcast_shape
from .common import OpError, ShapeError, cast_to, differ, index, out_dtype


def matmul(b: Builder, x: Buffer, y: Buffer, out_dtype_=None) -> Buffer:
    """``x @ y``; a 1-d ``x`` is a row vector, a 1-d ``y`` a column vector (both dropped after)."""
    if x.ndim == 0 or y.ndim == 0:
        raise OpError("matmul", "x", "operands must have rank >= 1")
    xs, ys = list(x.shape), list(y.shape)
    x_vec, y_vec = x.ndim == 1, y.ndim == 1
    xs = [index(1)] + xs if x_vec else xs
    ys = ys + [index(1)] if y_vec else ys
    kx, ky = as_int(xs[-1]), as_int(ys[-2])
    if not (xs[-1] is ys[-2] or (kx is not None and kx == ky)):
        error = ShapeError if differ(xs[-1], ys[-2]) else OpError
        raise error("matmul", "x1", f"reduction extents differ: {xs[-1]} (x) vs {ys[-2]} (x1)")
    batch = broadcast_shape([xs[:-2], ys[:-2]], "matmul") if (len(xs) > 2 or len(ys) > 2) else []
    out_shape = batch + ([] if x_vec else [xs[-2]]) + ([] if y_vec else [ys[-1]])
    odt = out_dtype(out_dtype_, x.dtype)
    k = b.reduce_axis(xs[-1], "k")
    nb = len(batch)

    def batch_index(shape, idx):
        own = shape[:-2]
        off = nb - len(own)
        return [index(0) if as_int(e) == 1 and as_int(batch[d + off]) != 1 else idx[d + off]
                for d, e in enumerate(own)]

    def body(*i):
        xi = batch_index(xs, i) + ([] if x_vec else [i[nb]]) + [k.var]
        yi = batch_index(ys, i) + [k.var] + ([] if y_vec else [i[-1]])
        return sum_(cast_to(x[tuple(xi)], odt) * cast_to(y[tuple(yi)], odt), k)

    return b.compute("matmul", out_shape, body, dtype=odt)
