"""Undo ``reindex`` of a block's write whose copy stores at shifted indices.

TVM's ``reindex`` of a block's write gives the block a buffer ``<B>_reindex`` laid out in
the block's variables and adds a copy block of the same name storing it into ``B`` at the
indices the block stored at before. When those indices are the block's variables (the usual
case) the copy is a permutation, which :func:`.normalize.drop_cache_copies` removes. After
``decompose_padding`` the interior copy stores at shifted indices (``P[v + off] = X[v]``),
and so does the ``reindex`` copy of it::

    pad_temp_local_reindex[v0, v1, v2, v3, v4] = x[v2, v4, v1, v0, v3]          # "pad_temp"
    pad_temp_local[v2, v4, v1 + 2, v0, v3 + 3] = pad_temp_local_reindex[v0, ..., v4]

:func:`compose_reindex_copies` makes the first block store what it computes where the copy
put it (``pad_temp_local[v2, v4, v1 + 2, v0, v3 + 3] = x[v2, v4, v1, v0, v3]``) and drops
the copy and its buffer; the block keeps its name (the op's tag). It computes the same
values when

* the copy is named after the buffer it reads, a ``reindex`` name (:data:`.ew_tags.REINDEX`),
  reads that buffer whole at its variables (each once, domains from 0 over the buffer's
  shape), with no cast, and is the buffer's only reader;
* the buffer is allocated, written by one spatial block alone, which stores at its own
  variables (each once, domains from 0 over the buffer's shape), and both blocks' loops
  run exactly their domains (:func:`.realize_check.covers_domain`), the writer's statement
  of the root before the copy's;
* no other block of those two statements or of any statement between them accesses the
  copy's destination (its elements are now written when the writer runs, not when the
  copy ran).
"""
from __future__ import annotations

import attrs

from tir.builder import access_regions
from tir.expr import BufferLoad, Cast, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize

from .ew_tags import REINDEX
from .pad_einsum import undup
from .partial_copy import top_positions
from .probe import shape_vars
from .realize_check import covers_domain
from .rewrite import EMPTY, loaded, prune, spatial_store, stored, whole_buffer_vars, without_allocs


def _touches(block: Block, buf) -> bool:
    return id(buf) in stored(block) or id(buf) in loaded(block)


def _pair(copy: Block, blocks: list, places: dict, params: set, symbols) -> "tuple | None":
    """(writer, its new store) for a ``reindex`` copy that can be composed (module doc)."""
    store = spatial_store(copy)
    if store is None or not isinstance(store.value, BufferLoad) or not REINDEX.search(undup(copy.name)):
        return None
    src, dst = store.value.buffer, store.buffer
    if undup(src.name) != undup(copy.name) or id(src) in params or src is dst or src.dtype != dst.dtype:
        return None
    if all(isinstance(i, Var) for i in store.indices):
        return None  # a permutation: drop_cache_copies' case
    read_vars = whole_buffer_vars(copy, store.value.indices, src.shape)
    writers = [b for b in blocks if id(src) in stored(b)]
    if read_vars is None or len(writers) != 1 or any(id(src) in loaded(b) for b in blocks if b is not copy):
        return None
    (writer,) = writers
    wstore = spatial_store(writer)
    if wstore is None or wstore.buffer is not src or id(writer) not in places or id(copy) not in places:
        return None
    write_vars = whole_buffer_vars(writer, wstore.indices, src.shape)
    if write_vars is None:
        return None
    (k_w, realize_w, loops_w), (k_c, realize_c, loops_c) = places[id(writer)], places[id(copy)]
    if k_w >= k_c or covers_domain(realize_w, loops_w, symbols) is not True \
            or covers_domain(realize_c, loops_c, symbols) is not True:
        return None
    for other in blocks:
        if other is writer or other is copy or id(other) not in places:
            continue
        if k_w <= places[id(other)][0] <= k_c and _touches(other, dst):
            return None
    # the copy's variable at position d of the buffer is the writer's variable there
    mapping = {}
    for r, w in zip(read_vars, write_vars):
        mapping[r.var] = w.var if w.var.dtype == r.var.dtype else Cast(r.var.dtype, w.var)
    indices = tuple(substitute(i, mapping) for i in store.indices)
    free: set = set()
    for i in indices:
        post_order_visit(i, lambda n: free.add(id(n)) if isinstance(n, Var) else None)
    if not free <= {id(iv.var) for iv in writer.iter_vars} | {id(v) for v in symbols}:
        return None
    return writer, attrs.evolve(wstore, buffer=dst, indices=indices)


def compose_reindex_copies(func: PrimFunc) -> PrimFunc:
    """``func`` with each ``reindex`` copy at shifted indices composed into its writer
    (module doc)."""
    blocks = list(func.blocks())
    if not any(REINDEX.search(undup(b.name)) for b in blocks):
        return func
    places = top_positions(func)
    params = {id(b) for b in func.buffers}
    symbols = frozenset(shape_vars(func))
    rewritten, dropped, gone = {}, set(), set()
    for copy in blocks:
        found = _pair(copy, blocks, places, params, symbols)
        if found is None or id(found[0]) in rewritten or id(copy) in rewritten:
            continue
        writer, new_store = found
        rewritten[id(writer)] = attrs.evolve(writer, body=new_store,
                                             writes=access_regions([BufferLoad(new_store.buffer, new_store.indices)]))
        dropped.add(id(copy))
        gone.add(id(copy.body.value.buffer))
    if not rewritten:
        return func

    def pre(n):
        if isinstance(n, BlockRealize) and id(n.block) in dropped:
            return EMPTY
        if isinstance(n, Block) and id(n) in rewritten:
            return rewritten[id(n)]
        return None

    def post(n):
        return without_allocs(n, gone) if isinstance(n, Block) else None

    return prune(transform(func, post, pre))
