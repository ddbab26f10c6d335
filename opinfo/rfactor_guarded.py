"""Undo ``rfactor`` of a reduction whose split left a tail: the partial block's predicate.

TVM's dlight GPU rules schedule a row reduction over ``N`` elements by splitting it into
``r`` in ``[0, ceil(N / F))`` and ``k`` in ``[0, F)`` (``k`` goes to the threads), guarding the
split with ``r * F + k < N``, and ``rfactor``-ing over ``k``:

    rf[k, s] = rf[k, s] (+) f(s, r * F + k)      where r * F + k < N     (partial block)
    out[s] = out[s] (+) rf[k, s]                  over k in [0, F)        (final block)

The partial block's predicate drops points of its own iteration domain (the tail of the
last ``r``), which :func:`.predicates.drop_predicates` rightly refuses, and :mod:`.rfactor`
merges only once predicates are gone. Here the two blocks are merged first, and the two
reduction variables become one: ``c = r * F + k`` over ``[0, N)`` exactly, the merged block
binding ``c`` to the loops' ``r * F + k`` under the same predicate -- the form of a reduction
split with a tail, whose predicate only restates ``c``'s domain. That is the unscheduled
reduction over ``[0, N)`` when

- the pair is one :mod:`.rfactor` merges (``rf`` written by the partial block alone, read
  by the final block alone, same commutative combiner, the partial block named by
  ``rfactor``, its init the combiner's identity),
- the partial block reduces over one variable ``r`` and its predicate, in its own variables,
  is the one comparison ``r * F + k < N`` with ``F`` the extent of ``k`` and ``r``'s extent
  ``ceil(N / F)`` (``(N + F - 1) // F``), ``N`` free of the block's variables,
- every integer expression of the contribution using ``r`` or ``k`` is affine in them with
  ``r``'s coefficient ``F`` times ``k``'s (:func:`.reduce_fuse.through_sum`): then it is a
  function of ``r * F + k`` alone, and the pairs the predicate keeps are ``c`` in ``[0, N)``,
  each once.

dlight's GEMV rule reduces in three stages whose first carries the guard, conjoined with the
rows' restatement and over unit reduction variables: there :func:`tails_as_identity` moves
the guard into the sum as the combiner's identity, the stages merge as guardless ones do, and
:func:`trim_guarded_reductions` cuts the merged reduction back to ``[0, N)``.
"""
from __future__ import annotations

import attrs

from tir.expr import LT, Add, Call, FloorDiv, IntImm, Mul, Var, if_then_else
from tir.function import PrimFunc
from tir.functor import post_order_stmts, substitute, transform
from tir.buffer import Range
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar

from .affine import affine, const_of, equal_extents
from .predicates import conjunction, implied, is_true, loop_domain
from .probe import shape_vars, vars_in
from .recognize.guard import conjuncts, value_range
from .reduce_fuse import rename_vars, through_sum
from .pad_einsum import holds_blocks
from .rewrite import loaded, stored
from .rfactor import (combiner_identity, final_update, identity_of, index_mapping, partial_update, replace_blocks,
                      rfactor_named, split_update, with_other)


def _own_terms(pred, realize: BlockRealize) -> "object | None":
    """The partial block's predicate in its own variables, or None: every loop variable it
    reads must be the whole binding of exactly one block variable, and no other binding
    may read it."""
    used = vars_in(pred)
    inv = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if isinstance(value, Var) and value in used:
            if value in inv:
                return None
            inv[value] = iv.var
    for value in realize.iter_values:
        if not isinstance(value, Var):
            seen = vars_in(value)
            if seen & set(inv):
                return None
    return substitute(pred, inv)


def _tail(pred, r: IterVar, k: IterVar, shape: set):
    """``N`` when ``pred`` is ``r * F + k < N`` with ``F`` the extent of ``k``, ``r``
    running ``ceil(N / F)`` and ``N`` a constant or an expression of the function's shape
    variables (``shape``); None otherwise."""
    if not isinstance(pred, LT):
        return None
    f = const_of(k.dom.extent)
    form = affine(pred.a)
    if f is None or f < 1 or form is None or const_of(r.dom.min) != 0 or const_of(k.dom.min) != 0:
        return None
    if set(form) != {r.var, k.var} or form[r.var] != f or form[k.var] != 1:
        return None
    n = pred.b
    seen = vars_in(n)
    if not seen <= shape:
        return None
    nc = const_of(n)
    if nc is not None:
        rc = const_of(r.dom.extent)
        return n if rc is not None and (rc - 1) * f < nc <= rc * f else None
    ceil = FloorDiv(Add(n, IntImm(n.dtype, f - 1)), IntImm(n.dtype, f))
    return n if equal_extents(r.dom.extent, ceil) else None


def _fold(final_realize: BlockRealize, partial_realize: BlockRealize, combiner, rf_load, shape: set):
    """The merged BlockRealize (inside a loop over ``r``), or None."""
    final, partial = final_realize.block, partial_realize.block
    got = partial_update(partial, combiner)
    if got is None:
        return None
    store, contribution = got
    mapping = index_mapping(partial, final, store.indices, rf_load.indices)
    reduce = [iv for iv in partial.iter_vars if iv.kind != IterKind.SPATIAL]
    if mapping is None or len(reduce) != 1:
        return None
    r = reduce[0]
    pred = _own_terms(partial_realize.predicate, partial_realize)
    if pred is None:
        return None
    for k_var, final_var in mapping.items():
        k = next(iv for iv in partial.iter_vars if iv.var is k_var)
        n = _tail(pred, r, k, shape)
        if n is None:
            continue
        f = const_of(k.dom.extent)
        if not through_sum(contribution, r.var, k_var, f):
            return None
        pos = next(i for i, iv in enumerate(final.iter_vars) if iv.var is final_var)
        if final.iter_vars[pos].kind != IterKind.REDUCE:
            return None
        fused = Var(final_var.name, final_var.dtype)
        rename = {**mapping, r.var: IntImm(r.var.dtype, 0), k_var: fused}
        term = rename_vars(contribution, rename)
        value = final.body.value
        value = combiner(value.a, term) if value.b is rf_load else combiner(term, value.b)
        dtype = n.dtype
        iter_vars = list(final.iter_vars)
        iter_vars[pos] = IterVar(fused, Range(IntImm(dtype, 0), n), IterKind.REDUCE)
        reads = tuple(x for x in final.reads if x.buffer is not rf_load.buffer) + tuple(
            rename_vars(x, rename) for x in partial.reads if x.buffer is not store.buffer)
        block = attrs.evolve(final, iter_vars=tuple(iter_vars), reads=reads,
                             body=attrs.evolve(final.body, value=value))
        loop = Var(r.var.name.removeprefix("v"), r.var.dtype)
        values = list(final_realize.iter_values)
        binding = Add(Mul(loop, IntImm(loop.dtype, f)), values[pos])
        values[pos] = binding
        guard = LT(binding, n)
        predicate = conjunction([final_realize.predicate, guard], final_realize.predicate.dtype)
        body = BlockRealize(tuple(values), predicate, block)
        return For(loop, IntImm(loop.dtype, 0), r.dom.extent, ForKind.SERIAL, body)
    return None


def _fill_of(block: Block, rf, combiner) -> "object | None":
    """The value a block stores into all of ``rf`` when it is ``rf[v...] = identity`` of
    ``combiner`` over its own spatial variables, one per dimension in order, each running
    that dimension whole; None otherwise."""
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore) or store.buffer is not rf or loaded(block):
        return None
    if len(store.indices) != len(rf.shape) or any(iv.kind != IterKind.SPATIAL for iv in block.iter_vars):
        return None
    used = []
    for idx, extent in zip(store.indices, rf.shape):
        if const_of(idx) is not None:  # a unit dimension written at 0
            if const_of(idx) != 0 or const_of(extent) != 1:
                return None
            continue
        iv = next((iv for iv in block.iter_vars if iv.var is idx), None)
        if iv is None or any(u is iv for u in used) or const_of(iv.dom.min) != 0 \
                or not equal_extents(iv.dom.extent, extent):
            return None
        used.append(iv)
    return store.value if combiner_identity(combiner, store.value, rf.dtype) else None


def _with_init(realize: BlockRealize, value) -> "BlockRealize | None":
    """The partial block with the init ``rf[its store's indices] = value``."""
    store = realize.block.body
    if not isinstance(store, BufferStore):
        return None
    init = BufferStore(store.buffer, value, store.indices)
    return attrs.evolve(realize, block=attrs.evolve(realize.block, init=init))


def merge_guarded_rfactor(func: PrimFunc) -> PrimFunc:
    """``func`` with every rfactor'ed reduction whose partial block guards a split's tail
    merged back into one reduction over the unsplit extent (see the module doc)."""
    root = func.root_block
    if root is None:
        return func
    realizes = []
    post_order_stmts(func.body, lambda n: realizes.append(n) if isinstance(n, BlockRealize) else None)
    realizes = [r for r in realizes if not holds_blocks(r.block)]  # the root, blockize's outer blocks
    blocks = [r.block for r in realizes]
    allocated = {id(b) for b in root.alloc_buffers}
    shape = shape_vars(func)
    replace, drop, dropped_bufs = {}, set(), set()
    for final_realize in realizes:
        final = final_realize.block
        found = final_update(final)
        if found is None:
            continue
        combiner, rf_load = found
        rf = rf_load.buffer
        writers = [r for r in realizes if id(rf) in stored(r.block)]
        readers = [b for b in blocks if id(rf) in loaded(b) and all(b is not w.block for w in writers)]
        fills = [w for w in writers if _fill_of(w.block, rf, combiner) is not None]
        partials = [w for w in writers if w not in fills]
        if id(rf) not in allocated or len(partials) != 1 or len(fills) > 1 or readers != [final] \
                or any(w.block is final for w in writers):
            continue
        partial_realize = partials[0]
        if not rfactor_named(partial_realize.block) or is_true(partial_realize.predicate):
            continue
        if fills:  # decompose_reduction's init block, still apart: the guard kept merge_inits off
            if partial_realize.block.init is not None or not is_true(fills[0].predicate):
                continue
            partial_realize = _with_init(partial_realize, _fill_of(fills[0].block, rf, combiner))
            if partial_realize is None:
                continue
        merged = _fold(final_realize, partial_realize, combiner, rf_load, shape)
        if merged is not None:
            replace[id(final)] = merged
            drop.update(id(w.block) for w in writers)
            dropped_bufs.add(id(rf))
    if not replace:
        return func
    return replace_blocks(func, {key: (lambda n, stmt=stmt: stmt) for key, stmt in replace.items()},
                          drop, dropped_bufs)


def tails_as_identity(func: PrimFunc) -> PrimFunc:
    """``func`` with the guard of a split's tail moved from the predicate of a partial
    reduction block into its contribution, where :func:`merge_guarded_rfactor` cannot merge
    the block (dlight's GEMV rule reduces in three stages; the guard of the first is a
    conjunction with the rows' restatement, and over unit reduction variables)::

        rf[k, s] = rf[k, s] + f(s, r, k)          where rows(s) and r * F + k < N
        rf[k, s] = rf[k, s] + if_then_else(r * F + k < N, f(s, r, k), 0)   where rows(s)

    Exact for an update without init (the fill of ``rf`` is a block of its own) whose
    combiner has an identity (0, 1, the type's lowest or highest value): a point the guard
    drops adds the identity, and only the taken branch is evaluated. Done when every
    conjunct left in the predicate is one :func:`.predicates.implied` by the block's domain,
    every block variable's binding stays in its domain at the points now run (over the
    loops, or bounded by a conjunct left), each loop variable the moved conjuncts read
    (unit loops count as 0) is the whole binding of one block variable, and the block
    writes a buffer the function allocates. The reduction then merges as a guardless one;
    :func:`trim_guarded_reductions` takes the guard back out of the merged reduction."""
    root = func.root_block
    if root is None:
        return func
    allocated = {id(b) for b in root.alloc_buffers}
    dom = loop_domain(func)
    units = {v: IntImm(v.dtype, 0) for v, ext in dom.items() if const_of(ext) == 1}
    built = {}
    realizes = []
    post_order_stmts(func.body, lambda n: realizes.append(n) if isinstance(n, BlockRealize) else None)
    for n in realizes:
        block = n.block
        if is_true(n.predicate) or block.init is not None or not isinstance(block.body, BufferStore) \
                or id(block.body.buffer) not in allocated or holds_blocks(block):
            continue
        split = split_update(block.body)
        if split is None:
            continue
        combiner, other = split
        identity = identity_of(combiner, block.body.buffer.dtype)
        if identity is None:
            continue
        unit_realize = attrs.evolve(n, iter_values=tuple(rename_vars(v, units) for v in n.iter_values),
                                    predicate=rename_vars(n.predicate, units))
        kept, moved = [], []
        for term in conjuncts(unit_realize.predicate):
            (kept if implied(term, unit_realize, dom) else moved).append(term)
        if not moved or not all(_in_domain(iv, v, kept, dom) for iv, v in
                                zip(block.iter_vars, unit_realize.iter_values)):
            continue
        own = _own_terms(conjunction(moved), unit_realize)
        if own is None or not vars_in(own) <= {iv.var for iv in block.iter_vars}:
            continue
        new_block = attrs.evolve(block, body=with_other(block.body, other, if_then_else(own, other, identity)))
        built[id(block)] = BlockRealize(n.iter_values, conjunction(kept, n.predicate.dtype), new_block)
    if not built:
        return func
    return replace_blocks(func, {key: (lambda _, stmt=stmt: stmt) for key, stmt in built.items()}, set(), set())


def _in_domain(iv: IterVar, value, kept: list, dom: dict) -> bool:
    """Whether the binding ``value`` of ``iv`` stays in its domain at every point the
    conjuncts ``kept`` let run: over the whole loop box, or literally bounded by one."""
    lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
    form = affine(value)
    whole = value_range(form, dom) if form is not None else None
    if whole is not None and lo is not None and ext is not None and lo <= whole[0] and whole[1] < lo + ext:
        return True
    if lo != 0 or whole is None or whole[0] < 0:
        return False
    return any(isinstance(t, LT) and t.a == value and (t.b == iv.dom.extent or (
        ext is not None and const_of(t.b) is not None and const_of(t.b) <= ext)) for t in kept)


def trim_guarded_reductions(func: PrimFunc) -> PrimFunc:
    """``func`` with a reduction whose whole contribution is guarded by its reduction
    variable's range, ``out[s] = out[s] (+) if_then_else(c < N, g, identity)`` over ``c`` in
    ``[0, E)``, made the reduction of ``g`` over ``c`` in ``[0, N)`` (what
    :func:`tails_as_identity` leaves once the stages are merged). Exact when the else
    branch is the combiner's identity and ``N <= E`` (constants, or ``E`` is ``N`` rounded up
    to a multiple of a constant); ``N`` is free of the block's variables."""
    changed = {}
    for block in func.blocks():
        if block.init is None or not isinstance(block.body, BufferStore):
            continue
        split = split_update(block.body)
        if split is None:
            continue
        combiner, other = split
        if not (isinstance(other, Call) and other.op == "if_then_else" and len(other.args) == 3) \
                or not combiner_identity(combiner, other.args[2], block.body.buffer.dtype):
            continue
        cond, kept = other.args[0], other.args[1]
        if not isinstance(cond, LT):
            continue
        pos = next((i for i, iv in enumerate(block.iter_vars) if iv.var is cond.a), None)
        if pos is None:
            continue
        iv = block.iter_vars[pos]
        n = cond.b
        if iv.kind != IterKind.REDUCE or const_of(iv.dom.min) != 0 or vars_in(n) & {v.var for v in block.iter_vars} \
                or not _at_most(n, iv.dom.extent):
            continue
        iter_vars = list(block.iter_vars)
        iter_vars[pos] = IterVar(iv.var, Range(iv.dom.min, n), iv.kind)
        changed[id(block)] = (pos, n, attrs.evolve(block, iter_vars=tuple(iter_vars),
                                                   body=with_other(block.body, other, kept)))
    if not changed:
        return func

    def pre(realize):
        if not isinstance(realize, BlockRealize) or id(realize.block) not in changed:
            return None
        pos, n, block = changed[id(realize.block)]
        # the loops still run over ``[0, E)``: the binding is guarded to the new domain
        guard = LT(realize.iter_values[pos], n)
        predicate = conjunction([realize.predicate, guard], realize.predicate.dtype)
        return BlockRealize(realize.iter_values, predicate, block)

    return transform(func, lambda n: None, pre)


def _at_most(n, extent) -> bool:
    """``1 <= n <= extent`` for every value of the shape variables: both constants, or ``extent``
    is ``n`` rounded up to a multiple of a constant (``(n + F - 1) // F * F``)."""
    a, b = const_of(n), const_of(extent)
    if a is not None and b is not None:
        return 1 <= a <= b  # not 0: the init runs with the first point of the reduction
    if isinstance(extent, Mul) and const_of(extent.b) is not None and const_of(extent.b) > 0:
        f = const_of(extent.b)
        ceil = FloorDiv(Add(n, IntImm(n.dtype, f - 1)), IntImm(n.dtype, f))
        return equal_extents(extent.a, ceil)
    return False
