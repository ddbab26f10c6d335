"""More ``nn`` ops (``nn.prelu``, adaptive average pools of every rank, ``median``) as
TVM's topi writes them.

Each lowering follows the computation of TVM 0.27's legalization (topi), the order of its
sums and its float32/int casts, so that the interpreter gives TVM's numbers; where TVM
only copies data (the transposes and reshapes around attention's matmuls) the copy is
folded into the reads.
"""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder, index, sum_
from ..expr import (LT, BufferLoad, Call, Cast, IntImm, PrimExpr, Select, StringImm, as_int, const,
    if_then_else, logical_and)
from ..stmt import Block, BlockRealize, Evaluate
from . import pool as pl
from .common import TRUE, OpError, add, ints, mul, normalize_axis, static

OPS: dict = {}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""


def _f(value: float, dtype) -> PrimExpr:
    return const(float(value), dtype)


def _call(name: str, value: PrimExpr) -> PrimExpr:
    return Call(value.dtype, name, (value,))


def _same_extent(a, b) -> bool:
    return a is b or (as_int(a) is not None and as_int(a) == as_int(b))


# ---------------------------------------------------------------- nn.prelu
def nn_prelu(b: Builder, data: Buffer, alpha: Buffer, *, axis=1) -> Buffer:
    """``Select(0 < x, x, x * alpha[i_axis])`` (topi.nn.prelu)."""
    op = "nn.prelu"
    ax = normalize_axis(axis, data.ndim, op)
    if alpha.ndim != 1:
        raise OpError(op, "alpha", f"must be 1-d, got rank {alpha.ndim}")
    if as_int(alpha.shape[0]) is not None and as_int(data.shape[ax]) is not None \
            and as_int(alpha.shape[0]) != as_int(data.shape[ax]):
        raise OpError(op, "alpha", f"has {alpha.shape[0]} slopes for an axis of extent {data.shape[ax]}")
    zero = _f(0.0, data.dtype)
    return b.compute("compute", data.shape, lambda *i: Select(LT(zero, data[i]), data[i], data[i] * alpha[(i[ax],)]),
                     names=[f"i{d}" for d in range(data.ndim)])


OPS["nn.prelu"] = nn_prelu


# ---------------------------------------------------------------- adaptive average pooling
def _adaptive_axis(size: int, osize: int):
    """(whether every window has ``size // osize`` rows, the largest window)."""
    even = size % osize == 0
    return even, max(-(-(j + 1) * size // osize) - j * size // osize for j in range(osize))


def adaptive_avg_pool(b: Builder, data: Buffer, *, op: str, nd: int, output_size=None, layout="NCHW",
                      out_layout=None) -> Buffer:
    """Adaptive average pooling over the D/H/W axes of ``layout``: output cell ``o`` of an axis
    averages rows ``[o*S//O, ceil((o+1)*S/O))``. An axis whose windows are all equal reads
    ``o*k + r``; an uneven one reduces over its largest window with the rows past its own
    masked (TVM loops over each window's own extent: the same sum, in the same order). The
    divisor is the product of the window extents, in the data type (TVM's form)."""
    if out_layout not in (None, "", layout):
        raise OpError(op, "out_layout", f"must equal layout {layout!r}, got {out_layout!r}")
    axes = pl._spatial_axes(layout, nd, op)
    if data.ndim != len(layout):
        raise OpError(op, "data", f"rank {data.ndim} does not match layout {layout!r}")
    sizes = [static(data.shape[ax], op, "data") for ax in axes]
    osize = sizes if output_size is None else ints(output_size, nd, op, "output_size")
    if any(o < 1 for o in osize):
        raise OpError(op, "output_size", f"must be positive, got {output_size!r}")
    shapes = [_adaptive_axis(s, o) for s, o in zip(sizes, osize)]
    rv = [b.reduce_axis(k, f"rv{i}") for i, (_, k) in enumerate(shapes)]
    names = [f"ax{d}" for d in range(data.ndim)]
    out_shape = list(data.shape)
    for i, ax in enumerate(axes):
        out_shape[ax] = osize[i]

    def start(o, i):
        return mul(o, sizes[i] // osize[i]) if shapes[i][0] else (o * index(sizes[i])) // index(osize[i])

    def extent(o, i):
        return ((o + 1) * index(sizes[i]) + index(osize[i] - 1)) // index(osize[i]) - start(o, i)

    def body(*o):
        idx = list(o)
        for i, ax in enumerate(axes):
            idx[ax] = add(start(o[ax], i), rv[i].var)
        masks = [LT(rv[i].var, extent(o[ax], i)) for i, ax in enumerate(axes) if not shapes[i][0]]
        load = data[tuple(idx)]
        return sum_(if_then_else(logical_and(*masks), load, _f(0.0, data.dtype)) if masks else load, rv)

    total = b.compute("adaptive_pool_sum", out_shape, body, names=names)

    def average(*o):
        even = 1
        for i, (is_even, k) in enumerate(shapes):
            even *= k if is_even else 1
        num = None if even == 1 and not all(s[0] for s in shapes) else _f(even, data.dtype)
        for i, ax in enumerate(axes):
            if not shapes[i][0]:
                factor = Cast(data.dtype, extent(o[ax], i))
                num = factor if num is None else num * factor
        return total[o] / num

    return b.compute("adaptive_pool_avg", out_shape, average, names=names,
                     annotations={"schedule_rule": "meta_schedule.adaptive_pool_avg"})


def _adaptive(nd: int, default_layout: str):
    op = f"nn.adaptive_avg_pool{nd}d"

    def lower_adaptive_avg_pool(b: Builder, data, *, output_size=None, layout=default_layout, out_layout=None):
        return adaptive_avg_pool(b, data, op=op, nd=nd, output_size=output_size, layout=layout,
                                 out_layout=out_layout)

    lower_adaptive_avg_pool.__name__ = op.replace(".", "_")
    lower_adaptive_avg_pool.__doc__ = f"``{op}``"
    return lower_adaptive_avg_pool


OPS["nn.adaptive_avg_pool1d"] = _adaptive(1, "NCW")
OPS["nn.adaptive_avg_pool3d"] = _adaptive(3, "NCDHW")


# ---------------------------------------------------------------- median
def _array_arg(buf: Buffer) -> PrimExpr:
    """``T.tvm_stack_make_array(buf.data, T.tvm_stack_make_shape(*shape), 0, ndim, 0, 0)``."""
    handle = dt.dtype("handle")
    data = Call(handle, "buffer_data", (BufferLoad(buf, tuple(index(0) for _ in buf.shape)),))
    shape = Call(handle, "tvm_stack_make_shape", tuple(buf.shape))
    return Call(handle, "tvm_stack_make_array", (data, shape, IntImm(dt.int32, 0), IntImm(dt.int32, buf.ndim),
                                                  const(0, buf.dtype), index(0)))


def argsort(b: Builder, data: Buffer, axis: int) -> Buffer:
    """An ``argsort_cpu`` block calling TVM's runtime sort (stable, ascending) along ``axis``;
    the int64 positions it writes."""
    out = b.alloc("out_buf", data.shape, "int64")
    call = Call(dt.int32, "call_packed", (StringImm("tvm.contrib.sort.argsort", dt.dtype("handle")),
                                          _array_arg(data), _array_arg(out), IntImm(dt.int32, axis),
                                          IntImm(dt.bool_, 1)))
    b.stmts.append(BlockRealize((), TRUE, Block(b.unique("argsort_cpu"), (), (), (), Evaluate(call))))
    return out


def _gather(b: Builder, src: Buffer, positions: Buffer, axis: int, name="T_gather") -> Buffer:
    """``src`` read at ``positions`` along ``axis`` (topi.gather)."""
    def body(*i):
        return src[tuple(positions[i] if d == axis else v for d, v in enumerate(i))]

    return b.compute(name, positions.shape, body, names=[f"ax{d}" for d in range(positions.ndim)])


def _squeeze(b: Builder, x: Buffer, axis: int) -> Buffer:
    keep = [d for d in range(x.ndim) if d != axis]
    return b.compute("T_squeeze", [x.shape[d] for d in keep],
                     lambda *i: x[tuple(dict(zip(keep, i)).get(d, index(0)) for d in range(x.ndim))],
                     names=[f"ax{d}" for d in range(len(keep))])


def median(b: Builder, x: Buffer, *, axis=None, keepdims=False):
    """The lower median (sorted position ``(k - 1) // 2``) along one axis, as value and index;
    with ``axis=None`` the value of the flattened data only (shape ``(1,)``, or ``()``
    without ``keepdims``). Sorted by TVM's runtime argsort, then gathered."""
    op = "median"
    axes = None if axis is None else [axis] if isinstance(axis, int) else list(axis)
    if axes is not None and len(axes) != 1:
        raise OpError(op, "axis", f"one axis or None, got {axis!r}")
    if not x.dtype.is_float:
        raise OpError(op, "x", f"expects floating-point data, got {x.dtype}")
    if axes is None:
        flat = x.shape[0]
        for e in x.shape[1:]:
            flat = mul(flat, e)
        at = b.compute("T_full", [1], lambda i: (flat - index(1)) // index(2), names=["ax0"])
        src = x if x.ndim == 1 else _flatten(b, x, flat)
        order = argsort(b, src, -1)
        value = _gather(b, _gather(b, src, order, 0), at, 0)
        return value if keepdims else _squeeze(b, value, 0)
    ax = normalize_axis(axes[0], x.ndim, op)
    kept = [index(1) if d == ax else e for d, e in enumerate(x.shape)]
    at = b.compute("T_full", kept, lambda *i: (x.shape[ax] - index(1)) // index(2),
                   names=[f"ax{d}" for d in range(x.ndim)])
    order = argsort(b, x, ax)
    value = _gather(b, _gather(b, x, order, ax), at, ax)
    where = _gather(b, order, at, ax)
    return (value, where) if keepdims else (_squeeze(b, value, ax), _squeeze(b, where, ax))


def _flatten(b: Builder, x: Buffer, flat) -> Buffer:
    def body(i):
        idx, rest = [], i
        for e in reversed(x.shape):
            idx.append(rest % e)
            rest = rest // e
        return x[tuple(reversed(idx))]

    return b.compute("T_reshape", [flat], body, names=["ax0"])


OPS["median"] = median
