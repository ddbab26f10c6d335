"""Small pieces the normalizing rewrites share (:mod:`.normalize`, :mod:`.distribute`,
:mod:`.rfactor`): removing statements, and what a block really loads and stores (its body
as well as its declared regions: hand-written TVMScript may omit ``T.reads``/``T.writes``)."""
from __future__ import annotations

import attrs

from tir.expr import Add, BufferLoad, IntImm, Var
from tir.functor import post_order_stmts, post_order_visit, pre_order_stmts, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, SeqStmt

from .affine import affine, const_of

EMPTY = SeqStmt(())
"""Put in place of a removed statement; :func:`prune` then drops it."""


def prune(node):
    """``node`` without empty statements (loops and sequences left empty by a removal)."""
    def post(n):
        if isinstance(n, For) and n.body is EMPTY:
            return EMPTY
        if isinstance(n, SeqStmt):
            kept = tuple(s for s in n.seq if s is not EMPTY)
            if len(kept) == len(n.seq):
                return None
            return EMPTY if not kept else kept[0] if len(kept) == 1 else SeqStmt(kept)
        return None
    return transform(node, post)


def drop_idle_loops(func):
    """``func`` without its loops of no iteration (a constant extent of 0 or less): nothing
    in such a loop's body ever runs, and a pass that rebuilds loops from a block's domain
    must not bring it back (a pad copy under a loop of extent 0 copies nothing)."""
    idle: set = set()

    def visit(n):
        if isinstance(n, For):
            extent = const_of(n.extent)
            if extent is not None and extent <= 0:
                idle.add(id(n))

    pre_order_stmts(func.body, visit)
    if not idle:
        return func
    return prune(transform(func, lambda n: None, lambda n: EMPTY if id(n) in idle else None))


def without_allocs(block: Block, ids) -> "Block | None":
    """``block`` without its allocations of the buffers whose ids are in ``ids`` (buffers a
    rewrite removed); None when it allocates none of them."""
    if not any(id(b) in ids for b in block.alloc_buffers):
        return None
    return attrs.evolve(block, alloc_buffers=tuple(b for b in block.alloc_buffers if id(b) not in ids))


def stores_in(stmt) -> list:
    """The BufferStores of ``stmt``, not those of blocks nested in it."""
    found: list = []
    if stmt is not None:
        pre_order_stmts(stmt, lambda n: found.append(n) if isinstance(n, BufferStore) else not isinstance(n, Block))
    return found


def update_term(store: BufferStore):
    """What a reduction's update ``S[i] = S[i] op T`` (or ``T op S[i]``) combines with the
    accumulator: ``T``, or None when not exactly one operand is the accumulator."""
    value = store.value
    acc = [x for x in (value.a, value.b) if isinstance(x, BufferLoad) and x.buffer is store.buffer
           and tuple(x.indices) == tuple(store.indices)]
    if len(acc) != 1:
        return None
    return value.b if acc[0] is value.a else value.a


def stored(block) -> dict:
    """id -> buffer of what a block stores to (body and init, and its declared writes)."""
    found = {id(w.buffer): w.buffer for w in block.writes}
    for part in (block.body, block.init):
        if part is not None:
            post_order_stmts(part, lambda n: found.setdefault(id(n.buffer), n.buffer)
                             if isinstance(n, BufferStore) else None)
    return found


def loaded(block) -> set:
    """Ids of the buffers a block loads (its body, and its declared reads)."""
    found = {id(r.buffer) for r in block.reads}
    post_order_visit(block.body, lambda n: found.add(id(n.buffer)) if isinstance(n, BufferLoad) else None)
    return found


def nest_of(stmt) -> "tuple | None":
    """(loops, the BlockRealize under them) of a statement made of loops over one block."""
    loops = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    return (loops, stmt) if isinstance(stmt, BlockRealize) else None


def own_nest(realize: BlockRealize) -> For:
    """``realize``'s block under fresh loops over its iteration domain (bound one to one,
    no predicate)."""
    loops, values = [], []
    for iv in realize.block.iter_vars:
        var = Var(iv.var.name.removeprefix("v_"), iv.var.dtype)
        loops.append((var, iv.dom.extent))
        lo = iv.dom.min
        values.append(var if const_of(lo) == 0 else Add(var, lo))
    body = BlockRealize(values, IntImm(realize.predicate.dtype, 1), realize.block)
    for var, extent in reversed(loops):
        body = For(var, IntImm(var.dtype, 0), extent, ForKind.SERIAL, body)
    return body


def spatial_store(block: Block) -> "BufferStore | None":
    """The body of a block with spatial variables only and no init, when it is one store."""
    if block.init is not None or any(iv.kind != IterKind.SPATIAL for iv in block.iter_vars):
        return None
    return block.body if isinstance(block.body, BufferStore) else None


def store_vars(block: Block, indices) -> "tuple | None":
    """The block's iteration variables in the order ``indices`` use them, when they are each
    of the block's variables once and nothing else (``reorder_block_iter_var`` permutes a
    block's variables, not its store)."""
    by_var = {id(iv.var): iv for iv in block.iter_vars}
    if len(indices) != len(by_var) or {id(i) for i in indices} != set(by_var):
        return None
    return tuple(by_var[id(i)] for i in indices)


def whole_buffer_vars(block: Block, indices, shape) -> "tuple | None":
    """:func:`store_vars`, when each variable's domain runs from 0 over the extent of the
    dimension it indexes (the indices reach every element of a buffer of ``shape``)."""
    ivs = store_vars(block, indices)
    if ivs is None or any(const_of(iv.dom.min) != 0 or affine(iv.dom.extent) != affine(n)
                          for iv, n in zip(ivs, shape)):
        return None
    return ivs
