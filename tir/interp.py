"""The reference interpreter of PrimFuncs.

``interpret(func, *args)`` runs ``func`` in destination-passing style on numpy arrays (one
per buffer parameter, outputs included, written in place) and Python numbers (one per scalar
parameter). Symbolic extents (``n`` in ``T.Buffer((n, 4))``) are bound from the arrays'
shapes. Loop nests around a block run as whole grids with numpy where the block allows it
(see :mod:`tir.interp_nest`); ``vectorize=False`` forces the plain scalar walk.
"""
from __future__ import annotations

import numpy as np

from . import expr as E
from .devectorize import for_engines
from .function import PrimFunc
from .interp_data import BufferData, InterpError, StepLimit, compact_strides, np_dtype
from .interp_expr import Ctx, evaluate
from .interp_stmt import run_stmt
from .unblockize import dissolve_outer_blocks

__all__ = ["interpret", "InterpError", "StepLimit"]


def interpret(func: PrimFunc, *args, vectorize: bool = True, scratch_fill: "float | None" = None,
              max_steps: "int | None" = None, drop_strays: bool = False) -> None:
    """Run ``func`` on ``args`` (one per parameter, in order); buffers are written in place.
    ``scratch_fill``: the value storage the function allocates starts with (zeros when None).
    ``max_steps``: how many loop iterations the run may walk one at a time (the nests it
    cannot vectorise) before it stops with :class:`StepLimit` (None: no limit).
    ``drop_strays``: a store out of bounds lands where a compact row-major layout puts it
    (an index past the end of an inner axis: an element of a later row) and is dropped past
    the end of the storage, instead of an error (how a schedule's over-reaching copies are
    read when checking that reading through them changes nothing)."""
    name = func.name or "prim_func"
    if len(args) != len(func.params):
        raise InterpError(f"{name}: expects {len(func.params)} arguments ({_param_names(func)}), got {len(args)}")
    func = for_engines(func)  # vector stores (VectorizeLoop) lane by lane, thread launches as loops
    if vectorize:
        func = dissolve_outer_blocks(func)  # blockize's outer blocks: one perfect nest for the grid
    ctx = Ctx(where=f"function {name!r}", scratch_fill=scratch_fill, steps_left=max_steps,
              drop_strays=drop_strays)
    arrays = bind_params(func, args, ctx, name)
    with np.errstate(all="ignore"):
        run_stmt(func.body, ctx, None, vectorize)
    for arr, data in arrays:
        if arr.flags.writeable and not np.shares_memory(arr, data.flat):
            arr[...] = data.view()


def _param_names(func) -> str:
    return ", ".join(func.buffer_map[p].name if p in func.buffer_map else p.name for p in func.params)


def bind_params(func, args, ctx, name) -> list:
    """Bind scalar parameters and the symbolic shape variables, then give each buffer storage."""
    pairs = []
    for p, a in zip(func.params, args):
        if p in func.buffer_map:
            buf = func.buffer_map[p]
            arr = check_array(buf, a, name)
            bind_shape(buf, arr, ctx, name)
            pairs.append((buf, arr))
        else:
            ctx.vars[p] = np_dtype(p.dtype).type(a)
    out = []
    for buf, arr in pairs:
        check_shape(buf, arr, ctx, name)
        data = storage(buf, arr, ctx)
        ctx.bufs[buf] = data
        out.append((arr, data))
    return out


def check_array(buf, a, name) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise InterpError(f"{name}: argument for buffer {buf.name!r} must be a numpy array, got {type(a).__name__}")
    want = np_dtype(buf.dtype)
    if a.dtype != want:
        raise InterpError(f"{name}: buffer {buf.name!r} has dtype {buf.dtype}, the argument has {a.dtype}")
    if a.ndim != len(buf.shape):
        raise InterpError(f"{name}: buffer {buf.name!r} has rank {len(buf.shape)}, the argument has shape {a.shape}")
    return a


def bind_shape(buf, arr, ctx, name) -> None:
    for dim, (extent, actual) in enumerate(zip(buf.shape, arr.shape)):
        if isinstance(extent, E.Var) and extent not in ctx.vars:
            ctx.vars[extent] = np_dtype(extent.dtype).type(actual)


def check_shape(buf, arr, ctx, name) -> None:
    try:
        want = tuple(int(evaluate(x, ctx)) for x in buf.shape)
    except InterpError as err:
        raise InterpError(f"{name}: cannot determine the shape of buffer {buf.name!r}: {err}") from None
    if want != arr.shape:
        raise InterpError(f"{name}: buffer {buf.name!r} has shape {want}, the argument has shape {arr.shape}")


def storage(buf, arr, ctx) -> BufferData:
    """Storage for a parameter: the array itself when compact, else a laid-out copy."""
    shape = arr.shape
    strides = _strides(buf, shape, ctx)
    if isinstance(buf.elem_offset, E.Var) and buf.elem_offset not in ctx.vars:
        # a free offset (``elem_offset=elem_offset_1`` in TVM's text): the array starts at it
        ctx.vars[buf.elem_offset] = np_dtype(buf.elem_offset.dtype).type(0)
    offset = int(evaluate(buf.elem_offset, ctx)) if buf.elem_offset is not None else 0
    bf16 = buf.dtype.code == "bfloat"
    if strides == compact_strides(shape) and offset == 0 and arr.flags.c_contiguous and arr.flags.writeable:
        return BufferData(buf.name, arr.reshape(-1), shape, strides, 0, bf16, drop_strays=ctx.drop_strays)
    data = BufferData.allocate(buf.name, shape, arr.dtype, strides, offset, bf16)
    data.drop_strays = ctx.drop_strays
    if arr.size:
        data.view()[...] = arr
    return data


def _strides(buf, shape, ctx) -> tuple:
    if not buf.strides:
        return compact_strides(shape)
    compact = compact_strides(shape)
    out = []
    for s, default in zip(buf.strides, compact):
        if isinstance(s, E.Var) and s not in ctx.vars:
            ctx.vars[s] = np_dtype(s.dtype).type(default)
        out.append(int(evaluate(s, ctx)))
    return tuple(out)
