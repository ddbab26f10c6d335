"""Perfect loop nests around one block, as the interpreter and the C emitter see them.

A nest ``for l1 .. for lk: block`` qualifies when it is rectangular (no loop bound uses a
loop of the nest), its block body is straight-line code (stores, lets, ifs), and every loop
feeds either spatial or reduction iteration variables, never both.
"""
from __future__ import annotations

import functools

import attrs

from . import expr as E
from . import stmt as S
from .functor import post_order_visit
from .structural import same_ir

_FLAT_STMTS = (S.SeqStmt, S.BufferStore, S.LetStmt, S.IfThenElse, S.Evaluate)


@attrs.frozen
class Nest:
    """A perfect loop nest ending in one block, with its loops classified."""

    loops: tuple
    realize: S.BlockRealize
    reduce_axes: tuple
    """Grid axes of loops that feed reduction iteration variables."""


MAX_PLANS = 256
"""The most loops :func:`per_loop` keeps a plan for."""


def per_loop(make):
    """``make(loop)`` worked out once per loop: a nest inside an outer loop is entered once per
    outer iteration, and its plan (walks of its body) does not change. Bounded; keyed by the
    loop's id, the loop kept to check it."""
    plans: dict = {}

    @functools.wraps(make)
    def plan(loop):
        hit = plans.get(id(loop))
        if hit is not None and hit[0] is loop:
            return hit[1]
        if len(plans) >= MAX_PLANS:
            plans.clear()
        value = make(loop)
        plans[id(loop)] = (loop, value)
        return value

    return plan


def free_vars(node) -> set:
    """The variables used in ``node``."""
    found = set()
    post_order_visit(node, lambda n: found.add(n) if isinstance(n, E.Var) else None)
    return found


def _is_flat(stmt) -> bool:
    ok = [True]

    def visit(n):
        if isinstance(n, S.Stmt) and not isinstance(n, _FLAT_STMTS):
            ok[0] = False

    post_order_visit(stmt, visit)
    return ok[0]


def collect_nest(loop: S.For) -> "Nest | None":
    """The nest under ``loop`` if it is perfect, rectangular and ends in a simple block."""
    loops, s = [], loop
    while isinstance(s, S.For):
        loops.append(s)
        s = s.body
    if not isinstance(s, S.BlockRealize):
        return None
    block = s.block
    if block.alloc_buffers or block.match_buffers or not _is_flat(block.body):
        return None
    if block.init is not None and not _is_flat(block.init):
        return None
    loop_vars = {l.loop_var for l in loops}
    if any(free_vars(l.min) & loop_vars or free_vars(l.extent) & loop_vars for l in loops):
        return None
    if any(iv.kind not in (S.IterKind.SPATIAL, S.IterKind.REDUCE) for iv in block.iter_vars):
        return None
    return _classify(loops, s)


def _classify(loops, realize) -> "Nest | None":
    spatial, reduce = set(), set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        (reduce if iv.kind == S.IterKind.REDUCE else spatial).update(free_vars(value))
    axes = tuple(i for i, l in enumerate(loops) if l.loop_var in reduce)
    if any(loops[i].loop_var in spatial for i in axes):
        return None
    return Nest(tuple(loops), realize, axes)


def reduce_vars(nest: Nest) -> set:
    """The block's reduction iteration variables and the loops feeding them."""
    block = nest.realize.block
    found = {iv.var for iv in block.iter_vars if iv.kind == S.IterKind.REDUCE}
    return found | {nest.loops[a].loop_var for a in nest.reduce_axes}


def predicate_reduces(nest: Nest) -> bool:
    """The block's ``T.where`` depends on a reduction loop (a reduction loop split by a
    factor that does not divide it, or partitioned)."""
    return bool(free_vars(nest.realize.predicate) & reduce_vars(nest))


def stores_and_loads(stmt):
    stores, loads = [], []

    def visit(n):
        if isinstance(n, S.BufferStore):
            stores.append(n)
        elif isinstance(n, E.BufferLoad):
            loads.append(n)

    post_order_visit(stmt, visit)
    return stores, loads


def block_accesses(block) -> tuple:
    """(stores, loads) of the block's body and init."""
    stores, loads = stores_and_loads(block.body)
    if block.init is not None:
        st, ld = stores_and_loads(block.init)
        stores, loads = stores + st, loads + ld
    return stores, loads


def reads_only_own_elements(block) -> bool:
    """Every read of a buffer the block writes is at an index tuple the block stores to."""
    stores, loads = block_accesses(block)
    written = {}
    for st in stores:
        written.setdefault(st.buffer, []).append(st.indices)
    for ld in loads:
        targets = written.get(ld.buffer)
        if targets is not None and not any(same_ir(ld.indices, t) for t in targets):
            return False
    return True


