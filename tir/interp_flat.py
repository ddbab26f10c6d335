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
from .functor import post_order_visit, pre_order_visit, substitute
from .interp_data import InterpError
from .interp_expr import Ctx, evaluate
from .interp_stmt import run_stmt, scalar_int

MAX_LANES = 1 << 22
"""The most lanes one grid takes (the index arrays of every access are that long)."""

_PLANS: dict = {}


def run_flat(loop: S.For, ctx: Ctx) -> bool:
    """Run the nest rooted at ``loop`` as lanes; False (nothing run) when it does not fit."""
    plan = _PLANS.get(id(loop))
    if plan is None or plan[0] is not loop:
        if len(_PLANS) > 256:
            _PLANS.clear()
        plan = _PLANS[id(loop)] = (loop, _plan(loop))
    plan = plan[1]
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
    stores, loads = [], []
    post_order_visit(flat, lambda n: stores.append(n) if isinstance(n, S.BufferStore)
                     else loads.append(n) if isinstance(n, E.BufferLoad) else None)
    if not stores:
        return None
    index: dict = {}
    for access in stores + [ld for ld in loads if ld.buffer in {st.buffer for st in stores}]:
        known = index.setdefault(access.buffer, tuple(access.indices))
        if known != tuple(access.indices):
            return None  # another element of a written buffer: lanes could meet
    loop_vars = [lp.loop_var for lp in loops]
    used, read = set(), set()
    for idx in index.values():
        for e in idx:
            post_order_visit(e, lambda n: used.add(n) if isinstance(n, E.Var)
                             else read.add(n.buffer) if isinstance(n, E.BufferLoad) else None)
    if read & set(index):
        return None  # an index read from a buffer the nest writes: checked once, it could change
    lane_count = max((k + 1 for k, v in enumerate(loop_vars) if v in used), default=0)
    if lane_count == 0:
        return None
    inner = set(loop_vars[lane_count:])
    for lp in loops:  # the lanes' loops and the steps' loops run the same ranges on every lane
        for e in (lp.min, lp.extent):
            found = []
            post_order_visit(e, lambda n: found.append(n) if n in loop_vars else None)
            if found:
                return None
    under_if = []
    post_order_visit(body, lambda n: under_if.extend(_loops(n.then_case) + _loops(n.else_case or n.then_case))
                     if isinstance(n, S.IfThenElse) else None)
    if under_if:
        return None  # a loop under a condition that may differ from lane to lane
    inner |= _loop_vars(body)  # loops inside the body run step by step on every lane too
    if inner & used:
        return None
    lanes = set(loop_vars[:lane_count])
    for lp in _loops(flat):  # ... the same number of steps on every lane (lets written out)
        found = []
        post_order_visit(lp.min, lambda n: found.append(n) if n in lanes else None)
        post_order_visit(lp.extent, lambda n: found.append(n) if n in lanes else None)
        if found:
            return None
    return loops, body, lane_count, index, {a.buffer for a in stores + loads}


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
    found = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, S.For) else None)
    return found


def _loop_vars(body) -> set:
    return {lp.loop_var for lp in _loops(body)}


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
    lanes = int(np.prod(shape, dtype=np.int64))
    for buf, idx in accesses.items():
        try:
            flat = ctx.data(buf).flat_index([evaluate(i, ctx) for i in idx], None, ctx.where)
        except InterpError:
            return False  # out of bounds on some lane: the walk reports it where it happens
        flat = np.broadcast_to(flat, shape).reshape(-1)
        if lanes and np.unique(flat).size != lanes:
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
