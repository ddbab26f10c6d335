"""Dissolving outer blocks (``blockize``'s ``*_o`` blocks) so the interpreter sees one perfect nest.

``sch.blockize`` (and ``tensorize``, loop partitioning) wraps the inner loops of a nest in an
outer block: ``for i_o: with block("C_o"): v_o = i_o; T.where(p); for i_i: with block("C"):
C[v_o * 4 + vi_i] = ...``. The interpreter runs a nest as a numpy grid only when it is
perfect, so such a function is walked one outer iteration at a time (a thread-bound grid
sample took 37 s to probe). An outer block that only names its loops -- every iteration
variable spatial, no init, no allocation, no buffer match, its body a chain of loops ending in
one block whose loop bounds do not use the outer variables -- means no more than its
bindings and predicate: the inner block gets the bindings substituted and the predicate
conjoined to its own (the inner loops then run but their block does not, where the outer
block would not have run), and the outer block goes.

An outer block with a reduction variable stays: its loops are reduction loops that the inner
block's own variables do not show.
"""
from __future__ import annotations

import functools

import attrs

from . import expr as E
from . import stmt as S
from .function import PrimFunc
from .functor import substitute, transform_stmts
from .loop_nest import free_vars


def _true(e) -> bool:
    return isinstance(e, E.IntImm) and bool(e.value)


def _dissolve(realize: S.BlockRealize):
    block = realize.block
    if block.init is not None or block.alloc_buffers or block.match_buffers:
        return None
    if any(iv.kind != S.IterKind.SPATIAL for iv in block.iter_vars):
        return None
    loops, s = [], block.body
    while isinstance(s, S.For):
        loops.append(s)
        s = s.body
    if not loops or not isinstance(s, S.BlockRealize):
        return None
    names = {iv.var for iv in block.iter_vars}
    if any(free_vars(l.min) & names or free_vars(l.extent) & names for l in loops):
        return None
    mapping = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    inner = substitute(s, mapping)
    if not _true(realize.predicate):
        pred = realize.predicate if _true(inner.predicate) else E.logical_and(realize.predicate, inner.predicate)
        inner = attrs.evolve(inner, predicate=pred)
    body = inner
    for loop in reversed(loops):
        body = attrs.evolve(loop, body=body)
    return body


@functools.lru_cache(maxsize=256)
def dissolve_outer_blocks(func: PrimFunc) -> PrimFunc:
    """``func`` with every outer block of the form above dissolved (innermost first)."""
    body = transform_stmts(func.body, lambda n: _dissolve(n) if isinstance(n, S.BlockRealize) else None)
    return func if body is func.body else attrs.evolve(func, body=body)
