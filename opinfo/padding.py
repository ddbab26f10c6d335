"""Undo ``decompose_padding``: its constant fill and its interior copy become one pad block.

TVM's ``decompose_padding`` splits a pad block ``P[w] = if_then_else(inside(w), X[w - off], c)``
into a block filling all of ``P`` with ``c`` (named ``<P>_pad_const``) and, right after it,
a block copying the interior, ``P[v + off] = X[v]`` over ``v`` in the interior's extents.
:func:`merge_padding` puts such a pair back into one block over ``P``'s shape whose guard
tests a side of a dimension only where that side is padded (the form of TVM's C++ ``pad``,
which :mod:`.recognize.guard` reads). It computes the same values: the fill writes every
element, the copy then overwrites exactly the interior.

Only when the form fits exactly; otherwise the function is left alone:

* the fill is a spatial block over exactly ``P``'s shape storing one constant at its own
  variables; the copy is a spatial block storing into ``P`` at ``v + off`` (each of its
  variables once, a constant ``off >= 0``, the interior inside ``P``), its value not
  reading ``P``; a symbolic dimension is copied whole;
* each is alone in its loop nest, the copy's nest is the next statement of the root that
  touches ``P`` (statements between, ``reindex``'s staging copy of the interior, neither
  read nor write it: the merged block goes where the copy was), no other block writes ``P``
  and no block before them touches it;
* their predicates (``T.where``) only keep each block variable in its domain (a split, or
  ``1 <= f`` for a variable bound to ``f - 1``), so they drop no element, and their loops
  provably run every point of their block's domain (:func:`.realize_check.runs_whole_domain`:
  a loop cut short would leave part of the interior holding the fill). The merged block
  gets fresh loops over its domain, without a predicate.
"""
from __future__ import annotations

import attrs

from tir.buffer import BufferRegion, Range
from tir.expr import LE, LT, BufferLoad, Call, IntImm, Sub, Var
from tir.function import PrimFunc
from tir.functor import post_order_stmts, post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, SeqStmt

from .affine import ONE, add_forms, affine, const_of, equal_extents
from .predicates import conjunction, implied, loop_domain
from .recognize.guard import conjuncts, nonneg_form
from .probe import shape_vars
from .realize_check import runs_whole_domain
from .rewrite import loaded, nest_of, own_nest, spatial_store, store_vars, stored, whole_buffer_vars


def _alone(stmt) -> "BlockRealize | None":
    """The block of a nest of loops holding nothing else."""
    nest = nest_of(stmt)
    return nest[1] if nest is not None else None


def _in_domain(term, realize: BlockRealize) -> bool:
    """``term`` is exactly "some block variable's binding is within its domain" on one side."""
    g = nonneg_form(term)
    if g is None:
        return False
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        b, lo, ext = affine(value), affine(iv.dom.min), affine(iv.dom.extent)
        if None in (b, lo, ext):
            continue
        if g == add_forms(b, lo, -1) or g == add_forms(add_forms(lo, ext), add_forms(b, {ONE: 1}), -1):
            return True
    return False


def _keeps_all(realize: BlockRealize, dom: dict) -> bool:
    """Each conjunct keeps a variable in its domain, on one side or as a split's bound
    (:func:`.predicates.implied`); ``dom``: the function's loop extents."""
    pred = realize.predicate
    if isinstance(pred, IntImm) and pred.value == 1:
        return True
    return all(_in_domain(t, realize) or implied(t, realize, dom) for t in conjuncts(pred))


def _constant_store(realize: BlockRealize) -> "tuple | None":
    """(store, the block's variables in its index order) of a spatial block storing a
    constant at its variables (each once, in any order: :func:`.rewrite.store_vars`), else
    None."""
    store = spatial_store(realize.block)
    if store is None or not _is_const(store.value):
        return None
    ivs = store_vars(realize.block, store.indices)
    return None if ivs is None else (store, ivs)


def _fill(realize: BlockRealize) -> "BufferStore | None":
    """The store of a block filling its whole buffer with a constant (:func:`_constant_store`)."""
    found = _constant_store(realize)
    if found is None:
        return None
    store = found[0]
    return store if whole_buffer_vars(realize.block, store.indices, store.buffer.shape) is not None else None


def _widened(realize: BlockRealize, func: PrimFunc, symbols) -> "BlockRealize | None":
    """A constant fill of a leading box of an intermediate, nothing in ``func`` reading it
    outside what it stores (the fill ``decompose_padding`` made under the loops of a reader
    that never loads the last padded column, cut to the columns it runs by
    :func:`.predicates.prefix_box`), as the fill of the whole buffer: the elements added are
    read by nothing. Static extents only; None otherwise."""
    from .distribute import reads_within

    found = _constant_store(realize)
    if found is None or any(b is found[0].buffer for b in func.buffers):
        return None  # (what a parameter holds is the function's result, read or not)
    store, ivs = found
    shape = [const_of(s) for s in store.buffer.shape]
    doms = [(const_of(iv.dom.min), const_of(iv.dom.extent)) for iv in ivs]
    if None in shape or any(lo != 0 or ext is None or ext > n for (lo, ext), n in zip(doms, shape)):
        return None
    if all(ext == n for (_, ext), n in zip(doms, shape)):
        return None
    # what it stores is its domain (its loops may still be the scheduled ones, which
    # :func:`.predicates.drop_predicates` left without the predicate it read the box from)
    own, block_realize = nest_of(own_nest(realize))
    if not reads_within(func, block_realize, tuple(own), symbols):
        return None
    whole = {id(iv): attrs.evolve(iv, dom=Range(iv.dom.min, IntImm(iv.dom.extent.dtype, n)))
             for iv, n in zip(ivs, shape)}
    block = attrs.evolve(realize.block, iter_vars=tuple(whole.get(id(iv), iv) for iv in realize.block.iter_vars))
    return attrs.evolve(realize, block=block)


def _is_const(value) -> bool:
    found = []
    post_order_visit(value, lambda n: found.append(n) if isinstance(n, (Var, BufferLoad, Call)) else None)
    return not found


def _offsets(store: BufferStore, block: Block) -> "list | None":
    """Per dimension of the stored buffer, (block variable, offset, extent) of an interior
    copy ``P[v + off]``, each variable once; None unless the interior lies inside ``P``."""
    doms = {id(iv.var): iv for iv in block.iter_vars}
    out = []
    for index, size in zip(store.indices, store.buffer.shape):
        form = affine(index)
        atoms = [a for a in form or {} if a is not ONE]
        if len(atoms) != 1 or form[atoms[0]] != 1 or id(atoms[0]) not in doms:
            return None
        iv = doms.pop(id(atoms[0]))
        off, ext, n = form.get(ONE, 0), const_of(iv.dom.extent), const_of(size)
        if const_of(iv.dom.min) != 0 or off < 0:
            return None
        if ext is None or n is None:
            if off != 0 or not equal_extents(iv.dom.extent, size):
                return None
        elif off + ext > n:
            return None
        out.append((iv.var, off, ext))
    return out if not doms else None


def _guard(ws: list, offsets: list, shape) -> list:
    """The tests of "``w`` is in the interior", one per padded side."""
    tests = []
    for w, (_, off, ext), size in zip(ws, offsets, shape):
        if off > 0:
            tests.append(LE(IntImm(w.dtype, off), w))
        if ext is not None and off + ext < const_of(size):
            tests.append(LT(w, IntImm(w.dtype, off + ext)))
    return tests


_FILL_SUFFIX = "_pad_const"


def _merged(fill: BlockRealize, copy: BlockRealize, offsets: list) -> "BlockRealize | None":
    """One pad block over the fill's variables (see the module docstring)."""
    fstore, cstore = fill.block.body, copy.block.body
    ivs = store_vars(fill.block, fstore.indices)  # in the buffer's order (_fill checked it is one)
    ws = [iv.var for iv in ivs]
    tests = _guard(ws, offsets, fstore.buffer.shape)
    if not tests:
        return None
    back = {v: (w if off == 0 else Sub(w, IntImm(w.dtype, off))) for w, (v, off, _) in zip(ws, offsets)}
    value = Call(fstore.buffer.dtype, "if_then_else", (conjunction(tests), substitute(cstore.value, back), fstore.value))
    reads = tuple(BufferRegion(r.buffer, tuple(Range(substitute(x.min, back), x.extent) for x in r.region))
                  for r in copy.block.reads)
    # the pad block's own name is the fill's without decompose_padding's suffix (the copy's
    # may be a cache's or a reindex's after further scheduling)
    name = fill.block.name[:-len(_FILL_SUFFIX)] if fill.block.name.endswith(_FILL_SUFFIX) else copy.block.name
    block = attrs.evolve(copy.block, name=name, iter_vars=ivs, reads=reads,
                         writes=(BufferRegion.point(fstore.buffer, ws),),
                         body=BufferStore(fstore.buffer, value, tuple(ws)))
    return BlockRealize(ws, IntImm(fill.predicate.dtype, 1), block)


def _pair(first, second, before: list, writers: dict, dom: dict, symbols=frozenset(), func=None) -> "For | None":
    """The merged nest of a fill statement and the copy statement after it, or None."""
    fill, copy = _alone(first), _alone(second)
    if fill is None or copy is None or not (_keeps_all(fill, dom) and _keeps_all(copy, dom)):
        return None
    if not all(runs_whole_domain(nest[1], nest[0], symbols) for nest in (nest_of(first), nest_of(second))):
        return None  # a loop cut short leaves part of the fill or of the interior undone
    if _fill(fill) is None and func is not None:
        fill = _widened(fill, func, symbols) or fill
    fstore, cstore = _fill(fill), spatial_store(copy.block)
    if fstore is None or cstore is None or cstore.buffer is not fstore.buffer:
        return None
    buf = fstore.buffer
    if writers.get(id(buf)) != 2 or id(buf) in loaded(copy.block):
        return None
    if any(_touches(b, id(buf)) for b in before):
        return None
    offsets = _offsets(cstore, copy.block)
    merged = _merged(fill, copy, offsets) if offsets is not None else None
    return own_nest(merged) if merged is not None else None


def _next_touching(stmts: list, k: int) -> "int | None":
    """The index of the first statement after ``k`` that reads or writes the buffer the
    statement ``k`` fills (a fill alone in its nest), else None."""
    fill = _alone(stmts[k])
    found = _constant_store(fill) if fill is not None else None
    if found is None:  # a fill, of the whole buffer or of a part (:func:`_pair` judges which)
        return None
    key = id(found[0].buffer)
    for j in range(k + 1, len(stmts)):
        blocks = []
        post_order_stmts(stmts[j], lambda n: blocks.append(n) if isinstance(n, Block) else None)
        if any(_touches(b, key) for b in blocks):
            return j
    return None


def _touches(block: Block, key: int) -> bool:
    """Whether ``block`` reads or writes the buffer whose id is ``key``."""
    return key in loaded(block) or key in stored(block)


def merge_padding(func: PrimFunc) -> PrimFunc:
    """``func`` with each ``decompose_padding`` pair merged back into one pad block."""
    root = func.root_block
    if root is None or not isinstance(root.body, SeqStmt):
        return func
    writers: dict = {}
    for b in func.blocks():
        for key in stored(b):
            writers[key] = writers.get(key, 0) + 1
    stmts, out, before, k = list(root.body.seq), [], [], 0
    dom = loop_domain(func)
    symbols = frozenset(shape_vars(func))

    def passed(stmt) -> None:
        out.append(stmt)
        post_order_stmts(stmt, lambda n: before.append(n) if isinstance(n, Block) else None)

    while k < len(stmts):
        j = _next_touching(stmts, k)
        merged = _pair(stmts[k], stmts[j], before, writers, dom, symbols, func) if j is not None else None
        if merged is None:
            passed(stmts[k])
            k += 1
            continue
        for m in range(k + 1, j):
            passed(stmts[m])
        out.append(merged)
        k = j + 1
    if len(out) == len(stmts):
        return func
    new_root = attrs.evolve(root, body=SeqStmt(tuple(out)) if len(out) > 1 else out[0])
    return transform(func, lambda n: None, lambda n: new_root if n is root else None)
