"""Undo schedule primitives that change a PrimFunc's blocks but not what it computes.

:func:`normalize` returns an equivalent PrimFunc for the recognizers, or None when a block
predicate cannot be shown to be implied by its block's domain (a predicate that drops
elements would change the op; the semantic layer ignores predicates):

* the outer block of ``blockize`` and the block nested in it become one block again (see
  :mod:`.blockize`);
* blocks that share loops after ``compute_at``/``reverse_compute_at`` get loops of their
  own (see :mod:`.distribute`);
* the constant fill and the interior copy of ``decompose_padding`` become one pad block
  again (see :mod:`.padding`);
* ``T.where`` predicates of non-divisible splits are dropped (see :mod:`.predicates`);
* the separate init block of ``decompose_reduction`` (spatial iterators only, no reads,
  stores of constants) is put back as the ``init`` of the reduction block that next
  touches its buffers and stores to them at the same indices, over the same domain;
* the partial and final blocks of ``rfactor`` are merged back (see :mod:`.rfactor`);
* a ``cache_read`` copy (an intermediate filled by ``S[v...] = P[v...]`` from a parameter
  of the same shape, over the whole buffer, and written nowhere else) is removed and its
  readers read the parameter;
* a ``cache_write`` or ``reindex`` copy (a buffer filled the same way from an
  intermediate that one other block writes and no other block reads) is removed and that
  block writes the copy's buffer.

A ``cache_read`` buffer is recognised by its scope (``local``, ``shared``, ...): a copy of
a parameter into a global intermediate stays, as it may be an op of a fused kernel. A copy
out of an intermediate that only its writer computes and only the copy reads goes whatever
the scope (``reindex`` makes it global): the decomposer reads through such an identity copy
anyway (it names no op for it); removing it leaves the blocks, and their compute tags, of
the unscheduled op.

The pattern kind is computed on the function as given, not on the normalized one: TVM's
analyzer sees the scheduled form.
"""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad, Var
from tir.function import PrimFunc
from tir.functor import pre_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, IterKind, SeqStmt
from tir.buffer import BufferRegion

from .affine import affine, const_of
from .blockize import unblockize
from .distribute import distribute
from .padding import merge_padding
from .predicates import drop_predicates
from .rewrite import EMPTY, prune
from .rfactor import merge_rfactor

def _touches(block: Block, buf) -> bool:
    return any(r.buffer is buf for r in block.reads + block.writes)


def _pure_store(block: Block) -> "BufferStore | None":
    """The block's only statement when it stores at exactly its own variables."""
    body = block.body
    ivars = [iv.var for iv in block.iter_vars]
    if not isinstance(body, BufferStore) or len(body.indices) != len(ivars):
        return None
    return body if all(a is b for a, b in zip(body.indices, ivars)) else None


def _loads(expr) -> list:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, (BufferLoad, Var)) else True)
    return found


def _stores(stmt) -> list:
    found = []
    pre_order_visit(stmt, lambda n: found.append(n) if isinstance(n, BufferStore) else not isinstance(n, Block))
    return found


def _common_indices(stores) -> "tuple | None":
    first = tuple(stores[0].indices)
    return first if all(tuple(x.indices) == first for x in stores) else None


def _init_of(block: Block) -> "list | None":
    """The stores of a decomposed init block: spatial iterators, no reads, no init, stores
    of constants at one index tuple made of the block's variables (each once) and constants."""
    body = block.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    if block.init is not None or block.reads or not all(isinstance(x, BufferStore) for x in stmts):
        return None
    if not all(iv.kind == IterKind.SPATIAL for iv in block.iter_vars) or any(_loads(x.value) for x in stmts):
        return None
    index = _common_indices(stmts)
    if index is None:
        return None
    ivars = {id(iv.var) for iv in block.iter_vars}
    used = [id(i) for i in index if isinstance(i, Var)]
    consts = all(isinstance(i, Var) or not _loads(i) for i in index)
    return stmts if consts and sorted(used) == sorted(ivars) and len(set(used)) == len(used) else None


def _var_map(init: Block, index: tuple, target: tuple, spatial: list) -> "dict | None":
    """Init variables to the update's spatial variables, position by position, when the
    domains agree and the two index tuples then coincide."""
    if len(index) != len(target):
        return None
    doms = {id(iv.var): iv.dom for iv in spatial}
    mapping = {}
    for a, b in zip(index, target):
        if isinstance(a, Var):
            if not isinstance(b, Var) or id(b) not in doms:
                return None
            mapping[a] = b
    if len({id(v) for v in mapping.values()}) != len(spatial) or len(mapping) != len(spatial):
        return None
    init_doms = {id(iv.var): iv.dom for iv in init.iter_vars}
    if any(init_doms[id(a)] != doms[id(b)] for a, b in mapping.items()):
        return None
    return mapping if tuple(substitute(i, mapping) for i in index) == tuple(target) else None


def _update_for(init: Block, stores: list, later: list) -> "tuple | None":
    """(update block, variable map) for the reduction block that first touches the init's
    buffers after it, when it writes exactly them at one index tuple matching the init's."""
    buffers = {id(x.buffer): x.buffer for x in stores}
    block = next((b for b in later if any(_touches(b, x) for x in buffers.values())), None)
    if block is None or block.init is not None or {id(w.buffer) for w in block.writes} != set(buffers):
        return None
    spatial = [iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL]
    if len(spatial) == len(block.iter_vars):
        return None
    updates = _stores(block.body)
    target = _common_indices(updates) if updates else None
    mapping = _var_map(init, tuple(stores[0].indices), target, spatial) if target is not None else None
    return (block, mapping) if mapping is not None else None


def _writer_count(blocks, buf) -> int:
    return sum(1 for b in blocks if any(w.buffer is buf for w in b.writes))


def _merged(init: Block, update: Block, mapping: dict) -> Block:
    return attrs.evolve(update, init=substitute(init.body, mapping))


def merge_inits(func: PrimFunc) -> PrimFunc:
    """Decomposed reduction inits put back into their reduction blocks."""
    blocks = list(func.blocks())
    merged = {}
    for k, block in enumerate(blocks):
        stores = _init_of(block)
        if stores is None or any(_writer_count(blocks, x.buffer) != 2 for x in stores):
            continue
        found = _update_for(block, stores, blocks[k + 1:])
        if found is not None:
            merged[id(block)] = None
            merged[id(found[0])] = _merged(block, *found)
    if not merged:
        return func

    def pre(n):
        if isinstance(n, BlockRealize) and id(n.block) in merged and merged[id(n.block)] is None:
            return EMPTY
        if isinstance(n, Block) and merged.get(id(n)) is not None:
            return merged[id(n)]
        return None

    return prune(transform(func, lambda n: None, pre))


def _copy_pair(block: Block) -> "tuple | None":
    """(destination, source) of a whole-buffer copy ``D[v...] = S[v...]`` (same shape, dtype)."""
    store = _pure_store(block)
    if store is None or block.init is not None or not isinstance(store.value, BufferLoad):
        return None
    load = store.value
    if list(load.indices) != list(store.indices) or load.buffer.dtype != store.buffer.dtype:
        return None
    shape = [affine(s) for s in store.buffer.shape]
    if shape != [affine(s) for s in load.buffer.shape] or None in shape:
        return None
    doms = [(const_of(iv.dom.min), affine(iv.dom.extent)) for iv in block.iter_vars]
    return (store.buffer, load.buffer) if doms == [(0, s) for s in shape] else None


def _readers(blocks, buf) -> list:
    return [b for b in blocks if any(r.buffer is buf for r in b.reads)]


def cache_scope(buf) -> bool:
    """A buffer in a scope that only a cache primitive creates here: a copy of a parameter
    into a global intermediate may be an op of a fused kernel (an identity broadcast_to),
    not a cache."""
    return buf.scope not in ("global", "")


def _cache_copy(block: Block, blocks: list, params: set) -> "tuple | None":
    """(buffer to drop, buffer that replaces it) when ``block`` is a cache_read copy of a
    parameter, or the cache_write (or reindex) copy of an intermediate that only its
    writer computes (into a parameter or another intermediate), in any scope."""
    pair = _copy_pair(block)
    if pair is None:
        return None
    dst, src = pair
    if id(src) in params and id(dst) not in params and _writer_count(blocks, dst) == 1:
        return (dst, src) if cache_scope(dst) else None
    if id(src) in params or _writer_count(blocks, src) != 1:
        return None
    writer = next(b for b in blocks if any(w.buffer is src for w in b.writes))
    others = [b for b in _readers(blocks, src) if b is not block and b is not writer]
    return (src, dst) if not others and _writer_count(blocks, dst) == 1 else None


def drop_cache_copies(func: PrimFunc) -> PrimFunc:
    """``cache_read``/``cache_write``/``reindex`` copies removed: the cached buffer is
    renamed back."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    copies = {}
    for block in blocks:
        pair = _cache_copy(block, blocks, params)
        seen = {id(x) for p in copies.values() for x in p}
        if pair is not None and not seen & {id(x) for x in pair}:
            copies[id(block)] = pair
    if not copies:
        return func
    rename = {id(old): new for old, new in copies.values()}

    def pre(n):
        return EMPTY if isinstance(n, BlockRealize) and id(n.block) in copies else None

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore, BufferRegion)) and id(n.buffer) in rename:
            return attrs.evolve(n, buffer=rename[id(n.buffer)])
        if isinstance(n, Block) and any(id(b) in rename for b in n.alloc_buffers):
            return attrs.evolve(n, alloc_buffers=tuple(b for b in n.alloc_buffers if id(b) not in rename))
        return None

    return prune(transform(func, post, pre))


def normalize(func: PrimFunc) -> "PrimFunc | None":
    """The function the recognizers should read (see the module docstring), or None."""
    func = drop_predicates(merge_padding(distribute(unblockize(func))))
    if func is None:
        return None
    return drop_cache_copies(merge_rfactor(merge_inits(func)))
