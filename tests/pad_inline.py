"""Pad inlining for tests, as TVM's ``compute_inline`` does it to a pad block.

:func:`inline_pads` replaces every read of a pad buffer (a block storing
``T.if_then_else(guard, x[...], pad_value)`` at its own iteration variables) by that value
with the pad block's variables bound to the read's indices; the pad block and its
buffer disappear and the reader's read regions name the pad's source instead. The result
computes the same values (checked with the interpreter in the tests).
"""
from __future__ import annotations

import attrs

from tir.buffer import BufferRegion, Range
from tir.expr import BufferLoad, Call, IntImm
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import Block, BufferStore, SeqStmt

MAX_PADS = 64


def _is_pad(block: Block, params: set) -> bool:
    body = block.body
    if block.init is not None or not isinstance(body, BufferStore) or id(body.buffer) in params:
        return False
    ivars = [iv.var for iv in block.iter_vars]
    pure = len(body.indices) == len(ivars) and all(a is b for a, b in zip(body.indices, ivars))
    return pure and isinstance(body.value, Call) and body.value.op == "if_then_else"


def pad_blocks(func) -> list:
    """The pad blocks of ``func`` (see the module docstring)."""
    params = {id(b) for b in func.buffers}
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) and _is_pad(n, params) else None)
    return found


def _whole(buf) -> BufferRegion:
    return BufferRegion(buf, tuple(Range(IntImm(s.dtype, 0), s) for s in buf.shape))


def _writes(stmt, buf) -> bool:
    hit = []
    post_order_visit(stmt, lambda n: hit.append(n) if isinstance(n, BufferStore) and n.buffer is buf else None)
    return bool(hit)


def _drop_writer(seq: SeqStmt, buf):
    kept = [s for s in seq.seq if not _writes(s, buf)]
    if len(kept) == len(seq.seq):
        return None
    return kept[0] if len(kept) == 1 else SeqStmt(tuple(kept))


def _inline_one(func, pad: Block):
    buf = pad.body.buffer
    ivars = [iv.var for iv in pad.iter_vars]

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer is buf:
            return substitute(pad.body.value, dict(zip(ivars, n.indices)))
        if isinstance(n, Block) and any(r.buffer is buf for r in n.reads):
            reads = [r for r in n.reads if r.buffer is not buf] + [_whole(r.buffer) for r in pad.reads]
            return attrs.evolve(n, reads=tuple(reads))
        if isinstance(n, Block) and any(b is buf for b in n.alloc_buffers):
            return attrs.evolve(n, alloc_buffers=tuple(b for b in n.alloc_buffers if b is not buf))
        if isinstance(n, SeqStmt):
            return _drop_writer(n, buf)
        return None

    return transform(func, post)


def inline_pads(func):
    """``func`` with every pad block inlined into its readers."""
    for _ in range(MAX_PADS):
        pads = pad_blocks(func)
        if not pads:
            break
        func = _inline_one(func, pads[0])
    return func
