"""Block predicates shown to drop no element by enumerating the loops they constrain.

Splits of splits with factors that do not divide (``split(i, [None, 4])`` then the inner
loop by 5) give predicates that bound a *part* of an iterator's binding
(``i0_1_0 * 5 + i0_1_1 < 4`` beside ``i0_0 * 4 + (i0_1_0 * 5 + i0_1_1) < 9``): each says
"this digit stays below its radix", none is "an iterator stays in its domain", so the
rules of :mod:`.predicates` do not see through them. This module checks such a predicate
exactly, one group of loops at a time: loops are grouped when a binding or a conjunct
uses them together; for every group some conjunct reads, all its loops must have constant
extents, and enumerating them must reach every point of the domain of the block variables
bound over that group exactly once (a reduction must not add a point twice). Groups of
constant loops no conjunct reads are enumerated too; those over a symbolic extent that no
conjunct reads keep their bindings as TVM wrote them.
"""
from __future__ import annotations

import math

import numpy as np

from tir.expr import Var
from tir.functor import post_order_visit
from tir.stmt import BlockRealize

from .affine import const_of
from .probe import NotEvaluable, evaluate
from .recognize.guard import conjuncts

MAX_POINTS = 1 << 18
"""Iterations of one group of loops above which the predicate is not enumerated."""


def _vars(expr) -> list:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, Var) and n not in found else None)
    return found


def _groups(items: list) -> list:
    """Union of the variable sets in ``items`` that share a variable."""
    groups: list = []
    for vs in items:
        vs = set(vs)
        touching = [g for g in groups if g & vs]
        for g in touching:
            groups.remove(g)
            vs |= g
        groups.append(vs)
    return groups


def covers_exactly(realize: BlockRealize, loops: tuple) -> bool:
    """Every point of the block's iteration domain is run exactly once under its predicate
    (see the module docstring); ``loops``: the loops between the block and the enclosing one."""
    by_var = {lp.loop_var: lp for lp in loops}
    terms = conjuncts(realize.predicate)
    term_vars = [_vars(t) for t in terms]
    bind_vars = [_vars(v) for v in realize.iter_values]
    if any(v not in by_var for vs in term_vars + bind_vars for v in vs):
        return False  # a variable of an outer block or loop: not enumerated here
    for group in _groups(term_vars + bind_vars):
        group_terms = [t for t, vs in zip(terms, term_vars) if set(vs) & group]
        loops_in = [by_var[v] for v in by_var if v in group]
        constant = all(const_of(lp.extent) is not None for lp in loops_in)
        if (group_terms or constant) and not _group_covers(realize, loops_in, group_terms, group):
            return False
    return True


def _group_covers(realize, loops: list, terms: list, group: set) -> bool:
    ext = [(const_of(lp.min), const_of(lp.extent)) for lp in loops]
    if any(None in e for e in ext):
        return False
    size = math.prod(e for _, e in ext)
    if size > MAX_POINTS:
        return False
    bound = [(iv, v) for iv, v in zip(realize.block.iter_vars, realize.iter_values) if set(_vars(v)) & group]
    dom = [(const_of(iv.dom.min), const_of(iv.dom.extent)) for iv, _ in bound]
    if any(None in d for d in dom):
        return False
    grids = np.meshgrid(*[np.arange(m, m + e, dtype=np.int64) for m, e in ext], indexing="ij")
    env = {lp.loop_var: g.reshape(-1) for lp, g in zip(loops, grids)}
    try:
        keep = np.ones(size, dtype=bool)
        for t in terms:
            keep &= np.broadcast_to(np.asarray(evaluate(t, env)), (size,)).astype(bool)
        points = [np.broadcast_to(np.asarray(evaluate(v, env)), (size,))[keep] for _, v in bound]
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return False
    want = math.prod(e for _, e in dom)
    if int(keep.sum()) != want:
        return False  # a point run twice, or missed
    flat = np.zeros(want, dtype=np.int64)
    for p, (m, e) in zip(points, dom):
        p = np.asarray(p)
        if p.size and (np.any(p < m) or np.any(p >= m + e) or np.any(p != np.floor(p))):
            return False
        flat = flat * e + (p - m).astype(np.int64)
    return len(np.unique(flat)) == want
