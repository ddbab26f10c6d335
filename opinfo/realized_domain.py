"""Reductions whose loops run a smaller box than their declared domain get that box.

``pad_einsum`` pads a reduction's domain (``T.axis.reduce(8, ...)`` for a source of 6) and
a later split by the unpadded extent (``k0 * 3 + k1`` over 2 x 3) runs only ``[0, 6)`` of
it: the block adds the elements of that box, each once, for every spatial point, and never
the padding. Recognizers read the declared domain, and :func:`.realize_check.misrealized`
rightly refutes a reduction run over part of it. When the part is a box from the domain's
start -- for every spatial point of the domain, exactly the reduction points ``[0, E'_k)``,
each once -- the block computes the reduction over that box, and its domain is rewritten to
it (``T.axis.reduce(6, ...)``). So is a spatial variable the block's body never reads, run at
one value of a larger domain (a copy out of ``pad_einsum``'s scalar accumulator bound
``T.axis.spatial(8, 0)``). The checks that follow (partial reductions of a buffer's
axis, ``pad_einsum``'s restoration: :mod:`.pad_einsum`) judge the rewritten block.

Only blocks whose loops, bindings and predicate use no variable but their loops' and shape
variables (enumerated at a few values of those: the box must be the same at each) and run
at most :data:`MAX_POINTS` iterations are enumerated; anything else is left as it is.
"""
from __future__ import annotations

import math

import attrs
import numpy as np

from tir.buffer import Range
from tir.expr import IntImm, SizeVar, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, transform
from tir.stmt import BlockRealize, IterKind

from .affine import const_of
from .coverage import block_realizes
from .probe import block_points, distinct, flat_points, scalar_int, shape_envs
from .realize_check import SHAPE_VALUES, free_vars, plain_realize

MAX_POINTS = 1 << 18
"""Loop iterations of one block above which it is left as it is."""


def shrink_reductions(func: PrimFunc) -> PrimFunc:
    """``func`` with every reduction block whose loops run a box of its reduction domain
    smaller than it given that box (module docstring); the same object when none does."""
    new_doms: dict = {}
    for realize, loops in block_realizes(func.body):
        extents = _realized_box(realize, loops)
        if extents is not None:
            new_doms[id(realize.block)] = extents
    if not new_doms:
        return func

    def post(n):
        if isinstance(n, BlockRealize) and id(n.block) in new_doms:
            extents = new_doms[id(n.block)]
            ivs = tuple(attrs.evolve(iv, dom=Range(iv.dom.min, IntImm(iv.dom.extent.dtype, extents[k])))
                        if k in extents else iv for k, iv in enumerate(n.block.iter_vars))
            return attrs.evolve(n, block=attrs.evolve(n.block, iter_vars=ivs))
        return None

    return transform(func, post)


def _realized_box(realize: BlockRealize, loops) -> "dict | None":
    """{position of a variable: its realized extent} when, for every spatial point the
    loops run, they run exactly the points of a box ``[0, E'_k)`` of the other variables
    (the reduction ones, and spatial ones the block's body never reads), each once, smaller
    than the domain on some variable; else None. With shape variables (a symbolic batch),
    the box must be the same at each of a few of their values."""
    block = realize.block
    if any(iv.kind not in (IterKind.SPATIAL, IterKind.REDUCE) for iv in block.iter_vars):
        return None
    referenced: set = set()
    for part in (block.body, block.init):
        if part is not None:
            post_order_visit(part, lambda n: referenced.add(n) if isinstance(n, Var) else None)
    # a reduction variable, or a spatial one the body does not read (the block is the same
    # at each of its values), may run part of its domain
    free = [k for k, iv in enumerate(block.iter_vars) if iv.kind == IterKind.REDUCE or iv.var not in referenced]
    if not free:
        return None
    doms = [(const_of(iv.dom.min), const_of(iv.dom.extent)) for iv in block.iter_vars]
    if any(doms[k][0] != 0 or doms[k][1] is None or doms[k][1] < 1 for k in free):
        return None
    # the common case, decided without enumerating: each of them bound to a whole loop
    if plain_realize(realize, loops, positions=free):
        return None
    symbols = free_vars(realize, loops)
    if any(not isinstance(v, SizeVar) for v in symbols):
        return None  # an outer block's or loop's variable: not enumerated here
    box = None
    for env in shape_envs(symbols, SHAPE_VALUES):
        got = _box_at(realize, loops, env, free)
        if got is None or box not in (None, got):
            return None
        box = got
    shrunk = {k: e for k, e in box.items() if e != doms[k][1]}
    return shrunk or None


def _box_at(realize: BlockRealize, loops, env: dict, free: list) -> "dict | None":
    """:func:`_realized_box`'s extents of the ``free`` variables at shape values ``env``
    (whole domains included), or None when the loops run no such box."""
    block = realize.block
    doms = [(scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)) for iv in block.iter_vars]
    if any(lo is None or ext is None or ext < 1 for lo, ext in doms):
        return None
    pts = block_points(realize, loops, env, MAX_POINTS)
    if pts is None or pts.count == 0:
        return None
    values = [np.asarray(pts.block_env[iv.var]).reshape(-1) for iv in block.iter_vars]
    extents = {}
    for k in free:
        top = int(values[k].max()) + 1
        if values[k].min() < 0 or top > doms[k][1]:
            return None
        extents[k] = top
    spatial = [k for k in range(len(doms)) if k not in extents]
    outer = flat_points([values[k] for k in spatial], [doms[k] for k in spatial], pts.count)
    if outer is None:
        return None
    per_point = math.prod(extents.values())
    box = [(lo, extents[k]) if k in extents else (lo, ext) for k, (lo, ext) in enumerate(doms)]
    size = math.prod(ext for _, ext in box)
    flat = flat_points(values, box, pts.count)
    # every point run once, and per spatial point run, the whole box: the count is both
    # the distinct points and the spatial points times the box
    spatial_size = math.prod(doms[k][1] for k in spatial)
    if flat is None or distinct(flat, size) != pts.count or \
            pts.count != distinct(outer, spatial_size) * per_point:
        return None
    return extents
