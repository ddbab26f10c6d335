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
(``y`` above, stored ``[j, k]`` from ``y[k, j]``). :func:`unreindex` lays each such buffer out
as the parameter it stands for -- a copy as the input its writer loads, the accumulator as the
output its write-back stores -- keeping the partner's own unit axes (a batch of one,
``x[v0, i, k]`` with ``v0`` of extent 1, ``C[0, i, j]``) and dropping the ones reindex added
(every access indexes them at 0 or at a variable of extent 1); a buffer without such a
partner loses its unit axes and takes its one writer's source order. Then
:func:`.pad_einsum.unpad_einsum` reads the producers, the padded reduction and the crop as it
reads ``pad_einsum``'s own. Only allocated buffers named by that rule are touched
(:data:`REINDEX_PAD`): a buffer an op computes keeps its axes. The rewrites keep what the
function computes: an axis of one element is dropped or added, an intermediate's axes are
renamed in every access, a unit axis read at a variable whose one value is 0 is read at 0.
"""
from __future__ import annotations

import re

import attrs

from tir.buffer import BufferRegion, Range
from tir.expr import BufferLoad, IntImm, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, pre_order_stmts, transform, transform_stmts
from tir.stmt import Block, BlockRealize, BufferStore, IterKind

from .affine import const_of
from .unit_axes import restore_unit_vars

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


def reindexed(func: PrimFunc) -> bool:
    """Whether some block allocates a buffer named as dlight's reindex + pad names them."""
    from .pad_einsum import undup  # (pad_einsum reads through this module)

    found = []

    def visit(n):
        if isinstance(n, Block):
            found.extend(b for b in n.alloc_buffers if REINDEX_PAD.search(undup(b.name)))
        return not found

    pre_order_stmts(func.body, visit)
    return bool(found)


def _unit_vars(block) -> set:
    """Ids of ``block``'s variables of extent 1."""
    return {id(iv.var) for iv in block.iter_vars if const_of(iv.dom.extent) == 1}


def _at_unit(index, unit_vars: set) -> bool:
    """Whether ``index`` is 0 or one of ``unit_vars`` (:func:`_unit_vars`): the one element
    of an axis of extent 1."""
    return const_of(index) == 0 or (isinstance(index, Var) and id(index) in unit_vars)


def _unit_positions(buffer, accesses: list) -> tuple:
    """Axes of ``buffer`` of extent 1 that every access indexes at 0 or at a block variable of
    extent 1."""
    units = {id(block): _unit_vars(block) for block, _ in accesses}
    return tuple(d for d, extent in enumerate(buffer.shape)
                 if const_of(extent) == 1 and all(_at_unit(indices[d], units[id(block)]) for block, indices in accesses))


def _partner_layout(func: PrimFunc, buffer, accesses: list, units: tuple) -> "tuple | None":
    """The axes of ``buffer`` laid out as the parameter it stands for: the one parameter its
    one writer loads (a padded copy of an input) or the one parameter the one block reading it
    stores (the write-back of an output). The partner and the buffer are accessed there at the
    same distinct variables, besides unit axes (extent 1, indexed at 0 or at a variable of
    extent 1) of either: ``units``, the buffer's axes every access indexes so. One entry per
    axis of the partner: the buffer's axis its variable indexes, or None for a unit axis of
    the partner (indexed at 0). None when there is no such partner."""
    params = {id(b) for b in func.buffers}
    writers = {id(blk) for blk, buf, _, is_store in accesses if is_store and buf is buffer}
    readers = {id(blk) for blk, buf, _, is_store in accesses if not is_store and buf is buffer} - writers
    for group, partner_stored in ((writers, False), (readers, True)):
        if len(group) == 1:
            layout = _layout_in(next(iter(group)), partner_stored, buffer, accesses, params, units)
            if layout is not None:
                return layout
    return None


def _key(indices) -> tuple:
    return tuple(id(i) if isinstance(i, Var) else repr(i) for i in indices)


def _layout_in(block_id, partner_stored, buffer, accesses, params, units) -> "tuple | None":
    """:func:`_partner_layout` read in one block: the copy (``partner_stored`` False) or the
    write-back."""
    own = {_key(idx): idx for blk, buf, idx, is_store in accesses
           if id(blk) == block_id and buf is buffer and is_store != partner_stored}
    partner = {}
    for blk, buf, idx, is_store in accesses:
        if id(blk) == block_id and id(buf) in params and is_store == partner_stored:
            partner.setdefault(id(buf), {})[_key(idx)] = (buf, idx)
    if len(own) != 1 or len(partner) != 1:
        return None
    (seen,) = partner.values()
    if len(seen) != 1:
        return None
    (sidx,) = own.values()
    ((pbuf, pidx),) = seen.values()
    block = next(blk for blk, _, _, _ in accesses if id(blk) == block_id)
    unit_vars = _unit_vars(block)

    where = {}
    for e, index in enumerate(sidx):
        if e in units:
            continue
        if not isinstance(index, Var) or id(index) in where:
            return None
        where[id(index)] = e
    layout = []
    for index, extent in zip(pidx, pbuf.shape):
        if isinstance(index, Var) and id(index) in where:
            layout.append(where.pop(id(index)))
        elif const_of(extent) == 1 and _at_unit(index, unit_vars):
            layout.append(None)
        else:
            return None
    return tuple(layout) if not where else None


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
    """``func`` with dlight's padded copies laid out as the parameters they stand for (module
    docstring); unchanged when there is nothing to undo."""
    from .pad_einsum import undup  # (pad_einsum reads through this module)

    if not reindexed(func):
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
        layout = _partner_layout(func, buffer, accesses, units)
        if layout is None:
            kept = tuple(d for d in range(len(buffer.shape)) if d not in units)
            writers = {}  # id(block) -> (block, the indices of its first store to the buffer)
            for blk, buf, idx, is_store in accesses:
                if is_store and buf is buffer:
                    writers.setdefault(id(blk), (blk, idx))
            order = _source_order(buffer, kept, list(writers.values()))
            if not units and order is None:
                continue
            order = order if order is not None else tuple(range(len(kept)))
            layout = tuple(kept[k] for k in order)
        if layout == tuple(range(len(buffer.shape))):
            continue
        shape = tuple(buffer.shape[d] if d is not None else _one(buffer) for d in layout)
        plans[id(buffer)] = (layout, attrs.evolve(buffer, shape=shape))
    if not plans:
        return func

    def moved(buffer, indices):
        axes, new = plans[id(buffer)]
        return new, tuple(indices[d] if d is not None else _zero(buffer, indices) for d in axes)

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
    if any(None in axes for axes, _ in plans.values()):
        # a partner read at a variable of extent 1 where the copy now has a unit axis (indexed
        # at 0): read at 0 too, the same element, so that the copy and its source index alike
        out = transform_stmts(out, lambda n: _units_at_zero(n, out.buffers) if isinstance(n, BlockRealize) else None)
        # and the unit axes written at 0 get a variable of extent 1 of their block, as
        # TVM's own pad_einsum indexes them (the copy, the op and the write-back read alike)
        out = restore_unit_vars(out)
    return transform_stmts(out, lambda n: _without_idle_units(n) if isinstance(n, BlockRealize) else None)


def _units_at_zero(realize: BlockRealize, params) -> "BlockRealize | None":
    """The block with its parameters' unit axes indexed at 0 where it indexed them at one of
    its variables of extent 1 (its own statements only)."""
    block = realize.block
    units = {id(iv.var) for iv in block.iter_vars if const_of(iv.dom.extent) == 1 and const_of(iv.dom.min) == 0}
    if not units:
        return None
    mine = {id(b) for b in params}

    def fixed(buffer, indices):
        out = list(indices)
        for d, (i, extent) in enumerate(zip(indices, buffer.shape)):
            at = i.min if isinstance(i, Range) else i
            if isinstance(at, Var) and id(at) in units and const_of(extent) == 1:
                out[d] = _zero(buffer, indices)
        return tuple(out)

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)) and id(n.buffer) in mine:
            idx = fixed(n.buffer, n.indices)
            return attrs.evolve(n, indices=idx) if idx != tuple(n.indices) else None
        if isinstance(n, BufferRegion) and id(n.buffer) in mine:
            region = fixed(n.buffer, n.region)
            return attrs.evolve(n, region=region) if region != tuple(n.region) else None
        return None

    def own(n):
        return n if isinstance(n, BlockRealize) and n is not realize else None

    new = transform(realize, post, own)
    return new if new is not realize else None


def _one(buffer):
    """The constant 1 in the type of ``buffer``'s extents."""
    return IntImm(buffer.shape[0].dtype if buffer.shape else "int64", 1)


def _zero(buffer, indices):
    """A constant 0 index (a region's ``Range(0, 1)``) typed as ``buffer``'s indices."""
    dtype = buffer.shape[0].dtype if buffer.shape else "int64"
    first = indices[0] if indices else None
    if isinstance(first, Range):
        return Range(IntImm(dtype, 0), IntImm(dtype, 1))
    return IntImm(dtype, 0)


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

