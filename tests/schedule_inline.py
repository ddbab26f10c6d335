"""Inlining primitives for tests, as TVM's ``compute_inline`` and ``reverse_compute_inline``
print them (see :mod:`schedule_more` for the others).

* ``compute_inline``: an elementwise producer (one store at its own iteration variables,
  no init, to an intermediate buffer) is substituted into its readers (as for pads);
* ``reverse_compute_inline``: an elementwise consumer (one store at its own variables,
  reading its producer's buffer only at them) replaces its producer's store, when it is the
  producer's only reader.
"""
from __future__ import annotations

import random

import attrs

from pad_inline import _inline_one
from tir.expr import BufferLoad
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BufferStore, SeqStmt


def _writers(stmt, buf) -> int:
    hits = []
    post_order_visit(stmt, lambda n: hits.append(n) if isinstance(n, Block) and any(w.buffer is buf for w in n.writes) else None)
    return len(hits)


def _reads_buffer(stmt, buf) -> bool:
    hits = []
    post_order_visit(stmt, lambda n: hits.append(n) if isinstance(n, BufferLoad) and n.buffer is buf else None)
    return bool(hits)


# ---- compute_inline ---------------------------------------------------------------------

def _elementwise_producer(block: Block, params: set, func: PrimFunc) -> bool:
    body = block.body
    if block.init is not None or not isinstance(body, BufferStore) or id(body.buffer) in params:
        return False
    ivars = [iv.var for iv in block.iter_vars]
    pure = len(body.indices) == len(ivars) and all(a is b for a, b in zip(body.indices, ivars))
    return pure and not _reads_buffer(body.value, body.buffer) and _writers(func.body, body.buffer) == 1


def compute_inline(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """One elementwise producer of an intermediate (chosen at random) inlined into its readers."""
    params = {id(b) for b in func.buffers}
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) and _elementwise_producer(n, params, func) else None)
    if not found:
        return func
    return _inline_one(func, rng.choice(found))


# ---- reverse_compute_inline -------------------------------------------------------------

def _sole_store(block: Block) -> "BufferStore | None":
    body = block.body
    return body if block.init is None and isinstance(body, BufferStore) else None


def _reverse_target(consumer: Block, func: PrimFunc, params: set) -> "Block | None":
    """The producer ``consumer`` can be inlined into: the consumer stores at its own
    variables and reads one intermediate at exactly them; the producer (its only writer)
    stores at its own variables, with no init."""
    store = _sole_store(consumer)
    ivars = [iv.var for iv in consumer.iter_vars]
    if store is None or list(store.indices) != ivars:
        return None
    loads = []
    post_order_visit(store.value, lambda n: loads.append(n) if isinstance(n, BufferLoad) and id(n.buffer) not in params else None)
    if len({id(x.buffer) for x in loads}) != 1 or any(list(x.indices) != ivars for x in loads):
        return None
    buf = loads[0].buffer
    if any(b is not consumer and _reads_buffer(b.body, buf) for b in func.blocks()):
        return None  # TVM inlines only into the producer's sole consumer
    writers = []
    post_order_visit(func.body, lambda n: writers.append(n) if isinstance(n, Block) and any(w.buffer is buf for w in n.writes) else None)
    prod = writers[0] if len(writers) == 1 else None
    pstore = _sole_store(prod) if prod is not None else None
    if pstore is None or list(pstore.indices) != [iv.var for iv in prod.iter_vars] or len(ivars) != len(prod.iter_vars):
        return None
    return prod


def _inlined_producer(prod: Block, consumer: Block) -> Block:
    """``prod`` storing the consumer's value (its loads of the producer's buffer replaced)."""
    pstore, cstore = prod.body, consumer.body
    mapping = {iv.var: pv.var for iv, pv in zip(consumer.iter_vars, prod.iter_vars)}
    buf = pstore.buffer

    def post(n):
        return pstore.value if isinstance(n, BufferLoad) and n.buffer is buf else None

    value = transform(substitute(cstore.value, mapping), post)
    reads = [r for r in prod.reads] + [substitute(r, mapping) for r in consumer.reads if r.buffer is not buf]
    writes = [substitute(w, mapping) for w in consumer.writes]
    body = BufferStore(cstore.buffer, value, tuple(substitute(i, mapping) for i in cstore.indices))
    return attrs.evolve(prod, reads=tuple(reads), writes=tuple(writes), body=body)


def reverse_compute_inline(func: PrimFunc, rng: random.Random) -> PrimFunc:
    """One elementwise consumer (chosen at random) inlined into its producer."""
    params = {id(b) for b in func.buffers}
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) and n.name != "root" else None)
    pairs = [(c, p) for c in found for p in [_reverse_target(c, func, params)] if p is not None]
    if not pairs:
        return func
    consumer, prod = rng.choice(pairs)
    new = _inlined_producer(prod, consumer)
    buf = prod.body.buffer

    def pre(n):
        if isinstance(n, Block) and n is prod:
            return new
        return None

    def post(n):
        if isinstance(n, SeqStmt):
            kept = tuple(x for x in n.seq if not _contains(x, consumer))
            return None if len(kept) == len(n.seq) else kept[0] if len(kept) == 1 else SeqStmt(kept)
        if isinstance(n, Block) and any(b is buf for b in n.alloc_buffers):
            return attrs.evolve(n, alloc_buffers=tuple(b for b in n.alloc_buffers if b is not buf))
        return None

    return transform(func, post, pre)


def _contains(stmt, block: Block) -> bool:
    hits = []
    post_order_visit(stmt, lambda n: hits.append(n) if n is block else None)
    return bool(hits)
