"""Undo TVM's ``pad_einsum`` of a spatial block.

``pad_einsum`` pads a block's iteration domain (8 -> 16) and adds a producer block per read
buffer and a consumer block for the written one::

    X_pad[w] = if_then_else(w1 < 6 and w2 < 8, X[w], 0)      # pad producer
    C_pad[v] = f(X_pad[v], ...)                               # the op, over the padded domain
    C[w] = C_pad[w]                                           # crop consumer, over C's domain

Only the crop's points are kept, and on them every padded read is the unpadded one. The op
block is put back: its domain is C's (a ``T.where`` restating it guards the padded loops,
which :func:`.predicates.drop_predicates` then reads as a non-divisible split), it stores to
C and loads X; the producer and consumer go.

The added buffers and blocks are recognised by TVM's names (:func:`named_pad`): a fused
kernel's pad, elementwise op and slice back to the unpadded region compute the same but are
three ops. A reduction block is restored when only its spatial axes were padded: what it
reads over its reduction iterators must stay inside the unpadded sources on the kept points
(padding a reduction's iteration changes what it sums unless the padded values are neutral:
that is not restored, and :func:`pad_einsum_left` tells). Every condition is checked
from the blocks themselves: the crop copies ``C[w] = C_pad[w]`` over C's whole extent, the op
block is C_pad's only writer and the crop its only reader, each padded buffer has one
writer, a pad producer whose condition keeps exactly X's extent, and the op block its only
reader; indices of the op's padded reads stay inside X on the kept points.
"""
from __future__ import annotations

import math
import re

import attrs
import numpy as np

from tir.expr import (LT, Add, BufferLoad, Call, Cast, FloatImm, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Sub,
                      Var)
from tir.buffer import BufferRegion
from tir.function import PrimFunc
from tir.functor import post_order_stmts, post_order_visit, transform
from tir.stmt import Block, BlockRealize, BufferStore, IterKind, LetStmt, SeqStmt

from .affine import affine, const_of
from .bounded import bounded_form, interval
from .predicates import conjunction
from .probe import NotEvaluable, collect_vars, evaluate, vars_in
from .recognize.guard import conjuncts
from .rewrite import EMPTY, loaded, prune, stored, update_term, without_allocs
from .pad_views import apply_view, view_crop, view_pad_source
from .reindex_pad import REINDEX_PAD, reindexed, unreindex
from .rfactor import combiner_identity
from .tags import SCOPE_SUFFIXES


def _identity(store: BufferStore, block: Block, units: bool = False) -> "list | None":
    """The block's spatial variables, one per store index in order, when the store's indices
    are exactly those (each once), from 0; else None. With ``units``, an index may also be 0
    on an axis of extent 1 (the axis an ``expand_dims`` adds, a reduction's kept axis): None
    in its place."""
    if len(store.indices) != len(store.buffer.shape):
        return None
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    out = []
    for index, extent in zip(store.indices, store.buffer.shape):
        if units and const_of(index) == 0 and const_of(extent) == 1:
            out.append(None)
        elif isinstance(index, Var) and id(index) in ivs:
            out.append(ivs[id(index)])
        else:
            return None
    own = [iv for iv in out if iv is not None]
    spatial = [iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL]
    if len(own) != len(spatial) or len({id(iv) for iv in own}) != len(own):
        return None
    if any(iv.kind != IterKind.SPATIAL or const_of(iv.dom.min) != 0 for iv in own):
        return None
    return out


def _copy_back(block: Block) -> "tuple | None":
    """(store, load) of a block ``C[...] = C_pad[...]`` copying a padded buffer of C's type
    into another buffer, named as ``pad_einsum`` names its crops (:func:`named_pad`): what
    :func:`_crop` and :func:`.pad_views.view_crop` read further."""
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore) or not isinstance(store.value, BufferLoad):
        return None
    load = store.value
    if load.buffer is store.buffer or load.buffer.dtype != store.buffer.dtype:
        return None
    return (store, load) if named_pad(block, load.buffer, store.buffer) else None


def pad_artifact(block: Block) -> bool:
    """Whether ``block`` is a pad producer or a crop as ``pad_einsum`` adds them (or a cache
    copy after them): a block of no op, whether or not :func:`unpad_einsum` could undo it."""
    return _copy_back(block) is not None or _pad_store(block) is not None


def _crop(block: Block) -> "tuple | None":
    """(output, padded source) of a crop ``C[w] = C_pad[w]`` over C's whole extent."""
    found = _copy_back(block)
    if found is None:
        return None
    store, load = found
    ivs = _identity(store, block)
    if ivs is None or tuple(load.indices) != tuple(store.indices):
        return None
    return (store.buffer, load.buffer) if _whole_output(ivs, store.buffer, load.buffer) else None


def _whole_output(ivs: list, out, padded) -> bool:
    """A crop's variables run over ``out``'s whole extent, inside ``padded``'s."""
    return all(_same(iv.dom.extent, out_ext) and (_same(src_ext, out_ext) or _at_least(src_ext, out_ext))
               for iv, out_ext, src_ext in zip(ivs, out.shape, padded.shape))


def _epilogue_crop(block: Block, params: set) -> "tuple | None":
    """(output, padded source) of dlight's write-back with an elementwise epilogue inlined,
    ``C[w] = f(C_reindex_pad[w], ...)`` over C's whole extent: the block named after the
    padded buffer (:data:`.reindex_pad.REINDEX_PAD`), which it reads at the stored indices
    only, and no other buffer of the function's own."""
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore) or id(store.buffer) not in params:
        return None
    ivs = _identity(store, block)
    if ivs is None:
        return None
    loads = []
    post_order_visit(store.value, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    own = {id(ld.buffer): ld.buffer for ld in loads if id(ld.buffer) not in params}
    if len(own) != 1:
        return None
    (padded,) = own.values()
    if padded is store.buffer or len(padded.shape) != len(store.buffer.shape):
        return None
    if not REINDEX_PAD.search(undup(padded.name)) or undup(block.name) != undup(padded.name):
        return None
    if any(ld.buffer is padded and tuple(ld.indices) != tuple(store.indices) for ld in loads):
        return None
    return (store.buffer, padded) if _whole_output(ivs, store.buffer, padded) else None


def _pad_store(block: Block) -> "tuple | None":
    """(store, condition, source load, the store's variables) of a block ``P[w] =
    if_then_else(cond, X[...], c)`` storing at its spatial variables (:func:`_identity`) in
    X's type, named as ``pad_einsum`` names its producers (:func:`named_pad`), the pad value
    loading nothing: what :func:`pad_source` and :func:`.pad_views.view_pad_source` read
    further."""
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore):
        return None
    value = store.value
    if not (isinstance(value, Call) and value.op == "if_then_else" and isinstance(value.args[1], BufferLoad)):
        return None
    cond, load = value.args[0], value.args[1]
    ivs = _identity(store, block)
    if ivs is None or load.buffer.dtype != store.buffer.dtype or not named_pad(block, store.buffer, load.buffer):
        return None
    if any(isinstance(n, BufferLoad) for n in _nodes(value.args[2])):
        return None
    return store, cond, load, ivs


def pad_source(block: Block) -> "tuple | None":
    """(padded buffer, source) of a pad producer ``P[w] = if_then_else(w_d < X.shape[d] and
    ..., X[w], c)`` over P's whole extent, with one conjunct for each dimension where X is
    shorter and none other."""
    found = _pad_store(block)
    if found is None:
        return None
    store, cond, load, ivs = found
    if tuple(load.indices) != tuple(store.indices):
        return None
    short, within = {}, {}
    for iv, p_ext, x_ext in zip(ivs, store.buffer.shape, load.buffer.shape):
        if not _same(iv.dom.extent, p_ext):
            return None
        if not _same(x_ext, p_ext):
            if _at_least(x_ext, p_ext):
                within[id(iv.var)] = x_ext  # P keeps only a prefix of this axis of X
                continue
            if not _at_least(p_ext, x_ext):
                return None
            short[id(iv.var)] = x_ext
    seen = {}
    for term in conjuncts(cond):
        if not isinstance(term, LT) or not isinstance(term.a, Var):
            return None
        if id(term.a) in within and _same(term.b, within[id(term.a)]):
            continue  # always true on P's shorter axis (split pads every axis of the block)
        if id(term.a) not in short or not _same(term.b, short[id(term.a)]) or id(term.a) in seen:
            return None
        seen[id(term.a)] = True
    return (store.buffer, load.buffer) if len(seen) == len(short) else None


def named_pad(block: Block, padded, buffer) -> bool:
    """TVM's names for what ``pad_einsum`` adds: the padded copy of ``B`` is ``B_pad``, and
    the producer or consumer block moving data between them is named after it. A fused
    kernel's own slice or pad (``T_strided_slice``, ``T_pad``) is an op, not this."""
    pad, source = undup(padded.name), undup(buffer.name)
    name = undup(block.name)
    # a block keeps its name when it comes to write a cache of its buffer (``x_pad`` storing
    # ``x_pad_local`` once the cache copy is read through)
    if name != pad and re.fullmatch(re.escape(name) + _SCOPE, pad) is None:
        return False
    # a cache of the padded buffer (write_at/read_at or cache_write after pad_einsum names it
    # ``B_pad_shared``); dlight's Matmul rule: reindex, then pad_einsum, then a cache
    # (:mod:`.reindex_pad`)
    return re.fullmatch(re.escape(source) + _PAD, pad) is not None or \
        re.fullmatch(re.escape(source) + REINDEX_PAD.pattern, pad) is not None


_SCOPE = "(" + "|".join(re.escape(s) for s in SCOPE_SUFFIXES) + ")+"
"""What cache stages append to the name of the buffer they cache (``_shared``, ``_shared_dyn``)."""
_PAD = "_pad(" + _SCOPE + ")?"
"""What ``pad_einsum`` appends to a buffer's name, with the scope a cache of it appends."""


def undup(name: str) -> str:
    """A name without the ``_1``, ``_2`` the printer appends to a repeated one, and with the
    ``.`` it writes as ``_`` in a buffer's identifier (a tuple reduction's ``x_red_temp.v0``
    is the buffer ``x_red_temp_v0``; block names keep the dot)."""
    return re.sub(r"(_\d+)+$", "", name.replace(".", "_"))


def _same(a, b) -> bool:
    """Two extents known equal: the same expression or the same constant."""
    ca = const_of(a)
    return a == b or (ca is not None and ca == const_of(b))


def _extent(e, dtype):
    """Extent ``e`` (a buffer's) as an expression of ``dtype``."""
    c = const_of(e)
    return IntImm(dtype, c) if c is not None else e


_PERIODS = 4
"""Periods of the extents' floordiv/floormod constants over which :func:`_at_least` checks."""


def _at_least(big, small) -> bool:
    """``big >= small`` for every value of the shape variable they use: constants compared;
    for extents over one shape variable ``n`` (``(n + 1) // 2 * 2`` and ``n``), each made of
    sums, constant products and floordiv/floormod by constants, ``big - small`` has a linear
    part and a part periodic in ``n``: the linear part must not decrease and the difference
    must hold for ``n`` over a few periods from 0."""
    cb, cs = const_of(big), const_of(small)
    if cb is not None and cs is not None:
        return cb >= cs
    found = vars_in(big)
    collect_vars(small, found)
    divisors = []
    ok = [True]

    def visit(n):
        if isinstance(n, (FloorDiv, FloorMod)):
            c = const_of(n.b)
            if c is None or c <= 0:
                ok[0] = False
            else:
                divisors.append(c)
        elif not isinstance(n, (Add, Sub, Mul, FloorDiv, FloorMod, IntImm, Var, Cast)):
            ok[0] = False
        elif isinstance(n, Mul) and const_of(n.a) is None and const_of(n.b) is None:
            ok[0] = False

    post_order_visit(big, visit)
    post_order_visit(small, visit)
    if len(found) != 1 or not ok[0]:
        return False
    period = math.lcm(1, *divisors)
    if period > 1024:
        return False
    (var,) = found
    ns = np.arange(0, _PERIODS * period + 2, dtype=np.float64)
    try:
        b = np.asarray(evaluate(big, {var: ns}), dtype=np.float64)
        s_ = np.asarray(evaluate(small, {var: ns}), dtype=np.float64)
    except (NotEvaluable, ValueError, TypeError, ArithmeticError):
        return False
    d = np.broadcast_to(b - s_, ns.shape)
    # linear part: the difference one period on must not be smaller (it then never falls)
    return bool(np.all(d >= 0) and np.all(d[period:] - d[:-period] >= 0))


def _init_ok(block: Block) -> bool:
    """No init, or an init storing a constant at the body's own indices (a reduction's)."""
    init, store = block.init, block.body
    if init is None:
        return True
    return (isinstance(init, BufferStore) and init.buffer is store.buffer
            and isinstance(init.value, (FloatImm, IntImm))
            and len(init.indices) == len(store.indices)
            and all(a == b for a, b in zip(init.indices, store.indices)))


def holds_blocks(block: Block) -> bool:
    found = []
    post_order_stmts(block.body, lambda n: found.append(n) if isinstance(n, BlockRealize) else None)
    return bool(found)


def _nodes(expr) -> list:
    found = []
    post_order_visit(expr, found.append)
    return found


def _restored(realize: BlockRealize, out, shrink: dict, pads: dict, view=None) -> "BlockRealize | None":
    """The op block over the crop's domain (``shrink``: id(var) -> new extent), storing to
    ``out`` and loading the unpadded sources (``pads``: id(padded) -> (source, its extents,
    the view it is read through or None, :mod:`.pad_views`)). ``out`` is a buffer (what the
    block's one store becomes, through ``view`` when given) or, for a tuple reduction, a
    dict id(accumulator) -> the buffer its stores and loads become."""
    block = realize.block
    outs = out if isinstance(out, dict) else {id(block.body.buffer): out}
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    ok = [True]
    reads_out = []
    new_ids = {id(b) for k, b in outs.items() if id(b) != k}
    for part in (block.body, block.init):
        if part is not None and new_ids:
            post_order_visit(part, lambda n: reads_out.append(n) if isinstance(n, BufferLoad) and id(n.buffer) in new_ids
                             else None)
    if reads_out:
        return None  # it reads what it will store to once restored: the reads would change meaning

    def fits(i, x) -> bool:
        """Index ``i`` of a padded read stays inside the source's extent ``x``."""
        if isinstance(i, Var) and id(i) in ivs:
            if id(i) in shrink:
                return _same(shrink[id(i)], x) or _at_least(x, shrink[id(i)])
            ext = ivs[id(i)].dom.extent
            return (_same(ext, x) or _at_least(x, ext)) and const_of(ivs[id(i)].dom.min) == 0
        c = const_of(i)
        return c is not None and const_of(x) is not None and 0 <= c < const_of(x)

    def check(n):
        if isinstance(n, BufferLoad) and id(n.buffer) in pads:
            if not all(fits(i, x) for i, x in zip(n.indices, pads[id(n.buffer)][1])):
                ok[0] = False

    post_order_visit(block.body, check)
    if not ok[0]:
        return None

    def post(n):
        if isinstance(n, BufferLoad) and id(n.buffer) in pads:
            source, _, through = pads[id(n.buffer)]
            return attrs.evolve(n, buffer=source,
                                indices=apply_view(n.indices, through) if through is not None else n.indices)
        if isinstance(n, (BufferLoad, BufferStore)) and id(n.buffer) in outs:
            # the op's store, and a reduction's accumulator it loads
            if view is not None:
                return attrs.evolve(n, buffer=outs[id(n.buffer)], indices=apply_view(n.indices, view))
            return attrs.evolve(n, buffer=outs[id(n.buffer)])
        return None

    body = transform(block.body, post)
    init = transform(block.init, post) if block.init is not None else None
    iter_vars = tuple(attrs.evolve(iv, dom=attrs.evolve(iv.dom, extent=_extent(shrink[id(iv.var)], iv.dom.extent.dtype)))
                      if id(iv.var) in shrink else iv for iv in block.iter_vars)
    reads = {}
    post_order_visit(body, lambda n: reads.setdefault(id(n.buffer), n.buffer) if isinstance(n, BufferLoad) else None)
    written = {id(b): b for b in outs.values()}
    new_block = attrs.evolve(block, body=body, init=init, iter_vars=iter_vars,
                             writes=tuple(BufferRegion.full(b) for b in written.values()),
                             reads=tuple(BufferRegion.full(b) for b in reads.values()))
    pred = realize.predicate
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if id(iv.var) in shrink:
            term = LT(value, _extent(shrink[id(iv.var)], value.dtype))
            pred = conjunction([pred, term])
    return attrs.evolve(realize, block=new_block, predicate=pred)


_COMBINERS = (Add, Mul, Max, Min)


def _neutral_pad(op: BlockRealize, writers: dict, readers: dict, params: set, loops: tuple = ()) -> "tuple | None":
    """(restored reduction, [(pad producer, padded buffer)]) for a reduction ``S[i] = S[i] op
    X_pad[..]`` (init a constant) whose pad producer pads X only along axes the reduction
    runs over, with the neutral element of ``op`` (``pad_einsum`` of a sum padded with 0) or
    with padded elements its predicate never reaches (a max whose split loop stops at X's
    extent): those iterations change nothing, so the reduction runs over X's extent instead
    (a ``T.where`` restating it, read as a split's). Each padded axis must be indexed by a
    reduction variable used nowhere else, so that dropping its padded values drops nothing
    else. (A product padded with 0, which TVM's pad_einsum makes, is not restored: it is 0.)"""
    block = op.block
    store = block.body
    if block.init is None or not isinstance(store, BufferStore) or not _init_ok(block):
        return None
    value = store.value
    if not isinstance(value, _COMBINERS):
        return None
    load = update_term(store)
    if not isinstance(load, BufferLoad) or load.buffer is store.buffer:
        return None
    key = id(load.buffer)
    ws = writers.get(key, [])
    if key in params or len(ws) != 1 or readers.get(key) != [op]:
        return None
    producer = ws[0]
    src = pad_source(producer.block)
    if src is None:
        return None
    neutral = combiner_identity(type(value), producer.block.body.value.args[2], load.buffer.dtype)
    padded, source = src
    pads = {key: (source, list(source.shape), None)}
    stops = {} if neutral else _split_stops(op, pads, loops)
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    uses: dict = {}
    post_order_visit(store, lambda n: uses.__setitem__(id(n), uses.get(id(n), 0) + 1) if isinstance(n, Var) else None)
    shrink = {}
    for i, p_ext, x_ext in zip(load.indices, padded.shape, source.shape):
        if _same(p_ext, x_ext):
            continue
        iv = ivs.get(id(i)) if isinstance(i, Var) else None
        if iv is None or iv.kind != IterKind.REDUCE or not _same(iv.dom.extent, p_ext) or uses.get(id(i)) != 1:
            return None
        # a pad value that is not neutral must never be read: the block's predicate keeps
        # the variable below the source's extent (a split of the padded loop)
        if not neutral and (stops is None or id(i) not in stops):
            return None
        shrink[id(i)] = x_ext
    if not shrink:
        return None
    new = _restored(op, store.buffer, shrink, pads)
    return (new, [(producer, padded)]) if new is not None else None


def _zero_product_pad(op: BlockRealize, writers: dict, readers: dict, params: set) -> "tuple | None":
    """(restored reduction, [(pad producer, padded buffer)]) for a sum of products whose
    reduction axis ``pad_einsum`` padded with 0 in its operands (:func:`_zero_stops`) and
    whose output it did not pad (no crop): the reduction runs over the sources' extent."""
    block = op.block
    store = block.body
    if block.init is None or not isinstance(store, BufferStore) or not _init_ok(block):
        return None
    found = _padded_reads(op, writers, readers, params)
    if found is None or not found[0]:
        return None
    pads, producers = found
    stops = _zero_stops(op, pads, _zero_padded(producers))
    if not stops:
        return None
    new = _restored(op, store.buffer, stops, pads)
    return (new, producers) if new is not None else None


def _padded_reads(op: BlockRealize, writers: dict, readers: dict, params: set) -> "tuple | None":
    """(id(padded buffer) -> (source, its extents), [(pad producer, padded buffer)]) for the
    buffers ``op`` reads that a pad producer (:func:`pad_source`) alone writes; None when
    another block reads one of them too (dropping its producer would change that block)."""
    pads, producers = {}, []
    for key in loaded(op.block):
        ws = writers.get(key, [])
        if key in params or len(ws) != 1:
            continue
        src = pad_source(ws[0].block)
        viewed = view_pad_source(ws[0].block) if src is None else None
        if src is None and viewed is None:
            continue
        if readers.get(key) != [op]:
            return None
        if src is not None:
            pads[key] = (src[1], list(src[1].shape), None)
        else:  # a padded copy of a flattened view of the source (:mod:`.pad_views`)
            padded, source, logical, view = viewed
            pads[key] = (source, logical, view)
            src = (padded, source)
        producers.append((ws[0], src[0]))
    return pads, producers


def _zero_padded(producers: list) -> set:
    """Ids of the padded buffers whose producer pads with 0."""
    return {id(padded) for producer, padded in producers if _pads_with_zero(producer.block)}


def _factors(expr) -> list:
    """The factors of a product (``Mul`` and casts between float types looked through)."""
    if isinstance(expr, Mul):
        return _factors(expr.a) + _factors(expr.b)
    if isinstance(expr, Cast) and expr.dtype.is_float and expr.value.dtype.is_float:
        return _factors(expr.value)
    return [expr]


def _zero_stops(op: BlockRealize, pads: dict, zero: set) -> "dict | None":
    """id(reduction variable) -> the source extent past which a sum's term is 0, for a sum
    ``S[i] = S[i] + A[..] * B[..]`` one of whose factors is a buffer padded with 0
    (``zero``: ids of those in ``pads``) indexed by the variable alone along a padded axis
    (``pad_einsum`` of a matmul pads its reduction axis in both operands): the padded
    iterations add 0. None when one variable would stop at two extents."""
    block = op.block
    store = block.body
    value = store.value
    if block.init is None or not isinstance(value, Add):
        return {}
    term = update_term(store)
    if term is None:
        return {}
    return _term_zero_stops(block, term, pads, zero)


def _term_zero_stops(block: Block, term, pads: dict, zero: set) -> "dict | None":
    """id(reduction variable) -> extent past which the summed ``term`` is 0 (a factor padded
    with 0 along that axis, see :func:`_zero_stops`); None on a conflict."""
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    stops: dict = {}
    for factor in _factors(term):
        if not isinstance(factor, BufferLoad) or id(factor.buffer) not in zero:
            continue
        for i, x in zip(factor.indices, pads[id(factor.buffer)][1]):
            iv = ivs.get(id(i)) if isinstance(i, Var) else None
            if iv is None or iv.kind != IterKind.REDUCE or _same(iv.dom.extent, x):
                continue
            if id(i) in stops and not _same(stops[id(i)], x):
                return None
            stops[id(i)] = x
    return stops


def _split_stops(op: BlockRealize, pads: dict, loops: tuple = ()) -> "dict | None":
    """id(reduction variable) -> the source extent it reads a padded buffer's axis up to,
    for the reduction variables the block's predicate stops there (``k_0 * 2 + k_1 < 5``
    over a domain padded to 16) or whose binding never reaches it over the constant
    ``loops`` around the block (``k_0 % 2 * 3 + k_1`` with ``k_1`` over 3: at most 5, loops
    split again by the unpadded extent): the padded points never run. None when one
    variable would stop at two extents."""
    block = op.block
    ranges = {}
    for lp in loops:
        lo, ext = const_of(lp.min), const_of(lp.extent)
        if lo is not None and ext is not None and ext > 0:
            ranges[lp.loop_var] = (lo, lo + ext - 1)
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    bound = {id(iv.var): v for iv, v in zip(block.iter_vars, op.iter_values)}
    terms = [t for t in conjuncts(op.predicate) if isinstance(t, LT)]
    stops: dict = {}
    bad = [False]

    def visit(n):
        if isinstance(n, BufferLoad) and id(n.buffer) in pads:
            for i, x in zip(n.indices, pads[id(n.buffer)][1]):
                iv = ivs.get(id(i)) if isinstance(i, Var) else None
                if iv is None or iv.kind != IterKind.REDUCE or _same(iv.dom.extent, x):
                    continue
                if any(_same_index(t.a, bound[id(i)]) and _same(t.b, x) for t in terms) or _below(bound[id(i)], x, ranges):
                    if id(i) in stops and not _same(stops[id(i)], x):
                        bad[0] = True
                    stops[id(i)] = x

    post_order_visit(block.body, visit)
    return None if bad[0] else stops


def _pads_with_zero(producer: Block) -> bool:
    """A pad producer (:func:`pad_source`) whose pad value is 0."""
    value = producer.body.value.args[2]
    return isinstance(value, (IntImm, FloatImm)) and value.value == 0


def _same_index(a, b) -> bool:
    """Two index expressions known equal: the same expression or the same affine form
    (``k_0 * 3 + (k_1_0 * 3 + k_1_1)`` and ``k_0 * 3 + k_1_0 * 3 + k_1_1``)."""
    if a == b:
        return True
    fa = affine(a)
    return fa is not None and fa == affine(b)


def _below(value, x, ranges: dict) -> bool:
    """``value`` (a binding) stays in ``[0, x)`` over ``ranges`` (loop var -> inclusive
    bounds), ``x`` a constant."""
    c = const_of(x)
    form = bounded_form(value, ranges) if c is not None else None
    span = interval(form, ranges) if form is not None else None
    return span is not None and 0 <= span[0] and span[1] < c


def _tuple_updates(block: Block) -> "list | None":
    """[(store, combined term)] of a tuple reduction's body (``let v0 = A0[i] + t0 in let v1 =
    A1[i] + t1 in A0[i] = v0; A1[i] = v1``: a norm's sum and sum of squares), each store
    at the same indices, under an init storing a constant to each accumulator there; None
    for any other shape."""
    lets, body = {}, block.body
    while isinstance(body, LetStmt):
        lets[id(body.var)] = body.value
        body = body.body
    parts = body.seq if isinstance(body, SeqStmt) else ()
    if len(parts) < 2 or not all(isinstance(p, BufferStore) for p in parts):
        return None
    init = block.init
    inits = init.seq if isinstance(init, SeqStmt) else ()
    if len(inits) != len(parts) or len(lets) != len(parts):
        return None
    out = []
    for store, first in zip(parts, inits):
        value = lets.get(id(store.value)) if isinstance(store.value, Var) else None
        if not isinstance(value, Add) or tuple(store.indices) != tuple(parts[0].indices):
            return None
        term = update_term(BufferStore(store.buffer, value, store.indices))
        if term is None or any(isinstance(n, Var) and id(n) in lets for n in _nodes(term)):
            return None
        if not (isinstance(first, BufferStore) and first.buffer is store.buffer
                and isinstance(first.value, (FloatImm, IntImm)) and first.value.value == 0
                and tuple(first.indices) == tuple(store.indices)):
            return None
        out.append((store, term))
    if len({id(s.buffer) for s, _ in out}) != len(out):
        return None
    return out


def _tuple_restored(op: BlockRealize, writers: dict, readers: dict, params: set, loops: tuple) -> "tuple | None":
    """(restored block, [crop], [(producer, padded)], padded accumulators) for a tuple
    reduction of sums (:func:`_tuple_updates`) whose accumulators ``pad_einsum`` padded
    (each read by one crop to its unpadded buffer, all over the same spatial variables) and
    whose reduction axes it padded with 0 in a factor of every term, or that its predicate
    stops before the padding: the padded points add 0 to every sum."""
    block = op.block
    updates = _tuple_updates(block)
    if updates is None:
        return None
    outs, crops = {}, []
    for store, _ in updates:
        padded = store.buffer
        others = [r for r in readers.get(id(padded), []) if r is not op]
        got = _crop(others[0].block) if len(others) == 1 else None
        if got is not None and got[1] is padded:
            if id(padded) in params or writers.get(id(padded), []) != [op]:
                return None
            outs[id(padded)] = got[0]
            crops.append(others[0])
        else:
            outs[id(padded)] = padded  # not padded: the accumulator stays
    if crops and len(crops) != len(updates):
        return None
    ivs = _identity(updates[0][0], block)
    if ivs is None:
        return None
    shrink = {}
    for store, _ in updates:
        out = outs[id(store.buffer)]
        for iv, o in zip(ivs, out.shape):
            if not _same(iv.dom.extent, o):
                if not _at_least(iv.dom.extent, o) or (id(iv.var) in shrink and not _same(shrink[id(iv.var)], o)):
                    return None
                shrink[id(iv.var)] = o
    found = _padded_reads(op, writers, readers, params)
    if found is None:
        return None
    pads, producers = found
    stops = _split_stops(op, pads, loops)
    if stops is None:
        return None
    zero = _zero_padded(producers)
    per_term = [_term_zero_stops(block, term, pads, zero) for _, term in updates]
    if any(t is None for t in per_term):
        return None
    # a reduction axis stops early only where the predicate stops it or every term is 0
    zeros = {k: x for k, x in per_term[0].items()
             if all(k in t and _same(t[k], x) for t in per_term[1:])}
    stops = {**zeros, **stops}
    if any(k in shrink and not _same(shrink[k], x) for k, x in stops.items()) or not (stops or shrink):
        return None
    new = _restored(op, outs, {**stops, **shrink}, pads)
    if new is None:
        return None
    return new, crops, producers, [s.buffer for s, _ in updates] if crops else []


def _buffer_names(func: PrimFunc, realizes: list) -> set:
    """The names of ``func``'s parameters and of the buffers its blocks allocate."""
    blocks = [func.root_block] + [r.block for r in realizes]
    return {b.name for b in func.buffers} | {b.name for blk in blocks if blk is not None for b in blk.alloc_buffers}


def pad_einsum_left(func: PrimFunc) -> bool:
    """Whether a pad producer that only ``pad_einsum`` makes (``X_pad`` named after its
    source, :func:`named_pad`) is still in ``func`` (not undone: it pads a reduction's
    iteration, which :func:`unpad_einsum` does not restore). Read as ops it is an
    ``nn.pad`` before the op, which the one op it is not."""
    return any(pad_source(b) is not None for b in func.blocks())


def unpad_einsum(func: PrimFunc) -> PrimFunc:
    """``func`` with its ``pad_einsum`` producer/op/consumer triples put back to the op block
    (see the module docstring), dlight's reindexed ones too (:mod:`.reindex_pad`); unchanged
    when none is found. A cache of the padded output between the op and its crop (write_at
    after pad_einsum: op -> ``C_pad_shared`` -> ``C_pad`` -> C) goes a copy per pass: the
    cache copy restored to write C is the crop of the op in the next."""
    if not any("_pad" in b.name for b in func.blocks()) and not reindexed(func):
        return func  # every crop and pad producer is named B_pad... (:func:`named_pad`)
    unreindexed = unreindex(func)
    out = unreindexed
    for _ in range(_PASSES):
        again = _unpad_einsum(out)
        if again is out:
            break
        out = again
    return func if out is unreindexed else out


_PASSES = 4
"""Rounds of :func:`_unpad_einsum`: one per cache copy between an op and its crop."""


def _unpad_einsum(func: PrimFunc) -> PrimFunc:
    from .coverage import block_realizes

    # blocks holding blocks (the root, partitions) are judged by the blocks they hold
    root = func.root_block
    found = [(r, loops) for r, loops in block_realizes(func.body) if r.block is not root and not holds_blocks(r.block)]
    realizes = [r for r, _ in found]
    if len(realizes) < 2:
        return func  # a pad or crop and the op it pads are two blocks at least
    loops_of = {id(r): loops for r, loops in found}
    writers: dict = {}
    readers: dict = {}
    for r in realizes:
        for key in stored(r.block):
            writers.setdefault(key, []).append(r)
        for key in loaded(r.block):
            readers.setdefault(key, []).append(r)
    params = {id(b) for b in func.buffers}
    replace, drop, dropped_bufs = {}, set(), set()
    swapped = {}  # id(padded) -> the buffer an epilogue crop's op now writes
    for crop in realizes:
        found = _crop(crop.block)
        epilogue = found is None
        if epilogue:
            found = _epilogue_crop(crop.block, params)
        view = None
        if found is None:  # a write-back through the digits of its rows (:mod:`.pad_views`)
            viewed = view_crop(crop.block)
            if viewed is not None:
                out, padded, logical, view = viewed
                found, epilogue = (out, padded), False
        if found is None or id(crop) in drop:
            continue
        out, padded = found
        out_shape = tuple(out.shape) if view is None else tuple(logical)
        if id(padded) in params or len(writers.get(id(padded), [])) != 1:
            continue
        op = writers[id(padded)][0]
        # the crop is its only reader (but for a reduction's own accumulator)
        if [r for r in readers.get(id(padded), []) if r is not op] != [crop]:
            continue
        block = op.block
        if not isinstance(block.body, BufferStore) or id(op) in replace or not _init_ok(block):
            continue  # (a tuple reduction, a crop per accumulator, is judged below)
        ivs = _identity(block.body, block, units=True)
        # a reduction keeps its reduction iterators: what it reads over them must stay inside
        # the unpadded sources (:func:`_restored`), so a padded reduction axis is not restored
        if ivs is None or any(iv.kind != IterKind.REDUCE for iv in block.iter_vars
                              if not any(iv is j for j in ivs)):
            continue
        if block.init is not None and len([iv for iv in ivs if iv is not None]) == len(block.iter_vars):
            continue
        if len(ivs) != len(out_shape) or \
                any(const_of(o) != 1 if iv is None else not _same(iv.dom.extent, o) and not _at_least(iv.dom.extent, o)
                    for iv, o in zip(ivs, out_shape)):
            continue
        shrink = {id(iv.var): o for iv, o in zip(ivs, out_shape) if iv is not None and not _same(iv.dom.extent, o)}
        found = _padded_reads(op, writers, readers, params)
        if found is None or (not shrink and not found[0]):
            continue
        pads, producers = found
        stops = _split_stops(op, pads, loops_of[id(op)])
        zeros = _zero_stops(op, pads, _zero_padded(producers))
        if stops is None or zeros is None:
            continue
        stops = {**zeros, **stops}
        if any(k in shrink and not _same(shrink[k], x) for k, x in stops.items()):
            continue
        target = out
        if epilogue:
            # the op's result over the output's extent: named as before dlight padded it
            # (``matmul_intermediate``), a name the function does not hold
            name = REINDEX_PAD.sub("", undup(padded.name))
            if not name or name in _buffer_names(func, realizes):
                continue
            target = attrs.evolve(padded, shape=tuple(out.shape), name=name)
        new = _restored(op, target, {**stops, **shrink}, pads, view)
        if new is None:
            continue
        replace[id(op)] = new
        if epilogue:
            # the crop computes an elementwise epilogue (dlight inlined it into the write-back):
            # it stays, reading the op's result over the output's extent
            replace[id(crop)] = transform(crop, lambda n: attrs.evolve(n, buffer=target)
                                          if isinstance(n, BufferLoad) and n.buffer is padded else None)
            swapped[id(padded)] = target
        else:
            drop.add(id(crop))
            dropped_bufs.add(id(padded))
        for producer, buf in producers:
            drop.add(id(producer))
            dropped_bufs.add(id(buf))
    for op in realizes:
        if id(op) in replace:
            continue
        if isinstance(op.block.body, LetStmt):
            got = _tuple_restored(op, writers, readers, params, loops_of[id(op)])
            if got is not None and not any(id(p) in drop for p, _ in got[2]):
                new, crops, producers, accumulators = got
                replace[id(op)] = new
                drop.update(id(c) for c in crops)
                dropped_bufs.update(id(b) for b in accumulators)
                for producer, buf in producers:
                    drop.add(id(producer))
                    dropped_bufs.add(id(buf))
            continue
        got = _neutral_pad(op, writers, readers, params, loops_of[id(op)]) or \
            _zero_product_pad(op, writers, readers, params)
        if got is None:
            continue
        new, dropped = got
        if any(id(producer) in drop for producer, _ in dropped):
            continue
        replace[id(op)] = new
        for producer, padded in dropped:
            drop.add(id(producer))
            dropped_bufs.add(id(padded))
    if not replace:
        return func

    def pre(n):
        if isinstance(n, BlockRealize):
            if id(n) in drop:
                return EMPTY
            if id(n) in replace:
                return replace[id(n)]
        return None

    def post(n):
        if not isinstance(n, Block):
            return None
        if any(id(b) in swapped for b in n.alloc_buffers):
            n = attrs.evolve(n, alloc_buffers=tuple(swapped.get(id(b), b) for b in n.alloc_buffers))
        return without_allocs(n, dropped_bufs)

    return prune(transform(func, post, pre))
