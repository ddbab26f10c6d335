"""Data movement written as a select over loads of constant extent: nn.pad (a load
guarded by the bounds of the data, else the pad value), concat and stack (a chain of selects
choosing among the data by one output axis)."""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Var
from tir.functor import pre_order_visit

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate, vars_in
from .common import Match, Space
from .movement_index import affine_terms, branches, const_extents, grid_over, load_extents


GUARD_POINTS = 1 << 21
"""Points a pad's guard is evaluated at, at most (a channel and spatial pad of a
1 x 64 x 112 x 112 image: 65 x 115 x 115 = 859,625; one comparison array each)."""


def match_select_movement(e, space: Space, ctx) -> "Match | None":
    """nn.pad, concat or stack, ``e`` a select (or if_then_else) over parameter loads."""
    return _pad(e, space, ctx) or _select_chain(e, space, ctx)


def _pad(e, space, ctx):
    cond, t, f = branches(e)
    value = float_of(f)
    if value is None or not isinstance(t, BufferLoad) or not ctx.is_param(t.buffer):
        return None
    if not t.dtype.is_float:
        return None  # TVM truncates the float pad_value to the data's type: not recoverable
    terms = affine_terms(t, space)
    ine, oute = load_extents(t), const_extents(space)
    if terms is None or None in ine or None in oute or len(terms) != space.rank:
        return None
    if any(j != d or a != 1 or b > 0 for d, (j, a, b) in enumerate(terms)):
        return None
    width = []
    for d, (_, _, b) in enumerate(terms):
        width += [-b, oute[d] - ine[d] + b]
    if min(width) < 0 or not any(width) or not _guard_ok(cond, space, terms, ine):
        return None
    return Match("nn.pad", {"pad_width": width, "pad_value": value, "pad_mode": "constant"}, (("data", t, space),))


def _guard_ok(cond, space, terms, ine) -> bool:
    """Whether ``cond`` holds exactly where every output index, shifted by its term, lies
    inside the data. Evaluated at every point of the output axes it can depend on: those the
    condition reads and those shifted or longer than the data; on any other axis neither side
    changes (the condition does not read it, and an unshifted axis no longer than the data is
    always inside), so it stays at 0 (a pad of a 1 x 64 x 112 x 112 image is judged on its
    114 x 114 plane, not on 831,744 points)."""
    ext = const_extents(space)
    if None in ext or not all(isinstance(v, Var) for v in space.indices):
        return False
    read = vars_in(cond)
    dims = [d for d, (v, (_, _, b)) in enumerate(zip(space.indices, terms))
            if v in read or b != 0 or ext[d] > ine[d]]
    env = grid_over([space.indices[d] for d in dims], [ext[d] for d in dims], GUARD_POINTS)
    if env is None:
        return False
    shape = next(iter(env.values())).shape if env else (1,)
    for d, v in enumerate(space.indices):
        if d not in dims:
            env[v] = np.zeros(shape)
    try:
        got = np.broadcast_to(evaluate(cond, env), shape) != 0
    except NotEvaluable:
        return False
    want = np.ones(shape, dtype=bool)
    for d, (_, _, b) in enumerate(terms):
        x = env[space.indices[d]] + b
        want &= (x >= 0) & (x < ine[d])
    return bool(np.array_equal(got, want))


def chain_loads(e, ctx) -> "list | None":
    """The parameter loads a chain of selects (``c1 ? x : c2 ? y : z``) chooses from, in
    parameter order; None unless every branch is such a load and there are two or more."""
    loads, node = [], e
    while branches(node) is not None:
        _, t, node = branches(node)
        loads.append(t)
    loads.append(node)
    if len(loads) < 2 or not all(isinstance(l, BufferLoad) and ctx.is_param(l.buffer) for l in loads):
        return None
    return sorted(loads, key=lambda l: next(i for i, p in enumerate(ctx.sem.params) if p is l.buffer))


def _select_chain(e, space, ctx):
    order = chain_loads(e, ctx)
    if order is None:
        return None
    return _concat(e, space, order) or _stack(e, space, order)


def _cond_vars(e) -> set:
    out = set()

    def visit(n):
        if isinstance(n, BufferLoad):
            return False
        if isinstance(n, Var):
            out.add(id(n))
        return True

    pre_order_visit(e, visit)
    return out


def _which(e, space, loads, axis):
    """Which load each output position along ``axis`` selects (the choice must depend on
    that axis only)."""
    av = space.indices[axis]
    n = const_of(space.extents[axis])
    if n is None or _cond_vars(e) - {id(av)}:
        return None, None
    env = {v: np.zeros(1) for v in space.indices}
    env[av] = np.arange(n, dtype=float)
    for k, l in enumerate(loads):
        env[l] = np.full(1, float(k))
    try:
        got = evaluate(e, env)
    except NotEvaluable:
        return None, None
    return env, np.broadcast_to(got, env[av].shape)


def _concat(e, space, loads):
    rank = space.rank
    if rank == 0 or any(len(l.indices) != rank for l in loads):  # scalars: nothing to join along
        return None
    if any(None in load_extents(l) for l in loads) or None in const_extents(space):
        return None  # movement_dynamic.match_dynamic_movement
    axes = {d for l in loads for d, (j, a, b) in enumerate(affine_terms(l, space) or [(None, 0, 1)] * rank)
            if (j, a, b) != (d, 1, 0)}
    ext = [load_extents(l) for l in loads]
    axis = next(iter(axes)) if len(axes) == 1 else (0 if not axes else None)
    if axis is None:
        return None
    offsets = np.cumsum([0] + [x[axis] for x in ext])
    for l, off, x in zip(loads, offsets, ext):
        t = affine_terms(l, space)
        if t is not None and x[axis] == 1 and t[axis] == (None, 0, 0):
            # a piece one wide read at index 0: TVM's simplifier, knowing from the select that
            # the output index is the piece's offset there, folds ``v - off`` to 0
            t = t[:axis] + [(axis, 1, -off)] + t[axis + 1:]
        if t is None or any((j, a, b) != (d, 1, -off if d == axis else 0) for d, (j, a, b) in enumerate(t)):
            return None
    env, got = _which(e, space, loads, axis)
    if got is None:
        return None
    want = np.searchsorted(offsets[1:], env[space.indices[axis]], side="right")
    if not np.array_equal(got, want):
        return None
    return Match("concat", {"axis": axis}, tuple(("data", l, space) for l in loads),
                 unconventional=last_axis_written_either_way(axis, rank))


def last_axis_written_either_way(axis: int, rank: int) -> tuple:
    """``("axis",)`` for a concat along the last axis of a tensor of rank 2 or more: a
    network writes that axis as ``-1`` as often as ``rank - 1`` (the loops are the same, and
    an importer passes what was written, as TVM's ONNX frontend does Concat's ``axis``), so
    the concat is not reported inside a network (:mod:`opinfo.network_conventions`). The
    channel axis of an NCHW concat (ONNX models' ``axis=1``) stays reported."""
    return ("axis",) if rank >= 2 and axis == rank - 1 else ()


def _stack(e, space, loads):
    rank = space.rank
    if any(len(l.indices) != rank - 1 for l in loads):
        return None
    for axis in range(rank):
        rest = [v for d, v in enumerate(space.indices) if d != axis]
        if all(all(i is v for i, v in zip(l.indices, rest)) for l in loads):
            env, got = _which(e, space, loads, axis)
            if got is not None and np.array_equal(got, env[space.indices[axis]]):
                return Match("stack", {"axis": axis}, tuple(("data", l, space) for l in loads))
    return None
