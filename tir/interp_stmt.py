"""Execution of statements by the interpreter, lane-wise under a mask.

The same code runs a statement once (scalar variables) or for a whole grid of iterations
(variables bound to broadcastable arrays, see :mod:`tir.interp_nest`). Loops and blocks met
here run one instance at a time; a loop nest that can run as a grid is handed to
``interp_nest.run_nest`` first.
"""
from __future__ import annotations

import numpy as np

from . import expr as E
from . import stmt as S
from .interp_data import BufferData, InterpError, StepLimit, np_dtype
from .interp_expr import Ctx, Poison, and_mask, evaluate, evaluate_shared


def run_stmt(s: S.Stmt, ctx: Ctx, mask=None, vectorize: bool = True) -> None:
    """Execute ``s`` on the lanes of ``mask``."""
    handler = _HANDLERS.get(type(s))
    if handler is None:
        raise InterpError(f"{ctx.where}: cannot execute {type(s).__name__}")
    handler(s, ctx, mask, vectorize)


def _seq(s, ctx, mask, vec):
    for child in s.seq:
        run_stmt(child, ctx, mask, vec)


def _store(s, ctx, mask, vec):
    ctx.poison = Poison()
    try:
        value = evaluate_shared(s.value, ctx, mask)
    finally:
        poison, ctx.poison = ctx.poison, None
    idx = [evaluate(i, ctx, mask) for i in s.indices]
    ctx.data(s.buffer).store(idx, value, mask, ctx.where, (poison.lanes, poison.message))


def _let(s, ctx, mask, vec):
    ctx.vars[s.var] = evaluate(s.value, ctx, mask)
    try:
        run_stmt(s.body, ctx, mask, vec)
    finally:
        del ctx.vars[s.var]


def _if(s, ctx, mask, vec):
    c = evaluate(s.condition, ctx, mask)
    if np.ndim(c) == 0:
        branch = s.then_case if c else s.else_case
        if branch is not None:
            run_stmt(branch, ctx, mask, vec)
        return
    if np.any(c):
        run_stmt(s.then_case, ctx, and_mask(mask, c), vec)
    if s.else_case is not None and not np.all(c):
        run_stmt(s.else_case, ctx, and_mask(mask, np.logical_not(c)), vec)


def _evaluate(s, ctx, mask, vec):
    evaluate(s.value, ctx, mask)


def scalar_int(e, ctx: Ctx, what: str) -> int:
    """Evaluate an expression that must be one integer (a loop bound, an extent)."""
    v = evaluate(e, ctx)
    if np.ndim(v) != 0:
        raise InterpError(f"{ctx.where}: {what} varies across lanes")
    return int(v)


def _for(s, ctx, mask, vec):
    if mask is not None:
        raise InterpError(f"{ctx.where}: a loop cannot run under a lane mask")
    if vec and not _unit(s.extent):  # one iteration: nothing to run at once, the walk is cheaper
        from .interp_distribute import run_distributed
        from .interp_flat import run_flat
        from .interp_nest import run_nest

        if run_nest(s, ctx) or run_distributed(s, ctx) or run_flat(s, ctx):
            return
    lo = scalar_int(s.min, ctx, "loop start")
    extent = max(scalar_int(s.extent, ctx, "loop extent"), 0)  # negative: no iteration, as in C
    vtype = np_dtype(s.loop_var.dtype).type
    take_steps(ctx, extent)
    try:
        for i in range(lo, lo + extent):
            ctx.vars[s.loop_var] = vtype(i)
            run_stmt(s.body, ctx, None, vec)
    finally:
        ctx.vars.pop(s.loop_var, None)


def _unit(extent) -> bool:
    return type(extent) is E.IntImm and extent.value == 1


def _while(s, ctx, mask, vec):
    if mask is not None:
        raise InterpError(f"{ctx.where}: a while loop cannot run under a lane mask")
    while True:
        c = evaluate(s.condition, ctx)
        if np.ndim(c) != 0:
            raise InterpError(f"{ctx.where}: a while condition varies across lanes")
        if not c:
            return
        take_steps(ctx, 1)
        run_stmt(s.body, ctx, None, vec)


def take_steps(ctx: Ctx, count: int) -> None:
    """Count ``count`` iterations walked one at a time against the run's limit."""
    if ctx.steps_left is not None:
        ctx.steps_left -= max(count, 0)
        if ctx.steps_left < 0:
            raise StepLimit(f"{ctx.where}: more loop iterations to walk than the run allows")


def allocate(buffer, ctx: Ctx) -> None:
    """Give ``buffer`` fresh storage in ``ctx`` (zeros, or ``ctx.scratch_fill``)."""
    shape = [scalar_int(x, ctx, f"extent of {buffer.name!r}") for x in buffer.shape]
    strides = [scalar_int(x, ctx, f"stride of {buffer.name!r}") for x in buffer.strides]
    offset = scalar_int(buffer.elem_offset, ctx, "offset") if buffer.elem_offset is not None else 0
    bf16 = buffer.dtype.code == "bfloat"
    data = BufferData.allocate(buffer.name, shape, np_dtype(buffer.dtype), strides, offset, bf16)
    if ctx.scratch_fill is not None:
        fill = ctx.scratch_fill
        if data.flat.dtype == np.bool_:
            fill = True
        elif not np.issubdtype(data.flat.dtype, np.floating) and not np.isfinite(fill):
            fill = 7  # junk an integer can hold
        data.flat[...] = fill
    data.scratch = True
    data.drop_strays = ctx.drop_strays
    ctx.bufs[buffer] = data


def _allocate_stmt(s, ctx, mask, vec):
    if s.source is not None:
        _view(s, ctx)
    else:
        allocate(s.buffer, ctx)
    try:
        run_stmt(s.body, ctx, mask, vec)
    finally:
        del ctx.bufs[s.buffer]


def _view(s, ctx) -> None:
    """``b = src.view(...)``: ``b`` reads and writes ``src``'s storage, row-major."""
    shape = tuple(int(evaluate(d, ctx)) for d in s.buffer.shape)
    ctx.bufs[s.buffer] = ctx.data(s.source).reshaped(s.buffer.name, shape, f"{ctx.where}: view {s.buffer.name!r}",
                                                      np_dtype(s.buffer.dtype))


def _realize(s, ctx, mask, vec):
    if mask is not None:
        raise InterpError(f"{ctx.where}: a block cannot run under a lane mask")
    block = s.block
    outer = ctx.where
    values = [evaluate(v, ctx) for v in s.iter_values]
    if not evaluate(s.predicate, ctx):
        return
    ctx.where = f"block {block.name!r}"
    for iv, value in zip(block.iter_vars, values):
        ctx.vars[iv.var] = value
    try:
        _run_block(block, ctx, vec)
    finally:
        for iv in block.iter_vars:
            ctx.vars.pop(iv.var, None)
        ctx.where = outer


def at_init_point(block: S.Block, ctx: Ctx, mask=None):
    """True (per lane) where every reduction iteration variable is at its minimum."""
    cond = True
    for iv in block.iter_vars:
        if iv.kind == S.IterKind.REDUCE:
            cond = np.logical_and(cond, ctx.vars[iv.var] == evaluate(iv.dom.min, ctx))
    return cond if mask is None else np.logical_and(mask, cond)


def _run_block(block, ctx, vec):
    if block.match_buffers:
        raise InterpError(f"{ctx.where}: match_buffer is not supported by the interpreter")
    for buf in block.alloc_buffers:
        allocate(buf, ctx)
    try:
        if block.init is not None and at_init_point(block, ctx):
            run_stmt(block.init, ctx, None, vec)
        run_stmt(block.body, ctx, None, vec)
    finally:
        for buf in block.alloc_buffers:
            del ctx.bufs[buf]


def _attr(s, ctx, mask, vec):
    run_stmt(s.body, ctx, mask, vec)  # attributes are hints for compiler passes


_HANDLERS = {
    S.AttrStmt: _attr,
    S.SeqStmt: _seq,
    S.BufferStore: _store,
    S.LetStmt: _let,
    S.IfThenElse: _if,
    S.Evaluate: _evaluate,
    S.For: _for,
    S.While: _while,
    S.AllocateBuffer: _allocate_stmt,
    S.BlockRealize: _realize,
}
