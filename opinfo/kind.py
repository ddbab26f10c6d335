"""TVM's pattern kind of a PrimFunc, computed the way relax ``AnnotateTIROpPattern`` does.

The analysis walks the blocks in program order and keeps a running kind:

* a block with one store (several stores only if they share the very same index
  variables) whose every load relates to the store index by *elementwise* (same index
  variables), *broadcast* (load indices appear among the store indices, in order; unit
  dimensions indexed by 0 are skipped) or *injective* (store indices are plain variables
  and load indices use no other variable) raises the kind to the weakest of those; an
  output block that follows a reduction turns ``comm_reduce`` into ``out_ewise_fusable``
  (the softmax rule);
* otherwise a block with reduction iterators is ``out_ewise_fusable`` when its body is a
  multiply-add that reuses data (matmul, conv) or when a load index mixes a reduction
  variable into an expression (pooling), and ``comm_reduce`` when it is a pure reduction;
* anything else is ``opaque``.

A block's accesses are what TVM's visitor holds after its body: entering any block clears
them, so a block with nested blocks is judged on the last nested block's accesses (an
adaptive pool's outer ``_l1`` block over the inner reduction whose extent varies is a
reduction of those, not opaque).

TVM compares index expressions by object identity; after parsing text, only variables
are shared objects, so two compound index expressions never count as "the same" here.
Blocks inside a block's ``init`` are never judged: TVM's visitor walks only a block's body.

This reproduces TVM's answers, including its known quirks (see tests/test_opinfo_kind.py):
a commuted ``C = A * B + C`` update is not seen as a multiply-add, and a block with two
stores at different indices is opaque.
"""
from __future__ import annotations

from tir.expr import BufferLoad, Cast, Add, Mul, IntImm, Var
from tir.function import PrimFunc
from tir.functor import post_order_stmts, pre_order_visit
from tir.stmt import Block, BufferStore, IterKind
from tir.structural import same_ir

ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_EWISE_FUSABLE, OPAQUE = 0, 1, 2, 3, 4, 8
NAMES = {ELEMWISE: "elemwise", BROADCAST: "broadcast", INJECTIVE: "injective",
         COMM_REDUCE: "comm_reduce", OUT_EWISE_FUSABLE: "out_ewise_fusable", OPAQUE: "opaque"}


def same_as(a, b) -> bool:
    """TVM's ``same_as`` as it behaves on parsed IR: only shared variables are the same."""
    return a is b and isinstance(a, Var)


def same_array(xs, ys) -> bool:
    return len(xs) == len(ys) and all(same_as(x, y) for x, y in zip(xs, ys))


def _is_const(e, value) -> bool:
    return isinstance(e, IntImm) and e.value == value


def _vars_in(expr) -> list:
    """Variables used by an index expression; a nested load counts its buffer's data too."""
    found = []

    def visit(n):
        if isinstance(n, Var):
            found.append(n)
        elif isinstance(n, BufferLoad):
            found.append(None)  # the buffer's data handle: never a store index variable
        return True

    pre_order_visit(expr, visit)
    return found


def is_elemwise(store, load) -> bool:
    if isinstance(store, _SharedCopy) and load is store.load:
        return True  # the very index objects of the store (see _shared_index)
    return same_array(store.indices, load.indices)


def is_broadcast(store, load) -> bool:
    j, n = 0, len(store.indices)
    for extent, index in zip(load.buffer.shape, load.indices):
        if _is_const(extent, 1) and _is_const(index, 0):
            continue
        while j < n and not same_as(store.indices[j], index):
            j += 1
        if j == n:
            return False
    return True


def _store_vars(store):
    if not all(isinstance(i, Var) for i in store.indices):
        return None
    return {id(i) for i in store.indices}


def is_injective(store, load) -> bool:
    ids = _store_vars(store)
    if ids is None:
        return False
    return all(v is not None and id(v) in ids for i in load.indices for v in _vars_in(i))


def allows_reuse(store, load) -> bool:
    ids = _store_vars(store)
    if ids is None:
        return False
    for i in load.indices:
        for v in _vars_in(i):
            if v is not None:
                ids.discard(id(v))
    return bool(ids)


def _strip_cast(e):
    while isinstance(e, Cast):
        e = e.value
    return e


def is_fma(body) -> bool:
    """``C[i] = C[i] + A[..] * B[..]`` where both factors leave some store variable unused."""
    if not isinstance(body, BufferStore):
        return False
    add = _strip_cast(body.value)
    if not isinstance(add, Add):
        return False
    mul, acc = _strip_cast(add.b), _strip_cast(add.a)
    if not isinstance(mul, Mul) or not isinstance(acc, BufferLoad):
        return False
    if acc.buffer is not body.buffer or not same_array(body.indices, acc.indices):
        return False
    lhs, rhs = _strip_cast(mul.a), _strip_cast(mul.b)
    if not isinstance(lhs, BufferLoad) or not isinstance(rhs, BufferLoad):
        return False
    return allows_reuse(body, lhs) and allows_reuse(body, rhs)


def is_pure_reduce(reduce_vars, indices) -> bool:
    ids = {id(v) for v in reduce_vars}
    for index in indices:
        used = [v for v in _vars_in(index) if v is not None and id(v) in ids]
        if used and not (isinstance(index, Var) and id(index) in ids):
            return False
    return True


class _BlockAccess:
    """Stores and loads of one block body (not its init) as TVM's visitor leaves them.

    TVM clears its loads and store on entering every block, nested ones included, and a
    nested block's analysis leaves them filled: an outer block sees what its body visits
    after entering its last nested block (that block's accesses and any that follow)."""

    def __init__(self, block: Block):
        self.store = None
        self.multi = False
        self.loads = []
        self.copy = _auto_copy(block)
        pre_order_visit(block.body, self._visit)

    def _visit(self, n):
        if isinstance(n, Block):
            self.store, self.loads = None, []
            self.copy = _auto_copy(n)
            pre_order_visit(n.body, self._visit)
            return False
        if isinstance(n, BufferStore):
            if self.store is not None and not same_array(n.indices, self.store.indices):
                self.multi = True
            self.store = n
            if self.copy and _shared_index(n):
                copy = _SharedCopy(n)
                self.store = copy
                for index in n.indices:  # TVM visits the shared indices twice: store, then load
                    pre_order_visit(index, self._visit)
                self.loads.append(copy.load)
                for index in n.indices:
                    pre_order_visit(index, self._visit)
                return False
        elif isinstance(n, BufferLoad):
            self.loads.append(n)
        return True


def _auto_copy(block: Block) -> bool:
    """The block is one of TVM's ``read_at``/``write_at`` copies (annotated ``auto_copy``)."""
    value = block.annotations.get("auto_copy") if block.annotations else None
    return value is not None and bool(getattr(value, "value", value))


def _shared_index(store) -> bool:
    """``dst[idx] = src[idx]`` with each index structurally the same on both sides: TVM's
    ``read_at``/``write_at`` build such a copy from one index array, so its store and load
    share the very index objects (the same in TVM's identity sense), which parsed text
    cannot show."""
    load = store.value
    return (isinstance(load, BufferLoad) and len(load.indices) == len(store.indices)
            and all(same_ir(a, b) for a, b in zip(store.indices, load.indices)))


class _SharedCopy:
    """A copy store whose index objects are shared with its load: the load is given the
    store's index objects (what TVM sees)."""

    def __init__(self, store):
        self.buffer = store.buffer
        self.indices = store.indices
        self.value = BufferLoad(store.value.buffer, store.indices)
        self.load = self.value


def _index_pattern(store, loads) -> int:
    pattern, has_elem = ELEMWISE, False
    for load in loads:
        if is_elemwise(store, load):
            has_elem = True
        elif is_broadcast(store, load):
            pattern = max(pattern, BROADCAST)
        elif is_injective(store, load):
            pattern = max(pattern, INJECTIVE)
        else:
            return OPAQUE
    if pattern == BROADCAST and has_elem:
        return ELEMWISE
    return pattern


def _block_step(kind: int, block: Block, params: set) -> int:
    acc = _BlockAccess(block)
    if acc.multi:
        kind = OPAQUE
    if acc.store is None:
        return OPAQUE
    pattern = _index_pattern(acc.store, acc.loads)
    if pattern != OPAQUE:
        writes_param = any(id(w.buffer) in params for w in block.writes)
        if writes_param and kind == COMM_REDUCE:
            return OUT_EWISE_FUSABLE
        return max(kind, pattern)
    reduce_vars = [iv.var for iv in block.iter_vars if iv.kind == IterKind.REDUCE]
    if not reduce_vars:
        return OPAQUE
    if is_fma(block.body):
        return max(kind, OUT_EWISE_FUSABLE)
    if any(not is_pure_reduce(reduce_vars, load.indices) for load in acc.loads):
        return max(kind, OUT_EWISE_FUSABLE)
    return max(kind, COMM_REDUCE)


def pattern_kind(func: PrimFunc) -> str:
    """TVM's OpPatternKind name for ``func`` ("elemwise" ... "opaque")."""
    blocks = analyzed_blocks(func)
    if not blocks:
        return NAMES[_blockless_kind(func)]
    return NAMES[blocks_kind(blocks, {id(b) for b in func.buffers})]


def _blockless_kind(func: PrimFunc) -> int:
    """A function without blocks (TIR after TVM's lowering passes): TVM's visitor never
    judges a block, so the kind stays elemwise unless a store's indices are not the very
    ones of the first store (opaque): a lowered ``relu`` or ``sum`` into a 1-D output is
    elemwise, a lowered ``matmul`` (init and update at ``i * n + j``) opaque."""
    first = []

    def visit(n):
        if isinstance(n, BufferStore):
            if first and not same_array(n.indices, first[0].indices):
                raise _Opaque
            first[:] = [n]
        return True

    try:
        pre_order_visit(func.body, visit)
    except _Opaque:
        return OPAQUE
    return ELEMWISE


class _Opaque(Exception):
    """Ends :func:`_blockless_kind`'s walk at the first store at other indices."""


def analyzed_blocks(func: PrimFunc) -> list:
    """The blocks TVM's visitor judges, in the order it judges them: every block of
    ``func`` except those inside a block's ``init``. TVM's block visitor walks only the
    body, so a blockized reduction's nested ``x_red_init`` block (in ``T.init()``) never
    counts; judged after the reduction it would turn ``comm_reduce`` into
    ``out_ewise_fusable`` by the output-block rule."""
    in_init = set()

    def mark(n):
        if isinstance(n, Block):
            in_init.add(id(n))

    def visit(n):
        if isinstance(n, Block) and n.init is not None:
            post_order_stmts(n.init, mark)

    post_order_stmts(func.body, visit)
    return [b for b in func.blocks() if id(b) not in in_init]


def blocks_kind(blocks, outputs: set) -> int:
    """The kind (an int, see NAMES) of a function made of ``blocks`` in program order whose
    parameters are the buffers with ids in ``outputs``: one op's blocks inside a fused kernel."""
    kind = ELEMWISE
    for block in blocks:
        kind = _block_step(kind, block, outputs)
    return kind
