"""Undo ``rfactor``: a reduction split into a partial block and a final one is merged back.

``rfactor`` turns ``out[s] = out[s] (+) f(s, r, k)`` into a block computing partial results
``rf[k, s] = rf[k, s] (+) f(s, r, k)`` (reducing over the other variables ``r``; without
them a plain ``rf[k, s] = f(s, k)``) and a final block ``out[s] = out[s] (+) rf[k, s]``
reducing over ``k``. For a commutative, associative combiner ((+), ``*``, ``max``,
``min``) that is the same reduction over ``(k, r)``, which is what TVM's unscheduled form
computes. The merge is done only when ``rf`` is an intermediate that the partial block alone
writes and the final block alone reads, the two combiners are the same operation and
every ``rf`` index is one variable whose domain matches on both sides, and the partial
block carries rfactor's name (``<tag>_rf``, see :func:`rfactor_named`): the same two
blocks are also a fused kernel of an elementwise op (or a reduction) followed by a
reduction, whose ops must stay apart.
Reductions with several accumulators (argmax, a norm's two sums) are merged by
:mod:`.rfactor_tuple` under the same conditions.
"""
from __future__ import annotations

import attrs

from tir.builder import Combiner
from tir.expr import Add, BufferLoad, IntImm, Max, Min, Mul, Var, max_value, min_value
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar

from .affine import affine, const_of, float_of
from .probe import vars_in
from .rewrite import EMPTY, loaded, prune, stored, without_allocs

COMBINERS = (Add, Mul, Max, Min)


def rfactor_named(block: Block) -> bool:
    """The block carries the name ``rfactor`` gives its partial block (``<tag>_rf``, or
    ``<tag>_rf_update`` once ``decompose_reduction`` split its init off)."""
    return block.name.endswith("_rf") or block.name.endswith("_rf_update")


def split_update(store: BufferStore):
    """(combiner type, the other operand) of ``B[i] = B[i] (+) other``, either order."""
    v = store.value
    if type(v) not in COMBINERS:
        return None
    for acc, other in ((v.a, v.b), (v.b, v.a)):
        if isinstance(acc, BufferLoad) and acc.buffer is store.buffer and tuple(acc.indices) == tuple(store.indices):
            return type(v), other
    return None


def with_other(store: BufferStore, other, new) -> BufferStore:
    """``store``, an update :func:`split_update` split into its combiner and ``other``, with
    ``new`` in place of ``other`` (the accumulator kept on its side)."""
    v = store.value
    return attrs.evolve(store, value=type(v)(v.a, new) if v.b is other else type(v)(new, v.b))


def _plain_vars(indices, block: Block) -> "list | None":
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    if not all(isinstance(i, Var) and id(i) in ivs for i in indices) or len({id(i) for i in indices}) != len(indices):
        return None
    return [ivs[id(i)] for i in indices]


def final_update(block: Block):
    """(combiner, rf load) of a final block ``out[s] = out[s] (+) rf[...]``."""
    if block.init is None or not isinstance(block.body, BufferStore):
        return None
    split = split_update(block.body)
    if split is None or not isinstance(split[1], BufferLoad) or split[1].buffer is block.body.buffer:
        return None
    if _plain_vars([i for i in split[1].indices if const_of(i) is None], block) is None:
        return None
    return split


def partial_update(block: Block, combiner):
    """(store, contribution) of the partial block writing ``rf`` at its own variables."""
    store = block.body
    if not isinstance(store, BufferStore):
        return None
    written = [i for i in store.indices if const_of(i) is None]
    if _plain_vars(written, block) is None:
        return None
    # a unit spatial axis may be written at its constant 0 (dlight rebuilds blocks from loops)
    spatial = [iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL]
    written_ids, spatial_ids = {id(i) for i in written}, {id(iv.var) for iv in spatial}
    unwritten = [iv.var for iv in spatial if id(iv.var) not in written_ids]
    if not written_ids <= spatial_ids or any(const_of(iv.dom.extent) != 1 for iv in spatial
                                             if id(iv.var) not in written_ids):
        return None
    read = vars_in(store.value)
    if any(v in read for v in unwritten):
        return None
    if not all(const_of(i) == 0 for i in store.indices if const_of(i) is not None):
        return None
    if block.init is None:
        return (store, store.value) if len(spatial) == len(block.iter_vars) else None
    split = split_update(store)
    if split is None or split[0] is not combiner or not _identity_init(block.init, store, combiner):
        return None
    return store, split[1]


def _identity_init(init, store: BufferStore, combiner) -> bool:
    """The partial block's init sets exactly the element it updates (same buffer, same
    indices) to the combiner's identity (0 for a sum, 1 for a product, the lowest value of
    the type or beyond for max, the highest for min), as ``rfactor`` prints it: merged, the
    partial sums then add nothing the unscheduled reduction does not."""
    if not isinstance(init, BufferStore) or init.buffer is not store.buffer or tuple(init.indices) != tuple(store.indices):
        return False
    return combiner_identity(combiner, init.value, store.buffer.dtype)


def combiner_identity(combiner, value, dtype) -> bool:
    """``value`` (an expression) is the identity of ``combiner`` (Add, Mul, Max, Min) for
    ``dtype``: 0, 1, the type's lowest value or beyond (-inf), its highest or beyond."""
    value = float_of(value)
    if value is None:
        return False
    if combiner is Add:
        return value == 0
    if combiner is Mul:
        return value == 1
    if combiner is Max:
        return value <= float_of(min_value(dtype))
    return value >= float_of(max_value(dtype))


_KINDS = {Add: Combiner.SUM, Mul: Combiner.PROD, Max: Combiner.MAX, Min: Combiner.MIN}


def identity_of(combiner, dtype):
    """The identity of ``combiner`` (Add, Mul, Max, Min) as a constant of ``dtype``, as the
    lowering library writes a reduction's init (0, 1, the type's lowest or highest value);
    None for another combiner."""
    kind = _KINDS.get(combiner)
    return None if kind is None else kind.identity(dtype)


def index_mapping(partial: Block, final: Block, mine, theirs) -> "dict | None":
    """Partial-block variable -> final-block variable for the ``rf`` indices written
    (``mine``) and read (``theirs``), each pair over the same domain; None otherwise."""
    mapping = {}
    for m, t in zip(mine, theirs):
        if const_of(m) is not None or const_of(t) is not None:
            if const_of(m) != const_of(t):
                return None
            continue
        a = next(iv for iv in partial.iter_vars if iv.var is m)
        b = next(iv for iv in final.iter_vars if iv.var is t)
        if affine(a.dom.extent) != affine(b.dom.extent) or affine(a.dom.min) != affine(b.dom.min):
            return None
        mapping[m] = t
    return mapping


def fresh_reductions(partial: Block, mapping: dict) -> list:
    """A fresh reduction variable (an IterVar) per reduction variable of the partial block,
    added to ``mapping``: the merged block reduces over them too."""
    fresh = []
    for iv in partial.iter_vars:
        if iv.kind != IterKind.SPATIAL:
            var = Var(iv.var.name, iv.var.dtype)
            mapping[iv.var] = var
            fresh.append(IterVar(var, iv.dom, IterKind.REDUCE))
    return fresh


def _merge(final: Block, partial: Block, combiner, rf_load) -> "tuple | None":
    """(merged block, the fresh reduction variables with their extents)."""
    got = partial_update(partial, combiner)
    if got is None:
        return None
    store, contribution = got
    mapping = index_mapping(partial, final, store.indices, rf_load.indices)
    if mapping is None:
        return None
    fresh = fresh_reductions(partial, mapping)
    value = final.body.value
    term = substitute(contribution, mapping)
    value = combiner(value.a, term) if value.b is rf_load else combiner(term, value.b)
    reads = tuple(r for r in final.reads if r.buffer is not rf_load.buffer) + tuple(
        substitute(r, mapping) for r in partial.reads if r.buffer is not store.buffer)
    block = attrs.evolve(final, iter_vars=final.iter_vars + tuple(fresh), reads=reads,
                         body=attrs.evolve(final.body, value=value))
    return block, fresh


def _tuple_final(final: Block, blocks: list, allocated: set) -> "tuple | None":
    """((merged block, fresh vars), partial block, rf buffers) of a final block of a
    several-accumulator reduction (:mod:`.rfactor_tuple`), or None."""
    if final.init is None or isinstance(final.body, BufferStore):
        return None
    mine = stored(final)
    rf = [b for key, b in _loaded_buffers(final.body).items() if key in allocated and key not in mine]
    if not rf:
        return None
    writers = {id(w) for b in rf for w in blocks if id(b) in stored(w)}
    if len(writers) != 1:
        return None
    partial = next(w for w in blocks if id(w) in writers)
    if partial is final or not rfactor_named(partial) or set(stored(partial)) != {id(b) for b in rf}:
        return None
    if any(id(b) in loaded(other) for b in rf for other in blocks if other is not final and other is not partial):
        return None
    from .rfactor_tuple import merge_tuple  # it builds on this module's helpers

    merged = merge_tuple(final, partial, rf)
    return None if merged is None else (merged, partial, rf)


def _loaded_buffers(stmt) -> dict:
    found = {}
    post_order_visit(stmt, lambda n: found.setdefault(id(n.buffer), n.buffer) if isinstance(n, BufferLoad) else None)
    return found


def merge_rfactor(func: PrimFunc) -> PrimFunc:
    """``func`` with rfactor'ed reductions merged back (see the module doc)."""
    root = func.root_block
    if root is None:
        return func
    blocks = list(func.blocks())
    allocated = {id(b) for b in root.alloc_buffers}
    replace, drop, dropped_bufs = {}, set(), set()
    for final in blocks:
        found = final_update(final)
        if found is None:
            tupled = _tuple_final(final, blocks, allocated)
            if tupled is not None:
                replace[id(final)] = tupled[0]
                drop.add(id(tupled[1]))
                dropped_bufs.update(id(b) for b in tupled[2])
            continue
        combiner, rf_load = found
        rf = rf_load.buffer
        writers = [b for b in blocks if id(rf) in stored(b)]
        readers = [b for b in blocks if id(rf) in loaded(b) and b not in writers]
        if id(rf) not in allocated or len(writers) != 1 or readers != [final] or writers[0] is final:
            continue
        if not rfactor_named(writers[0]):
            continue  # an elementwise op or a reduction fused before this one, not a partial
        merged = _merge(final, writers[0], combiner, rf_load)
        if merged is not None:
            replace[id(final)] = merged
            drop.add(id(writers[0]))
            dropped_bufs.add(id(rf))
    if not replace:
        return func

    def rebuilt(n):
        block, fresh = replace[id(n.block)]
        loops = [Var(iv.var.name.removeprefix("v_"), iv.var.dtype) for iv in fresh]
        body = BlockRealize(tuple(n.iter_values) + tuple(loops), n.predicate, block)
        for var, iv in zip(reversed(loops), reversed(fresh)):
            body = For(var, IntImm(var.dtype, 0), iv.dom.extent, ForKind.SERIAL, body)
        return body

    return replace_blocks(func, {key: rebuilt for key in replace}, drop, dropped_bufs)


def replace_blocks(func: PrimFunc, build: dict, drop: set, dropped_bufs: set) -> PrimFunc:
    """``func`` with the realizes of the blocks in ``drop`` (ids) removed, those of the blocks
    ``build`` maps (id -> function of the BlockRealize giving its replacement) rebuilt, and
    the allocations of ``dropped_bufs`` (ids) gone."""
    def pre(n):
        if isinstance(n, BlockRealize) and id(n.block) in drop:
            return EMPTY
        if isinstance(n, BlockRealize) and id(n.block) in build:
            return build[id(n.block)](n)
        return None

    def post(n):
        return without_allocs(n, dropped_bufs) if isinstance(n, Block) else None

    return prune(transform(func, post, pre))
