"""Loops inside a block moved out of it: ``read_at``/``write_at`` copies become plain blocks.

TVM's ``read_at``/``write_at`` copy a tile of a buffer in a block whose body is a loop
nest over one store (annotated ``auto_copy``)::

    with T.sblock("compute_local"):
        v0 = T.axis.spatial(3, i0_0)
        for ax0 in range(2):
            compute[v0 * 2 + ax0] = compute_local[v0 * 2 + ax0]

The same stores run, in the same order, when the loops go just outside the block and the
block takes one spatial variable per loop, bound to that loop (its domain the loop's
range), with the loop variables in its body replaced by the new block variables: the inner
loops become the innermost loops around the block. The block is then an ordinary one, and
what reads such blocks (cache copies, op blocks, coverage) reads it as usual.

Only a spatial block other than the root, without ``init``, allocated or matched buffers
and with a body that is a perfect loop nest over one ``BufferStore`` that does not read its
own buffer, is rewritten, and only when no loop's range uses the block's own variables
(outside the block they are not defined) and every loop (of extent other than 1) indexes the
store (a loop that does not accumulates: no spatial variable). Unit loops are dropped (their
variable is their minimum), and pairs ``o * B + i`` the block uses only so become one
variable (as :mod:`.blockize` does).

A tile copy may run past the end of an axis that the tile does not divide (TVM copies whole
tiles): for an element copy (:func:`.coverage.copy_order`) the iterations outside the
buffers get a predicate and the variable a domain of the axis' extent (see
:func:`_in_bounds`). Whether the stores cover the buffer is not judged here: the checks that
read every block (coverage, realize checks; :func:`.api.analyze` runs them on the rewritten
function too) judge the rewritten block like any other.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir.buffer import Range
from tir.builder import access_regions, store_regions
from tir.dtype import bool_
from tir.expr import GE, LT, Add, BufferLoad, Cast, IntImm, Var
from tir.function import PrimFunc
from tir.functor import pre_order_visit, remembered, substitute, transform, transform_stmts
from tir.stmt import BlockRealize, BufferStore, For, IterKind, IterVar

from .affine import ONE, add_forms, affine, const_of, equal_extents
from .blockize import fuse_splits
from .coverage import (StoreBlock, binding_spans, block_realizes, clippable, copy_order, index_range, run_points,
                       store_blocks, strays_harmless)
from .predicates import conjunction
from .recognize.guard import conjuncts
from .probe import collect_vars, scalar_int, shape_vars


def _loops_and_store(body) -> "tuple | None":
    loops = []
    while isinstance(body, For):
        loops.append(body)
        body = body.body
    return (loops, body) if loops and isinstance(body, BufferStore) else None


def _loads(expr) -> list:
    found: list = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) else True)
    return found


def _cast_dtype(store, var: Var):
    """The dtype every use of ``var`` in ``store`` casts it to (``T.Cast("int64", ax0)``),
    or None when some use is not such a cast."""
    dtypes, bare = set(), []

    def visit(n):
        if isinstance(n, Cast) and n.value is var:
            dtypes.add(n.dtype)
            return False
        if n is var:
            bare.append(n)
        return True

    pre_order_visit(store, visit)
    return next(iter(dtypes)) if len(dtypes) == 1 and not bare else None


def _without_zeros(expr):
    """``expr`` with ``a + 0`` and ``0 + a`` made ``a`` (what a unit loop leaves behind)."""

    def post(n):
        if isinstance(n, Add):
            if const_of(n.b) == 0 and n.b.dtype == n.dtype:
                return n.a
            if const_of(n.a) == 0 and n.a.dtype == n.dtype:
                return n.b
        return None

    return transform(expr, post)


def _moved_out(realize: BlockRealize) -> "For | None":
    block = realize.block
    if block.init is not None or block.alloc_buffers or block.match_buffers or \
            any(iv.kind != IterKind.SPATIAL for iv in block.iter_vars):
        return None
    found = _loops_and_store(block.body)
    if found is None:
        return None
    loops, store = found
    used: set = set()
    for loop in loops:
        collect_vars(loop.min, used)
        collect_vars(loop.extent, used)
    if any(iv.var in used for iv in block.iter_vars):
        return None
    # every loop moved out becomes a spatial variable: it must pick the element stored (a
    # loop the store does not index accumulates), and the store must not read its buffer
    indexed: set = set()
    for index in store.indices:
        collect_vars(index, indexed)
    if any(const_of(loop.extent) != 1 and loop.loop_var not in indexed for loop in loops):
        return None
    if any(isinstance(n, BufferLoad) and n.buffer is store.buffer for n in _loads(store.value)):
        return None
    body, new_ivs, values = store, [], []
    for loop in loops:
        var = loop.loop_var
        if const_of(loop.extent) == 1:  # a unit loop runs at its min only
            body = transform(body, lambda n, var=var, lo=loop.min: _cast(lo, n.dtype)
                             if isinstance(n, Cast) and n.value is var else None)
            body = substitute(body, {var: loop.min})
            continue
        dtype = _cast_dtype(body, var)
        new = Var(f"v_{var.name}", dtype or var.dtype)
        if dtype is None:
            body = substitute(body, {var: new})
            values.append(var)
            dom = Range(loop.min, loop.extent)
        else:
            body = transform(body, lambda n, var=var, new=new: new if isinstance(n, Cast) and n.value is var
                             else None)
            values.append(Cast(dtype, var))
            dom = Range(_cast(loop.min, dtype), _cast(loop.extent, dtype))
        new_ivs.append(IterVar(new, dom, IterKind.SPATIAL))
    body = attrs.evolve(body, indices=tuple(_without_zeros(i) for i in body.indices),
                        value=_without_zeros(body.value))
    ivars = block.iter_vars + tuple(new_ivs)
    values = tuple(realize.iter_values) + tuple(values)
    predicate = conjunction([realize.predicate, _in_bounds(body, ivars, values)])
    every = attrs.evolve(block, iter_vars=ivars)
    merged = attrs.evolve(block, iter_vars=ivars, body=body, reads=access_regions([body]),
                          writes=tuple(store_regions(body)))
    # ``v0 * 2 + v_ax0`` (a tile of 2 at row v0), ``v1 * 2 + v2`` (two variables bound to
    # the digits of a split loop) become one variable, as for blockize
    merged, values = fuse_splits(merged, values, predicate, every, every)
    merged = attrs.evolve(merged, iter_vars=_bounded(merged.iter_vars, values, predicate),
                          reads=access_regions([merged.body]), writes=tuple(store_regions(merged.body)))
    stmt = BlockRealize(values, predicate, merged)
    for loop in reversed(loops):
        if const_of(loop.extent) != 1:
            stmt = attrs.evolve(loop, body=stmt)
    return stmt


def _in_bounds(store: BufferStore, ivars: tuple, values: tuple, spans: "dict | None" = None):
    """For an element copy (:func:`.coverage.copy_order`: ``S[i...] = P[i...]``, ``read_at`` and
    ``write_at`` copy whole tiles, past the end of an axis whose extent the tile does not
    divide): the conjunction of ``i < extent`` over the axes a copy index passes, with the
    block's variables replaced by their bindings; 1 when there is none or it is no such copy.

    An iteration that copies an element outside both buffers changes no element of either,
    so the copy does the same restricted to the elements inside (as a predicate, the way a
    non-divisible split is restricted). :func:`.coverage.out_of_bounds_writes` lets such
    copies (and only those) pass. So does an iteration past the end of the outermost axis
    of ``S`` only, whatever it reads (``copy_order`` with ``outer``: the cache of 7 elements
    of an ``x`` of ``n``): its element lies past all of ``S``'s storage.

    ``spans`` (:func:`.coverage.binding_spans`): the values the bindings take, where they
    run past the declared domain (``reindex_cache_read`` giving its copy the consumer's split
    loops without the tail's ``T.where``): each variable ranges over both."""
    true = IntImm(bool_, 1)
    if copy_order(store, outer=True) is None:
        return true
    ranges = {}
    for iv in ivars:
        lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
        if lo is not None and ext is not None:
            if spans and iv.var in spans:
                first, last = spans[iv.var]
                lo, ext = min(lo, first), max(lo + ext - 1, last) + 1 - min(lo, first)
            ranges[iv.var] = (lo, ext)
    bind = {iv.var: v for iv, v in zip(ivars, values)}
    out = true
    for index, extent in zip(store.indices, store.buffer.shape):
        size = const_of(extent)
        span = index_range(index, ranges) if size is not None and clippable(index, ranges) else None
        if span is None:
            continue
        if span[0] < 0:
            out = conjunction([out, GE(substitute(index, bind), IntImm(index.dtype, 0))])
        if span[1] >= size:
            out = conjunction([out, LT(substitute(index, bind), IntImm(index.dtype, size))])
    return out


def _past_symbolic_ends(realize: BlockRealize, loops, symbols: frozenset) -> list:
    """For an element copy (:func:`.coverage.copy_order`) storing a variable ``v`` of domain
    ``[0, E)`` at an axis of a symbolic extent equal to ``E`` (``n``): ``binding < E``
    (and ``binding >= 0``) when the loops, enumerated with the shape variables at a few
    values, take the binding past that end at one of them (``reindex_cache_read`` gives its
    copy the consumer's loops over ``n * 14`` split by 4 and 5 without the tail's
    ``T.where``). Such an iteration copies an element outside both buffers (the load
    indexes its axis of the same extent with ``v`` too) and changes neither, so the copy
    does the same restricted to the domain the block declares. ``[]`` when nothing is
    known (loops or bindings that use more than the loops and shape variables, too many
    iterations)."""
    if loops is None or not symbols:
        return []
    block, store = realize.block, realize.block.body
    position = {iv.var: k for k, iv in enumerate(block.iter_vars)}
    candidates = []
    for index, extent in zip(store.indices, store.buffer.shape):
        k = position.get(index) if isinstance(index, Var) else None
        if const_of(extent) is not None or k is None:
            continue
        iv = block.iter_vars[k]
        if const_of(iv.dom.min) == 0 and equal_extents(iv.dom.extent, extent):
            candidates.append(k)
    if not candidates:
        return []
    got = run_points(realize, loops, [realize.iter_values[k] for k in candidates], symbols,
                     extra=[block.iter_vars[k].dom.extent for k in candidates])
    if got is None:
        return []
    above, below = set(), set()
    for env, values in got:
        for k, v in zip(candidates, values):
            ext = scalar_int(block.iter_vars[k].dom.extent, env)
            if ext is None or not np.all(v == np.floor(v)):
                return []
            if np.any(v >= ext):
                above.add(k)
            if np.any(v < 0):
                below.add(k)
    out = []
    for k in candidates:
        value, dom = realize.iter_values[k], block.iter_vars[k].dom
        if k in below:
            out.append(GE(value, IntImm(value.dtype, 0)))
        if k in above:
            out.append(LT(value, dom.extent))
    return out


def _bounded(ivars: tuple, values: tuple, predicate) -> tuple:
    """Each variable (from 0, constant extent) whose binding a predicate conjunct bounds
    within its domain -- ``binding + k < c`` or ``binding + k >= c`` -- gets the domain
    the conjuncts leave (fused ones got their upper bound in ``fuse_splits``)."""
    out = []
    terms = [t for t in conjuncts(predicate) if isinstance(t, (LT, GE)) and const_of(t.b) is not None]
    for iv, value in zip(ivars, values):
        lo, ext, form = const_of(iv.dom.min), const_of(iv.dom.extent), affine(value)
        if lo != 0 or ext is None or form is None:
            out.append(iv)
            continue
        first, end = 0, ext
        for t in terms:
            rest = _minus(affine(t.a), form)
            if rest is None:
                continue
            bound = const_of(t.b) - rest
            if isinstance(t, LT):
                end = min(end, bound)
            else:
                first = max(first, bound)
        if (first, end) != (0, ext) and first < end:
            dtype = iv.dom.extent.dtype
            iv = attrs.evolve(iv, dom=Range(IntImm(dtype, first), IntImm(dtype, end - first)))
        out.append(iv)
    return tuple(out)


def _minus(a: "dict | None", b: dict) -> "int | None":
    """``k`` when affine form ``a`` is ``b + k``, else None."""
    if a is None:
        return None
    diff = add_forms(a, b, -1)
    return diff.get(ONE, 0) if set(diff) <= {ONE} else None


def _cast(e, dtype):
    c = const_of(e)
    return IntImm(dtype, c) if c is not None else Cast(dtype, e)


def _clipped(realize: BlockRealize, loops: "tuple | None" = None, symbols: frozenset = frozenset(),
             info: "StoreBlock | None" = None, func: "PrimFunc | None" = None) -> "BlockRealize | None":
    """An element copy block (its body the store) whose variables take it past an end of
    its buffers, restricted to the elements inside (:func:`_in_bounds`,
    :func:`_past_symbolic_ends`); None otherwise. ``loops``: those around it (the values
    its bindings take are then enumerated); ``symbols``: the function's shape variables;
    ``info``: what :func:`.coverage.store_blocks` tells of the block; ``func``: the function
    holding it.

    Only when what TVM's code does with the iterations dropped changes no element the
    clipped copy keeps (:func:`.coverage.strays_harmless`)."""
    block = realize.block
    store = block.body
    if not _copy_block(block):
        return None
    spans = binding_spans(realize, loops) if loops is not None else None
    clip = _in_bounds(store, block.iter_vars, tuple(realize.iter_values), spans)
    for term in _past_symbolic_ends(realize, loops, symbols):
        clip = conjunction([clip, term])
    if isinstance(clip, IntImm):
        return None
    if not strays_harmless(store, realize, loops, info, symbols, func):
        return None
    predicate = conjunction([realize.predicate, clip])
    ivars = _bounded(block.iter_vars, tuple(realize.iter_values), predicate)
    return attrs.evolve(realize, predicate=predicate, block=attrs.evolve(block, iter_vars=ivars))


@remembered(1)  # recognize_ops' opaque path and analyze's whole-function recognizers clip the same function
def clip_copies(func: PrimFunc) -> PrimFunc:
    """``func`` with every element copy block that runs past an end of its buffers (a
    blockized copy of a split loop's whole last tile, or bindings past the declared domain)
    restricted to the elements inside."""
    copies = [(r, loops) for r, loops in block_realizes(func.body) if _copy_block(r.block)]
    if not copies:
        return func  # (most functions: the rest is not worked out)
    loops_of = {id(r): loops for r, loops in copies}
    symbols = frozenset(shape_vars(func))
    infos = store_blocks(func)

    def post(n):
        if isinstance(n, BlockRealize) and id(n) in loops_of:
            return _clipped(n, loops_of[id(n)], symbols, infos.get(id(n.block.body)), func)
        return None

    return transform_stmts(func, post)


def _copy_block(block) -> bool:
    """Whether ``block`` may be clipped by :func:`_clipped`: an element copy of spatial
    variables without an init, its body the store."""
    store = block.body
    return bool(block.iter_vars) and block.init is None and isinstance(store, BufferStore) and \
        all(iv.kind == IterKind.SPATIAL for iv in block.iter_vars) and copy_order(store, outer=True) is not None


def move_block_loops(func: PrimFunc) -> PrimFunc:
    """``func`` with the loops inside its blocks moved out of them (module docstring)."""
    root = func.root_block

    def post(n):
        if not isinstance(n, BlockRealize):
            return None
        if root is not None and n.block.name == root.name and not n.block.iter_vars:
            return None  # the root (rebuilt when a block below changed) stays as it is
        return _moved_out(n)

    return transform_stmts(func, post)
