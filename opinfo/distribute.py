"""Undo ``compute_at`` / ``reverse_compute_at``: blocks that share loops get loops of their own.

After ``compute_at`` a producer block sits inside its consumer's loops and computes, for
each of their iterations, the region the consumer reads next (its bindings mix the shared
loops with its own, often under a ``T.where``); ``reverse_compute_at`` does the same with a
consumer under its producer's loops. What a block computes is fixed by its iteration
variables and its body, so each such block is moved to a nest of its own over its whole
iteration domain, in program order: the values of every element that is read do not
change, the recognizers see TVM's unscheduled form. A spatial block alone in its nest whose
loops run more iterations than it has elements, or skip elements that no block reads
(computed at a consumer's loops, the consumer then moved on), is given its own loops the
same way.

Only when it is sound: a block alone in its nest has a ``T.where`` that only restates its
iteration domain (see :func:`.predicates.drop_predicates`, or shown by enumerating constant
loops; nothing in the nest reads it, so a predicate skipping elements would be lost --
under a consumer's loops the predicate bounds the region the consumer reads), every
block of the nest is the only writer of what it writes (no
block computes a piece of a buffer that another completes) -- or, where several blocks of
the nest write one buffer (``decompose_padding``'s fill and interior copy under one batch
loop), every access of that buffer in the nest keeps its order against every conflicting
one once the blocks run one after the other (:func:`_order_kept`, by enumeration) --, no block's loops provably leave
part of its domain out (:func:`.realize_check.covers_domain`: a nest of its own would
compute elements the function never computes, and a reader would stop reading garbage)
unless no block reads any element left out (:func:`reads_within`), and no block under a
reduction's own loops reads what the reduction writes (it would read partial results). Nests holding anything but loops and blocks are left as they are;
so are nested blocks (a block inside another block's body).
"""
from __future__ import annotations

import functools
import math

import attrs
import numpy as np

from tir.expr import BufferLoad, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, pre_order_visit, transform
from tir.stmt import BlockRealize, BufferStore, For, IterKind, SeqStmt

from .affine import const_of
from .coverage import block_realizes as all_realizes
from .probe import (POINT_ERRORS, NotEvaluable, block_points, distinct, evaluate_points, flat_points, loop_points,
                    scalar_int, shape_envs, shape_vars)
from .predicates import loop_domain, restates_domain
from .realize_check import SHAPE_VALUES, covers_domain
from .rewrite import loaded, own_nest, stored


def _realizes(stmt, loops=()) -> "list | None":
    """[(BlockRealize, enclosing loops)] of a nest made of loops, sequences and blocks."""
    if isinstance(stmt, BlockRealize):
        return [(stmt, loops)]
    if isinstance(stmt, For):
        return _realizes(stmt.body, loops + (stmt,))
    if isinstance(stmt, SeqStmt):
        found = []
        for s in stmt.seq:
            part = _realizes(s, loops)
            if part is None:
                return None
            found.extend(part)
        return found
    return None


MAX_READ_POINTS = 1 << 20
"""Iterations of one block :func:`reads_within` enumerates at the most."""


def reads_within(func: PrimFunc, realize: BlockRealize, loops: tuple, symbols) -> bool:
    """Every element of the buffer ``realize`` stores to that any block of ``func`` loads
    (wherever and whenever, guards ignored: a superset) is one the block stores under its
    loops and predicate, the shape variables ``symbols`` at each of a few values; False when
    that cannot be enumerated, and for a parameter (an output is read whole by the caller:
    a block given loops of its own that wrote more of it, or past its end -- dlight's
    write-back of a padded tile, over the tile under a ``T.where`` -- would change it)."""
    store = realize.block.body
    if not isinstance(store, BufferStore) or any(store.buffer is b for b in func.buffers):
        return False  # a parameter: the caller reads every element of an output
    return all(_reads_within_at(func, realize, loops, store, env) for env in shape_envs(symbols, SHAPE_VALUES))


def _reads_within_at(func: PrimFunc, realize: BlockRealize, loops: tuple, store, env: dict) -> bool:
    """:func:`reads_within` with the shape variables at the values ``env`` gives."""
    written = _elements(realize, loops, [store.indices], store.buffer, env)
    if written is None:
        return False
    for r, lps in all_realizes(func.body):
        found = _load_sites(r.block, store.buffer)
        if not found:
            continue
        read = _elements(r, lps, found, store.buffer, env)
        if read is None or not np.isin(read, written).all():
            return False
    return True


def _load_sites(block, buf) -> list:
    """The index lists of the block's own loads of ``buf`` (body and init; a nested block's
    loads are its own)."""
    found: list = []
    for part in (block.body, block.init):
        if part is not None:
            pre_order_visit(part, lambda n: found.append(n.indices) or True
                            if isinstance(n, BufferLoad) and n.buffer is buf else not isinstance(n, BlockRealize))
    return found


def _elements(realize: BlockRealize, loops: tuple, index_lists: list, buf, shapes: dict) -> "np.ndarray | None":
    """Flat indices into ``buf`` of ``index_lists`` (in the block's variables) over the
    iterations of ``loops`` where the block's predicate holds, shape variables at the values
    ``shapes`` gives; None when not enumerable or outside the buffer."""
    dims = [scalar_int(d, shapes) for d in buf.shape]
    pts = block_points(realize, loops, shapes, MAX_READ_POINTS) if None not in dims else None
    if pts is None:
        return None
    doms = [(0, d) for d in dims]
    out = []
    try:
        for indices in index_lists:
            flat = flat_points([evaluate_points(i, pts.block_env, pts.count) for i in indices], doms, pts.count)
            if flat is None:
                return None
            out.append(flat)
    except POINT_ERRORS:
        return None
    return np.unique(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)


def _paths(stmt, path=()) -> list:
    """[(BlockRealize, path)] of a nest :func:`_realizes` reads: ``path`` holds, from the
    nest's top down, each loop (a For) and each position in a sequence (an int)."""
    if isinstance(stmt, BlockRealize):
        return [(stmt, path)]
    if isinstance(stmt, For):
        return _paths(stmt.body, path + (stmt,))
    return [p for k, s in enumerate(stmt.seq) for p in _paths(s, path + (k,))]


def _run_keys(path: tuple, pts) -> list:
    """Columns ordering a block's points by when they run (compared lexicographically with
    another block's of the same nest: equal up to where their paths part, at a sequence
    position)."""
    return [np.full(pts.count, float(step)) if isinstance(step, int) else
            np.asarray(pts.leaves[step.loop_var], dtype=float)[pts.keep] for step in path]


def _ranks(keys: list, elements: list) -> np.ndarray:
    """One rank per point in run order, the points of ``elements[n]`` ordered by the run-key
    columns ``keys[n]`` (:func:`_run_keys`); paths part at a sequence position, so a column a
    shorter path lacks is never compared."""
    depth = max(len(c) for c in keys)
    columns = [np.concatenate([c[d] if d < len(c) else np.full(len(e), -1.0) for c, e in zip(keys, elements)])
               for d in range(depth)]
    order = np.lexsort(columns[::-1]) if columns else np.zeros(0, dtype=np.int64)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _copied_before_read(stmt, realize: BlockRealize, buf, symbols) -> bool:
    """Every load of ``buf`` by another block of the nest ``stmt`` of an element ``realize``
    stores runs after ``realize`` first stored that element, at each of a few values of the
    shape variables; False when that cannot be enumerated. Then the loads read the block's
    values whether it runs there or in a nest of its own before (the other writers of
    ``buf``, outside the nest, run before it or after it either way)."""
    paths = _paths(stmt)
    return all(_copied_before_read_at(paths, realize, buf, env) for env in shape_envs(symbols, SHAPE_VALUES))


def _copied_before_read_at(paths: list, realize: BlockRealize, buf, env: dict) -> bool:
    dims = [scalar_int(d, env) for d in buf.shape]
    if None in dims:
        return False
    doms = [(0, d) for d in dims]
    keys, elements, writes = [], [], []
    try:
        for r, path in paths:
            sites = [realize.block.body.indices] if r is realize else _load_sites(r.block, buf)
            if not sites:
                continue
            loops = tuple(step for step in path if isinstance(step, For))
            pts = block_points(r, loops, env, MAX_READ_POINTS)
            if pts is None:
                return False
            cols = _run_keys(path, pts)
            for indices in sites:
                flat = flat_points([evaluate_points(i, pts.block_env, pts.count) for i in indices], doms, pts.count)
                if flat is None:
                    return False
                keys.append(cols)
                elements.append(flat)
                writes.append(r is realize)
    except POINT_ERRORS:
        return False
    rank = _ranks(keys, elements)
    flat_all = np.concatenate(elements).astype(np.int64)
    is_write = np.concatenate([np.full(len(e), w) for e, w in zip(elements, writes)])
    first = np.full(math.prod(dims), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, flat_all[is_write], rank[is_write])
    read, at = flat_all[~is_write], rank[~is_write]
    copied = first[read] != np.iinfo(np.int64).max
    return bool(np.all(first[read][copied] < at[copied]))


def _order_kept(stmt, buf, symbols) -> bool:
    """Several blocks of the nest ``stmt`` store to ``buf`` (decompose_padding's fill and
    interior copy computed at one batch loop): given nests of their own, in program order,
    every access of ``buf`` in the nest keeps its order against every conflicting one (the
    same element, one of the two a store), at each of a few values of the shape variables.
    Then every load reads the store it read, and every element ends with the store it
    ended with. False when that cannot be enumerated or a writer's body is not one store."""
    paths = _paths(stmt)
    for r, _ in paths:
        body = r.block.body
        if id(buf) in stored(r.block) and (r.block.init is not None or not isinstance(body, BufferStore)
                                           or body.buffer is not buf):
            return False
    return all(_order_kept_at(paths, buf, env) for env in shape_envs(symbols, SHAPE_VALUES))


def _order_kept_at(paths: list, buf, env: dict) -> bool:
    dims = [scalar_int(d, env) for d in buf.shape]
    if None in dims:
        return False
    doms, size = [(0, d) for d in dims], math.prod(dims)
    keys, elements, owners, writes = [], [], [], []
    try:
        for k, (r, path) in enumerate(paths):
            store = r.block.body
            sites = [(i, False) for i in _load_sites(r.block, buf)]
            if isinstance(store, BufferStore) and store.buffer is buf:
                sites.append((store.indices, True))
            if not sites:
                continue
            pts = block_points(r, tuple(step for step in path if isinstance(step, For)), env, MAX_READ_POINTS)
            if pts is None:
                return False
            cols = _run_keys(path, pts)
            for indices, is_write in sites:
                flat = flat_points([evaluate_points(i, pts.block_env, pts.count) for i in indices], doms, pts.count)
                if flat is None:
                    return False
                keys.append(cols)
                elements.append(flat.astype(np.int64))
                owners.append(k)
                writes.append(is_write)
    except POINT_ERRORS:
        return False
    if not elements:
        return True
    rank = _ranks(keys, elements)
    starts = np.cumsum([0] + [len(e) for e in elements])
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    # per block: the first and last rank at which it stores and loads each element
    first = {}
    last = {}
    for n, (e, k, w) in enumerate(zip(elements, owners, writes)):
        at = rank[starts[n]:starts[n + 1]]
        lo = first.setdefault((k, w), np.full(size, big, dtype=np.int64))
        hi = last.setdefault((k, w), np.full(size, small, dtype=np.int64))
        np.minimum.at(lo, e, at)
        np.maximum.at(hi, e, at)
    blocks = sorted({k for k, _ in first})
    for a in blocks:
        for b in blocks:
            if b <= a:
                continue
            # every access of block a conflicting with one of the later block b runs first
            for wa, wb in ((True, True), (True, False), (False, True)):
                if (a, wa) in last and (b, wb) in first and np.any(last[(a, wa)] >= first[(b, wb)]):
                    return False
    return True


def _loop_vars(expr) -> set:
    found = set()
    post_order_visit(expr, lambda n: found.add(id(n)) if isinstance(n, Var) else None)
    return found


def _own_reduction(realize: BlockRealize, others: list) -> bool:
    """No other block under the loops a reduction variable is bound to reads what the
    reduction writes (it would read partial results; producers computed there are fine)."""
    written = set(stored(realize.block))
    for other, loops in others:
        if not loaded(other.block) & written:
            continue
        inside = {id(lp.loop_var) for lp in loops}
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.kind != IterKind.SPATIAL and _loop_vars(value) & inside:
                return False
    return True


def _redundant(realize: BlockRealize, loops: tuple) -> bool:
    """A spatial block whose loops run more iterations than it has elements: it was
    computed at a consumer's loops and recomputes overlapping regions (a pad block under a
    pool's window loops), though it is alone in its nest."""
    if any(iv.kind != IterKind.SPATIAL for iv in realize.block.iter_vars) or realize.block.init is not None:
        return False
    sizes = [const_of(lp.extent) for lp in loops] + [const_of(iv.dom.extent) for iv in realize.block.iter_vars]
    if None in sizes:
        return False
    runs = elements = 1
    for x in sizes[:len(loops)]:
        runs *= x
    for x in sizes[len(loops):]:
        elements *= x
    return runs > elements


def _intermediate(func, realize: BlockRealize) -> bool:
    """The block stores to no parameter of ``func`` (an element it adds is the result's)."""
    params = {id(b) for b in func.buffers}
    return not any(key in params for key in stored(realize.block))


def _skips_unread(realize: BlockRealize, covers, within) -> bool:
    """A spatial block alone in its nest whose loops provably skip part of its domain, none
    of which any block reads (computed at a consumer's loops, which read every other column,
    the consumer then moved on): its nest of its own computes more, nothing reads it.
    ``covers`` and ``within``: :func:`.realize_check.covers_domain` and :func:`reads_within`
    of the block, asked only when needed."""
    if any(iv.kind != IterKind.SPATIAL for iv in realize.block.iter_vars) or realize.block.init is not None:
        return False
    return covers() is False and within()


MAX_COVER = 1 << 20
"""Loop iterations above which a block's predicate is not checked by enumeration."""


def _covers(realize: BlockRealize, loops: tuple) -> bool:
    """Over its loops (constant extents) the block, where its predicate holds, visits
    every point of its iteration domain and no other."""
    ext = [(const_of(lp.min), const_of(lp.extent)) for lp in loops]
    dom = [(const_of(iv.dom.min), const_of(iv.dom.extent)) for iv in realize.block.iter_vars]
    if any(None in p for p in ext + dom) or math.prod(e for _, e in ext) > MAX_COVER:
        return False
    env, size = loop_points(loops, ext)
    try:
        keep = evaluate_points(realize.predicate, env, size).astype(bool)
        points = [evaluate_points(v, env, size).astype(float)[keep] for v in realize.iter_values]
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError):
        return False
    flat = flat_points(points, dom, int(keep.sum()))
    size = math.prod(e for _, e in dom)
    return flat is not None and distinct(flat, size) == size


def _whole_domain(realize: BlockRealize, loops: tuple, dom: dict) -> bool:
    """The block's predicate only restates its iteration domain: in a nest of its own it
    computes the same elements (a ``T.where`` that skips some, ``k0 < 2`` of a domain of 3,
    would be lost). Shown by :func:`.predicates.drop_predicates`' rules or, for constant
    loops, by enumerating them."""
    return restates_domain(realize, dom) or _covers(realize, loops)


def _distributed(stmt, writers: dict, dom: dict, func, symbols=frozenset()) -> "list | None":
    found = _realizes(stmt)
    if not found:
        return None

    # each block's coverage and whether its readers stay inside what it writes: asked once
    @functools.cache
    def covers(k: int) -> "bool | None":  # True, False, or None (unknown)
        return covers_domain(*found[k], symbols)

    @functools.cache
    def within(k: int) -> bool:
        return reads_within(func, *found[k], symbols)

    kept: dict = {}

    def order_kept(key, buf) -> bool:
        if key not in kept:
            kept[key] = _order_kept(stmt, buf, symbols)
        return kept[key]

    if len(found) == 1:
        realize, loops = found[0]
        skips = functools.cache(lambda: _skips_unread(realize, lambda: covers(0), lambda: within(0)))
        if not _redundant(realize, loops) and not skips():
            return None
        if not _whole_domain(realize, loops, dom) and not (skips() and _intermediate(func, realize)):
            # alone in its nest: a T.where that skips points bounds no consumer's region -- but
            # for an intermediate none of whose skipped points is read (a pad block computing
            # the rows a strided pool reads, its T.where bounding the pool's output rows)
            return None
    local = _writer_counts(r.block for r, _ in found)
    for k, (realize, loops) in enumerate(found):
        shared = [b for b in stored(realize.block) if writers.get(b, 0) != 1]
        if any(local[b] != 1 and not order_kept(b, stored(realize.block)[b]) for b in shared):
            return None
        if shared and any(b in loaded(realize.block) for b in shared):
            return None  # what it computes depends on when the other writers ran
        # alone in its nest, its loops skipping only elements nothing reads (a fill that
        # decompose_padding made of the padded region its reader loads): written whole in
        # loops of its own, the elements added are never read
        fill_of_read = shared and covers(k) is False and len(found) == 1 and within(k)
        if shared and not fill_of_read and (
                covers(k) is not True or not isinstance(realize.block.body, BufferStore)
                or not all(_copied_before_read(stmt, realize, stored(realize.block)[b], symbols) for b in shared)):
            # a buffer other statements write too (decompose_padding's fill before the
            # interior copy compute_at placed here): moved, the block must store exactly
            # what it stored, its whole domain, or the others' values would change; and
            # whatever the nest's other blocks read of it must have been stored by then,
            # or they read the others' values (a fill's zero) where it now stands before
            return None
        if not _own_reduction(realize, found[:k] + found[k + 1:]):
            return None
        if covers(k) is False and not within(k):
            # the shared loops provably leave part of the block's domain out: in a nest of
            # its own it would compute elements the function never computes (and a reader
            # of them would no longer read garbage) -- unless no block reads any of them
            # (compute_at computing only the region its consumer reads)
            return None
    return [own_nest(r) for r, _ in found]


def _writer_counts(blocks) -> dict:
    """How many of ``blocks`` store to each buffer (keys as :func:`.rewrite.stored` gives)."""
    counts: dict = {}
    for b in blocks:
        for key in stored(b):
            counts[key] = counts.get(key, 0) + 1
    return counts


def distribute(func: PrimFunc) -> PrimFunc:
    """``func`` with every block that shares loops with another in a nest of its own."""
    root = func.root_block
    if root is None:
        return func
    writers = _writer_counts(func.blocks())
    stmts = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    dom = loop_domain(func)
    symbols = frozenset(shape_vars(func))
    out, changed = [], False
    for s in stmts:
        parts = _distributed(s, writers, dom, func, symbols)
        changed |= parts is not None
        out.extend(parts if parts is not None else [s])
    if not changed:
        return func
    new_root = attrs.evolve(root, body=SeqStmt(tuple(out)) if len(out) > 1 else out[0])
    return transform(func, lambda n: None, lambda n: new_root if n is root else None)
