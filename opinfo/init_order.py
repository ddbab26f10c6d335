"""Whether a decomposed reduction init runs where ``decompose_reduction`` puts it.

``decompose_reduction`` moves a reduction block's init into a block of its own, placed in
the loops the two share (the loops above the reduction loop chosen) and given loops of
its own for the spatial variables bound below that point. Merging the two back
(:func:`.normalize.merge_inits`) is right only when the init sets each element once,
before that element's first update and never after one: the init's bindings must be the
update's spatial bindings with the update's own loops renamed to the init's own loops
(same ranges, same order), its predicate the update's (renamed likewise), and no loop the
two share may feed the update's reduction (the init would reset partial sums); or the
init is a nest of its own before the update's that runs its whole domain once (its loops
in any order: ``transform_block_layout`` permutes them). A store
index match alone says nothing of the order (an init bound ``[ax0, ax2, ax1]`` inside the
update's loops resets elements already summed).

When the loops were rescheduled after the split (the update's spatial loop split again, the
init's not), the order is shown by enumerating both blocks' iterations (constant extents,
shape variables at a few values): every element the update touches is set by the init
exactly once and no later (in iterations of the shared loops, the init first at the same
one) than the update first touches it, and the init sets nothing else.
"""
from __future__ import annotations

import math

import numpy as np

from tir.expr import IntImm, Var
from tir.functor import children, pre_order_visit, substitute
from tir.stmt import BlockRealize, BufferStore, For, IterKind, SeqStmt, Stmt

from .probe import NotEvaluable, evaluate_points, flat_points, loop_points, scalar_int, shape_envs


def block_places(func) -> dict:
    """id(block) -> (its BlockRealize, the For loops around it, outermost first)."""
    found = {}

    def walk(n, loops):
        if isinstance(n, For):
            walk(n.body, loops + (n,))
        elif isinstance(n, BlockRealize):
            found[id(n.block)] = (n, loops)
            walk(n.block.body, loops)
        elif isinstance(n, Stmt):
            for c in children(n):
                if isinstance(c, Stmt):
                    walk(c, loops)

    walk(func.body, ())
    return found


def _vars(expr) -> set:
    found = set()
    pre_order_visit(expr, lambda n: found.add(id(n)) if isinstance(n, Var) else True)
    return found


def _true(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def runs_whole_domain(realize, loops, block) -> bool:
    """Whether ``block`` runs once per point of its domain: no guard, every variable bound to
    a distinct loop of its nest ranging exactly over the variable's domain."""
    if not _true(realize.predicate):
        return False
    by_var = {id(lp.loop_var): lp for lp in loops}
    used = set()
    for iv, v in zip(block.iter_vars, realize.iter_values):
        lp = by_var.get(id(v)) if isinstance(v, Var) else None
        if lp is None or id(v) in used or lp.min != iv.dom.min or lp.extent != iv.dom.extent:
            return False
        used.add(id(v))
    return True


def init_runs_first(places: dict, init, update, mapping: dict, symbols=frozenset()) -> bool:
    """Whether ``init`` (a decomposed init block) sets each element of ``update`` (its
    reduction block) once before the element's updates; ``mapping`` takes the init's block
    variables to the update's spatial ones (as :func:`.normalize._var_map` found them);
    ``symbols`` the function's shape variables."""
    if id(init) not in places or id(update) not in places:
        return False
    (ri, li), (ru, lu) = places[id(init)], places[id(update)]
    k = 0
    while k < min(len(li), len(lu)) and li[k] is lu[k]:
        k += 1
    shared = {id(lp.loop_var) for lp in li[:k]}
    bind_u = {id(iv.var): (iv.kind, v) for iv, v in zip(update.iter_vars, ru.iter_values)}
    if any(kind == IterKind.REDUCE and _vars(v) & shared for kind, v in bind_u.values()):
        return False  # the init would run again between partial sums
    spatial_vars = set()
    for kind, v in bind_u.values():
        if kind == IterKind.SPATIAL:
            spatial_vars |= _vars(v)
    if k == 0 and runs_whole_domain(ri, li, init):
        return True  # a nest of its own before the update's: every element set, in any order
    own_u = [lp for lp in lu[k:] if id(lp.loop_var) in spatial_vars]
    own_i = list(li[k:])
    if len(own_u) != len(own_i):
        return _enumerated_first((ri, li), (ru, lu), k, symbols)
    rename = {}
    for a, b in zip(own_i, own_u):
        if a.min != b.min or a.extent != b.extent:
            return _enumerated_first((ri, li), (ru, lu), k, symbols)
        rename[a.loop_var] = b.loop_var
    for iv, v in zip(init.iter_vars, ri.iter_values):
        target = mapping.get(iv.var)
        if target is None or id(target) not in bind_u:
            return False
        kind, want = bind_u[id(target)]
        if kind != IterKind.SPATIAL or substitute(v, rename) != want:
            return False
    # the init's guard must be the update's, which then may not involve the reduction loops
    if _true(ri.predicate) and _true(ru.predicate):
        return True
    reduce_loops = {id(lp.loop_var) for lp in lu[k:]} - spatial_vars
    return not (_vars(ru.predicate) & reduce_loops) and substitute(ri.predicate, rename) == ru.predicate


MAX_ORDER_POINTS = 1 << 20
"""Iterations of a block :func:`_enumerated_first` enumerates at the most."""
SHAPE_VALUES = (3, 7, 12)
"""Values given to the shape variables in turn by :func:`_enumerated_first`."""


def _events(place, k: int, env: dict) -> "tuple | None":
    """(iteration of the ``k`` outer loops, flat element stored) per iteration of a block
    whose predicate holds, or None when not enumerable."""
    realize, loops = place
    store = realize.block.body
    if not isinstance(store, BufferStore):
        return None
    ranges = [(scalar_int(lp.min, env), scalar_int(lp.extent, env)) for lp in loops]
    dims = [scalar_int(d, env) for d in store.buffer.shape]
    if any(None in r for r in ranges) or None in dims or math.prod(max(e, 0) for _, e in ranges) > MAX_ORDER_POINTS:
        return None
    ranges = [(lo, max(e, 0)) for lo, e in ranges]
    leaves, size = loop_points(loops, ranges, env)
    try:
        keep = evaluate_points(realize.predicate, leaves, size).astype(bool)
        block_env = dict(env)
        block_env.update({iv.var: evaluate_points(v, leaves, size)[keep]
                          for iv, v in zip(realize.block.iter_vars, realize.iter_values)})
        count = int(keep.sum())
        flat = flat_points([evaluate_points(i, block_env, count) for i in store.indices],
                           [(0, d) for d in dims], count)
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if flat is None:
        return None
    outer = np.zeros(count, dtype=np.int64)
    for lp, (lo, ext) in zip(loops[:k], ranges[:k]):
        outer = outer * ext + (leaves[lp.loop_var][keep] - lo).astype(np.int64)
    return outer, flat


def _enumerated_first(init_place, update_place, k: int, symbols) -> bool:
    """The init sets every element the update touches, each once, at an iteration of the
    ``k`` shared loops no later than the update's first touch of it (the init comes first
    in program order), and sets nothing else: at each of a few values of the shape
    variables ``symbols``."""
    for env in shape_envs(symbols, SHAPE_VALUES):
        init, update = _events(init_place, k, env), _events(update_place, k, env)
        if init is None or update is None:
            return False
        (ci, ei), (cu, eu) = init, update
        elements, counts = np.unique(ei, return_counts=True)
        if (counts != 1).any() or not np.array_equal(elements, np.unique(eu)):
            return False
        first = np.full(elements.size, np.iinfo(np.int64).max)
        np.minimum.at(first, np.searchsorted(elements, eu), cu)
        if (ci[np.argsort(ei)] > first).any():
            return False
    return True
