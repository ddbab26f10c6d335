"""The TVM runtime functions the interpreter runs itself (``T.call_packed`` statements).

TVM's legalization writes a few ops as a call into its runtime inside an opaque block:
``median`` (and sorting ops that are not fused into loops) sort with::

    T.call_packed("tvm.contrib.sort.argsort",
                  T.tvm_stack_make_array(data.data, T.tvm_stack_make_shape(*shape), 0, ndim, <dtype>, <offset>),
                  T.tvm_stack_make_array(out.data, ...), axis, is_ascend)

``argsort`` writes, along ``axis``, the positions that sort the data (ascending or not);
TVM's CPU implementation sorts stably, so equal values keep their order. Any other
runtime function stays an error naming it.
"""
from __future__ import annotations

import numpy as np

from . import expr as E
from .graph_ops import stable_order
from .interp_data import InterpError


def stack_array(arg) -> "tuple | None":
    """(buffer, shape expressions) of ``T.tvm_stack_make_array(buf.data,
    T.tvm_stack_make_shape(...), ...)``; None for any other argument (shared with the C
    engine, which sorts in C)."""
    if not (isinstance(arg, E.Call) and arg.op == "tvm_stack_make_array" and len(arg.args) >= 2):
        return None
    handle, shape = arg.args[0], arg.args[1]
    if not (isinstance(handle, E.Call) and handle.op == "buffer_data" and handle.args
            and isinstance(handle.args[0], E.BufferLoad)
            and isinstance(shape, E.Call) and shape.op == "tvm_stack_make_shape"):
        return None
    return handle.args[0].buffer, list(shape.args)


def constant_flag(arg) -> "int | None":
    """A constant integer argument (axis), or a ``T.bool(...)`` one (order); else None."""
    v = E.as_int(arg)
    if v is None and isinstance(arg, E.Call) and arg.op == "bool" and arg.args:
        v = E.as_int(arg.args[0])
    return v


def _array_buffer(arg, ctx, evaluate):
    """The Buffer and the shape (ints) an ``tvm_stack_make_array`` argument describes."""
    got = stack_array(arg)
    if got is None:
        raise InterpError(f"{ctx.where}: argsort expects T.tvm_stack_make_array arguments over a buffer's data")
    buf, shape = got
    return buf, [int(np.asarray(evaluate(d, ctx)).item()) for d in shape]


def _int(arg, where: str) -> int:
    v = constant_flag(arg)
    if v is None:
        raise InterpError(f"{where}: argsort expects constant axis and order arguments")
    return int(v)


def _argsort(args, ctx, evaluate) -> None:
    if len(args) != 4:
        raise InterpError(f"{ctx.where}: tvm.contrib.sort.argsort takes (data, out, axis, is_ascend)")
    (src, src_dims), (dst, dst_dims) = (_array_buffer(a, ctx, evaluate) for a in args[:2])
    axis = _int(args[2], ctx.where)
    ascend = bool(np.asarray(evaluate(args[3], ctx)).item())
    if list(src_dims) != list(dst_dims):
        raise InterpError(f"{ctx.where}: argsort arrays of shapes {src_dims} and {dst_dims}")
    if not -len(src_dims) <= axis < len(src_dims):
        raise InterpError(f"{ctx.where}: argsort axis {axis} out of range for rank {len(src_dims)}")
    # the arrays as described, over the buffers' storage (a flattened view passes its source's shape)
    values, out = (ctx.data(b).reshaped(b.name, dims, f"{ctx.where}: argsort array").view()
                   for b, dims in ((src, src_dims), (dst, dst_dims)))
    out[...] = stable_order(values, axis, not ascend).astype(out.dtype)


RUNTIME = {"tvm.contrib.sort.argsort": _argsort}
"""Runtime function name -> fn(arguments after the name, ctx, evaluate)."""


def call_runtime(e: E.Call, ctx, evaluate) -> int:
    """Run the ``T.call_packed`` ``e`` when it is one of :data:`RUNTIME` (returns 0, TVM's
    success code); an InterpError naming the function otherwise."""
    name = e.args[0].value if e.args and isinstance(e.args[0], E.StringImm) else "?"
    fn = RUNTIME.get(name) if e.op == "call_packed" else None
    if fn is None:
        raise InterpError(f"{ctx.where}: T.{e.op}({name!r}) calls a function of the TVM runtime; cannot execute")
    fn(e.args[1:], ctx, evaluate)
    return np.int32(0)
