"""The meaning of a PrimFunc's outputs as expression trees over its parameters.

Each block becomes a *stage*: the buffer it stores to and the value stored, where a
reduction block's value is a :class:`Reduce` node (combiner, source, reduction axes,
init). Loads of intermediate buffers are then replaced by their producer's value with
the producer's block variables substituted by the load's indices, recursively, wrapped
in an :class:`Inlined` marker that keeps the intermediate buffer (its shape tells, e.g.,
how much a pad block padded). The result does not depend on loop order, loop splitting,
or whether a pad block was inlined by a schedule: only block variables and index forms
remain.
"""
from __future__ import annotations

import attrs

from tir.buffer import Buffer
from tir.expr import Add, BufferLoad, Max, Min, Mul, PrimExpr, Var, max_value, min_value
from tir.function import PrimFunc
from tir.functor import pre_order_stmts, pre_order_visit, substitute, transform
from tir.stmt import Block, BufferStore, IterKind, LetStmt, SeqStmt


from .affine import const_of, equal_extents, float_of
from .arg_select import read_arg_update


@attrs.frozen(cache_hash=True)
class Reduce(PrimExpr):
    """``combiner`` over ``axes`` (IterVars) of ``source``, starting from ``init``."""

    combiner: str
    """"sum", "prod", "max" or "min"."""
    source: PrimExpr
    axes: tuple = attrs.field(converter=tuple)
    init: PrimExpr

    @property
    def dtype(self):
        return self.source.dtype


@attrs.frozen(cache_hash=True)
class ArgReduce(PrimExpr):
    """The index (``combiner`` "argmax"/"argmin") of the extreme of ``source`` over ``axes``."""

    combiner: str
    source: PrimExpr
    axes: tuple = attrs.field(converter=tuple)
    index: PrimExpr
    """The index expression the block records (in terms of the axes' variables)."""
    dtype: object


@attrs.frozen(cache_hash=True)
class Inlined(PrimExpr):
    """``buffer[indices]`` of an intermediate buffer, replaced by the ``value`` it holds."""

    buffer: Buffer
    indices: tuple = attrs.field(converter=tuple)
    value: PrimExpr

    @property
    def dtype(self):
        return self.value.dtype


@attrs.frozen
class Stage:
    """One block seen as ``buffer[indices] = expr``."""

    block: Block
    buffer: Buffer
    indices: tuple
    expr: "PrimExpr | None"
    """None when the block is not understood (several stores, no store, ...)."""


_COMBINERS = {Add: "sum", Mul: "prod", Max: "max", Min: "min"}


def _stores(body) -> list:
    found = []
    pre_order_stmts(body, lambda n: found.append(n) if isinstance(n, BufferStore) else not isinstance(n, Block))
    return found


def _inline_lets(body):
    """Replace LetStmt variables by their values; returns the statement without lets."""
    mapping = {}
    while isinstance(body, LetStmt):
        mapping[body.var] = substitute(body.value, mapping)
        body = body.body
    return substitute(body, mapping) if mapping else body


def _is_acc(e, store) -> bool:
    return isinstance(e, BufferLoad) and e.buffer is store.buffer and e.indices == store.indices


def _init_stores(block: Block) -> "list | None":
    """The stores of a block's init when it is nothing but stores (one, or a sequence of
    them, lets inlined); None for any other init (loops, conditions, nested blocks)."""
    body = _inline_lets(block.init)
    seq = body.seq if isinstance(body, SeqStmt) else [body]
    return list(seq) if seq and all(isinstance(s, BufferStore) for s in seq) else None


def _inits_match(inits: "list | None", stores: list) -> bool:
    """Each update store has exactly one init store, to the same buffer at the same indices
    (the same index expressions over the same block variables): an init writing elsewhere
    leaves the accumulator unset (or sets another element) -- not the reduction it looks like."""
    if inits is None or len(inits) != len(stores):
        return False
    left = list(inits)
    for store in stores:
        hit = [i for i in left if i.buffer is store.buffer and i.indices == store.indices]
        if len(hit) != 1:
            return False
        left.remove(hit[0])
    return not left


def _spatial_store(block: Block, store: BufferStore) -> bool:
    """The store's indices use no reduction variable of its block (TVM's definition of a
    reduction block): with one, the init runs only where that variable starts, and the
    other elements accumulate from nothing."""
    red = {id(iv.var) for iv in block.iter_vars if iv.kind == IterKind.REDUCE}
    hits = []
    for index in store.indices:
        pre_order_visit(index, lambda n: hits.append(n) if isinstance(n, Var) and id(n) in red else not hits)
    return not hits


def _reduction(block: Block, store: BufferStore) -> "PrimExpr | None":
    comb = _COMBINERS.get(type(store.value))
    init = _init_stores(block)
    if comb is None or not _inits_match(init, [store]) or not _spatial_store(block, store):
        return None
    a, b = store.value.a, store.value.b
    if _is_acc(a, store):
        src = b
    elif _is_acc(b, store):
        src = a
    else:
        return None
    axes = tuple(iv for iv in block.iter_vars if iv.kind == IterKind.REDUCE)
    return Reduce(comb, src, axes, init[0].value)


def _arg_reduction(block: Block, stores: list) -> "tuple | None":
    """argmax/argmin: an index store and a value store updated together with Selects
    (read by their effect, :mod:`opinfo.arg_select`), from -1 and the value's extreme."""
    if len(stores) != 2 or block.init is None or stores[0].indices != stores[1].indices \
            or not _spatial_store(block, stores[0]):
        return None
    readings = [r for r in (_arg_roles(block, *stores), _arg_roles(block, *stores[::-1])) if r is not None]
    if len(readings) != 1:
        return None
    idx, (comb, source, index) = readings[0]
    axes = tuple(iv for iv in block.iter_vars if iv.kind == IterKind.REDUCE)
    return idx, ArgReduce(comb, source, axes, index, idx.buffer.dtype)


def _arg_roles(block: Block, idx: BufferStore, val: BufferStore) -> "tuple | None":
    """(index store, its reading) with ``idx`` as the index and ``val`` as the value: the
    index is an integer and its new value an index expression reading no buffer (on integer
    data both stores are integers, so the roles are told apart by what they read)."""
    if idx.buffer.dtype.is_float:
        return None
    read = read_arg_update(val.value, BufferLoad(val.buffer, val.indices),
                           idx.value, BufferLoad(idx.buffer, idx.indices))
    if read is None or _loads(read[2]):
        return None
    return (idx, read) if _arg_init_ok(read[0], block, idx, val) else None


def _loads(expr) -> bool:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) else True)
    return bool(found)


def _arg_init_ok(comb: str, block: Block, idx: BufferStore, val: BufferStore) -> bool:
    """The init stores -1 as the index and, as the value, one no element can beat: the lowest
    (argmax) or highest (argmin) value of its type or beyond."""
    listed = _init_stores(block)
    if not _inits_match(listed, [idx, val]):
        return False
    inits = {id(s.buffer): s for s in listed}
    i, v = inits.get(id(idx.buffer)), inits.get(id(val.buffer))
    if len(inits) != 2 or i is None or v is None or i.indices != idx.indices or v.indices != val.indices:
        return False
    first, start = float_of(i.value), float_of(v.value)
    if first != -1 or start is None:
        return False
    if comb == "argmax":
        return start <= float_of(min_value(val.buffer.dtype))
    return start >= float_of(max_value(val.buffer.dtype))


def _multi_reduction(block: Block, stores: list) -> "list | None":
    """Independent reductions updated in one block (group_norm's sum and sum of squares):
    one Reduce stage per store, when no update reads another accumulator."""
    if len(stores) < 2 or block.init is None:
        return None
    written = {id(s.buffer) for s in stores}
    listed = _init_stores(block)
    if len(written) != len(stores) or not _inits_match(listed, stores):
        return None
    inits = {id(s.buffer): s for s in listed}
    out = []
    for store in stores:
        red = _reduction_with(block, store, inits[id(store.buffer)])
        if red is None or _reads_any(red.source, written):
            return None
        out.append(Stage(block, store.buffer, store.indices, red))
    return out


def _reads_any(expr, buffer_ids: set) -> bool:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and id(n.buffer) in buffer_ids else True)
    return bool(found)


def _reduction_with(block: Block, store: BufferStore, init: BufferStore) -> "Reduce | None":
    if init.indices != store.indices or not _spatial_store(block, store):
        return None
    comb = _COMBINERS.get(type(store.value))
    if comb is None:
        return None
    a, b = store.value.a, store.value.b
    src = b if _is_acc(a, store) else a if _is_acc(b, store) else None
    if src is None:
        return None
    axes = tuple(iv for iv in block.iter_vars if iv.kind == IterKind.REDUCE)
    return Reduce(comb, src, axes, init.value)


def stages_of(block: Block) -> list:
    """The stages of one block: usually one; one per accumulator of a multi-value reduction.
    A stage's ``expr`` is None when the block is not understood."""
    body = _inline_lets(block.body)
    stores = _stores(body)
    if len(stores) == 1 and not isinstance(body, SeqStmt):
        store = stores[0]
        if block.init is None:
            return [Stage(block, store.buffer, store.indices, store.value)]
        return [Stage(block, store.buffer, store.indices, _reduction(block, store))]
    arg = _arg_reduction(block, stores) if stores else None
    if arg is not None:
        return [Stage(block, arg[0].buffer, arg[0].indices, arg[1])]
    flat = isinstance(body, SeqStmt) and all(isinstance(x, BufferStore) for x in body.seq)
    multi = _multi_reduction(block, stores) if flat else None
    if multi is not None:
        return multi
    first = stores[0] if stores else None
    return [Stage(block, first.buffer if first else None, first.indices if first else (), None)]


def stage_of(block: Block) -> Stage:
    """The first stage of one block (see :func:`stages_of`)."""
    return stages_of(block)[0]


def _pure_vars(indices) -> bool:
    return all(isinstance(i, Var) for i in indices) and len({id(i) for i in indices}) == len(indices)


def _fills(stage: Stage) -> bool:
    """The block of ``stage`` (indices its own variables) runs over the whole buffer: each
    index's variable from 0 over that dimension's extent. A producer over fewer rows (its
    loop, and with ``T.axis.remap`` its domain, cut short) leaves the rest of the buffer
    unset, and its value cannot stand for a load there."""
    ivs = {id(iv.var): iv for iv in stage.block.iter_vars}
    for v, size in zip(stage.indices, stage.buffer.shape):
        iv = ivs.get(id(v))
        if iv is None or const_of(iv.dom.min) != 0 or not equal_extents(iv.dom.extent, size):
            return False
    return len(stage.indices) == len(stage.buffer.shape)


def _short_box(stage: Stage) -> "dict | None":
    """For a producer whose block runs a box from the buffer's start smaller than the
    buffer (indices its own variables, each from 0; a constant extent below the
    dimension's on some dimensions), ``{dimension: extent run}`` of the short dimensions;
    None otherwise. ``blockize`` then ``compute_at`` leave such a producer: a pad block
    computing the 12 padded columns a stride-3 convolution reads of 13."""
    if len(stage.indices) != len(stage.buffer.shape):
        return None
    ivs = {id(iv.var): iv for iv in stage.block.iter_vars}
    short = {}
    for j, (v, size) in enumerate(zip(stage.indices, stage.buffer.shape)):
        iv = ivs.get(id(v))
        if iv is None or const_of(iv.dom.min) != 0:
            return None
        if equal_extents(iv.dom.extent, size):
            continue
        ext, full = const_of(iv.dom.extent), const_of(size)
        if ext is None or full is None or not 0 < ext < full:
            return None
        short[j] = ext
    return short or None


def _reads_within(func: PrimFunc, buffer, box: dict) -> bool:
    """Every load of ``buffer`` in ``func`` provably reads inside ``box`` (dimension ->
    extent from 0) over its block's domain (blocks whose variables all start at 0; an index
    whose range is not known refutes)."""
    from .affine import affine
    from .recognize.guard import value_range

    for block in func.blocks():
        loads: list = []
        for part in (block.body, block.init):
            if part is not None:
                pre_order_visit(part, lambda n: loads.append(n) or True if isinstance(n, BufferLoad) and n.buffer is buffer
                                else not isinstance(n, Block))
        if not loads:
            continue
        if any(const_of(iv.dom.min) != 0 for iv in block.iter_vars):
            return False
        dom = {iv.var: iv.dom.extent for iv in block.iter_vars}
        for load in loads:
            for j, ext in box.items():
                form = affine(load.indices[j])
                r = value_range(form, dom) if form is not None else None
                if r is None or r[0] < 0 or r[1] >= ext:
                    return False
    return True


def _short_nests(func: PrimFunc) -> set:
    """Ids of the blocks whose nest, a statement of the root block of its own, provably
    does not run every point of the block's domain (a loop cut short, a binding that skips):
    such a producer's value cannot stand for a load of an element it never writes. Nests
    under loops they share with a consumer (``compute_at``) write region by region and are
    not judged here (:mod:`.intermediate_check` is)."""
    from .probe import shape_vars
    from .realize_check import covers_domain
    from .rewrite import nest_of

    root = func.root_block
    if root is None:
        return set()
    stmts = root.body.seq if isinstance(root.body, SeqStmt) else (root.body,)
    symbols = frozenset(shape_vars(func))
    short = set()
    for stmt in stmts:
        nest = nest_of(stmt)  # covers_domain judges spatial blocks only (None otherwise)
        if nest is not None and covers_domain(nest[1], nest[0], symbols) is False:
            short.add(id(nest[1].block))
    return short


class Semantics:
    """Stages of a PrimFunc and the inlined meaning of each output buffer."""

    def __init__(self, func: PrimFunc):
        self.func = func
        self.params = list(func.buffers)
        self.stages = [s for b in func.blocks() for s in stages_of(b)]
        self.producers: dict = {}
        for s in self.stages:
            if s.buffer is not None:
                self.producers.setdefault(id(s.buffer), []).append(s)
        self._memo: dict = {}
        self._active: set = set()
        self.opaque = any(s.expr is None for s in self.stages)
        self._short: "set | None" = None
        """:func:`_short_nests`, found when a producer is first inlined."""

    def is_param(self, buf) -> bool:
        return any(buf is p for p in self.params)

    def _read_inside(self, stage: Stage) -> bool:
        """``stage`` writes a box from its buffer's start (:func:`_short_box`) and every
        load of the buffer reads inside it: its value stands for each of them."""
        key = ("inside", id(stage))
        if key not in self._memo:
            box = _short_box(stage)
            self._memo[key] = box is not None and _reads_within(self.func, stage.buffer, box)
        return self._memo[key]

    def outputs(self) -> list:
        """Stages that write a parameter buffer, in program order."""
        return [s for s in self.stages if s.buffer is not None and self.is_param(s.buffer)]

    def resolve(self, expr: PrimExpr) -> PrimExpr:
        """``expr`` with every intermediate load replaced by an Inlined producer value."""
        def post(n):
            if isinstance(n, BufferLoad) and not self.is_param(n.buffer):
                return self._inline(n)
            return None
        return transform(expr, post)

    def _inline(self, load: BufferLoad) -> "PrimExpr | None":
        prods = self.producers.get(id(load.buffer), [])
        if len(prods) != 1 or prods[0].expr is None or not _pure_vars(prods[0].indices):
            return None
        if not _fills(prods[0]) and not self._read_inside(prods[0]):
            return None
        if self._short is None:
            self._short = _short_nests(self.func)
        if id(prods[0].block) in self._short:
            return None
        stage = prods[0]
        value = self._memo.get(id(stage))
        if value is None:
            if id(stage) in self._active:
                return None  # a stage reading its own buffer outside a reduction: left a load
            self._active.add(id(stage))
            try:
                value = self.resolve(stage.expr)
            finally:
                self._active.discard(id(stage))
            self._memo[id(stage)] = value
        mapping = dict(zip(stage.indices, load.indices))
        return Inlined(load.buffer, load.indices, substitute(value, mapping))

    def meaning(self, stage: Stage) -> PrimExpr:
        return self.resolve(stage.expr)
