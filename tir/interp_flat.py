"""Running a loop nest without blocks (TIR after TVM's lowering passes) with numpy.

Lowered code has lost its blocks: ``for c, h, w, dc, dh, dw: cse = c * 1221 + h * 33 + w;
if dc == 0 and ...: o[cse] = 0; o[cse] = o[cse] + ...``. Walking such a nest one iteration
at a time is slow, so :func:`run_flat` runs it as lanes: the outer loops whose variables are
all that the written elements depend on become a grid of lanes, evaluated at once; the inner
loops run one step at a time, in order, each step over every lane. Each lane then does exactly
what its iterations do in the walk, in the same order (a reduction accumulates in loop order,
as compiled code does).

This is sound when no two lanes touch one element of a written buffer and nothing else reads
one: every access (store or load) of a buffer the nest writes uses one index tuple, of the
lane loops only, giving distinct elements on distinct lanes (checked on the grid before
running), and no buffer read shares storage with a written one (a view). Loops inside the
body (a reduction's init before its loop) are stepped on every lane alike: their ranges may not
depend on the lanes, and they may not sit under a condition (which may differ from lane to
lane). A nest of any other form (allocations in its body, calls with side effects, another
index) is left to the walk: :func:`run_flat` returns False.
"""
from __future__ import annotations

import attrs
import numpy as np

from . import expr as E
from . import stmt as S
from .functor import post_order_stmts, pre_order_visit, substitute
from .interp_data import InterpError
from .interp_expr import Ctx, evaluate
from .interp_stmt import run_stmt, scalar_int
from .loop_nest import free_vars, per_loop, stores_and_loads

MAX_LANES = 1 << 22
"""The most lanes one grid takes (the index arrays of every access are that long)."""


def run_flat(loop: S.For, ctx: Ctx) -> bool:
    """Run the nest rooted at ``loop`` as lanes; False (nothing run) when it does not fit."""
    plan = _plan(loop)
    if plan is None:
        return False
    loops, body, lane_count, accesses, touched = plan
    try:
        shape = _bind_lanes(loops[:lane_count], ctx)
        if shape is None or not _distinct(accesses, touched, ctx, shape):
            return False
        _walk(loops[lane_count:], body, ctx)
        return True
    finally:
        for lp in loops:
            ctx.vars.pop(lp.loop_var, None)


@per_loop
def _plan(loop: S.For):
    """(loops, body, number of lane loops, {written buffer: its one index tuple}, every buffer
    the body accesses), or None."""
    loops = [loop]
    while isinstance(loops[-1].body, S.For):
        loops.append(loops[-1].body)
    body = loops[-1].body
    if not _simple(body):
        return None
    flat = _inline_lets(body)
    stores, loads = stores_and_loads(flat)
    if not stores:
        return None
    index: dict = {}
    for access in stores + [ld for ld in loads if ld.buffer in {st.buffer for st in stores}]:
        known = index.setdefault(access.buffer, tuple(access.indices))
        if known != tuple(access.indices):
            return None  # another element of a written buffer: lanes could meet
    loop_vars = [lp.loop_var for lp in loops]
    used = set().union(*(free_vars(e) for idx in index.values() for e in idx))
    read = {ld.buffer for idx in index.values() for e in idx for ld in stores_and_loads(e)[1]}
    if read & set(index):
        return None  # an index read from a buffer the nest writes: checked once, it could change
    lane_count = max((k + 1 for k, v in enumerate(loop_vars) if v in used), default=0)
    if lane_count == 0:
        return None
    lanes, inner_loops = set(loop_vars[:lane_count]), _loops(flat)
    if any(_ranges_use(lp, loop_vars) for lp in loops) or any(_ranges_use(lp, lanes) for lp in inner_loops):
        return None  # every lane runs the same steps (the lets written out in the inner ones)
    if any(isinstance(s, S.IfThenElse) and _loops(s) for s in _stmts(body)):
        return None  # a loop under a condition that may differ from lane to lane
    stepped = set(loop_vars[lane_count:]) | {lp.loop_var for lp in inner_loops}
    if stepped & used:
        return None
    return loops, body, lane_count, index, {a.buffer for a in stores + loads}


def _ranges_use(loop: S.For, variables) -> bool:
    return bool((free_vars(loop.min) | free_vars(loop.extent)) & set(variables))


def _stmts(body) -> list:
    found = []
    post_order_stmts(body, found.append)
    return found


def _simple(body) -> bool:
    """Only stores, lets, ifs and loops (no allocations, blocks or calls run for effect)."""
    ok = [True]

    def visit(n):
        if isinstance(n, S.Stmt) and not isinstance(n, (S.SeqStmt, S.BufferStore, S.LetStmt, S.IfThenElse, S.For)):
            ok[0] = False
        if isinstance(n, E.Call) and n.op.startswith(("tvm_", "call_")):
            ok[0] = False
        return ok[0]

    pre_order_visit(body, visit)
    return ok[0]


def _loops(body) -> list:
    return [s for s in _stmts(body) if isinstance(s, S.For)]


def _inline_lets(body):
    """``body`` with every let's value written where its variable is used (indices compare
    as the expressions they are)."""
    if isinstance(body, S.LetStmt):
        return _inline_lets(substitute(body.body, {body.var: body.value}))
    if isinstance(body, S.SeqStmt):
        return S.SeqStmt(tuple(_inline_lets(s) for s in body.seq))
    if isinstance(body, S.IfThenElse):
        return S.IfThenElse(body.condition, _inline_lets(body.then_case),
                            _inline_lets(body.else_case) if body.else_case is not None else None)
    if isinstance(body, S.For):
        return attrs.evolve(body, body=_inline_lets(body.body))
    return body


def _bind_lanes(loops, ctx: Ctx):
    """Bind the lane loops' variables along the axes of a grid; its shape, or None when too big."""
    k = len(loops)
    shape = []
    for axis, lp in enumerate(loops):
        lo = scalar_int(lp.min, ctx, "loop start")
        extent = max(scalar_int(lp.extent, ctx, "loop extent"), 0)
        shape.append(extent)
        dims = [1] * k
        dims[axis] = extent
        ctx.vars[lp.loop_var] = np.arange(lo, lo + extent, dtype=np.dtype(lp.loop_var.dtype.numpy)).reshape(dims)
    if int(np.prod(shape, dtype=np.int64)) > MAX_LANES:
        return None
    return tuple(shape)


def _distinct(accesses: dict, touched: set, ctx: Ctx, shape) -> bool:
    """Each written buffer's elements differ from lane to lane, and no other buffer the nest
    accesses shares storage with one (a view of it)."""
    for buf, idx in accesses.items():
        data = ctx.data(buf)
        indices = [evaluate(i, ctx) for i in idx]
        bad = None
        if data.by_layout(indices):
            # stores land where the layout puts them, past the storage nowhere: the lanes
            # inside must still meet distinct elements
            flat, bad = data.layout_flat(indices, None)
        else:
            try:
                flat = data.flat_index(indices, None, ctx.where)
            except InterpError:
                return False  # out of bounds on some lane: the walk reports it where it happens
        flat = np.broadcast_to(flat, shape).reshape(-1)
        if bad is not None:
            flat = flat[~np.broadcast_to(bad, shape).reshape(-1)]
        if np.unique(flat).size != flat.size:
            return False
    written = [ctx.data(b).flat for b in accesses]
    for b in touched:
        if b not in accesses and any(np.may_share_memory(ctx.data(b).flat, w) for w in written):
            return False
    return True


def _walk(loops, body, ctx: Ctx) -> None:
    """The step loops in order, each step's body over every lane."""
    if not loops:
        run_stmt(body, ctx, None, False)
        return
    lp, rest = loops[0], loops[1:]
    lo = scalar_int(lp.min, ctx, "loop start")
    extent = max(scalar_int(lp.extent, ctx, "loop extent"), 0)
    vtype = np.dtype(lp.loop_var.dtype.numpy).type
    for i in range(lo, lo + extent):
        ctx.vars[lp.loop_var] = vtype(i)
        _walk(rest, body, ctx)
