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

Both blocks' iterations are also enumerated in the order they run (constant extents, shape
variables at a few values; :func:`_timeline`): every element the update touches must be set
before its first update, from each set to the next the update must add each of its
reduction points exactly once or not at all (an init run twice in a row: rfactor's init
looping over a fused reduction loop), after the last set exactly once, and the init may
set nothing else. When the loops were rescheduled after the split (the update's spatial
loop split again, the init's not), that enumeration decides; otherwise it can only refute
(a block too large to enumerate keeps the structural answer): a decomposed update whose
bindings repeat a point adds it twice, which no structure of the init shows.
"""
from __future__ import annotations

import math

import numpy as np

from tir.expr import BufferLoad, IntImm, Max, Min, Var
from tir.functor import children, pre_order_visit, substitute
from tir.stmt import BlockRealize, BufferStore, For, IterKind, Stmt

from .probe import POINT_ERRORS, block_points, evaluate_points, flat_points, scalar_int, shape_envs
from .rewrite import stores_in, update_term


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


def _runs_whole_domain(realize, loops, block) -> bool:
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


def init_runs_first(places: dict, init, update, mapping: dict, symbols=frozenset(), written=None) -> bool:
    """Whether ``init`` (a decomposed init block) sets each element of ``update`` (its
    reduction block) once before the element's updates, which then add each reduction point
    once; ``mapping`` takes the init's block variables to the update's spatial ones (as
    :func:`.normalize._var_map` found them); ``symbols`` the function's shape variables;
    ``written`` the ids of the buffers some block writes (None: any may be).
    Shown by the structure of the two nests (see the module doc) with the enumerated
    :func:`_timeline` not refuting it, or else by that enumeration."""
    if id(init) not in places or id(update) not in places:
        return False
    (ri, li), (ru, lu) = places[id(init)], places[id(update)]
    k = 0
    while k < min(len(li), len(lu)) and li[k] is lu[k]:
        k += 1
    verdict = _structure(ri, li, ru, lu, k, init, update, mapping)
    if verdict is False:
        return False
    timeline = _timeline((ri, li), (ru, lu), k, symbols, written is not None and _idempotent(update, written))
    return timeline is True if verdict is None else timeline is not False


def _idempotent(update, written: set) -> bool:
    """Whether the update is ``acc = max(acc, e)`` or ``min`` with ``e`` reading only buffers
    no block writes: adding a reduction point again leaves the result unchanged (``compute_at``
    of a decomposed max under a consumer loop the max does not depend on repeats the whole
    reduction at each of its iterations). An ``e`` reading an intermediate could see other
    values at each repetition (a partial sum), which the maximum would keep."""
    store = update.body
    if not isinstance(store, BufferStore) or not isinstance(store.value, (Max, Min)):
        return False
    other = update_term(store)
    if other is None:
        return False
    loads = []
    pre_order_visit(other, lambda n: loads.append(n) if isinstance(n, BufferLoad) else True)
    return all(id(x.buffer) not in written for x in loads)


def _structure(ri, li, ru, lu, k: int, init, update, mapping: dict) -> "bool | None":
    """The structural reading of :func:`init_runs_first`: True, False, or None when the
    loops were rescheduled apart (to be enumerated)."""
    shared = {id(lp.loop_var) for lp in li[:k]}
    bind_u = {id(iv.var): (iv.kind, v) for iv, v in zip(update.iter_vars, ru.iter_values)}
    if any(kind == IterKind.REDUCE and _vars(v) & shared for kind, v in bind_u.values()):
        return False  # the init would run again between partial sums
    spatial_vars = set()
    for kind, v in bind_u.values():
        if kind == IterKind.SPATIAL:
            spatial_vars |= _vars(v)
    if k == 0 and _runs_whole_domain(ri, li, init):
        return True  # a nest of its own before the update's: every element set, in any order
    own_u = [lp for lp in lu[k:] if id(lp.loop_var) in spatial_vars]
    own_i = list(li[k:])
    if len(own_u) != len(own_i):
        return None
    rename = {}
    for a, b in zip(own_i, own_u):
        if a.min != b.min or a.extent != b.extent:
            return None
        rename[a.loop_var] = b.loop_var
    for iv, v in zip(init.iter_vars, ri.iter_values):
        target = mapping.get(iv.var)
        if target is None or id(target) not in bind_u:
            return False
        kind, want = bind_u[id(target)]
        if kind != IterKind.SPATIAL or substitute(v, rename) != want:
            return False
    # the init's guard must be the update's, which then may not involve the reduction loops;
    # an unguarded init beside an update guarded on its reduction loops only (a split of
    # fused reduction loops) is left to the enumeration, which sees each point added once
    if _true(ri.predicate) and _true(ru.predicate):
        return True
    reduce_loops = {id(lp.loop_var) for lp in lu[k:]} - spatial_vars
    guarded = _vars(ru.predicate)
    if _true(ri.predicate) and guarded <= reduce_loops:
        return None
    return not (guarded & reduce_loops) and substitute(ri.predicate, rename) == ru.predicate


MAX_ORDER_POINTS = 1 << 20
"""Iterations of a block :func:`_timeline` enumerates at the most."""
SHAPE_VALUES = (3, 7, 12)
"""Values given to the shape variables in turn by :func:`_timeline`."""


def _events(place, k: int, env: dict) -> "tuple | None":
    """Per iteration of a block whose predicate holds and whose variables are inside their
    domains (a split's masked tail, once :func:`.predicates.drop_predicates` took the
    predicate that restated the domain), in the order its loops run them: (iteration of the
    ``k`` outer loops, flat element stored, flat point of its reduction variables, number of
    reduction points); None when not enumerable."""
    realize, loops = place
    block = realize.block
    store = _the_store(block)
    if store is None:
        return None
    dims = [scalar_int(d, env) for d in store.buffer.shape]
    pts = block_points(realize, loops, env, MAX_ORDER_POINTS, in_domain=True) if None not in dims else None
    if pts is None:
        return None
    reduce = [(iv, (scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)))
              for iv in block.iter_vars if iv.kind == IterKind.REDUCE]
    try:
        flat = flat_points([evaluate_points(i, pts.block_env, pts.count) for i in store.indices],
                           [(0, d) for d in dims], pts.count)
        red = flat_points([pts.block_env[iv.var] for iv, _ in reduce], [d for _, d in reduce], pts.count)
    except POINT_ERRORS:
        return None
    if flat is None or red is None:
        return None
    outer = np.zeros(pts.count, dtype=np.int64)
    for lp, (lo, ext) in zip(loops[:k], pts.ranges[:k]):
        low = lo[pts.keep] if np.ndim(lo) else lo  # per iteration when the range uses an outer loop
        outer = outer * max(ext, 1) + (pts.leaves[lp.loop_var][pts.keep] - low).astype(np.int64)
    return outer, flat, red, math.prod(e for _, (_, e) in reduce)


def _the_store(block) -> "BufferStore | None":
    """The block's store, or the first of a tuple reduction's stores (argmax's index and
    value, under ``let`` bindings) when all of them store at one index tuple into buffers
    of one shape; None else."""
    found = stores_in(block.body)
    first = found[0] if found else None
    if first is None or any(tuple(s.indices) != tuple(first.indices)
                            or tuple(s.buffer.shape) != tuple(first.buffer.shape) for s in found[1:]):
        return None
    return found[0]


def _timeline(init_place, update_place, k: int, symbols, idempotent: bool = False) -> "bool | None":
    """Run in order (iterations of the ``k`` shared loops, the init first at each, each
    block's own loops in their order), the two blocks set every element the update touches
    before its first update, from each set of an element to the next the update adds each
    of its reduction points once or none of them, after the last set each once; the init
    sets nothing the update does not touch. ``idempotent`` (a max or min update): "at least
    once" instead of "once". At each of a few values of the shape variables ``symbols``:
    False when refuted at one, None when not enumerable."""
    for env in shape_envs(symbols, SHAPE_VALUES):
        init, update = _events(init_place, k, env), _events(update_place, k, env)
        if init is None or update is None:
            return None
        (ci, ei, _, _), (cu, eu, ru, red_size) = init, update
        if not np.array_equal(np.unique(ei), np.unique(eu)):
            return False
        kind = np.concatenate([np.zeros(ei.size, dtype=np.int64), np.ones(eu.size, dtype=np.int64)])
        elem = np.concatenate([ei, eu])
        outer = np.concatenate([ci, cu])
        order = np.concatenate([np.arange(ei.size), np.arange(eu.size)])
        red = np.concatenate([np.zeros(ei.size, dtype=np.int64), ru])
        run_order = np.lexsort((order, kind, outer, elem))  # by element, then time
        elem, kind, red = elem[run_order], kind[run_order], red[run_order]
        first = np.ones(elem.size, dtype=bool)
        first[1:] = elem[1:] != elem[:-1]
        if (kind[first] != 0).any():
            return False  # an element updated before it is set
        run = np.cumsum(kind == 0)  # runs from one set of an element to the next
        updates = kind == 1
        keys, counts = np.unique(run[updates] * red_size + red[updates], return_counts=True)
        if (counts != 1).any() and not idempotent:
            return False  # a reduction point added twice in one run
        per_run = np.bincount(keys // red_size, minlength=int(run[-1]) + 1 if run.size else 0)
        last = np.ones(elem.size, dtype=bool)
        last[:-1] = elem[1:] != elem[:-1]
        if ((per_run != 0) & (per_run != red_size)).any() or (per_run[run[last]] != red_size).any():
            return False  # a run leaving reduction points out, or an element's last set not summed
    return True
