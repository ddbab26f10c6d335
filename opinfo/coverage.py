"""Does every block write the whole of a buffer it alone writes?

An op's output is all of its buffer: ``y[i, j] = x[i + 2, j]`` over rows 0..1 of a 4-row
``y`` is no ``strided_slice`` (rows 2..3 are never written), and ``y[i] = sum(x[i, :])`` over
3 of 4 rows is no ``sum``. Recognizers read a block's expression and take the output's
extents from its buffer, so a block that covers only part of it must be caught before:
:func:`partial_writes` finds the blocks that provably write less than their buffer.

Only what is certain counts. A block iteration variable covers ``[0, extent)`` of its
domain when its binding is a mixed-radix sum of loop variables (``i0 * 4 + i1`` over loops
of extents (E, 4): all of ``[0, 4 E)``); it provably covers less when that range is shorter
than its domain, both constants. A store index that is a block variable covers its axis
when the variable's domain is the axis' extent. Anything else -- fused div/mod bindings,
nested blocks bound to outer block variables, symbolic extents that differ, buffers with
several writers (decomposed reductions, scatters) -- is not judged."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from tir.expr import BufferLoad, Call, IntImm, Select, Var
from tir.functor import post_order_stmts, pre_order_stmts, pre_order_visit, substitute
from tir.stmt import Block, BlockRealize, BufferStore, For, LetStmt, SeqStmt

from .affine import ONE, affine, const_of, equal_extents
from .intermediate_check import guarded_loads
from .probe import (POINT_ERRORS, collect_vars, evaluate_points, loops_points, scalar_int, shape_envs, shape_vars,
                    vars_in)
from .semantic import stages_of

SPAN_POINTS = 1 << 16
"""Loop iterations above which :func:`predicate_spans` enumerates nothing."""


def block_realizes(stmt, loops=()):
    """(BlockRealize, enclosing loops since the enclosing block) for every block below."""
    if isinstance(stmt, BlockRealize):
        yield stmt, loops
        yield from block_realizes(stmt.block.body, ())
        if stmt.block.init is not None:
            yield from block_realizes(stmt.block.init, ())
    elif isinstance(stmt, For):
        yield from block_realizes(stmt.body, loops + (stmt,))
    elif isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            yield from block_realizes(s, loops)
    elif isinstance(stmt, Block):
        yield from block_realizes(stmt.body, ())


def _reach(value, loops) -> "int | None":
    """``P`` when ``value`` takes exactly the values ``[0, P)`` over ``loops`` (a mixed-radix
    sum of loop variables with constant extents), else None."""
    form = affine(value)
    if form is None or form.get(ONE, 0) != 0:
        return None
    extents = {}
    for loop in loops:
        if const_of(loop.min) != 0 or const_of(loop.extent) is None:
            continue
        extents[loop.loop_var] = const_of(loop.extent)
    terms = []
    for atom, coef in form.items():
        if atom is ONE:
            continue
        if not isinstance(atom, Var) or atom not in extents or coef <= 0:
            return None
        terms.append((coef, extents[atom]))
    size = 1
    for coef, extent in sorted(terms):
        if coef != size:
            return None
        size *= extent
    return size


def _short_vars(realize: BlockRealize, loops) -> set:
    """Block variables whose binding provably reaches less than their domain."""
    short = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
        if lo != 0 or ext is None:
            continue
        reach = _reach(value, loops)
        if reach is not None and reach < ext:
            short.add(iv.var)
    return short


def _short_store(block: Block, short: set, indices, buffer, outer=None) -> bool:
    doms = dict(outer or {})
    doms.update({iv.var: iv.dom for iv in block.iter_vars})
    for index, axis in zip(indices, buffer.shape):
        if not isinstance(index, Var) or index not in doms:
            continue
        if index in short:
            return True
        dom = doms[index]
        ext, size = const_of(dom.extent), const_of(axis)
        if const_of(dom.min) == 0 and ext is not None and size is not None and ext < size:
            return True
    return False


def partial_writes(func) -> bool:
    """True when some block is the only writer of an output (a parameter buffer) and
    provably writes part of it (a loop of no iteration around it writes none), or when a
    block provably writes outside a buffer (:func:`out_of_bounds_writes`). Intermediate buffers may be written in part: TVM's pad
    block after ``compute_at`` fills only the columns its consumer reads. Blocks whose
    stores reach nothing a parameter holds are not judged for writes outside a buffer
    (:func:`.normalize.drop_dead_blocks`; ``cache_index`` leaves index blocks nothing reads
    that bind past their buffer): buffers are disjoint here, and no output changes."""
    from .normalize import drop_dead_blocks  # normalize imports this module

    if out_of_bounds_writes(drop_dead_blocks(func)):
        return True
    params = {id(b) for b in func.buffers}
    if _idle_writer(func.body, params):
        return True
    found = list(block_realizes(func.body))
    writers: dict = {}
    for realize, _ in found:
        for key in {id(s.buffer) for s in stages_of(realize.block) if s.buffer is not None}:
            writers[key] = writers.get(key, 0) + 1
    for realize, loops, outer, outer_short in _nested(func.body, (), {}, frozenset()):
        block = realize.block
        if not block.iter_vars:
            continue
        short = _short_vars(realize, loops) | outer_short
        for stage in stages_of(block):
            buffer = stage.buffer
            if (buffer is None or id(buffer) not in params or writers.get(id(buffer)) != 1
                    or len(stage.indices) != len(buffer.shape)):
                continue
            if _short_store(block, short, stage.indices, buffer, outer):
                return True
    return False


def _idle_writer(body, params: set) -> bool:
    """A loop of no iteration (constant extent 0) around a store to an output."""
    found = []

    def visit(n):
        if found:
            return False
        if isinstance(n, For) and const_of(n.extent) == 0:
            post_order_stmts(n.body, lambda m: found.append(m)
                             if isinstance(m, BufferStore) and id(m.buffer) in params else None)
            return False
        return True

    pre_order_stmts(body, visit)
    return bool(found)


def _nested(stmt, loops, outer: dict, outer_short: frozenset):
    """As :func:`block_realizes`, with the domains (``outer``) and short variables of the
    enclosing blocks: a blockized inner block stores at its outer block's variables
    (``compute[v_i0_o, v_i1_o, v_i3_i]``), which cover no more than their own domains."""
    if isinstance(stmt, BlockRealize):
        yield stmt, loops, outer, outer_short
        block = stmt.block
        inner = dict(outer)
        inner.update({iv.var: iv.dom for iv in block.iter_vars})
        inner_short = outer_short | frozenset(_short_vars(stmt, loops))
        yield from _nested(block.body, (), inner, inner_short)
        if block.init is not None:
            yield from _nested(block.init, (), inner, inner_short)
    elif isinstance(stmt, For):
        yield from _nested(stmt.body, loops + (stmt,), outer, outer_short)
    elif isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            yield from _nested(s, loops, outer, outer_short)
    elif isinstance(stmt, Block):
        yield from _nested(stmt.body, (), outer, outer_short)


def _inner_stores(stmt, loops: dict, out: list, lets: "list | None" = None) -> None:
    """(store, {loop var: (min, extent)} of the loops inside the block around it) for the
    stores of a block body, not below an ``if`` (a guard may keep an index in bounds) nor in
    nested blocks (judged on their own); through ``let`` bindings (a tuple reduction's
    update), whose (value, loops) go to ``lets`` when given."""
    if isinstance(stmt, BufferStore):
        out.append((stmt, loops))
    elif isinstance(stmt, For):
        lo, ext = const_of(stmt.min), const_of(stmt.extent)
        if lo is not None and ext is not None:
            _inner_stores(stmt.body, {**loops, stmt.loop_var: (lo, ext)}, out, lets)
    elif isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            _inner_stores(s, loops, out, lets)
    elif isinstance(stmt, LetStmt):
        if lets is not None:
            lets.append((stmt.value, loops))
        _inner_stores(stmt.body, loops, out, lets)


def index_range(index, ranges: dict) -> "tuple | None":
    """(lowest, highest) value of affine ``index`` over ``ranges`` (var -> (min, extent),
    every value taken), or None when not known."""
    form = affine(index)
    if form is None:
        return None
    lo = hi = form.get(ONE, 0)
    for atom, coef in form.items():
        if atom is ONE:
            continue
        if atom not in ranges:
            return None
        a, ext = ranges[atom]
        if ext <= 0:
            return None
        lo += min(coef * a, coef * (a + ext - 1))
        hi += max(coef * a, coef * (a + ext - 1))
    return lo, hi


def _past_axis(index, ranges: dict, axis) -> bool:
    """True when affine ``index`` provably reaches outside ``[0, axis)`` over ``ranges``
    (var -> (min, extent), every value taken)."""
    size = const_of(axis)
    span = index_range(index, ranges) if size is not None else None
    return span is not None and (span[0] < 0 or span[1] >= size)


def copy_order(store: BufferStore, outer: bool = False) -> "tuple | None":
    """For an element copy ``S[i0, i1...] = P[...]`` whose load indexes ``P`` with the
    store's index expressions in some order, over axes of the same extents: ``order[d]``,
    the axis of ``P`` indexed by the store's ``d``-th index. Then an index past the end of
    an axis of ``S`` is past the end of its axis of ``P`` too. None for anything else.

    ``outer``: the store's first index may index an axis of ``P`` of another extent (a
    cache of the first 7 elements of an ``x`` of ``n``): past the end of ``S``'s outermost
    axis (its other indices inside) a store lies past all of ``S``'s storage, whatever it
    reads (:func:`_past_storage`)."""
    load = store.value
    if not isinstance(load, BufferLoad) or load.buffer is store.buffer or \
            len(load.indices) != len(store.indices) or len(load.buffer.shape) != len(load.indices) or \
            len(store.buffer.shape) != len(store.indices):
        return None
    order, free = [], list(range(len(load.indices)))
    for d, (index, extent) in enumerate(zip(store.indices, store.buffer.shape)):
        k = next((k for k in free if load.indices[k] == index
                  and (equal_extents(load.buffer.shape[k], extent) or (outer and d == 0))), None)
        if k is None:
            return None
        free.remove(k)
        order.append(k)
    return tuple(order)


def same_index_copy(store: BufferStore) -> bool:
    """``S[i...] = P[i...]``: one index tuple on both sides, buffers of one shape."""
    order = copy_order(store)
    return order is not None and order == tuple(range(len(order)))


def clippable(index, ranges: dict) -> bool:
    """An index that only grows with its variables (positive coefficients; ``ranges``: var
    -> (min, extent)): what lies before the start of the axis is a prefix of each
    variable's range, what passes its end a suffix."""
    form = affine(index)
    return form is not None and all(v in ranges and c > 0 for v, c in form.items() if v != ONE)


def predicate_spans(realize: BlockRealize, loops) -> "dict | None":
    """:func:`binding_spans` of a block with a predicate; ``{}`` for one without."""
    if isinstance(realize.predicate, IntImm):
        return {}
    return binding_spans(realize, loops)


def binding_spans(realize: BlockRealize, loops) -> "dict | None":
    """{block variable: (lowest, highest) value its binding takes where the block's
    predicate holds}, for the variables whose binding, like the predicate, uses no variable
    but loops of ``loops`` (those around the block, up to the enclosing block) with
    constant ranges, enumerated; ``{}`` when none is known (other variables, too many
    iterations); None when the predicate provably holds at no iteration (the block never
    runs). What TVM's code stores is what the bindings take, the declared domain aside:
    ``loop_partition`` keeps a split's ``T.where`` in every copy of the nest while giving a
    copy the domain of its loop's range (``range(4, 8)`` for an axis of 7), and
    ``cache_index`` may declare a domain of 3 where the split loops bind 0..8."""
    fixed = {lp.loop_var for lp in loops if const_of(lp.min) is not None and const_of(lp.extent) is not None}
    used = vars_in(realize.predicate)
    if not used <= fixed:
        return {}
    known = []
    for k, value in enumerate(realize.iter_values):
        found = vars_in(value)
        if found <= fixed:
            known.append(k)
            used |= found
    chosen = [lp for lp in loops if lp.loop_var in used]
    if isinstance(realize.predicate, IntImm) and realize.predicate.value:
        spans = _affine_spans(realize, known, chosen)
        if spans is not None:
            return spans
    got = loops_points(chosen, {}, SPAN_POINTS)
    if got is None:
        return {}
    leaves, size, _ = got
    try:
        keep = np.broadcast_to(np.asarray(evaluate_points(realize.predicate, leaves, size)).astype(bool), (size,))
        values = {k: np.broadcast_to(np.asarray(evaluate_points(realize.iter_values[k], leaves, size)), (size,))[keep]
                  for k in known}
    except POINT_ERRORS + (KeyError,):
        return {}
    if size and not keep.any():
        return None
    spans = {}
    for k, v in values.items():
        if v.size and np.all(v == np.floor(v)):
            spans[realize.block.iter_vars[k].var] = (int(v.min()), int(v.max()))
    return spans


def _affine_spans(realize: BlockRealize, known: list, chosen: list) -> "dict | None":
    """:func:`binding_spans` without enumerating, for a block without a predicate whose
    ``known`` bindings are affine in the ``chosen`` loops (each running a constant, non-empty
    range, at most :data:`SPAN_POINTS` iterations in all): over independent loops an affine
    form's lowest and highest values are at the corners. None when that does not apply."""
    ranges, size = {}, 1
    for lp in chosen:
        lo, ext = const_of(lp.min), const_of(lp.extent)
        if ext <= 0:
            return None
        ranges[lp.loop_var] = (lo, lo + ext - 1)
        size *= ext
    if size > SPAN_POINTS:
        return None
    spans = {}
    for k in known:
        form = affine(realize.iter_values[k])
        if form is None or any(a is not ONE and a not in ranges for a in form):
            return None
        low = high = form.get(ONE, 0)
        for atom, coef in form.items():
            if atom is not ONE:
                a, b = ranges[atom]
                low, high = low + min(coef * a, coef * b), high + max(coef * a, coef * b)
        spans[realize.block.iter_vars[k].var] = (low, high)
    return spans


def _block_stores(func, as_run: bool, lets: "list | None" = None) -> list:
    """(store, {variable: (min, extent)}) for the unguarded stores of every block
    (:func:`_inner_stores`), the ranges those of the block's variables and of the loops
    inside the block around the store. ``as_run``: the function as TVM wrote it, whose code
    runs what the bindings take (:func:`binding_spans`, when enumerable) whatever the
    declared domains; otherwise (a function :func:`.normalize.normalize` left, which reads
    domains, not loops) the constant domains, narrowed to the values a binding takes where
    the block's predicate holds when those lie inside. A block whose predicate never holds
    stores nothing."""
    out: list = []
    for realize, loops in block_realizes(func.body):
        ranges = block_ranges(realize, loops, as_run)
        if ranges is not None:
            _inner_stores(realize.block.body, ranges, out, lets)
    return out


def block_ranges(realize: BlockRealize, loops, as_run: bool = True) -> "dict | None":
    """{block variable: (min, extent)} of a block (``loops``: those around it, up to the
    enclosing block); None when its predicate never holds. ``as_run``: the values each
    binding takes as TVM's code runs it (:func:`binding_spans`, when enumerable), else its
    constant declared domain; otherwise the constant domains, narrowed to the values a
    binding takes where the predicate holds when those lie inside (see :func:`_block_stores`)."""
    spans = binding_spans(realize, loops) if as_run else predicate_spans(realize, loops)
    if spans is None:
        return None
    ranges = {}
    for iv in realize.block.iter_vars:
        lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
        if as_run and iv.var in spans:
            a, b = spans[iv.var]
            ranges[iv.var] = (a, b - a + 1)
        elif lo is not None and ext is not None:
            a, b = spans.get(iv.var, (lo, lo + ext - 1))
            ranges[iv.var] = (a, b - a + 1) if lo <= a <= b < lo + ext else (lo, ext)
    return ranges


def out_of_bounds_writes(func) -> bool:
    """True when a block provably stores outside its buffer: a store index, affine in block
    variables (each over the values its binding takes, or its declared domain) and loops
    inside the block, reaches past the buffer's extent. No op writes there; TVM prints such
    functions after ``pad_einsum`` of a reduction (its iteration padded, its output not).
    A copy ``S[...] = P[...]`` whose indices pass the end of an axis of ``S`` where it reads
    ``P`` at the same index on an axis of the same extent (``read_at``/``write_at`` copy whole
    tiles; ``merge`` may drop the ``T.where`` of a split copy) changes nothing inside either
    buffer there: it reads past ``P``'s end what it stores past ``S``'s (:mod:`.block_loops`
    restricts such copies to the elements inside), and it passes here when what it stores past
    the end changes no element the copy restricted to the inside would leave otherwise
    (:func:`strays_harmless`, the rule the clipping follows too; past the outermost axis
    alone, a store lies past the storage)."""
    copies = None
    for store, where in _block_stores(func, as_run=True):
        if len(store.indices) != len(store.buffer.shape):
            continue
        past = [d for d, (i, axis) in enumerate(zip(store.indices, store.buffer.shape)) if _past_axis(i, where, axis)]
        if not past:
            continue
        if not ((_copied_past(store, past) or _past_storage(store, past))
                and all(clippable(store.indices[d], where) for d in past)):
            return True
        if _past_storage_rows(store, past):
            continue
        if copies is None:
            copies = store_blocks(func)
        info = copies.get(id(store))
        if info is None or not strays_harmless(store, info.realize, info.loops, info, frozenset(shape_vars(func)), func):
            return True
    return False


class StoreBlock(NamedTuple):
    """A block whose body is one store, maybe under loops of its own, as
    :func:`store_blocks` finds it."""

    realize: BlockRealize
    loops: tuple
    """The loops that run its store in the order they nest: those around it, up to the
    enclosing block, then those inside it."""
    quiet: bool
    """No other block of its statement in the function's top-level sequence loads or stores
    its buffer: nothing among its iterations sees what it leaves there (a
    ``reindex_cache_write`` copy back under the batch loop it shares with the op's block,
    which writes the cache)."""
    sole: bool
    """It is the only block of the function storing its buffer."""
    source_kept: bool
    """No other block of its statement stores the buffer its value loads (True when the
    value is no load)."""


def store_blocks(func) -> dict:
    """id(store) -> :class:`StoreBlock` for each block of ``func`` whose body is one store,
    maybe under loops of its own. Blocks are judged by what each does itself, not by what
    the blocks it holds do (:func:`_own_accesses`: an outer block's declared regions repeat
    its inner blocks')."""
    own = {id(b): _own_accesses(b) for b in func.blocks()}
    writers: dict = {}
    for stores, _ in own.values():
        for key in stores:
            writers[key] = writers.get(key, 0) + 1
    root = func.root_block
    body = root.body if root is not None else func.body
    out = {}
    for stmt in body.seq if isinstance(body, SeqStmt) else (body,):
        found = list(block_realizes(stmt))
        for realize, loops in found:
            store, inner = realize.block.body, ()
            while isinstance(store, For):
                store, inner = store.body, inner + (store,)
            if not isinstance(store, BufferStore):
                continue
            key = id(store.buffer)
            others = [own[id(o.block)] for o, _ in found if o is not realize]
            quiet = all(key not in stores and key not in loads for stores, loads in others)
            source = id(store.value.buffer) if isinstance(store.value, BufferLoad) else None
            kept = source is None or all(source not in stores for stores, _ in others)
            out[id(store)] = StoreBlock(realize, tuple(loops) + inner, quiet, writers.get(key) == 1, kept)
    return out


def _own_accesses(block) -> tuple:
    """(ids of the buffers ``block`` stores to itself, ids of those it loads itself): its
    stores and loads outside the blocks it holds (whose accesses its declared regions
    repeat), and its declared regions when it holds none (an extern call writing through a
    pointer)."""
    stores: set = set()
    loads: set = set()
    nested = [False]

    def visit(n):
        if isinstance(n, BlockRealize):
            nested[0] = True
            return False
        if isinstance(n, BufferStore):
            stores.add(id(n.buffer))
        elif isinstance(n, BufferLoad):
            loads.add(id(n.buffer))
        return True

    for part in (block.body, block.init):
        if part is not None:
            pre_order_visit(part, visit)
    if not nested[0]:
        stores.update(id(w.buffer) for w in block.writes)
        loads.update(id(r.buffer) for r in block.reads)
    return stores, loads


RUN_POINTS = 1 << 16
"""Iterations of a block above which :func:`run_points` does not enumerate them."""


def run_points(realize: BlockRealize, loops, exprs, symbols: frozenset, extra=()) -> "list | None":
    """``[(env, values)]``: for each binding ``env`` of the shape variables to a few values
    (:func:`.probe.shape_envs`), each of ``exprs`` at the iterations of ``loops`` (those
    around the block) where the block's predicate holds, in the order they run. None when
    the loops, the predicate, ``exprs`` or ``extra`` (expressions the caller evaluates in
    ``env`` itself) use variables other than the loops' own and ``symbols``, or when the
    loops cannot be enumerated or an expression evaluated."""
    from .realize_check import SHAPE_VALUES  # realize_check imports this module

    used: set = set()
    for lp in loops:
        collect_vars(lp.min, used)
        collect_vars(lp.extent, used)
    for e in [realize.predicate, *exprs, *extra]:
        collect_vars(e, used)
    if not used - {lp.loop_var for lp in loops} <= symbols:
        return None
    out = []
    for env in shape_envs(used & symbols, SHAPE_VALUES):
        got = loops_points(loops, env, RUN_POINTS)
        if got is None:
            return None
        leaves, size, _ = got
        try:
            runs = np.broadcast_to(np.asarray(evaluate_points(realize.predicate, leaves, size)).astype(bool), (size,))
            out.append((env, [np.broadcast_to(np.asarray(evaluate_points(e, leaves, size)), (size,))[runs]
                              for e in exprs]))
        except POINT_ERRORS + (KeyError,):
            return None
    return out


def _strays_overwritten(store: BufferStore, realize: BlockRealize, loops, symbols: frozenset,
                        later: bool = True) -> bool:
    """Whether each store of a copy past the end of an axis of its buffer, flattened
    row-major as TVM's code runs it, lands outside the buffer's storage or (``later``, for a
    copy whose buffer nothing else touches among its iterations, :attr:`StoreBlock.quiet`) on an
    element a later iteration of the same copy stores inside the buffer (``S[i, 7]`` of rows of 7 is
    ``S[i + 1, 0]``, copied when ``i + 1`` comes): the copy then leaves what the copy
    restricted to the elements inside leaves. Enumerated in the order the loops run, with
    shape variables at a few values; False when that is not possible."""
    got = _flat_runs(realize, loops, [(store.indices, store.buffer.shape)], symbols)
    if got is None:
        return False
    for (flat, inside, total), in got:
        stray = ~inside & (flat >= 0) & (flat < total)
        if not stray.any():
            continue
        if not later:
            return False
        order = np.arange(len(flat))
        last = np.full(total, -1, dtype=np.int64)
        np.maximum.at(last, flat[inside], order[inside])
        if not np.all(last[flat[stray]] > order[stray]):
            return False
    return True


def _flat_runs(realize: BlockRealize, loops, accesses: list, symbols: frozenset) -> "list | None":
    """For each binding of the shape variables to a few values (:func:`run_points`), each of
    ``accesses`` (block-variable index tuples with the shape of the buffer they index) at the
    iterations the block runs, in the order the loops run them: ``(row-major flat offsets,
    which lanes lie inside every axis, the buffer's number of elements)``. None when that
    cannot be enumerated, an extent is not positive or an index is not a whole number."""
    if loops is None:
        return None
    bind = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    got = run_points(realize, loops, [substitute(i, bind) for indices, _ in accesses for i in indices], symbols,
                     extra=[e for _, shape in accesses for e in shape])
    if got is None:
        return None
    out = []
    for env, values in got:
        if any(not np.all(v == np.floor(v)) for v in values):
            return None
        values = [v.astype(np.int64) for v in values]
        runs, start = [], 0
        for indices, shape in accesses:
            dims = [scalar_int(e, env) for e in shape]
            if any(e is None or e <= 0 for e in dims):
                return None
            flat, inside = _flat(values[start:start + len(indices)], dims)
            runs.append((flat, inside, int(np.prod(dims))))
            start += len(indices)
        out.append(runs)
    return out


def _flat(values: list, shape: list) -> tuple:
    """(row-major flat offsets of the index columns ``values`` in a buffer of ``shape``,
    which lanes lie inside every axis)."""
    inside = np.ones(len(values[0]) if values else 0, dtype=bool)
    flat = np.zeros_like(inside, dtype=np.int64)
    for v, extent in zip(values, shape):
        inside &= (v >= 0) & (v < extent)
        flat = flat * extent + v
    return flat, inside


def strays_repeat_copy(store: BufferStore, realize: BlockRealize, loops, symbols: frozenset) -> bool:
    """Whether every store of a copy ``S[...] = P[...]`` past the end of an axis of ``S``
    that lands, flattened row-major as TVM's code runs it, inside ``S``'s storage puts there
    the very element of ``P`` (flattened alike, inside its storage) that the iteration
    copying that element of ``S`` reads: a transposed copy ``S[j, k, i] = P[i, j, k]`` run to
    ``k = 7`` of 7 stores ``P[i, j + 1, 0]`` at ``S[j + 1, 0, i]``, which is where it belongs.
    Callers ask it only of the sole block of the function storing ``S`` whose ``P`` no other
    block of its statement stores (:attr:`StoreBlock.sole`, :attr:`StoreBlock.source_kept`):
    ``P`` then holds the same values at both stores, and an element of ``S`` holds nothing
    but the copy's value, however early a reader sees it (a reader before the copy's own
    store is left to :mod:`.intermediate_check`, which counts the copy's stores inside ``S``
    only). Enumerated in the loops' order with shape variables at a few values; False when
    that is not possible."""
    load = store.value
    if not isinstance(load, BufferLoad) or load.buffer is store.buffer or store.buffer.strides \
            or load.buffer.strides or len(load.indices) != len(load.buffer.shape):
        return False
    got = _flat_runs(realize, loops, [(store.indices, store.buffer.shape), (load.indices, load.buffer.shape)],
                     symbols)
    if got is None:
        return False
    for (fs, inside, s_total), (fp, _, p_total) in got:
        stray = ~inside & (fs >= 0) & (fs < s_total)
        if not stray.any():
            continue
        source_of = np.full(s_total, -1, dtype=np.int64)
        source_of[fs[inside]] = fp[inside]
        if not np.array_equal(source_of[fs[inside]], fp[inside]):
            return False  # one element copied from two places: not a copy
        ok = (fp[stray] >= 0) & (fp[stray] < p_total) & (source_of[fs[stray]] == fp[stray])
        if not ok.all():
            return False
    return True


def strays_harmless(store: BufferStore, realize: BlockRealize, loops, info: "StoreBlock | None",
                    symbols: frozenset, func=None) -> bool:
    """Whether what a copy ``S[...] = P[...]`` stores past an end of an axis of ``S``, as
    TVM's code runs it on row-major storage, changes no element the copy restricted to the
    elements inside would leave otherwise -- the one rule by which :func:`out_of_bounds_writes`
    lets such a copy pass and :func:`.block_loops.clip_copies` clips it. ``info``: what
    :func:`store_blocks` tells of its block (None: not known).

    Each such store lands past the buffer's storage (:func:`_strays_overwritten`,
    enumerated); or, the copy being the only block writing ``S`` and nothing else in its
    statement writing ``P`` (:attr:`StoreBlock.sole`, :attr:`StoreBlock.source_kept`), it
    puts on the element it lands on the element of ``P`` the copy puts there -- read from the
    indices (:func:`_same_flat_copy`) or enumerated (:func:`strays_repeat_copy`); or, nothing
    else in its statement touching ``S`` (:attr:`StoreBlock.quiet`), a later iteration of
    the copy stores inside ``S`` where it landed; or (given ``func``, the function holding
    it) the next access of each element it lands on is a store, or there is none and ``S``
    is no parameter (:func:`strays_dead`)."""
    if info is not None and info.sole and info.source_kept \
            and (_same_flat_copy(store) or strays_repeat_copy(store, realize, loops, symbols)):
        return True
    if _strays_overwritten(store, realize, loops, symbols, later=info is not None and info.quiet):
        return True
    return func is not None and strays_dead(func, store, symbols)


TRACE_EVENTS = 1 << 20
"""Accesses of a buffer above which :func:`strays_dead` does not enumerate them."""


def strays_dead(func, store: BufferStore, symbols: frozenset) -> bool:
    """Whether every store ``store`` makes past the end of an axis of its buffer ``S`` that
    lands, flattened row-major as TVM's code runs it, inside ``S``'s storage is dead: the
    next access of that element, among all of the function's accesses of ``S`` in the order
    they run, is a store, or there is none and ``S`` is no parameter. Dropping such stores
    then changes no value any access sees nor any the function leaves (a cache rewritten
    before each read, as ``compute_at`` places its copy in front of its reader; strays
    landing past the storage are judged as :func:`_strays_overwritten` judges them).
    Enumerated with shape variables at a few values; False when that is not possible: an
    access of ``S`` other than a plain store or a load in one, under statements other than
    loops, sequences and blocks without an init, or past :data:`TRACE_EVENTS`. Loops are
    taken to run their iterations in order, parallel ones too, as the interpreter runs them
    and as every other check reads them (a race between iterations of a parallel loop is
    not judged)."""
    from .realize_check import SHAPE_VALUES  # realize_check imports this module

    buffer = store.buffer
    if buffer.strides:
        return False
    sites = _access_sites(func.body, buffer)
    if sites is None or not any(st is store for _, _, _, _, st in sites):
        return False
    used: set = set()
    for _, loops, preds, bind, st in sites:
        for lp in loops:
            collect_vars(lp.min, used)
            collect_vars(lp.extent, used)
        for e in preds:
            collect_vars(e, used)
    for e in buffer.shape:
        collect_vars(e, used)
    loop_vars = {lp.loop_var for _, loops, _, _, _ in sites for lp in loops}
    if not used - loop_vars <= symbols:
        return False
    param = any(b is buffer for b in func.buffers)
    for env in shape_envs(used & symbols, SHAPE_VALUES):
        dims = [scalar_int(e, env) for e in buffer.shape]
        if any(d is None or d <= 0 for d in dims):
            return False
        got = _trace_events(sites, store, buffer, dims, env)
        if got is None or not _strays_dead(*got, total=int(np.prod(dims)), param=param):
            return False
    return True


def _access_sites(body, buffer) -> "list | None":
    """``[(path, loops, predicates, bindings, store)]`` for each store that stores or loads
    ``buffer``: the positions and loops leading to it from ``body`` (a position in a
    sequence as ``int``, a loop as its :class:`~tir.stmt.For`), the loops in nesting order,
    the predicates of the blocks around it and their variables' bindings (in loop
    variables). None when ``buffer`` is accessed otherwise (see :func:`strays_dead`)."""
    out: list = []

    def touches(node) -> bool:
        hit = [False]

        def visit(n):
            if hit[0]:
                return False
            if n is buffer or isinstance(n, (BufferLoad, BufferStore)) and n.buffer is buffer:
                hit[0] = True  # (the buffer itself: a view declared over it, a region naming it)
            elif isinstance(n, Block) and any(m.source.buffer is buffer for m in n.match_buffers):
                hit[0] = True
            elif isinstance(n, Var) and n is buffer.data:
                hit[0] = True
            return not hit[0]

        pre_order_visit(node, visit)
        return hit[0]

    def walk(n, path, loops, preds, bind) -> bool:
        if isinstance(n, SeqStmt):
            return all(walk(c, path + (k,), loops, preds, bind) for k, c in enumerate(n.seq))
        if isinstance(n, For):
            if touches(n.min) or touches(n.extent):
                return False
            return walk(n.body, path + (n,), loops + (n,), preds, bind)
        if isinstance(n, BlockRealize):
            block = n.block
            if (block.init is not None and touches(block.init)) or touches(n.predicate) \
                    or any(m.source.buffer is buffer for m in block.match_buffers):
                return False
            inner = dict(bind)
            for iv, v in zip(block.iter_vars, n.iter_values):
                if touches(v):
                    return False
                inner[iv.var] = substitute(v, bind)
            return walk(block.body, path, loops, preds + (substitute(n.predicate, bind),), inner)
        if isinstance(n, Block):
            return walk(n.body, path, loops, preds, bind)
        if isinstance(n, BufferStore):
            if n.buffer is buffer or touches(n):
                out.append((path, loops, preds, bind, n))
            return True
        return not touches(n)

    return out if walk(body, (), (), (), {}) else None


def _trace_events(sites: list, store: BufferStore, buffer, dims: list, env: dict) -> "tuple | None":
    """The accesses of ``buffer`` at ``sites`` (:func:`_access_sites`) at the shape values
    ``env``: ``(keys, flat offsets, is a store, is a stray of store)``, ``keys`` integers
    ordering them as they run (a load before the store of its iteration); None when they
    cannot be enumerated."""
    rows: list = []
    count = 0
    for path, loops, preds, bind, st in sites:
        got = loops_points(loops, env, TRACE_EVENTS)
        if got is None:
            return None
        leaves, size, _ = got
        leaves = {**env, **leaves}
        try:
            runs = np.ones(size, dtype=bool)
            for p in preds:
                runs &= np.broadcast_to(np.asarray(evaluate_points(p, leaves, size)).astype(bool), (size,))
            key = [np.full(size, item, dtype=np.int64) if isinstance(item, int)
                   else np.broadcast_to(np.asarray(leaves[item.loop_var]), (size,)).astype(np.int64)
                   for item in path]
            loads: list = []
            for e in (st.value, *st.indices):
                guarded_loads(e, (), loads)
            accesses = [(load.indices, False, _taken(guard, bind, leaves, size))
                        for load, guard in loads if load.buffer is buffer]
            if st.buffer is buffer:
                accesses.append((st.indices, True, None))
            for indices, is_store, taken in accesses:
                if len(indices) != len(dims):
                    return None
                at = runs if taken is None else runs & taken
                values = [np.broadcast_to(np.asarray(evaluate_points(substitute(i, bind), leaves, size)), (size,))[at]
                          for i in indices]
                if any(not np.all(v == np.floor(v)) for v in values):
                    return None
                flat, inside = _flat([v.astype(np.int64) for v in values], dims)
                n = len(flat)
                count += n
                if count > TRACE_EVENTS:
                    return None
                rows.append(([k[at] for k in key] + [np.full(n, int(is_store), dtype=np.int64)], flat,
                             np.full(n, is_store), (~inside) if (is_store and st is store) else np.zeros(n, dtype=bool)))
        except POINT_ERRORS + (KeyError,):
            return None
    # one integer per access, mixed-radix over the columns (a shorter key padded with 0:
    # two keys differ at a sequence position before either ends)
    depth = max((len(k) for k, _, _, _ in rows), default=0)
    lows, highs = [0] * depth, [0] * depth
    for k, f, _, _ in rows:
        for c, col in enumerate(k):
            if len(col):
                lows[c], highs[c] = min(lows[c], int(col.min())), max(highs[c], int(col.max()))
    if math.prod(h - lo + 1 for lo, h in zip(lows, highs)) >= 1 << 62:
        return None
    keys = []
    for k, f, _, _ in rows:
        key = np.zeros(len(f), dtype=np.int64)
        for c in range(depth):
            key = key * (highs[c] - lows[c] + 1) + ((k[c] if c < len(k) else 0) - lows[c])
        keys.append(key)
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0))
    return (cat(keys).astype(np.int64), cat([r[1] for r in rows]).astype(np.int64),
            cat([r[2] for r in rows]).astype(bool), cat([r[3] for r in rows]).astype(bool))


def _taken(guard: tuple, bind: dict, leaves: dict, size: int) -> "np.ndarray | None":
    """Where a load under ``guard`` (``(condition, taken)`` pairs of the ``if_then_else``
    and ``Select`` branches around it, :func:`.intermediate_check.guarded_loads`) has its
    value used; None (everywhere) when a condition cannot be evaluated (it reads data)."""
    mask = None
    for cond, want in guard:
        try:
            got = np.broadcast_to(np.asarray(evaluate_points(substitute(cond, bind), leaves, size)).astype(bool),
                                  (size,))
        except POINT_ERRORS + (KeyError,):
            return None
        got = got if want else ~got
        mask = got if mask is None else mask & got
    return mask


def _strays_dead(keys, flat, is_store, stray, total: int, param: bool) -> bool:
    """Whether each stray (inside the storage) is followed, at its element, by a store, or
    by nothing in a buffer that is no parameter (see :func:`strays_dead`)."""
    stray = stray & (flat >= 0) & (flat < total)
    if not stray.any():
        return True
    order = np.lexsort((keys, flat))
    f, st, sy = flat[order], is_store[order], stray[order]
    following = np.zeros(len(f), dtype=np.int8)  # 0 nothing after, 1 a store, 2 a load
    same = f[1:] == f[:-1]
    following[:-1][same] = np.where(st[1:][same], 1, 2)
    if np.any(following[sy] == 2):
        return False
    return not (param and np.any(following[sy] == 0))


def _same_flat_copy(store: BufferStore) -> bool:
    """``S[i...] = P[i...]`` on row-major storage (no strides) with ``P``'s axes but the
    outermost of ``S``'s extents: an index tuple has one flat offset in both buffers, so a
    store past the end of an inner axis (``S[i, 19]`` of rows of 19 is ``S[i + 1, 0]``) puts
    on that element of ``S`` the element of ``P`` the copy puts there (``P[i + 1, 0]``)."""
    load = store.value
    return (isinstance(load, BufferLoad) and not store.buffer.strides and not load.buffer.strides
            and tuple(load.indices) == tuple(store.indices)
            and len(load.buffer.shape) == len(store.buffer.shape)
            and all(equal_extents(a, b) for a, b in zip(load.buffer.shape[1:], store.buffer.shape[1:])))


def _past_storage_rows(store: BufferStore, dims: list) -> bool:
    """Stores past the end (or before the start) of the outermost axis alone of a buffer
    with row-major storage (no strides of its own) lie past all of its storage: they change
    none of its elements."""
    return list(dims) == [0] and not store.buffer.strides


def _past_storage(store: BufferStore, dims: list) -> bool:
    """``store`` is an element copy (:func:`copy_order` with ``outer``) passing the end of
    the outermost axis of its buffer only (``dims == [0]``): there, in any row-major
    storage of the buffer (compact: no strides of its own), the element lies past the last
    one (or before the first), so the iteration changes no element of the buffer, whatever
    it reads -- the copy restricted to the elements inside (:func:`.block_loops.clip_copies`)
    does the same. An index past an inner axis is no such thing: flattened, ``S[i, 19]`` of
    a row of 19 is ``S[i + 1, 0]``."""
    return _past_storage_rows(store, dims) and copy_order(store, outer=True) is not None


def _copied_past(store: BufferStore, dims: list) -> bool:
    """``store`` copies a load of another buffer that indexes, for each axis ``d`` of
    ``dims``, an axis with the store's own index there, maybe shifted by a constant (a
    cache of the data a pad reads, ``S[v] = P[v - 1]``): past the end of the store's axis,
    the load is past the end of its axis too."""
    load = store.value
    if not isinstance(load, BufferLoad) or load.buffer is store.buffer or len(load.indices) != len(load.buffer.shape):
        return False
    return all(any(_past_together(store.indices[d], store.buffer.shape[d], load.indices[k], load.buffer.shape[k])
                   for k in range(len(load.indices))) for d in dims)


def _past_together(index, extent, load_index, load_extent) -> bool:
    """``index >= extent`` implies ``load_index >= load_extent``: the load's index is the
    store's plus a constant ``c`` with ``extent + c >= load_extent`` (equal extents when
    ``c`` is 0 and they are symbolic)."""
    if load_index == index:
        return equal_extents(load_extent, extent)
    a, b = affine(index), affine(load_index)
    if a is None or b is None or {v: c for v, c in a.items() if v != ONE} != {v: c for v, c in b.items() if v != ONE}:
        return False
    shift = b.get(ONE, 0) - a.get(ONE, 0)
    ext, load_ext = const_of(extent), const_of(load_extent)
    return ext is not None and load_ext is not None and ext + shift >= load_ext


def out_of_bounds_reads(func) -> bool:
    """True when a block's store provably reads outside a buffer: a load in the stored
    value, not under a guard (``if_then_else``, ``Select``: a padded read ``x[v - 1]`` sits
    under its bounds test), whose affine index over the block's domain and inner loops
    reaches past the buffer's axis. TVM indexes no element there (a mutated ``x[v + 3]``
    turned ``x[v - 3]`` reads before the buffer, which no strided slice does: a negative
    ``begin`` counts from the end). A copy whose indices pass the end of an axis, as for
    :func:`out_of_bounds_writes`, passes. Judged on the function as
    :func:`.normalize.normalize` leaves it: TVM's cache copies (``cache_index``,
    ``reindex_cache_read``) copy a padded region unguarded, past the data they cache, into
    a buffer whose readers never look there; read through, the copy is gone."""
    lets: list = []
    for store, where in _block_stores(func, as_run=False, lets=lets):
        for load in _unguarded_loads(store.value):
            past = _past_indices(load, where)
            if past and not (copy_order(store) is not None and load is store.value
                             and all(clippable(i, where) for i in past)):
                return True
    # a tuple reduction's update (argmax) computes its values in ``let`` bindings
    return any(_past_indices(load, where) for value, where in lets for load in _unguarded_loads(value))


def _past_indices(load, ranges: dict) -> list:
    """The indices of ``load`` that provably reach outside their axes (:func:`_past_axis`)."""
    if len(load.indices) != len(load.buffer.shape):
        return []
    return [i for i, axis in zip(load.indices, load.buffer.shape) if _past_axis(i, ranges, axis)]


def reads_past_copies(func) -> bool:
    """True when a block of ``func`` as written provably loads past the end of an axis of a
    buffer ``S`` that plain copies ``S[...] = P[...]`` alone fill, the copy filling that axis
    from a longer axis of ``P``: the (quasi-)affine index, over what the bindings take, reaches
    past the axis while no guard around the load tests any of the index's variables (a pad's
    ``if_then_else`` over the width does not keep a batch index in range). What lies there is
    no element of ``S``, but reading the copy through (:func:`.normalize.drop_cache_copies`)
    would make it one of ``P``'s: a ``data_dilate[b] = x[b]`` into a buffer of one batch row,
    read at two, became a read of ``x[1]``. Elsewhere a read past the end stays one after
    reading through, and is not this check's (TVM's own max-pool gradient reads one row past
    its argmax buffer, and past that buffer's reindex copy); parameters are
    :func:`out_of_bounds_reads`'s, judged after normalizing."""
    stores = _block_stores(func, as_run=True)
    copied: dict = {}  # buffer id -> the axes copies into it fill from longer axes; None: not copies alone
    for store, _ in stores:
        key, shrunk = id(store.buffer), _shrunk_axes(store)
        if shrunk is None or copied.get(key, set()) is None:
            copied[key] = None
        else:
            copied[key] = copied.get(key, set()) | shrunk
    params = {id(b) for b in func.buffers}
    for store, where in stores:
        loads: list = []
        guarded_loads(store.value, (), loads)
        for load, guard in loads:
            shrunk = copied.get(id(load.buffer))
            if id(load.buffer) in params or not shrunk or len(load.indices) != len(load.buffer.shape):
                continue
            tested: set = set()
            for cond, _ in guard:
                collect_vars(cond, tested)
            for d in shrunk:
                if load is store.value and _clipped_within(store, load, d):
                    continue
                used = vars_in(load.indices[d])
                if not used & tested and _past_axis_quasi(load.indices[d], where, load.buffer.shape[d]):
                    return True
    return False


def _clipped_within(store, load, d: int) -> bool:
    """For a copy ``S[...] = T[...]`` reading axis ``d`` of ``T`` at the index it stores an axis
    of ``S`` at: ``S``'s axis is no longer than ``T``'s, so the copy clipped to the elements of
    ``S`` (:func:`.block_loops.clip_copies`; write_at copies whole tiles past both ends) reads
    inside ``T``."""
    for k, index in enumerate(store.indices):
        if index == load.indices[d]:
            a, b = const_of(store.buffer.shape[k]), const_of(load.buffer.shape[d])
            return a is not None and b is not None and a <= b
    return False


def _past_axis_quasi(index, ranges: dict, axis) -> bool:
    """:func:`_past_axis` for quasi-affine indices too (a reshape's ``v % 5``), through
    :func:`.bounded.bounded_form` over the same ranges (the bounds of its atoms: where they
    over-reach, a function is refused that could have been named, never the reverse)."""
    from .bounded import bounded_form, interval

    if _past_axis(index, ranges, axis):
        return True
    size = const_of(axis)
    if size is None:
        return False
    inclusive = {v: (lo, lo + ext - 1) for v, (lo, ext) in ranges.items() if ext > 0}
    form = bounded_form(index, inclusive)
    span = interval(form, inclusive) if form is not None else None
    return span is not None and (span[0] < 0 or span[1] >= size)


def _shrunk_axes(store) -> "set | None":
    """For a plain copy ``S[...] = P[...]``, the axes of ``S`` shorter than the axis of ``P``
    read at the same index (constant extents); None for any other store."""
    load = store.value
    if not isinstance(load, BufferLoad) or load.buffer is store.buffer \
            or len(load.indices) != len(load.buffer.shape) or len(store.indices) != len(store.buffer.shape):
        return None
    out = set()
    for d, index in enumerate(store.indices):
        k = next((k for k, i in enumerate(load.indices) if i == index), None)
        if k is None:
            continue
        a, b = const_of(store.buffer.shape[d]), const_of(load.buffer.shape[k])
        if a is not None and b is not None and a < b:
            out.add(d)
    return out


def _unguarded_loads(expr) -> list:
    """The loads of ``expr`` evaluated whatever the data: not in a branch of an
    ``if_then_else`` or a ``Select`` (their conditions are), nor inside another load's index."""
    found: list = []

    def visit(n):
        if isinstance(n, BufferLoad):
            found.append(n)
            return False
        if isinstance(n, Select):
            pre_order_visit(n.condition, visit)
            return False
        if isinstance(n, Call) and n.op == "if_then_else":
            if n.args:
                pre_order_visit(n.args[0], visit)
            return False
        return True
    pre_order_visit(expr, visit)
    return found

