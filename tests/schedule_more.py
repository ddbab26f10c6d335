"""More TVM schedule primitives for tests, at IR level: fuse, decompose_reduction,
cache_read/cache_write, loop kinds and annotations (inlining in :mod:`schedule_inline`).

Each function takes a PrimFunc and a ``random.Random`` and returns a PrimFunc computing the
same values, in the form TVM's ``tir.Schedule`` prints for that primitive:

* ``fuse``: ``for i0_i1_fused in range(E0 * E1)`` with bindings ``i0_i1_fused // E1`` and
  ``i0_i1_fused % E1``;
* ``decompose_reduction``: the init of a reduction block becomes a block ``NAME_init``
  (spatial iterators only, no reads) placed at a random loop level no deeper than the
  first loop feeding a reduction iterator, under copies of the loops below that level
  which feed its spatial iterators;
* ``cache_write``: the block stores to a new ``BUF_local`` buffer (scope "local") and a copy
  block ``BUF_local`` after its nest writes ``BUF[v...] = BUF_local[v...]``;
* ``cache_read``: a copy block ``BUF_shared`` before a reader's nest fills a new
  ``BUF_shared`` buffer (scope "shared") and the reader loads from it;
* ``compute_inline``, ``reverse_compute_inline``: see :mod:`schedule_inline`;
* ``loop_kinds``: some loops become ``T.parallel``/``T.vectorized``/``T.unroll``, get an
  annotation (``sch.annotate``) or are bound to ``blockIdx.x`` (``sch.bind``).

Non-divisible ``split`` with a ``T.where`` predicate and ``reorder`` are in
:mod:`schedule_helpers`.
"""
from __future__ import annotations

import random

import attrs

from tir.buffer import Buffer, BufferRegion, Range
from tir.expr import BufferLoad, IntImm, Var, const, floordiv, floormod
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, ForKind, IterKind, IterVar, SeqStmt

from schedule_helpers import _nest, _rebuild
from schedule_inline import _reads_buffer, _writers, compute_inline, reverse_compute_inline


def _on_nests(func: PrimFunc, fn) -> PrimFunc:
    """``func`` with ``fn(loop)`` applied to every outermost loop (None keeps it)."""
    body = transform(func.body, lambda n: None, lambda n: fn(n) if isinstance(n, For) else None)
    return attrs.evolve(func, body=body)


def _vars_of(expr) -> set:
    found = set()
    post_order_visit(expr, lambda n: found.add(id(n)) if isinstance(n, Var) else None)
    return found


# ---- fuse -------------------------------------------------------------------------------

def _role(loop: For, realize: BlockRealize) -> set:
    """The kinds of the block iterators that ``loop`` feeds."""
    return {iv.kind for iv, v in zip(realize.block.iter_vars, realize.iter_values)
            if id(loop.loop_var) in _vars_of(v)}


def _same_role(a: For, b: For, realize: BlockRealize) -> bool:
    """Loops feeding only spatial (or only reduction) iterators: fusing a spatial with a
    reduction loop would move the init (it runs at the first reduction-loop iteration)."""
    ra, rb = _role(a, realize), _role(b, realize)
    return len(ra) <= 1 and len(rb) <= 1 and (ra == rb or not ra or not rb)


def fuse_nest(loop: For, rng: random.Random) -> "For | None":
    """Fuse two adjacent constant loops of the nest at ``loop`` (chosen at random)."""
    loops, body = _nest(loop)
    if not isinstance(body, BlockRealize):
        return None
    pairs = [k for k in range(len(loops) - 1)
             if all(isinstance(lp.extent, IntImm) and isinstance(lp.min, IntImm) and lp.min.value == 0
                    for lp in loops[k:k + 2]) and _same_role(loops[k], loops[k + 1], body)]
    if not pairs:
        return None
    k = rng.choice(pairs)
    a, b = loops[k], loops[k + 1]
    dtype = a.loop_var.dtype
    fused = Var(f"{a.loop_var.name}_{b.loop_var.name}_fused", dtype)
    inner = const(b.extent.value, dtype)
    mapping = {a.loop_var: floordiv(fused, inner), b.loop_var: floormod(fused, inner)}
    new = For(fused, const(0, dtype), const(a.extent.value * b.extent.value, dtype), ForKind.SERIAL, None)
    return _rebuild(loops[:k] + [new] + loops[k + 2:], substitute(body, mapping))


def fuse(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """Every nest over a block with two of its loops fused."""
    return _on_nests(func, lambda lp: fuse_nest(lp, rng))


# ---- loop kinds -------------------------------------------------------------------------

def _kind_for(loop: For, realize, rng: random.Random) -> For:
    """``loop`` unrolled, annotated, or (when it feeds only spatial iterators, as TVM
    requires) parallel or vectorized; or unchanged."""
    if loop.kind != ForKind.SERIAL or rng.random() < 0.6:
        return loop
    if rng.random() < 0.25:  # sch.annotate
        return attrs.evolve(loop, annotations={"pragma_auto_unroll_max_step": 16})
    spatial = isinstance(realize, BlockRealize) and _role(loop, realize) <= {IterKind.SPATIAL}
    kinds = [ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.UNROLLED] if spatial else [ForKind.UNROLLED]
    return attrs.evolve(loop, kind=rng.choice(kinds))


def _bound(loop: For, realize, rng: random.Random) -> For:
    """``sch.bind`` of a loop feeding only spatial iterators to ``blockIdx.x`` (sometimes)."""
    spatial = isinstance(realize, BlockRealize) and _role(loop, realize) <= {IterKind.SPATIAL}
    if not spatial or loop.kind != ForKind.SERIAL or rng.random() < 0.7:
        return loop
    return attrs.evolve(loop, kind=ForKind.THREAD_BINDING, thread_binding="blockIdx.x")


def loop_kinds(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """Some serial loops made parallel, vectorized or unrolled, or annotated; the outermost
    loop of a nest sometimes bound to a GPU block index."""
    def nest(loop):
        loops, body = _nest(loop)
        loops = [_bound(loops[0], body, rng)] + loops[1:]
        return _rebuild([_kind_for(lp, body, rng) for lp in loops], body)

    return _on_nests(func, nest)


# ---- decompose_reduction ----------------------------------------------------------------

def _init_block(realize: BlockRealize, loop_map: dict) -> BlockRealize:
    """The ``NAME_init`` block of a reduction block, its loop variables renamed by ``loop_map``."""
    block = realize.block
    pairs = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.kind == IterKind.SPATIAL]
    fresh = {iv.var: Var(iv.var.name + "_init", iv.var.dtype) for iv, _ in pairs}
    ivs = [IterVar(fresh[iv.var], iv.dom, IterKind.SPATIAL) for iv, _ in pairs]
    writes = tuple(substitute(w, fresh) for w in block.writes)
    init = Block(block.name + "_init", ivs, (), writes, substitute(block.init, fresh))
    values = [substitute(v, loop_map) for _, v in pairs]
    return BlockRealize(values, substitute(realize.predicate, loop_map), init)


def decompose_nest(loop: For, rng: random.Random) -> "For | SeqStmt | None":
    """The nest at ``loop`` with its reduction block's init decomposed (see module doc)."""
    loops, realize = _nest(loop)
    if not isinstance(realize, BlockRealize) or realize.block.init is None:
        return None
    block = realize.block
    kinds = [iv.kind for iv in block.iter_vars]
    red_vars = set().union(*[_vars_of(v) for v, k in zip(realize.iter_values, kinds) if k != IterKind.SPATIAL])
    spa_vars = set().union(*[_vars_of(v) for v, k in zip(realize.iter_values, kinds) if k == IterKind.SPATIAL])
    first = next((k for k, lp in enumerate(loops) if id(lp.loop_var) in red_vars), len(loops))
    pos = rng.randint(0, first)
    below = [lp for lp in loops[pos:] if id(lp.loop_var) in spa_vars]
    if any(id(lp.loop_var) in red_vars for lp in below):
        return None
    if _vars_of(realize.predicate) & red_vars:
        return None
    fresh = {lp.loop_var: Var(lp.loop_var.name + "_init", lp.loop_var.dtype) for lp in below}
    init_loops = [attrs.evolve(lp, loop_var=fresh[lp.loop_var]) for lp in below]
    init = _rebuild(init_loops, _init_block(realize, fresh))
    # TVM renames the reduction block ``NAME_update`` (compute tags are read through it)
    update = BlockRealize(realize.iter_values, realize.predicate,
                          attrs.evolve(block, init=None, name=block.name + "_update"))
    rest = _rebuild(loops[pos:], update)
    return _rebuild(loops[:pos], SeqStmt((init, rest)))


def _flatten(func: PrimFunc) -> PrimFunc:
    """Nested sequences spliced into their parent (TVM's SeqStmt is flat)."""
    def post(n):
        if isinstance(n, SeqStmt) and any(isinstance(x, SeqStmt) for x in n.seq):
            return SeqStmt(tuple(y for x in n.seq for y in (x.seq if isinstance(x, SeqStmt) else (x,))))
        return None
    return attrs.evolve(func, body=transform(func.body, post))


def decompose_reduction(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """Every reduction block with its init in a separate block."""
    return _flatten(_on_nests(func, lambda lp: decompose_nest(lp, rng)))


# ---- cache_write / cache_read -------------------------------------------------------------

def _copy_nest(name: str, dst: Buffer, src: Buffer) -> For:
    """``for ax...: with T.block(name): dst[v...] = src[v...]`` over the whole buffer."""
    dims = range(len(dst.shape))
    axs = [Var(f"ax{d}", s.dtype) for d, s in zip(dims, dst.shape)]
    vs = [Var(f"v{d}", s.dtype) for d, s in zip(dims, dst.shape)]
    ivs = [IterVar(v, Range(IntImm(s.dtype, 0), s), IterKind.SPATIAL) for v, s in zip(vs, dst.shape)]
    point = lambda buf: BufferRegion(buf, tuple(Range(v, IntImm(v.dtype, 1)) for v in vs))
    store = BufferStore(dst, BufferLoad(src, tuple(vs)), tuple(vs))
    block = Block(name, ivs, (point(src),), (point(dst),), store)
    body = BlockRealize(axs, const(True), block)
    loops = [For(a, IntImm(s.dtype, 0), s, ForKind.SERIAL, None) for a, s in zip(axs, dst.shape)]
    return _rebuild(loops, body)


def _rename_buffer(node, old: Buffer, new: Buffer):
    """``node`` with ``old`` replaced by ``new`` in loads, stores and regions."""
    def post(n):
        if isinstance(n, (BufferLoad, BufferStore, BufferRegion)) and n.buffer is old:
            return attrs.evolve(n, buffer=new)
        return None
    return transform(node, post)


def _root_parts(func: PrimFunc) -> "tuple | None":
    root = func.root_block
    if root is None:
        return None
    body = root.body
    return root, list(body.seq) if isinstance(body, SeqStmt) else [body]


def _with_root(func: PrimFunc, root: Block, parts: list, new_alloc: Buffer) -> PrimFunc:
    body = parts[0] if len(parts) == 1 else SeqStmt(tuple(parts))
    root = attrs.evolve(root, body=body, alloc_buffers=root.alloc_buffers + (new_alloc,))
    return attrs.evolve(func, body=attrs.evolve(func.body, block=root))


def cache_write(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """One top-level nest (chosen at random) computes into ``BUF_local``, then copies."""
    got = _root_parts(func)
    if got is None:
        return func
    root, parts = got
    cands = []
    for k, part in enumerate(parts):
        blocks = []
        post_order_visit(part, lambda n: blocks.append(n) if isinstance(n, Block) else None)
        if len(blocks) == 1 and len(blocks[0].writes) == 1:
            buf = blocks[0].writes[0].buffer
            if _writers(func.body, buf) == 1:
                cands.append((k, buf))
    if not cands:
        return func
    k, buf = rng.choice(cands)
    local = Buffer(buf.name + "_local", buf.shape, buf.dtype, scope="local")
    parts[k:k + 1] = [_rename_buffer(parts[k], buf, local), _copy_nest(local.name, buf, local)]
    return _with_root(func, root, parts, local)


def cache_read(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """A reader nest of one parameter (chosen at random) reads a ``BUF_shared`` copy of it."""
    got = _root_parts(func)
    if got is None:
        return func
    root, parts = got
    cands = [(k, p) for k, part in enumerate(parts) for p in func.buffers
             if _reads_buffer(part, p) and _writers(func.body, p) == 0]
    if not cands:
        return func
    k, buf = rng.choice(cands)
    shared = Buffer(buf.name + "_shared", buf.shape, buf.dtype, scope="shared")
    parts[k:k + 1] = [_copy_nest(shared.name, shared, buf), _rename_buffer(parts[k], buf, shared)]
    return _with_root(func, root, parts, shared)


PRIMITIVES = {"fuse": fuse, "loop_kinds": loop_kinds, "decompose_reduction": decompose_reduction,
              "cache_write": cache_write, "cache_read": cache_read, "compute_inline": compute_inline, "reverse_compute_inline": reverse_compute_inline}
