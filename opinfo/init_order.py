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
"""
from __future__ import annotations

from tir.expr import IntImm, Var
from tir.functor import children, pre_order_visit, substitute
from tir.stmt import BlockRealize, For, IterKind, Stmt


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


def init_runs_first(places: dict, init, update, mapping: dict) -> bool:
    """Whether ``init`` (a decomposed init block) sets each element of ``update`` (its
    reduction block) once before the element's updates; ``mapping`` takes the init's block
    variables to the update's spatial ones (as :func:`.normalize._var_map` found them)."""
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
    if k == 0 and _runs_whole_domain(ri, li, init):
        return True  # a nest of its own before the update's: every element set, in any order
    own_u = [lp for lp in lu[k:] if id(lp.loop_var) in spatial_vars]
    own_i = list(li[k:])
    if len(own_u) != len(own_i):
        return False
    rename = {}
    for a, b in zip(own_i, own_u):
        if a.min != b.min or a.extent != b.extent:
            return False
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
