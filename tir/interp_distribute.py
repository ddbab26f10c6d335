"""Running sibling nests under common loops one after the other (loop distribution).

A compute_at schedule leaves loops around a sequence of nests::

    for i, j:                       # the common loops
        for a: block P  (P[a] = f(x, a))        # a producer, recomputed per (i, j)
        for k: block C  (C[i, j] += P[k] ...)   # its consumer

which the interpreter would otherwise walk one (i, j) at a time, each step running two
tiny nests. Distributing the common loops over the sequence (all of P's iterations, then all
of C's) lets each nest run as one vectorised grid. It computes the same thing when:

* the nests write distinct buffers, and no nest writes a buffer an earlier one reads or
  writes (no dependence runs backwards in the sequence);
* a nest whose buffer a later nest reads is a pure producer: one store ``P[v...] = f`` at
  exactly its own spatial iteration variables, ``f`` using no loop variable of its nest
  and reading only buffers nothing in the sequence writes or earlier pure producers'
  buffers. Every write of an element then stores the same value;
* every read of a producer's element happens, in the original order, after some write of
  it: checked on the actual indices. Each element gets the earliest common-loop iteration
  that writes it; each read of it must come at that iteration or later. A read of an
  element not yet written (storage read before written, which a schedule may leave, and
  which reads whatever the memory held) keeps the one-step-at-a-time walk.

Anything else (a nest with nested sequences, allocations, loads inside indices, a store
under a condition in a producer) returns False, and the loops are walked as before.
"""
from __future__ import annotations

import numpy as np

from . import expr as E
from . import stmt as S
from .interp_data import InterpError
from .interp_expr import Ctx, evaluate
from .interp_nest import bind_grid, bind_iter_vars, predicate_mask
from .loop_nest import block_accesses, collect_nest, free_vars, per_loop, stores_and_loads

class _Item:
    """One nest of the sequence, wrapped in the common loops."""

    def __init__(self, wrapped: S.For, nest):
        self.wrapped = wrapped
        self.nest = nest
        block = nest.realize.block
        self.stores, self.loads = block_accesses(block)
        self.writes = {st.buffer for st in self.stores}
        self.reads = {ld.buffer for ld in self.loads}
        self.pure = _pure(block, self.stores, {l.loop_var for l in nest.loops})


def _pure(block: S.Block, stores: list, loop_vars: set) -> bool:
    """One unconditional store at the block's spatial variables, each once, no init, no
    reduction variable, no read of the written buffer, a value using no loop variable (the
    element written decides the value)."""
    if block.init is not None or any(iv.kind != S.IterKind.SPATIAL for iv in block.iter_vars):
        return False
    if not isinstance(block.body, S.BufferStore) or len(stores) != 1:
        return False
    st = block.body
    ivs = [iv.var for iv in block.iter_vars]
    if len(st.indices) != len(ivs) or not all(isinstance(i, E.Var) for i in st.indices):
        return False
    if {id(i) for i in st.indices} != {id(v) for v in ivs}:
        return False
    own = any(ld.buffer is st.buffer for ld in stores_and_loads(st.value)[1])
    return not own and not free_vars(st.value) & loop_vars


def _has_load(nodes) -> bool:
    return any(stores_and_loads(n)[1] for n in nodes)


@per_loop
def _plan(loop: S.For) -> "list | None":
    """The distribution of ``loop`` (worked out once: a loop may be entered once per outer
    iteration)."""
    chain, s = [], loop
    while isinstance(s, S.For):
        chain.append(s)
        s = s.body
    if not isinstance(s, S.SeqStmt) or len(s.seq) < 2:
        return None
    chain_vars = {l.loop_var for l in chain}
    if any(free_vars(l.min) & chain_vars or free_vars(l.extent) & chain_vars for l in chain):
        return None
    items = []
    for stmt in s.seq:
        wrapped = stmt
        for l in reversed(chain):
            wrapped = S.For(l.loop_var, l.min, l.extent, l.kind, wrapped, l.thread_binding, l.annotations)
        nest = collect_nest(wrapped)
        if nest is None:
            return None
        realize = nest.realize
        if _has_load(list(realize.iter_values) + [realize.predicate]):
            return None
        item = _Item(wrapped, nest)
        if any(_has_load(ld.indices) for ld in item.loads) or any(_has_load(st.indices) for st in item.stores):
            return None
        items.append(item)
    written = set()
    for i, item in enumerate(items):
        if item.writes & written:
            return None  # two nests write one buffer
        written |= item.writes
        later = items[i + 1:]
        if any(it.writes & (item.reads | item.writes) for it in later):
            return None  # a dependence running backwards in the sequence
        if any(it.reads & item.writes for it in later):
            if not item.pure:
                return None
            earlier = set().union(*(it.writes for it in items[:i] if it.pure)) if i else set()
            if any(b in written - item.writes and b not in earlier for b in item.reads):
                return None  # a producer reading what an impure nest of the sequence writes
    return [len(chain), items]


def run_distributed(loop: S.For, ctx: Ctx) -> bool:
    """Run the nests under the common loops starting at ``loop`` one after the other when
    that computes what walking the loops does (module docstring); False leaves the loops
    to the walk, nothing having run."""
    plan = _plan(loop)
    if plan is None:
        return False
    depth, items = plan
    try:
        if not _reads_follow_writes(depth, items, ctx):
            return False
    except (InterpError, KeyError, IndexError, ValueError, TypeError):
        return False
    from .interp_stmt import run_stmt

    for item in items:
        run_stmt(item.wrapped, ctx, None, True)
    return True


def _reads_follow_writes(depth: int, items: list, ctx: Ctx) -> bool:
    """Whether each read of a producer's buffer comes at or after the first common-loop
    iteration writing that element (the producer precedes the reader in the sequence)."""
    stamps = {}
    for item in items:
        checked = [ld for ld in item.loads if ld.buffer in stamps]
        if not checked and not (item.pure and any(item.writes & it.reads for it in items)):
            continue
        with _Grid(item.nest, depth, ctx) as g:
            if g.empty:
                continue
            for ld in checked:
                first = stamps[ld.buffer]
                flat = g.flat(ld.buffer, ld.indices)
                if flat.size and np.any(first[flat] > g.lin_on_lanes()):
                    return False
            if item.pure:
                (st,) = item.stores
                data = ctx.data(st.buffer)
                first = np.full(data.flat.size, np.iinfo(np.int64).max, dtype=np.int64)
                flat = g.flat(st.buffer, st.indices)
                np.minimum.at(first, flat, g.lin_on_lanes())
                stamps[st.buffer] = first
    return True


class _Grid:
    """A nest's loops bound to their whole grid in ``ctx`` (undone on exit): flat indices
    of accesses on the lanes its predicate keeps, and the linear number of the common-loop
    iteration of each lane."""

    def __init__(self, nest, depth: int, ctx: Ctx):
        self.nest, self.depth, self.ctx = nest, depth, ctx

    def __enter__(self):
        nest, ctx = self.nest, self.ctx
        self.shape = bind_grid(nest, ctx)
        self.empty = 0 in self.shape
        if self.empty:
            return self
        bind_iter_vars(nest, ctx, (S.IterKind.SPATIAL, S.IterKind.REDUCE))
        mask = predicate_mask(nest, ctx)
        if mask is False:
            self.empty = True
            return self
        self.mask = None if mask is None else np.broadcast_to(mask, self.shape)
        lin = np.zeros((1,) * len(self.shape), dtype=np.int64)
        for axis in range(self.depth):
            loop = nest.loops[axis]
            lo = int(evaluate(loop.min, ctx))
            lin = lin * self.shape[axis] + (np.asarray(ctx.vars[loop.loop_var], dtype=np.int64) - lo)
        self.lin = np.broadcast_to(lin, self.shape)
        return self

    def flat(self, buffer, indices) -> np.ndarray:
        ctx = self.ctx
        idx = [evaluate(i, ctx, self.mask) for i in indices]
        flat = np.broadcast_to(ctx.data(buffer).flat_index(idx, self.mask, ctx.where), self.shape)
        return flat[self.mask] if self.mask is not None else flat.reshape(-1)

    def lin_on_lanes(self) -> np.ndarray:
        return self.lin[self.mask] if self.mask is not None else self.lin.reshape(-1)

    def __exit__(self, *exc):
        for l in self.nest.loops:
            self.ctx.vars.pop(l.loop_var, None)
        for iv in self.nest.realize.block.iter_vars:
            self.ctx.vars.pop(iv.var, None)
        return False
