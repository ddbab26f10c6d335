"""``nn.prelu`` and ``median`` as TVM's topi writes them.

Each lowering follows the computation of TVM 0.27's legalization (topi), the order of its
sums and its float32/int casts, so that the interpreter gives TVM's numbers.
"""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder, index
from ..expr import LT, BufferLoad, Call, IntImm, PrimExpr, Select, StringImm, as_int, const
from ..stmt import Block, BlockRealize, Evaluate
from .common import TRUE, OpError, ShapeError, differ, mul, normalize_axis

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
    if differ(alpha.shape[0], data.shape[ax]):
        raise ShapeError(op, "alpha", f"has {alpha.shape[0]} slopes for an axis of extent {data.shape[ax]}")
    zero = _f(0.0, data.dtype)
    return b.compute("compute", data.shape, lambda *i: Select(LT(zero, data[i]), data[i], data[i] * alpha[(i[ax],)]),
                     names=[f"i{d}" for d in range(data.ndim)])


OPS["nn.prelu"] = nn_prelu


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
