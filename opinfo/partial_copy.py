"""Copies that their readers can read through (``read_at``, ``reindex_cache_read``,
``cache_index``, ``pad_einsum``).

TVM's ``read_at`` copies, under a loop of the consumer, only the tile of a buffer the
consumer reads in that iteration: after :mod:`.block_loops` and :mod:`.distribute` the copy
is a block ``S[i...] = P[i...]`` (one index tuple on both sides, buffers of one shape) over
a domain that writes only part of ``S`` -- a strided convolution reads every other row, so
only those are copied. ``reindex_cache_read`` gathers what the consumer reads into a buffer
indexed by the consumer's variables: ``S[v0, v1, r] = P[v0, v1 * 2 + r]``. ``cache_index``
stores an index expression, ``S[v] = 1 <= v and v < 10`` (no loads), in blocks named
``index_<k>``. ``pad_einsum``'s pad producer ``S[w] = if_then_else(w < 6, P[w], 0)`` copies
``P[w]`` where its guard holds. None is a whole-buffer cache copy
(:func:`.normalize._copy_pair`), yet every load ``S[e...]`` may read the source directly --
``P[e...]``, ``P[e0, e1 * 2 + e2]`` (the copy's load with its variables replaced by the
indices read), the index expression at ``e`` -- when

* the copy is the only block writing ``S`` and sits in a statement of the function's
  top-level sequence before every statement reading ``S``; a copy of a load is named as
  the cache primitives name theirs (after its cache buffer, a name ending in a scope
  suffix or ``_reindex``: an op's block storing a gather into a ``cache_write`` buffer is
  an op) and stores into a cache scope with the source's dtype, a pad as ``pad_einsum``
  names its buffers (:func:`.pad_einsum.pad_source`);
* nothing writes ``P`` in or after the copy's statement (every reader then sees ``P``'s
  final value, which is what the copy stored); and
* every element a reader loads from ``S`` is one the copy stores (where a pad's guard
  holds): checked by enumerating the copy's iterations (predicate applied, variables in
  their domains) and every reader's (all iterations its loops run, guards around the loads
  ignored: more is asked than read; within its domain once predicates were dropped as
  implied by it) with the function's shape variables at a few values.

Anything not enumerable (a loop extent that is not constant, an index that does not
evaluate, more than :data:`MAX_POINTS` iterations) keeps the copy.
"""
from __future__ import annotations

import math
import re

import attrs
import numpy as np

from tir.builder import access_regions
from tir.expr import BufferLoad, Cast, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, SeqStmt

from .coverage import copy_order, same_index_copy
from .pad_einsum import pad_source, undup
from .probe import (POINT_ERRORS, block_points, evaluate_points, flat_points, inside_points, scalar_int, shape_envs,
                    shape_vars)
from .rewrite import EMPTY, prune, stored
from .realize_check import SHAPE_VALUES
from .tags import cache_names

MAX_POINTS = 1 << 20
"""Loop iterations of one block above which the copy is kept."""


def top_positions(func) -> dict:
    """id(block) -> (position of the statement of the root's top-level sequence holding it,
    its BlockRealize, the loops between the root and it) for the blocks directly under the
    root (no block between); the root itself and blocks nested in others are absent."""
    root = func.root_block
    body = root.body if root is not None else func.body
    stmts = body.seq if isinstance(body, SeqStmt) else (body,)
    places: dict = {}

    def walk(stmt, k, loops):
        if isinstance(stmt, BlockRealize):
            places[id(stmt.block)] = (k, stmt, loops)
        elif isinstance(stmt, For):
            walk(stmt.body, k, loops + (stmt,))
        elif isinstance(stmt, SeqStmt):
            for s in stmt.seq:
                walk(s, k, loops)

    for k, stmt in enumerate(stmts):
        walk(stmt, k, ())
    return places


def _dst_loads(block: Block, dst) -> list:
    found: list = []
    for part in (block.body, block.init):
        if part is not None:
            post_order_visit(part, lambda n: found.append(n) if isinstance(n, BufferLoad) and n.buffer is dst else None)
    return found


_INDEX_BLOCK = re.compile(r"index_\d+$")
"""The name ``cache_index`` gives the blocks computing an index expression into a buffer."""


def copy_form(block: Block) -> "tuple | None":
    """(S, the buffers the block loads, index map, guard) for a copy block ``S[...] = P[...]``,
    a ``cache_index`` block ``S[v...] = e(v)`` (no loads) or ``pad_einsum``'s pad producer
    (``guard``: where it copies; None for the others): the map takes the indices a reader
    loads from ``S`` to the expression to load instead; None for any other block."""
    from .normalize import cache_scope, folded_op  # normalize imports this module

    store = block.body
    if not isinstance(store, BufferStore) or block.init is not None:
        return None
    dst = store.buffer
    padded = pad_source(block)
    if padded is not None:
        # pad_einsum's producer: read where its guard holds, it copies the source
        load = store.value.args[1]
        return dst, (load.buffer,), lambda idx: BufferLoad(load.buffer, tuple(idx)), store.value.args[0]
    ivars = {iv.var for iv in block.iter_vars}
    by_vars = len(store.indices) == len(ivars) == len(set(store.indices)) and \
        all(isinstance(i, Var) and i in ivars for i in store.indices)
    if not isinstance(store.value, BufferLoad):
        # an index expression cache_index stored: no loads, the store indexed by the
        # block's variables
        if not _INDEX_BLOCK.match(block.name) or not by_vars or _has_load(store.value):
            return None
        return dst, (), lambda idx: _substituted(store.value, store.indices, idx), None
    load = store.value
    # a read_at/write_at tile copy (annotated ``auto_copy``) is a copy whatever the scope
    # its destination has now (a cache chain undone renames it to the global buffer)
    auto = _auto_copy(block)
    if folded_op(block) or not (auto or cache_scope(dst)) or dst is load.buffer or dst.dtype != load.buffer.dtype:
        return None
    if not auto and not cache_block(block, dst):
        return None  # an op's block storing into a cache (cache_write of a take): the op stays
    order = copy_order(store)
    if order is not None:
        # the load indexes the source with the store's index expressions, in the order
        # ``order`` gives (a read_at tile copy into a transposed cache: S[c, q] = P[q, c])
        return dst, (load.buffer,), lambda idx: BufferLoad(load.buffer, _permuted(idx, order)), None
    if not by_vars:
        return None
    # the store indexed by the block's variables, each once (reindex_cache_read): the
    # load with those replaced
    return dst, (load.buffer,), lambda idx: _substituted(load, store.indices, idx), None


def _permuted(idx, order: tuple) -> tuple:
    """The source's indices for ``idx`` into the copy: ``order[d]`` is the source axis the
    copy's ``d``-th index reads (:func:`.coverage.copy_order`)."""
    out = [None] * len(order)
    for d, k in enumerate(order):
        out[k] = idx[d]
    return tuple(out)


def _auto_copy(block: Block) -> bool:
    """The block is one of TVM's ``read_at``/``write_at`` copies (annotated ``auto_copy``)."""
    value = block.annotations.get("auto_copy") if block.annotations else None
    return value is not None and bool(getattr(value, "value", value))


def cache_block(block: Block, dst) -> bool:
    """The block is the copy a cache primitive made: named after its cache buffer (less
    the scope suffixes a later cache of the cache added: ``pad_temp_local`` writing
    ``pad_temp_local_shared``), a name that itself ends in a scope suffix or ``_reindex``
    (an op's block keeps the op's name, ``advanced_index`` writing ``advanced_index_shared``)."""
    name = undup(block.name)
    return name in cache_names(undup(dst.name)) and (len(cache_names(name)) > 1 or name.endswith("_reindex"))


def _substituted(expr, variables, values):
    """``expr`` with ``variables`` replaced by ``values`` (cast to each variable's dtype:
    a reader's indices may be int32 where the copy's variables are int64)."""
    return substitute(expr, {var: value if value.dtype == var.dtype else Cast(var.dtype, value)
                             for var, value in zip(variables, values)})


def _has_load(expr) -> bool:
    found: list = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def _readable_through(block: Block, form: tuple, blocks: list, params: set, places: dict,
                      symbols: frozenset, within_domains: bool) -> bool:
    """Whether the readers of the copy ``block`` may load its source instead (module
    docstring)."""
    dst, sources, _, guard = form
    if id(dst) in params or id(block) not in places:
        return False
    here, realize, loops = places[id(block)]
    readers = []
    for other in blocks:
        if other is block:
            continue
        writes = stored(other)
        if id(dst) in writes:
            return False  # another writer of the copy
        if any(id(src) in writes for src in sources) and \
                (id(other) not in places or places[id(other)][0] >= here):
            return False  # a source changes after the copy ran
        if _dst_loads(other, dst) or any(r.buffer is dst for r in other.reads):
            if id(other) not in places or places[id(other)][0] <= here:
                return False
            readers.append(other)
    if not readers:
        return False
    return all(_covered(block, realize, loops, readers, places, dst, guard, env, within_domains)
               for env in shape_envs(set(symbols), SHAPE_VALUES))


def read_through_copies(func: PrimFunc, pads_only: bool = False, within_domains: bool = False,
                        index_only: bool = False) -> PrimFunc:
    """``func`` with the copies its readers can read through removed (module docstring);
    the same object when there is none. ``pads_only``: only ``pad_einsum``'s pad producers
    (read through before the readers' predicates are dropped, which keep them inside the
    unpadded part; the cache copies wait until the cache chains are undone).
    ``index_only``: only ``cache_index``'s index blocks (they load nothing), read through
    before any loop is rebuilt from a block's domain: TVM may declare a domain shorter than
    the values the block's split loops bind (3 where they bind 0..8), and its code stores
    what the loops bind.
    ``within_domains``: the function's predicates were dropped as implied by the blocks'
    domains (:func:`.predicates.drop_predicates`), so a reader runs the points of its domain
    only."""
    blocks = list(func.blocks())
    params = {id(b) for b in func.buffers}
    places = top_positions(func)
    symbols = frozenset(shape_vars(func))
    chosen: dict = {}  # id(copy block) -> form
    used: set = set()
    for block in blocks:
        form = copy_form(block)
        if form is None or (pads_only and form[3] is None) or (index_only and form[1]):
            continue
        touched = {id(form[0])} | {id(b) for b in form[1]}
        if touched & used:
            continue
        if _readable_through(block, form, blocks, params, places, symbols, within_domains):
            chosen[id(block)] = form
            used |= touched
    return read_through(func, chosen) if chosen else func


def read_through(func: PrimFunc, chosen: dict) -> PrimFunc:
    """``func`` with the copy blocks ``chosen`` (id(block) -> :func:`copy_form`) removed and
    their destinations' loads reading the sources instead."""
    blocks = list(func.blocks())
    maps = {id(dst): (sources, index_map) for dst, sources, index_map, _ in chosen.values()}

    # a block copying an index buffer (pad_einsum's crop of a padded one) becomes an index
    # block itself once the index expression is read into it (it then stores an expression
    # of its variables, loading nothing): named as the one it read, it is read through in turn
    index_names = {id(chosen[id(b)][0]): b.name for b in blocks if id(b) in chosen and not chosen[id(b)][1]}

    def pre(n):
        if not isinstance(n, BlockRealize):
            return None
        if id(n.block) in chosen:
            return EMPTY
        store = n.block.body
        if isinstance(store, BufferStore) and isinstance(store.value, BufferLoad) and n.block.init is None \
                and id(store.value.buffer) in index_names:
            value = maps[id(store.value.buffer)][1](store.value.indices)
            block = attrs.evolve(n.block, body=attrs.evolve(store, value=value), reads=(),
                                 name=index_names[id(store.value.buffer)])
            return attrs.evolve(n, block=block)
        return None

    def post(n):
        if isinstance(n, BufferLoad) and id(n.buffer) in maps:
            return maps[id(n.buffer)][1](n.indices)
        if isinstance(n, Block) and (any(id(r.buffer) in maps for r in n.reads)
                                     or any(id(b) in maps for b in n.alloc_buffers)):
            return attrs.evolve(n, reads=_reads_after(n, maps),
                                alloc_buffers=tuple(b for b in n.alloc_buffers if id(b) not in maps))
        return None

    return prune(transform(func, post, pre))


def _reads_after(block: Block, maps: dict) -> tuple:
    """The block's read regions with those of the removed blocks' buffers replaced by the
    regions its body now loads of their sources."""
    sources = {id(src) for srcs, _ in maps.values() for src in srcs}
    loaded_now = {id(r.buffer): r for r in access_regions([block.body, block.init])}
    kept = [loaded_now.get(id(r.buffer), r) if id(r.buffer) in sources else r
            for r in block.reads if id(r.buffer) not in maps]
    have = {id(r.buffer) for r in kept}
    for r in block.reads:
        if id(r.buffer) in maps:
            for src in maps[id(r.buffer)][0]:
                if id(src) not in have and id(src) in loaded_now:
                    kept.append(loaded_now[id(src)])
                    have.add(id(src))
    return tuple(kept)


def _covered(block, realize, loops, readers, places, dst, guard, env, within_domains) -> bool:
    """Whether, shape variables at ``env``, every element the readers load from ``dst``
    lies inside it and is one the copy stores (where ``guard``, when given, holds)."""
    shape = [scalar_int(s, env) for s in dst.shape]
    if any(s is None or s < 0 for s in shape):
        return False
    size = math.prod(shape)
    doms = [(0, s) for s in shape]
    # what the copy's loops run, in its domain or not (TVM's code ignores the declared
    # domain; a binding outside it is refused elsewhere unless its block is read through)
    pts = block_points(realize, loops, env, MAX_POINTS, in_domain=False)
    if pts is None:
        return False
    try:
        stored = [evaluate_points(i, pts.block_env, pts.count) for i in block.body.indices]
    except POINT_ERRORS:
        return False
    inside = np.ones(pts.count, dtype=bool)
    if guard is not None:
        try:
            inside &= np.broadcast_to(np.asarray(evaluate_points(guard, pts.block_env, pts.count)) != 0, (pts.count,))
        except POINT_ERRORS:
            return False
    for p, (lo, ext) in zip(stored, doms):
        p = np.asarray(p, dtype=float)
        inside &= (p >= lo) & (p < lo + ext) & (p == np.floor(p))
    flat = flat_points([np.asarray(p, dtype=float)[inside] for p in stored], doms, int(inside.sum()))
    if flat is None:
        return False
    written = np.zeros(size, dtype=bool)
    written[flat] = True
    same = guard is None and same_index_copy(block.body)
    for reader in readers:
        _, realize_r, loops_r = places[id(reader)]
        # every iteration the loops run (in the block's domain or not: more is asked than
        # read) -- but once predicates are gone (``within_domains``: dropped only when the
        # block's domain implies them) the iterations in the domain are those that run
        pts = block_points(realize_r, loops_r, env, MAX_POINTS, in_domain=within_domains)
        if pts is None:
            return False
        for load in _dst_loads(reader, dst):
            try:
                read = [evaluate_points(i, pts.block_env, pts.count) for i in load.indices]
            except POINT_ERRORS + (KeyError,):
                return False
            if same:
                # an element copy of a buffer of the same shape: a load past an end of the
                # copy's buffer is, read through, one past the same end of the source
                read = inside_points(read, doms, pts.count)
                if read is None:
                    return False
                flat = flat_points(read[0], doms, read[1])
            else:
                flat = flat_points(read, doms, pts.count)
            if flat is None or not written[flat].all():
                return False
    return True

