"""Fused functions that begin with an op read by running it, followed by ops the semantic
layer reads (an uneven ``nn.adaptive_avg_pool2d`` and the ``add``/``clip``/... FuseOps put
after it, as in ``fused_adaptive_avg_pool2d_add``).

Such a function is opaque as a whole: the pool's inner loop has an extent that depends on
the output position, which the semantic layer does not read. It is cut in two where the
top-level loop nests hand exactly one intermediate buffer from the first part to the rest:
the first part becomes a function of its own (inputs it reads -> that buffer) and must be
named by a whole-function recognizer (:data:`PREFIX_RECOGNIZERS`), the rest a function
(that buffer and the inputs it reads -> the output) named by the ordinary structural
decomposition. The two answers are put back together with the operands renamed to the
original function's parameters; the buffer between them is an intermediate (no parameter).
Both parts must be named for the function to be: a cut is never a guess.
"""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad
from tir.function import prim_func
from tir.functor import post_order_visit
from tir.stmt import BufferStore, SeqStmt

from .info import OpInfo, Operand
from .recognize.pool_adaptive import recognize_adaptive_pool

PREFIX_RECOGNIZERS = (recognize_adaptive_pool,)
"""Whole-function recognizers of ops TVM fuses elementwise consumers into."""


def _accesses(stmts) -> "tuple[list, list]":
    """(buffers loaded, buffers stored) by ``stmts``, each in first-seen order."""
    loads, stores = [], []

    def visit(node):
        if isinstance(node, BufferLoad) and node.buffer not in loads:
            loads.append(node.buffer)
        elif isinstance(node, BufferStore) and node.buffer not in stores:
            stores.append(node.buffer)

    for s in stmts:
        post_order_visit(s, visit)
    return loads, stores


def _renamed(operand: "Operand | None", index: dict, between) -> "Operand | None":
    """``operand`` of a part, as an operand of the whole function."""
    if operand is None or operand.param is None:
        return operand  # an intermediate of the part: one of the whole function too
    if operand.buffer == between.name:
        return Operand(operand.role, operand.buffer, None)
    return Operand(operand.role, operand.buffer, index[operand.buffer])


def _whole(op: OpInfo, index: dict, between) -> OpInfo:
    """``op`` of a part with its operands renamed (every other field kept as it is)."""
    return attrs.evolve(op, operands=tuple(_renamed(o, index, between) for o in op.operands),
                        output=_renamed(op.output, index, between))


def _part(func, params: list, out, stmts, allocs: list):
    return prim_func(params + [out], SeqStmt(tuple(stmts)) if len(stmts) > 1 else stmts[0],
                     allocs, func.attrs)


def recognize_opaque_prefix(func, structural) -> tuple:
    """The ops of ``func`` when its top-level loop nests cut into a prefix a whole-function
    recognizer names and a rest ``structural`` (:func:`.api.recognize_ops`) names; else ()."""
    root = func.root_block
    if root is None or not root.alloc_buffers or not isinstance(root.body, SeqStmt) or func.scalar_params:
        return ()
    seq = list(root.body.seq)
    params = list(func.buffers)
    index = {b.name: i for i, b in enumerate(params)}
    allocs = list(root.alloc_buffers)
    if len(index) != len(params) or len({b.name for b in allocs} | set(index)) != len(params) + len(allocs):
        return ()  # names must say which buffer an operand is
    out = params[-1]
    for k in range(1, len(seq)):
        found = _cut(func, seq[:k], seq[k:], params, allocs, out, index, structural)
        if found:
            return found
    return ()


def _cut(func, head, tail, params, allocs, out, index, structural) -> tuple:
    head_loads, head_stores = _accesses(head)
    tail_loads, tail_stores = _accesses(tail)
    between = [b for b in head_stores if b in tail_loads]
    if len(between) != 1 or any(b not in allocs for b in head_stores) or out not in tail_stores:
        return ()
    (mid,) = between
    if any(b in head_stores or b in head_loads for b in tail_stores):
        return ()  # the rest must not write what the prefix reads or wrote
    head_allocs = [b for b in allocs if b is not mid and (b in head_loads or b in head_stores)]
    tail_allocs = [b for b in allocs if b is not mid and (b in tail_loads or b in tail_stores)]
    if set(head_allocs) & set(tail_allocs):
        return ()
    head_params = [b for b in params if b in head_loads]
    tail_params = [b for b in params if b is not out and b in tail_loads]
    if out in head_loads or out in head_stores:
        return ()
    first = None
    for recognize in PREFIX_RECOGNIZERS:
        first = recognize(_part(func, head_params, mid, head, head_allocs))
        if first:
            break
    if not first:
        return ()
    rest = structural(_part(func, [mid] + tail_params, out, tail, tail_allocs))
    if not rest or not any(o.buffer == mid.name for op in rest for o in op.operands):
        return ()
    return tuple(_whole(op, index, mid) for op in tuple(first) + tuple(rest))
