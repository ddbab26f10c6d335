"""dlight's padded, reindexed tiles put in ``pad_einsum``'s form.

TVM's dlight ``Matmul`` rule (the CUDA pipeline's schedule for matmuls and convolutions)
reindexes the op into a batched GEMM over a padded domain (``reindex`` then ``pad_einsum``),
which names its buffers ``B_reindex_pad`` plus the cache scope (``_shared``, ``_local``)::

    x_reindex_pad_shared[0, i, k] = if_then_else(i < 7 and k < 8, x[i, k], 0)
    y_reindex_pad_shared[0, j, k] = if_then_else(j < 7 and k < 8, y[k, j], 0)
    C_reindex_pad_local[0, i, j] += x_reindex_pad_shared[0, i, k] * y_reindex_pad_shared[0, j, k]
    C[i, j] = C_reindex_pad_local[0, i, j]

Besides the padding that :mod:`.pad_einsum` undoes, the reindexed copies carry a leading unit
(batch) axis read and written at 0, and a copy may hold its source's axes in another order
(``y`` above, stored ``[j, k]`` from ``y[k, j]``). :func:`unreindex` removes both from such
buffers -- the unit axes every access indexes at 0 (or at a variable of extent 1), and the
order of a copy's axes, made its source's -- after which :func:`.pad_einsum.unpad_einsum`
reads the producers, the padded reduction and the crop as it reads ``pad_einsum``'s own.
Only allocated buffers named by that rule are touched (:data:`REINDEX_PAD`): a buffer an op
computes keeps its axes. Both rewrites keep what the function computes: an axis of one
element is dropped, an intermediate's axes are renamed in every access.
"""
from __future__ import annotations

import re

import attrs

from tir.buffer import BufferRegion
from tir.expr import BufferLoad, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, pre_order_stmts, transform, transform_stmts
from tir.stmt import Block, BlockRealize, BufferStore, IterKind

from .affine import const_of

REINDEX_PAD = re.compile(r"_reindex_pad(_(shared|local|shared_dyn|warp))?$")
"""The names dlight's reindex + pad_einsum (+ cache read/write) give the buffers they add."""


def _accesses(func: PrimFunc) -> list:
    """(block, buffer, indices, whether a store) of every load, store and declared region of
    every block."""
    found = []

    def visit_block(realize: BlockRealize):
        block = realize.block

        def own(n):
            if isinstance(n, (BufferLoad, BufferStore)):
                found.append((block, n.buffer, tuple(n.indices), isinstance(n, BufferStore)))
            return n if isinstance(n, BlockRealize) else None

        for part in (block.body, block.init):
            if part is not None:
                transform(part, lambda n: None, own)
        for region in tuple(block.reads) + tuple(block.writes):
            found.append((block, region.buffer, tuple(r.min for r in region.region), False))

    post_order_visit(func.body, lambda n: visit_block(n) if isinstance(n, BlockRealize) else None)
    return found


def _reindexed(func: PrimFunc) -> bool:
    """Whether some block allocates a buffer named as dlight's reindex + pad names them."""
    from .pad_einsum import undup  # (pad_einsum reads through this module)

    found = []

    def visit(n):
        if isinstance(n, Block):
            found.extend(b for b in n.alloc_buffers if REINDEX_PAD.search(undup(b.name)))
        return not found

    pre_order_stmts(func.body, visit)
    return bool(found)


def _unit_positions(buffer, accesses: list) -> tuple:
    """Axes of ``buffer`` of extent 1 that every access indexes at 0 or at a block variable of
    extent 1."""
    out = []
    for d, extent in enumerate(buffer.shape):
        if const_of(extent) != 1:
            continue
        ok = True
        for block, indices in accesses:
            index = indices[d]
            if const_of(index) == 0:
                continue
            units = {id(iv.var) for iv in block.iter_vars if const_of(iv.dom.extent) == 1}
            if not (isinstance(index, Var) and id(index) in units):
                ok = False
                break
        if ok:
            out.append(d)
    return tuple(out)


def _source_order(buffer, kept: tuple, writers: list) -> "tuple | None":
    """The order of ``kept`` axes that makes ``buffer`` its one writer's source: the writer
    stores ``B[v...]`` at distinct bare variables and every parameter it loads reads those same
    variables in one other order. None when there is nothing to reorder."""
    if len(writers) != 1:
        return None
    block, indices = writers[0]
    if len(indices) != len(buffer.shape):
        return None
    own = [indices[d] for d in kept]
    if not all(isinstance(i, Var) for i in own) or len({id(i) for i in own}) != len(own):
        return None
    orders = set()

    def visit(n):
        if isinstance(n, BufferLoad) and n.buffer is not buffer:
            idx = list(n.indices)
            if len(idx) == len(own) and all(isinstance(i, Var) for i in idx) and \
                    {id(i) for i in idx} == {id(i) for i in own}:
                orders.add(tuple(next(k for k, o in enumerate(own) if o is i) for i in idx))
            else:
                orders.add(None)

    post_order_visit(block.body, visit)
    if len(orders) != 1 or None in orders:
        return None
    (order,) = orders
    return order if order != tuple(range(len(own))) else None


def unreindex(func: PrimFunc) -> PrimFunc:
    """``func`` with the unit axes and the axis order dlight's reindex gives its padded copies
    removed (module docstring); unchanged when there are none."""
    from .pad_einsum import undup  # (pad_einsum reads through this module)

    if not _reindexed(func):
        return func  # nothing of dlight's: spare the walk of every access
    accesses = _accesses(func)
    plans = {}
    for _, buffer, _, _ in accesses:
        if id(buffer) in plans or not REINDEX_PAD.search(undup(buffer.name)):
            continue
        if any(buffer is b for b in func.buffers):
            continue
        mine = [(blk, idx) for blk, buf, idx, _ in accesses if buf is buffer]
        units = _unit_positions(buffer, mine)
        kept = tuple(d for d in range(len(buffer.shape)) if d not in units)
        writers = {}  # id(block) -> (block, the indices of its first store to the buffer)
        for blk, buf, idx, is_store in accesses:
            if is_store and buf is buffer:
                writers.setdefault(id(blk), (blk, idx))
        order = _source_order(buffer, kept, list(writers.values()))
        if not units and order is None:
            continue
        order = order if order is not None else tuple(range(len(kept)))
        axes = tuple(kept[k] for k in order)
        shape = tuple(buffer.shape[d] for d in axes)
        plans[id(buffer)] = (axes, attrs.evolve(buffer, shape=shape))
    if not plans:
        return func

    def moved(buffer, indices):
        axes, new = plans[id(buffer)]
        return new, tuple(indices[d] for d in axes)

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)) and id(n.buffer) in plans:
            new, idx = moved(n.buffer, n.indices)
            return attrs.evolve(n, buffer=new, indices=idx)
        if isinstance(n, BufferRegion) and id(n.buffer) in plans:
            new, region = moved(n.buffer, n.region)
            return attrs.evolve(n, buffer=new, region=region)
        if isinstance(n, Block):
            allocs = tuple(plans[id(b)][1] if id(b) in plans else b for b in n.alloc_buffers)
            return attrs.evolve(n, alloc_buffers=allocs) if allocs != tuple(n.alloc_buffers) else None
        return None

    out = transform(func, post)
    return transform_stmts(out, lambda n: _without_idle_units(n) if isinstance(n, BlockRealize) else None)


def _without_idle_units(realize: BlockRealize) -> "BlockRealize | None":
    """The block without its spatial variables of extent 1 that nothing in it reads any more."""
    block = realize.block
    if not block.iter_vars:
        return None
    used = set()

    def visit(n):
        if isinstance(n, Var):
            used.add(id(n))

    for part in (block.body, block.init):
        if part is not None:
            post_order_visit(part, visit)
    for region in tuple(block.reads) + tuple(block.writes):
        for r in region.region:
            post_order_visit(r.min, visit)
            post_order_visit(r.extent, visit)
    keep = [k for k, iv in enumerate(block.iter_vars)
            if id(iv.var) in used or iv.kind != IterKind.SPATIAL or const_of(iv.dom.extent) != 1]
    if len(keep) == len(block.iter_vars):
        return None
    new = attrs.evolve(block, iter_vars=tuple(block.iter_vars[k] for k in keep))
    return attrs.evolve(realize, iter_values=tuple(realize.iter_values[k] for k in keep), block=new)

