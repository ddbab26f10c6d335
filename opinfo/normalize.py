"""Undo schedule primitives that change a PrimFunc's blocks but not what it computes.

:func:`normalize` returns an equivalent PrimFunc for the recognizers, or None when a block
predicate cannot be shown to be implied by its block's domain (a predicate that drops
elements would change the op; the semantic layer ignores predicates):

* the copies of a loop nest ``loop_partition`` made become one loop again (see
  :mod:`.loop_partition`), and a reduction whose loops run a smaller box than its domain
  gets that box as domain (see :mod:`.realized_domain`);
* loops inside a block (the tile copies of ``read_at``/``write_at``) go outside it, the
  block taking a variable per loop, and element copies that run past an end of their
  buffers are restricted to what is inside (see :mod:`.block_loops`);
* the outer block of ``blockize`` and the block nested in it become one block again (see
  :mod:`.blockize`);
* blocks whose stores reach no parameter and no other block's read go, repeatedly (the
  index buffers of ``cache_index`` once the consumer reads a cache, :func:`drop_dead_blocks`);
* blocks that share loops after ``compute_at``/``reverse_compute_at`` get loops of their
  own (see :mod:`.distribute`);
* the pad producers, padded op block and crop consumer of ``pad_einsum`` become the op
  block again (see :mod:`.pad_einsum`);
* the constant fill and the interior copy of ``decompose_padding`` become one pad block
  again (see :mod:`.padding`), the copy's ``reindex`` first composed into it (see
  :mod:`.reindex_store`);
* ``T.where`` predicates of non-divisible splits are dropped (see :mod:`.predicates`);
* the separate init block of ``decompose_reduction`` (spatial iterators only, no reads,
  stores of constants) is put back as the ``init`` of the reduction block that next
  touches its buffers and stores to them at the same indices, over the same domain, when
  the init provably runs first (:mod:`.init_order`); an init stored to a ``reindex``
  buffer that a copy then moves into the buffer the update accumulates in is first made a
  fill of that buffer (:func:`forward_fills`);
* the partial and final blocks of ``rfactor`` are merged back (see :mod:`.rfactor`);
* copies whose readers load only what they copied are read through: ``read_at`` tiles,
  ``reindex_cache_read`` gathers, ``cache_index`` index buffers, ``pad_einsum`` pads whose
  padding no reader loads (see :mod:`.partial_copy`);
* blocks left sharing loops are tried again once copies were read through or removed
  (a tile copy read through may leave nothing reading the elements a nest skips);
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

import math

import attrs
import numpy as np

from tir.expr import Add, BufferLoad, FloatImm, IntImm, Mul, Sub, Var
from tir.function import PrimFunc
from tir.functor import post_order_stmts, pre_order_visit, remembered, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, IterKind, SeqStmt
from tir.buffer import BufferRegion
from tir.structural import same_ir

from .affine import affine, const_of
from .block_loops import clip_copies, move_block_loops
from .blockize import unblockize
from .coverage import block_realizes, same_index_copy
from .demand import restrict_pads, restrict_to_demand
from .distribute import distribute
from .ew_tags import REINDEX, folded_name
from .init_order import block_places, init_runs_first
from .padding import merge_padding
from .partial_copy import read_through_copies
from .pad_einsum import holds_blocks, named_pad, undup, unpad_einsum
from .loop_partition import merge_partitions
from .predicates import drop_predicates, is_true, loop_domain, restates_domain
from .radix_store import radix_stores
from .tags import cache_names
from .reindex_store import compose_reindex_copies
from .probe import (NotEvaluable, collect_vars, distinct, evaluate_points, flat_points, inside_points, scalar_int,
                    shape_envs, shape_vars, vars_in)
from .realize_check import SHAPE_VALUES, covers_domain
from .reduce_fuse import fuse_split_reductions, split_fused_copies, split_fused_reductions
from .unit_axes import align_unit_inits, pin_unstored_unit_vars, restore_unit_vars
from .rewrite import (EMPTY, drop_idle_loops, loaded, nest_of, own_nest, prune, stored, stores_in, whole_buffer_vars,
                      without_allocs)
from .rfactor import merge_rfactor
from .rfactor_guarded import merge_guarded_rfactor, tails_as_identity, trim_guarded_reductions

def _touches(block: Block, buf) -> bool:
    return any(r.buffer is buf for r in block.reads + block.writes)


def _loads(expr) -> list:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, (BufferLoad, Var)) else True)
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
    updates = stores_in(block.body)
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
    places = None
    symbols = frozenset(shape_vars(func))
    written = {key for b in blocks for key in stored(b)}
    for k, block in enumerate(blocks):
        stores = _init_of(block)
        if stores is None or any(_writer_count(blocks, x.buffer) != 2 for x in stores):
            continue
        found = _update_for(block, stores, blocks[k + 1:])
        if found is not None:
            places = block_places(func) if places is None else places
            if not init_runs_first(places, block, *found, symbols=symbols, written=written):
                continue  # an init that may reset summed elements: left as it is (no reduction)
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


def _constant_fill(block: Block, place, symbols) -> "BufferStore | None":
    """The store of a block that sets every element of its buffer to one constant (its
    loops run its whole domain, it stores at its variables, each once, in any order:
    ``reorder_block_iter_var`` permutes a block's variables, not its store)."""
    stores = _init_of(block)
    if stores is None or len(stores) != 1 or place is None:
        return None
    if covers_domain(*place, symbols) is not True:
        return None
    store = stores[0]
    if not isinstance(store.value, (FloatImm, IntImm)):
        return None
    return store if whole_buffer_vars(block, store.indices, store.buffer.shape) is not None else None


def forward_fills(func: PrimFunc) -> PrimFunc:
    """A constant fill of an intermediate that one copy alone reads, before it and in
    loops of its own, becomes a fill of the copy's destination (``decompose_reduction``
    then ``reindex``: the init sets the reindex buffer, a copy moves it to the buffer the
    update accumulates in); :func:`merge_inits` then pairs it with the update."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    places = block_places(func)
    symbols = frozenset(shape_vars(func))
    dropped, filled = set(), {}
    for k, block in enumerate(blocks):
        store = _constant_fill(block, places.get(id(block)), symbols)
        if store is None or id(store.buffer) in params or _writer_count(blocks, store.buffer) != 1:
            continue
        readers = [b for b in blocks if id(store.buffer) in loaded(b)]
        if len(readers) != 1 or readers[0] in blocks[:k] or id(readers[0]) in filled:
            continue
        copy = readers[0]
        body = copy.body
        if (copy.init is not None or not isinstance(body, BufferStore) or not isinstance(body.value, BufferLoad)
                or body.value.buffer is not store.buffer or body.buffer.dtype != store.buffer.dtype):
            continue
        (_, own), (_, theirs) = places[id(block)], places.get(id(copy), (None, ()))
        if own and theirs and own[0] is theirs[0]:
            continue  # sharing loops: the copy may run before parts of the fill
        dropped.add(id(block))
        filled[id(copy)] = attrs.evolve(copy, body=attrs.evolve(body, value=store.value), reads=())
    if not filled:
        return func

    def pre(n):
        if isinstance(n, BlockRealize) and id(n.block) in dropped:
            return EMPTY
        if isinstance(n, Block) and id(n) in filled:
            return filled[id(n)]
        return None

    return prune(transform(func, lambda n: None, pre))


def _copy_pair(block: Block, symbols=frozenset()) -> "tuple | None":
    """(destination, source, order) of a whole-buffer copy ``D[s...] = S[l...]`` (same
    dtype), ``s`` and ``l`` each the block's variables once, in any order (``reindex`` of a
    block whose iteration order was permuted copies a transposed buffer): ``order[d]`` is the
    source dimension read at the destination's dimension ``d``."""
    store = block.body
    if not isinstance(store, BufferStore) or block.init is not None or not isinstance(store.value, BufferLoad):
        return None
    load = store.value
    if load.buffer.dtype != store.buffer.dtype or len(load.indices) != len(store.indices):
        return None
    ivars = {id(iv.var): iv for iv in block.iter_vars}
    # an axis of extent 1 in both buffers may be indexed by the constant 0 on both sides
    # (a ``read_at`` copy's unit loop; :mod:`.block_loops`)
    units = [d for d, i in enumerate(store.indices) if const_of(i) == 0]
    if units != [d for d, i in enumerate(load.indices) if const_of(i) == 0] or any(
            const_of(store.buffer.shape[d]) != 1 or const_of(load.buffer.shape[d]) != 1 for d in units):
        return None
    keep = [d for d in range(len(store.indices)) if d not in units]
    pos_s = _var_positions([store.indices[d] for d in keep], ivars, keep)
    pos_l = _var_positions([load.indices[d] for d in keep], ivars, keep)
    def enumerated():
        if same_index_copy(store) and _fills_buffer(block, store, symbols):
            return store.buffer, load.buffer, tuple(range(len(store.indices)))
        return None

    if pos_s is None or pos_l is None:
        return enumerated()
    for v, iv in ivars.items():
        ext = affine(iv.dom.extent)
        if const_of(iv.dom.min) != 0 or ext is None:
            return None
        if affine(store.buffer.shape[pos_s[v]]) != ext or affine(load.buffer.shape[pos_l[v]]) != ext:
            # a domain past the buffers' end (a ``write_at`` copy of whole tiles)
            return enumerated()
    order = tuple(d if d in units else pos_l[id(i)] for d, i in enumerate(store.indices))
    if order != tuple(range(len(order))) and not REINDEX.search(block.name) and not _cache_named(block, store, load):
        return None  # a transposing copy named otherwise is an op (permute_dims of a fused kernel)
    return store.buffer, load.buffer, order


def _cache_named(block: Block, store: BufferStore, load: BufferLoad) -> bool:
    """The copy block is named after one of its buffers that lives in a cache scope
    (``reindex_cache_write``/``reindex_cache_read`` name their copy after the cache buffer,
    ``compute_local``, the printer numbering either when names repeat; an op of a fused
    kernel writes a global buffer)."""
    name = undup(block.name)
    if any(undup(b.name) == name and cache_scope(b) for b in (store.buffer, load.buffer)):
        return True
    # a cache of a cache (``compute_shared`` copying ``compute_shared_shared``): named after
    # the buffer less scope suffixes, a name that itself carries one (an op's block keeps
    # the op's bare name)
    return len(cache_names(name)) > 1 and any(
        cache_scope(b) and name in cache_names(undup(b.name)) for b in (store.buffer, load.buffer))


_MAX_POINTS = 1 << 16
"""The largest copy domain :func:`_fills_buffer` enumerates."""


def _fills_buffer(block: Block, store: BufferStore, symbols=frozenset()) -> bool:
    """Whether the store writes every element of its buffer over the block's domain (no
    index outside the buffer; at most ``_MAX_POINTS`` iterations), the function's shape
    variables ``symbols`` given each of a few values (:data:`.realize_check.SHAPE_VALUES`).
    For a copy with one index on both sides (``S[i // 8, i % 8] = P[i // 8, i % 8]``, tiles
    read with a halo: ``S[v * 4 + w] = P[v * 4 + w]`` for w in [0, 7)) how often or in which
    order an element is written does not matter."""
    used: set = set()
    for iv in block.iter_vars:
        collect_vars(iv.dom.min, used)
        collect_vars(iv.dom.extent, used)
    for e in list(store.buffer.shape) + list(store.indices):
        collect_vars(e, used)
    free = used - {iv.var for iv in block.iter_vars}
    if not free <= set(symbols):
        return False
    for env in shape_envs(free, SHAPE_VALUES):
        if not _fills_at(block, store, env):
            return False
    return True


def _fills_at(block: Block, store: BufferStore, env: dict) -> bool:
    ranges = [(scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)) for iv in block.iter_vars]
    shape = [scalar_int(s, env) for s in store.buffer.shape]
    if any(lo is None or ext is None or ext < 1 for lo, ext in ranges) or any(s is None for s in shape):
        return False
    count = math.prod(ext for _, ext in ranges)
    if count > _MAX_POINTS:
        return False
    grids = np.meshgrid(*[np.arange(lo, lo + ext, dtype=float) for lo, ext in ranges], indexing="ij")
    leaves = dict(env)
    leaves.update({iv.var: g.reshape(-1) for iv, g in zip(block.iter_vars, grids)})
    try:
        points = [evaluate_points(i, leaves, count) for i in store.indices]
    except (NotEvaluable, ValueError, TypeError, ArithmeticError):
        return False
    # an element copy between buffers of one shape (``same_index_copy``): an iteration past
    # an end of the destination reads past the same end of the source and changes no
    # element inside either (``write_at`` copies whole tiles; :mod:`.block_loops`)
    inside = inside_points(points, [(0, n) for n in shape], count)
    if inside is None:
        return False
    flat = flat_points(inside[0], [(0, n) for n in shape], inside[1])
    return flat is not None and distinct(flat, math.prod(shape)) == math.prod(shape)


_MAX_COPY_PASSES = 16
"""Copies a chain of cache primitives can stack (each pass removes one per buffer)."""

def _var_positions(indices, ivars: dict, dims: list) -> "dict | None":
    """id(block variable) -> its dimension (``dims[k]`` for ``indices[k]``), when ``indices``
    are the block's variables once each."""
    if len(indices) != len(ivars) or not all(isinstance(i, Var) and id(i) in ivars for i in indices):
        return None
    pos = {id(i): d for d, i in zip(dims, indices)}
    return pos if len(pos) == len(indices) else None


def _inverse(order: tuple) -> tuple:
    inv = [0] * len(order)
    for d, k in enumerate(order):
        inv[k] = d
    return tuple(inv)


def _readers(blocks, buf) -> list:
    return [b for b in blocks if any(r.buffer is buf for r in b.reads)]


def cache_scope(buf) -> bool:
    """A buffer in a scope that only a cache primitive creates here: a copy of a parameter
    into a global intermediate may be an op of a fused kernel (an identity broadcast_to),
    not a cache."""
    return buf.scope not in ("global", "")


def _cache_copy(block: Block, blocks: list, params: set, symbols=frozenset()) -> "tuple | None":
    """(buffer to drop, buffer that replaces it, order) when ``block`` is a cache_read copy
    of a parameter, or the cache_write (or reindex) copy of an intermediate that only its
    writer computes (into a parameter or another intermediate), in any scope. An access
    ``dropped[e]`` becomes ``kept[e[order[0]], e[order[1]], ...]``."""
    pair = _copy_pair(block, symbols)
    if pair is None or folded_op(block):
        return None
    dst, src, order = pair
    if id(src) in params and id(dst) not in params and _writer_count(blocks, dst) == 1:
        # a block loading the cache before the copy reads garbage, not the parameter
        here = blocks.index(block)
        if any(id(dst) in loaded(b) for b in blocks[:here]):
            return None
        # pad_einsum's pad producer once nothing reads its padding (:mod:`.demand`) is a copy
        return (dst, src, _inverse(order)) if cache_scope(dst) or named_pad(block, dst, src) else None
    if id(src) in params or _writer_count(blocks, src) != 1:
        return None
    writer = next(b for b in blocks if any(w.buffer is src for w in b.writes))
    if blocks.index(writer) > blocks.index(block):
        return None  # the copy runs before the intermediate is computed: it copies garbage
    others = [b for b in _readers(blocks, src) if b is not block and b is not writer]
    return (src, dst, order) if not others and _writer_count(blocks, dst) == 1 else None


def folded_op(block: Block) -> bool:
    """Whether a copy block carries an arithmetic op's compute tag (``T_divide``: TVM folded
    ``x / 1``; a ``mean`` over extent-1 axes leaves one): an op, not a cache copy (those are
    named after their buffer, ``T_divide_local``, or ``<tag>_reindex``)."""
    return folded_name(block.name) is not None


def drop_cache_copies(func: PrimFunc) -> PrimFunc:
    """``cache_read``/``cache_write``/``reindex`` copies removed: the cached buffer is
    renamed back (its indices permuted back when the copy transposed)."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    copies = {}
    # A copy chain (parameter -> cache -> parameter) reads as a cache_read or as a
    # cache_write; the block the primitive made is named after its cache buffer: dropped
    # first, so that the op's block (its compute tag) stays.
    symbols = frozenset(shape_vars(func))
    found = [(b, pair) for b in blocks if (pair := _cache_copy(b, blocks, params, symbols)) is not None]
    # a copy whose loops provably skip part of its domain copies part of the buffer: the
    # rest of the copy's destination is never written (dropping the copy would hide that)
    places = {id(r.block): (r, loops) for r, loops in block_realizes(func.body)}
    found = [(b, pair) for b, pair in found
             if id(b) not in places or covers_domain(*places[id(b)], symbols) is not False]
    found.sort(key=lambda bp: not any(bp[0].name == x.name and id(x) not in params for x in bp[1][:2]))
    for block, pair in found:
        seen = {id(x) for p in copies.values() for x in p[:2]}
        if pair is not None and not seen & {id(x) for x in pair[:2]}:
            copies[id(block)] = pair
    if not copies:
        return func
    rename = {id(old): (new, order) for old, new, order in copies.values()}
    names = _op_names_kept(blocks, copies)

    def pre(n):
        return EMPTY if isinstance(n, BlockRealize) and id(n.block) in copies else None

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)) and id(n.buffer) in rename:
            new, order = rename[id(n.buffer)]
            return attrs.evolve(n, buffer=new, indices=tuple(n.indices[k] for k in order))
        if isinstance(n, BufferRegion) and id(n.buffer) in rename:
            new, order = rename[id(n.buffer)]
            return attrs.evolve(n, buffer=new, region=tuple(n.region[k] for k in order))
        return without_allocs(n, rename) if isinstance(n, Block) else None

    if names:  # first (the blocks are the same objects while nothing else has changed)
        func = transform(func, lambda n: attrs.evolve(n, name=names[id(n)])
                         if isinstance(n, Block) and id(n) in names else None)

    return prune(transform(func, post, pre))


def _op_names_kept(blocks: list, copies: dict) -> dict:
    """``{id(writer): name}``: the writer of a dropped copy's source takes the copy's name
    when the copy is an op's block (a copy op: ``split``'s ``T_split_sections`` copying a
    ``cache_read`` buffer into its output) and the writer the cache copy a primitive made
    (named after its cache buffer, :func:`.partial_copy.cache_block`): the writer then
    stores the op's output and is the op's block, its compute tag the copy's."""
    from .partial_copy import cache_block

    out = {}
    for block in blocks:
        pair = copies.get(id(block))
        if pair is None:
            continue
        src, dst, _ = pair
        if not any(w.buffer is dst for w in block.writes) or cache_block(block, src):
            continue  # a cache_read copy (its readers load the source), or a cache's block
        writers = [b for b in blocks if any(w.buffer is src for w in b.writes)]
        if len(writers) == 1 and id(writers[0]) not in copies and cache_block(writers[0], src):
            out[id(writers[0])] = block.name
    return out


def _unit_reduce_vars(block: Block) -> "tuple | None":
    """(``block`` with its unit spatial variables that no store index uses made reduction
    variables, the positions of those nothing in the block reads at all), when it has an
    init; None otherwise. ``transform_block_layout`` and ``reindex`` turn a reduction
    variable of extent 1 spatial: as it takes the one value 0, its kind changes nothing the
    block computes. One nothing reads is dropped (:func:`unit_reductions`): dlight rebuilds a
    reduction's block from its loops, the unit axis of a ``keepdims`` output among them,
    written at a constant 0 (:func:`.unit_axes.restore_unit_vars` gives the output its
    variable back); it is no reduced axis."""
    if block.init is None:
        return None
    used = set()
    for store in stores_in(block.body) + stores_in(block.init):
        for i in store.indices:
            used.update(id(v) for v in _loads(i) if isinstance(v, Var))
    read: set = set()
    for part in (block.body, block.init):
        collect_vars(part, read)
    unit = [k for k, iv in enumerate(block.iter_vars) if iv.kind == IterKind.SPATIAL and id(iv.var) not in used
            and const_of(iv.dom.min) == 0 and const_of(iv.dom.extent) == 1]
    if not unit:
        return None
    ivs = tuple(attrs.evolve(iv, kind=IterKind.REDUCE) if k in unit else iv for k, iv in enumerate(block.iter_vars))
    return attrs.evolve(block, iter_vars=ivs), tuple(k for k in unit if block.iter_vars[k].var not in read)


def unit_reductions(func: PrimFunc) -> PrimFunc:
    """Reduction blocks with their unit spatial variables unused by the stores as reduction
    variables (see :func:`_unit_reduce_vars`)."""
    changed = {id(b): nb for b in func.blocks() if (nb := _unit_reduce_vars(b)) is not None}
    if not changed:
        return func

    def pre(n):
        if not isinstance(n, BlockRealize) or id(n.block) not in changed:
            return None
        block, unread = changed[id(n.block)]
        if len(unread) == len(block.iter_vars):
            unread = ()
        keep = [k for k in range(len(block.iter_vars)) if k not in unread]
        block = attrs.evolve(block, iter_vars=tuple(block.iter_vars[k] for k in keep))
        return attrs.evolve(n, iter_values=tuple(n.iter_values[k] for k in keep), block=block)

    return transform(func, lambda n: None, pre)


def _index_only_units(block: Block) -> list:
    """The reduction variables of extent 1 of a reduction ``block`` that it reads only in
    indices where another reduction variable, of a longer extent, is read too."""
    if block.init is None:
        return []
    unit = [iv for iv in block.iter_vars if iv.kind == IterKind.REDUCE and const_of(iv.dom.min) == 0
            and const_of(iv.dom.extent) == 1]
    longer = {id(iv.var) for iv in block.iter_vars if iv.kind == IterKind.REDUCE and const_of(iv.dom.extent) != 1}
    if not unit or not longer:
        return []
    indices, outside = [], set()

    def visit(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            indices.extend(n.indices)
            if isinstance(n, BufferStore):
                pre_order_visit(n.value, visit)
            for i in n.indices:
                pre_order_visit(i, lambda m: visit(m) if isinstance(m, BufferLoad) else True)
            return False
        if isinstance(n, Var):
            outside.add(id(n))
        return True
    for part in (block.body, block.init):
        pre_order_visit(part, visit)
    found = []
    for iv in unit:
        if id(iv.var) in outside:
            continue
        using = [i for i in indices if iv.var in vars_in(i)]
        forms = [affine(i) for i in using]
        if using and all(f is not None and any(isinstance(a, Var) and id(a) in longer for a in f) for f in forms):
            found.append(iv)
    return found


def _without_zero_terms(n):
    """An integer ``x * 0`` as 0, ``x + 0`` and ``x - 0`` as ``x``."""
    if not isinstance(n, (Add, Sub, Mul)) or not n.dtype.is_integer:
        return None
    a, b = const_of(n.a) == 0, const_of(n.b) == 0
    if isinstance(n, Mul) and (a or b):
        return IntImm(n.dtype, 0)
    if b:
        return n.a
    return n.b if a and isinstance(n, Add) else None


def drop_unit_reduction_terms(func: PrimFunc) -> PrimFunc:
    """Reduction blocks without their reduction variables of extent 1 that only pad an index
    of a longer reduction variable: dlight's GEMV rule splits a reduction ``k`` into
    ``r0 * 64 + r2 * 2 + t`` with ``r0`` and ``r2`` of extent 1 (``x[i, r0 * 64 + r2 * 2 +
    t]``); each takes the one value 0, its term is 0. A unit variable read anywhere else (a
    guard, a value) or alone in an index (a pool's unit window row, whose coefficient is
    the dilation) is kept."""
    drop = {}
    for b in func.blocks():
        found = _index_only_units(b)
        if found:
            drop[id(b)] = found
    if not drop:
        return func

    def pre(n):
        if not isinstance(n, BlockRealize) or id(n.block) not in drop:
            return None
        block = n.block
        gone = {id(iv) for iv in drop[id(block)]}
        zero = {iv.var: IntImm(iv.var.dtype, 0) for iv in drop[id(block)]}

        def zeroed(node):
            return transform(substitute(node, zero), _without_zero_terms)
        keep = [k for k, iv in enumerate(block.iter_vars) if id(iv) not in gone]
        block = attrs.evolve(block, iter_vars=tuple(block.iter_vars[k] for k in keep), body=zeroed(block.body),
                             init=None if block.init is None else zeroed(block.init),
                             reads=tuple(zeroed(r) for r in block.reads),
                             writes=tuple(zeroed(r) for r in block.writes))
        return attrs.evolve(n, iter_values=tuple(n.iter_values[k] for k in keep), block=block)

    return transform(func, lambda n: None, pre)


def _binds_constant(n) -> bool:
    """A BlockRealize binding some spatial block variable to a constant."""
    return isinstance(n, BlockRealize) and any(iv.kind == IterKind.SPATIAL and const_of(v) is not None
                                               for iv, v in zip(n.block.iter_vars, n.iter_values))


def drop_idle_vars(func: PrimFunc) -> PrimFunc:
    """``func`` without the spatial block variables bound to a constant that nothing in the
    block uses (``vi = T.axis.spatial(4, 0)`` of a scalar block whose domain
    ``pad_einsum`` padded): such a block runs once per loop iteration whatever that
    variable's domain says, so the domain is no extent of what it computes."""
    def post(n):
        if not _binds_constant(n):
            return None
        block = n.block
        used: set = set()
        for part in (block.body, block.init):
            if part is not None:
                collect_vars(part, used)
        keep = [(iv, v) for iv, v in zip(block.iter_vars, n.iter_values)
                if not (iv.kind == IterKind.SPATIAL and const_of(v) is not None and iv.var not in used)]
        if len(keep) == len(block.iter_vars):
            return None
        return attrs.evolve(n, iter_values=tuple(v for _, v in keep),
                            block=attrs.evolve(block, iter_vars=tuple(iv for iv, _ in keep)))

    found: list = []
    post_order_stmts(func.body, lambda n: found.append(n) if _binds_constant(n) else None)
    if not found:
        return func  # nothing bound to a constant: spare the rewrite's walk of every expression
    return transform(func, post)


_MAX_DEAD_PASSES = 8
"""Chains of dead copies :func:`drop_dead_blocks` removes at most (one link per pass)."""


def drop_dead_blocks(func: PrimFunc) -> PrimFunc:
    """``func`` without the blocks whose stores only reach intermediates that no other block
    reads (``cache_index`` precomputes index buffers that nothing reads once the consumer
    reads a cache), repeated while a removal leaves another such block (a chain of copies).
    Nothing a parameter holds changes. Functions with buffer aliases (``match_buffer``) are
    left alone: a read through an alias is not a read of the buffer's id."""
    params = {id(b) for b in func.buffers}
    for _ in range(_MAX_DEAD_PASSES):
        found = [r for r, _ in block_realizes(func.body) if r.block is not func.root_block]
        if any(r.block.match_buffers for r in found):
            return func
        leaves = [r for r in found if not holds_blocks(r.block)]
        # only a block storing to intermediates alone may be dead: the loads are read (a walk of
        # every expression) only when there is one
        stores = {id(r): stored(r.block) for r in leaves}
        if not any(keys and not any(k in params for k in keys) for keys in stores.values()):
            return func
        readers: dict = {}
        for r in leaves:
            for key in loaded(r.block):
                readers.setdefault(key, set()).add(id(r))
        dead = set()
        for r in leaves:
            keys = stores[id(r)]
            if keys and not any(k in params or readers.get(k, set()) - {id(r)} for k in keys):
                dead.add(id(r))
        if not dead:
            return func
        func = prune(transform(func, lambda n: None,
                               lambda n: EMPTY if isinstance(n, BlockRealize) and id(n) in dead else None))
    return func


def as_lowered(func: PrimFunc) -> PrimFunc:
    """``func`` with what schedule primitives only rearranged put back (and its loops of no
    iteration gone: :func:`.rewrite.drop_idle_loops`): ``loop_partition``'s
    copies merged, ``cache_index``'s index blocks read through (before anything rebuilds
    loops from a block's domain: TVM may declare a domain shorter than what its loops bind),
    the loops inside blocks moved out, ``blockize``'s outer blocks merged, dead blocks
    dropped. Where :func:`normalize` starts, and what :func:`.api._settle_copy` reads block
    names from."""
    return drop_dead_blocks(unblockize(move_block_loops(read_through_copies(merge_partitions(drop_idle_loops(func)),
                                                                            index_only=True))))


def _unpad_late(func: PrimFunc) -> PrimFunc:
    """:func:`.pad_einsum.unpad_einsum` again. A restored block keeps the padded loops, with
    a predicate restating its (unpadded) domain: its nest is rebuilt over that domain
    (:func:`.rewrite.own_nest`), which runs exactly the iterations the predicate let through.
    Unchanged when some restored block's nest is not that simple."""
    unpadded = unpad_einsum(func)
    if unpadded is func:
        return func
    dom = loop_domain(unpadded)
    left = []

    def pre(n):
        nest = nest_of(n) if isinstance(n, For) else None
        if nest is None or is_true(nest[1].predicate):
            return None
        loops, realize = nest
        if _padded_nest(loops, realize) and restates_domain(realize, dom):
            return own_nest(realize)
        left.append(realize)
        return None

    out = transform(unpadded, lambda n: None, pre)
    return func if left else out


def _padded_nest(loops: list, realize: BlockRealize) -> bool:
    """Each block variable bound to its own loop, from 0, running at least its domain (a
    variable of extent 1 may be bound to 0 instead: the unit axis of a batch of one)."""
    bound = [(iv, value) for iv, value in zip(realize.block.iter_vars, realize.iter_values)
             if not (const_of(value) == 0 and const_of(iv.dom.min) == 0 and const_of(iv.dom.extent) == 1)]
    if len(loops) != len(bound):
        return False
    for iv, value in bound:
        loop = next((lp for lp in loops if lp.loop_var is value), None)
        if loop is None or const_of(loop.min) != 0 or const_of(iv.dom.min) != 0:
            return False
        if same_ir(loop.extent, iv.dom.extent):
            continue  # (a symbolic extent: the batch of a function over n)
        ext, dom = const_of(loop.extent), const_of(iv.dom.extent)
        if ext is None or dom is None or ext < dom:
            return False
    return len({id(v) for _, v in bound}) == len(loops)


@remembered(16)  # the decomposition, then whole-function recognizers (tags.under_tag), ask again
def normalize(func: PrimFunc) -> "PrimFunc | None":
    """The function the recognizers should read (see the module docstring), or None."""
    return _normalize(_prepared(func))


@remembered(16)  # normalize, then pads_cut_readings of a function it left unread
def _prepared(func: PrimFunc) -> PrimFunc:
    """``func`` as lowered (:func:`as_lowered`), its unit-axis inits aligned: what
    :func:`_normalize` and its cut readings start from."""
    return align_unit_inits(as_lowered(func))


def pads_cut_readings(func: PrimFunc):
    """Further readings of ``func`` with ``pad_einsum``'s blocks cut to what the outputs need
    (:func:`.demand.restrict_pads`), for a function whose first one (:func:`normalize`)
    understood nothing: the function cut before it is normalized, then its normalized form cut
    and normalized again (reading a pad through can leave an op computing over its padded
    domain from a copy that no longer fills the padding: the elements no output needs). Each
    is yielded (None where normalizing refuses it) only when the cut changes something."""
    lowered = _prepared(func)
    cut = restrict_pads(lowered)
    if cut is not lowered:
        yield _normalize(cut)
    first = normalize(func)
    if first is not None:
        cut = restrict_pads(first)
        if cut is not first:
            yield _normalize(cut)


def _normalize(func: PrimFunc) -> "PrimFunc | None":
    # pad_einsum's pads read through before predicates go: a reader's predicate may be what
    # keeps it inside the unpadded part (a reduction split by the unpadded extent)
    # blocks cut to what the outputs need first: pad_einsum of an intermediate leaves a pad
    # producer of a buffer nothing writes, whose values reach no output (:mod:`.demand`)
    func = unpad_einsum(distribute(merge_inits(forward_fills(clip_copies(restrict_to_demand(func))))))
    # a dlight row reduction's rfactor with its split's tail guarded is merged while the
    # guard is there to read (:mod:`.rfactor_guarded`)
    merged = merge_guarded_rfactor(merge_padding(compose_reindex_copies(read_through_copies(func, pads_only=True))))
    func = drop_predicates(merged)
    if func is None:
        # dlight's GEMV rule: the guard of the tail, in the first of three stages, moved
        # into the sum (taken back out once the stages are merged)
        moved = tails_as_identity(merged)
        func = None if moved is merged else drop_predicates(moved)
    if func is None:
        return None
    func = drop_idle_vars(func)
    # a decompose_padding pair whose predicates only drop_predicates reads (digits of split
    # loops) is merged once they are gone
    func = merge_rfactor(merge_inits(forward_fills(merge_padding(compose_reindex_copies(func)))))
    # a reduction's init merged only now (dlight's decompose_reduction under thread loops):
    # the nest its two halves shared may be split now, and a padded reduction whose init
    # was apart (dlight's Matmul rule) read back through its pads
    func = _unpad_late(distribute(func))
    # A chain of cache copies (cache_read then reindex of the cache: parameter -> reindex ->
    # shared) loses one copy per pass: the second becomes a copy of the parameter itself.
    changed = False
    for _ in range(_MAX_COPY_PASSES):
        dropped = drop_cache_copies(func)
        if dropped is func:
            dropped = read_through_copies(func, within_domains=True)
        if dropped is func:
            # a copy at the digits of one fused variable (the thread coordinates of a
            # cache's write-back) gets a variable per axis: a copy the passes above read
            dropped = split_fused_copies(func)
        if dropped is func and changed:
            # a copy read through may leave no reader of the elements a block's shared loops
            # skip: the nest that distribute refused at first may now be split (its checks
            # are made on the function as it is now)
            dropped = distribute(func)
            changed = False  # (until a copy goes again)
        if dropped is func:
            break
        func, changed = dropped, True
    # a crop that reads a cache of the padded buffer (write_at after pad_einsum) does once
    # the cache copy is read through
    func = _unpad_late(func)
    # rfactor's partial block may write a reindex copy of the buffer the final block reads
    # (reindex applied to the partial block): merged once the copy is gone. Merged back, a
    # split reduction reduces over two variables a * F + b, made one; blocks rebuilt from
    # loops (dlight) that write a unit axis at a constant 0 get its variable back.
    # a store at a mixed-radix index of block variables (reindex after reverse_compute_inline
    # of a reshape) gets one variable over that dimension
    # (a variable split back into the digits its loops fuse may make one with another)
    split = _split_reductions_fused(split_fused_reductions(
        _split_reductions_fused(drop_unit_reduction_terms(unit_reductions(_rfactors_merged(merge_padding(func)))))))
    return radix_stores(restore_unit_vars(pin_unstored_unit_vars(trim_guarded_reductions(split))))


def _split_reductions_fused(func: PrimFunc) -> PrimFunc:
    """:func:`.reduce_fuse.fuse_split_reductions` until nothing more is fused: a reduction
    merged from dlight's GEMV stages reads ``r0 * 256 + t0 * 8 + r2 * 4 + t1``, four
    digits of one variable, made one a pair at a time."""
    for _ in range(_MAX_COPY_PASSES):
        fused = fuse_split_reductions(func)
        if fused is func:
            break
        func = fused
    return func


def _rfactors_merged(func: PrimFunc) -> PrimFunc:
    """:func:`.rfactor.merge_rfactor` until no pair is left: dlight's GEMV rule reduces in
    three stages (each thread's stripe, pairs of stripes, the threads); once two are merged,
    the merged block reduces over a split variable (``t0 * 2 + t1``), made one
    (:func:`.reduce_fuse.fuse_split_reductions`, unit reductions dropped) before it pairs
    with the stage before it."""
    for _ in range(_MAX_COPY_PASSES):
        merged = merge_rfactor(func)
        if merged is func:
            reduced = fuse_split_reductions(drop_unit_reduction_terms(unit_reductions(func)))
            merged = merge_rfactor(reduced)
            if merged is reduced:
                return func
        func = merged
    return func
