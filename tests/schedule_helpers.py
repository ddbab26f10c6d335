"""Loop transformations for tests: split and reorder the loops of a PrimFunc.

Like TVM's ``sch.split``/``sch.reorder``: a loop ``i`` of constant extent E becomes
``i_o, i_i`` with ``i = i_o * f + i_i`` (a predicate guards a split that does not divide
E), and the loops of a perfect nest may be permuted. Block bindings are rewritten through
the loop variables, so each block still computes the same elements.
"""
from __future__ import annotations

import random

from tir.expr import LT, And, IntImm, Var, const
from tir.function import PrimFunc
from tir.functor import substitute, transform
from tir.stmt import BlockRealize, For, ForKind


def _nest(loop: For) -> tuple:
    """(loops of the perfect nest starting at ``loop``, the statement inside them)."""
    loops = [loop]
    while isinstance(loops[-1].body, For):
        loops.append(loops[-1].body)
    return loops, loops[-1].body


def _split(loop: For, factor: int) -> tuple:
    """Two loops replacing ``loop`` and the guard needed when ``factor`` does not divide it."""
    ext = loop.extent.value
    dtype = loop.loop_var.dtype
    outer = Var(loop.loop_var.name + "_o", dtype)
    inner = Var(loop.loop_var.name + "_i", dtype)
    value = outer * const(factor, dtype) + inner
    guard = None if ext % factor == 0 else LT(value, const(ext, dtype))
    loops = [For(outer, const(0, dtype), const(-(-ext // factor), dtype), ForKind.SERIAL, None),
             For(inner, const(0, dtype), const(factor, dtype), ForKind.SERIAL, None)]
    return loops, {loop.loop_var: value}, guard


def _rebuild(loops: list, body):
    for loop in reversed(loops):
        body = For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding, loop.annotations)
    return body


def _guarded(body, mapping: dict, guards: list):
    """``body`` with loop variables replaced and split guards added to its block's predicate."""
    body = substitute(body, mapping)
    if not guards or not isinstance(body, BlockRealize):
        return body
    pred = body.predicate
    for g in guards:
        g = substitute(g, mapping)
        pred = g if isinstance(pred, IntImm) and pred.value == 1 else And(pred, g)
    return BlockRealize(body.iter_values, pred, body.block)


def schedule_nest(loop: For, rng: random.Random) -> For:
    """Split some constant loops of the nest at ``loop`` by random factors, then shuffle it."""
    loops, body = _nest(loop)
    if not isinstance(body, BlockRealize):
        return loop
    new, mapping, guards = [], {}, []
    for lp in loops:
        ext = lp.extent.value if isinstance(lp.extent, IntImm) else None
        if ext is None or ext < 2 or rng.random() < 0.4:
            new.append(lp)
            continue
        parts, sub, guard = _split(lp, rng.randint(2, max(2, ext - 1)) if ext > 2 else 2)
        new += parts
        mapping.update(sub)
        guards += [guard] if guard is not None else []
    rng.shuffle(new)
    return _rebuild(new, _guarded(body, mapping, guards))


def random_schedule(func: PrimFunc, seed: int = 0) -> PrimFunc:
    """``func`` with every loop nest over a block split and reordered at random."""
    rng = random.Random(seed)

    def pre(n):
        return schedule_nest(n, rng) if isinstance(n, For) else None

    body = transform(func.body, lambda n: None, pre)
    return PrimFunc(func.params, func.buffer_map, body, func.attrs)
