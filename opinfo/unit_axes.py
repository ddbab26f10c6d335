"""Unit axes a block writes at a constant 0 get their block variable back.

TVM's legalized functions give every output axis a block variable, extent-1 axes included
(``T_reshape[v0, v1, v2]`` with ``v1`` in ``[0, 1)``). Schedules that rebuild a block's
iteration space from its loops -- TVM's dlight rules fuse the spatial loops of every block
and drop the unit ones -- leave ``expand_dims[v0, T.int64(0), v1]`` instead: the axis is
still written, at its one index, but no variable says so, and recognizers that read an op's
axes off its block variables lose it (an ``expand_dims`` looks like a copy of mismatched
rank, a keepdims mean like a reduction into a buffer of another rank). Operands of the
output's rank that read the same unit axis at 0 read it at the new variable too, as TVM's
elementwise and broadcast ops write them (a broadcast operand is read at 0 only where the
output's extent is not 1).

:func:`restore_unit_vars` gives such a block a spatial variable of extent 1 bound to 0 for
each such axis and writes it in place of the constant, in every store of the block and in
every load of the same buffer at the same indices (a reduction's update reads what it
accumulates). Only blocks whose stores all write one index tuple are changed. A variable
whose only value is 0 standing for the constant 0: the function computes exactly the same.
"""
from __future__ import annotations

import attrs

from tir.buffer import Range
from tir.expr import BufferLoad, IntImm, Var
from tir.function import PrimFunc
from tir.functor import pre_order_stmts, substitute, transform, transform_stmts
from tir.stmt import BlockRealize, BufferStore, IterKind, IterVar
from tir.structural import same_ir

from .affine import const_of
from .probe import collect_vars


def _own(n):
    """Stop at nested blocks: only the block's own statements are read and rewritten."""
    return n if isinstance(n, BlockRealize) else None


def _stores(block, init: bool = True) -> list:
    """The block's own stores (not those of nested blocks), parents first: a walk of its
    statements only (of its body alone without ``init``)."""
    found: list = []

    def visit(n):
        if isinstance(n, BufferStore):
            found.append(n)
        return not isinstance(n, BlockRealize)

    for part in (block.body, block.init if init else None):
        if part is not None:
            pre_order_stmts(part, visit)
    return found


def _same_indices(a, b) -> bool:
    return len(a) == len(b) and all(same_ir(x, y) for x, y in zip(a, b))


def _unit_positions(stores: list) -> "tuple | None":
    """The positions written at constant 0 on an axis of extent 1 of every stored buffer,
    when all stores use one index tuple; None when there is nothing to restore."""
    first = stores[0].indices
    if not all(_same_indices(s.indices, first) for s in stores[1:]):
        return None
    positions = tuple(d for d, i in enumerate(first)
                      if isinstance(i, IntImm) and i.value == 0
                      and all(const_of(s.buffer.shape[d]) == 1 for s in stores))
    return positions or None


def _restored(realize: BlockRealize) -> "BlockRealize | None":
    block = realize.block
    if not block.iter_vars:
        return None  # the root, an opaque block
    stores = _stores(block)
    if not stores:
        return None
    positions = _unit_positions(stores)
    if positions is None:
        return None
    index = tuple(stores[0].indices)
    buffers = {id(s.buffer) for s in stores}
    dtype = index[positions[0]].dtype
    names = {iv.var.name for iv in block.iter_vars}
    new_vars = []
    for d in positions:
        name = f"v_unit{d}"
        while name in names:
            name += "_"
        names.add(name)
        new_vars.append(Var(name, dtype))
    target = list(index)
    for d, v in zip(positions, new_vars):
        target[d] = v
    target = tuple(target)

    def post(n):
        if isinstance(n, BufferStore) and id(n.buffer) in buffers and _same_indices(n.indices, index):
            return attrs.evolve(n, indices=target)
        if isinstance(n, BufferLoad) and id(n.buffer) in buffers:
            if not _same_indices(n.indices, index):
                raise _Skip
            return attrs.evolve(n, indices=target)
        if isinstance(n, BufferLoad) and len(n.indices) == len(index):
            # an operand of the output's rank read at 0 on the same unit axis: TVM's
            # elementwise and broadcast ops read it at the output's variable there
            idx, changed = list(n.indices), False
            for d, v in zip(positions, new_vars):
                if isinstance(idx[d], IntImm) and idx[d].value == 0 and const_of(n.buffer.shape[d]) == 1:
                    idx[d], changed = v, True
            return attrs.evolve(n, indices=tuple(idx)) if changed else None
        return None

    try:
        body = transform(block.body, post, _own)
        init = transform(block.init, post, _own) if block.init is not None else None
    except _Skip:
        return None  # the block reads the buffer elsewhere: leave it
    ivs = tuple(IterVar(v, Range(IntImm(dtype, 0), IntImm(dtype, 1)), IterKind.SPATIAL) for v in new_vars)
    new = attrs.evolve(block, iter_vars=ivs + tuple(block.iter_vars), body=body, init=init)
    values = tuple(IntImm(dtype, 0) for _ in new_vars) + tuple(realize.iter_values)
    return attrs.evolve(realize, iter_values=values, block=new)


class _Skip(Exception):
    pass


def _one_valued(realize: BlockRealize) -> dict:
    """Block variable -> its one value, for the variables over a domain of extent 1 bound to
    that value (a constant)."""
    out = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        lo = const_of(iv.dom.min)
        if const_of(iv.dom.extent) == 1 and lo is not None and const_of(value) == lo:
            out[iv.var] = iv.dom.min
    return out


def _init_aligned(realize: BlockRealize) -> "BlockRealize | None":
    """The block with its init storing at its update's indices where the two differ only in
    variables that take one value (see :func:`align_unit_inits`); None when nothing changes."""
    block = realize.block
    if block.init is None or not isinstance(block.init, BufferStore):
        return None
    init = block.init
    updates = [s for s in _stores(block, init=False) if s.buffer is init.buffer]
    if not updates or _same_indices(init.indices, updates[0].indices):
        return None
    target = tuple(updates[0].indices)
    if not all(_same_indices(s.indices, target) for s in updates[1:]):
        return None
    one = _one_valued(realize)
    if not one or not _same_indices([substitute(i, one) for i in init.indices], [substitute(i, one) for i in target]):
        return None
    return attrs.evolve(realize, block=attrs.evolve(block, init=attrs.evolve(init, indices=target)))


def align_unit_inits(func: PrimFunc) -> PrimFunc:
    """``func`` with each reduction's init storing at its update's index tuple where the two
    tuples differ only in block variables over a domain of extent 1 bound to their one value:
    the same element. (TVM's ``transform_layout`` of an intermediate of unit extents, as a
    full reduction's ``x_red[0, 0, 0, 0]``, permutes the init's indices alone.)"""
    return transform_stmts(func, lambda n: _init_aligned(n) if isinstance(n, BlockRealize) else None)


def _pinned(realize: BlockRealize) -> "BlockRealize | None":
    """The block with its spatial variables of extent 1 that no store index uses replaced by
    their one value and dropped (see :func:`pin_unstored_unit_vars`); None when it has none."""
    block = realize.block
    if block.init is not None or not block.iter_vars:
        return None
    used: set = set()
    for store in _stores(block):
        for i in store.indices:
            collect_vars(i, used)
    pin = [iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL and iv.var not in used
           and const_of(iv.dom.extent) == 1 and const_of(iv.dom.min) is not None]
    if not pin or len(pin) == len(block.iter_vars):
        return None
    mapping = {iv.var: iv.dom.min for iv in pin}
    keep = [k for k, iv in enumerate(block.iter_vars) if iv.var not in mapping]
    new = attrs.evolve(block, iter_vars=tuple(block.iter_vars[k] for k in keep),
                       body=substitute(block.body, mapping),
                       reads=tuple(substitute(r, mapping) for r in block.reads),
                       writes=tuple(substitute(w, mapping) for w in block.writes))
    return attrs.evolve(realize, iter_values=tuple(realize.iter_values[k] for k in keep), block=new)


def pin_unstored_unit_vars(func: PrimFunc) -> PrimFunc:
    """``func`` with each spatial block's variables over a domain of extent 1 that none of
    its store indices uses written as their one value. Such a variable takes that value
    only; once ``reindex`` has rewritten a block to store at the output's indices it may
    still read an intermediate at it (group_norm's gamma, reshaped to (groups, 1), read at
    ``[g, v]`` for the unit ``v`` of a group of one channel), where no output position
    binds it."""
    return transform_stmts(func, lambda n: _pinned(n) if isinstance(n, BlockRealize) else None)


RESTORED = "opinfo.unit_axes_restored"
"""Attribute of a normalized function some of whose blocks got unit variables back: its
blocks were rebuilt by a schedule (TVM's legalization writes every unit axis's variable),
which may have inlined the blocks whose form tells two ops of one computation apart
(group_norm's grouping reshape, see :func:`rebuilt`)."""


def restore_unit_vars(func: PrimFunc) -> PrimFunc:
    """``func`` with unit axes written at a constant given block variables (module doc),
    marked with :data:`RESTORED` when any block changed."""
    out = transform_stmts(func, lambda n: _restored(n) if isinstance(n, BlockRealize) else None)
    if out is func:
        return func
    return attrs.evolve(out, attrs={**dict(out.attrs), RESTORED: True})


SCHEDULED = ("tir.is_scheduled", "tirx.is_scheduled")
"""Function attributes TVM's schedulers (dlight, MetaSchedule) set on what they scheduled."""


def rebuilt(func: PrimFunc) -> bool:
    """Whether :func:`restore_unit_vars` had to restore unit variables in ``func``."""
    return bool(func.attrs.get(RESTORED, False))


def scheduled(func: PrimFunc) -> bool:
    """Whether ``func``'s blocks may have been rebuilt from their loops: :func:`rebuilt`, or
    a TVM scheduler marked it scheduled (dlight rebuilds every block it schedules: a unit
    window axis of a pool loses its variable with nothing written at 0 to show it,
    ``x[n, c, h * 2 + r, w]`` for a window of 2 x 1)."""
    return rebuilt(func) or any(bool(func.attrs.get(k, False)) for k in SCHEDULED)
