"""The recovered ops of one PrimFunc as a graph: each op's blocks, its TVM kind, and whether
the whole could be one fused kernel.

A fused kernel (FuseOps + FuseTIR) keeps every op's blocks and the buffer each op writes,
so the ops recovered from it split its blocks into disjoint sets, one per op: the blocks
that compute the op's output buffer from its input buffers. The kind of an op is TVM's
kind of those blocks alone (what AnnotateTIROpPattern says of the op's own PrimFunc), and
a multi-op decomposition stands only if FuseOps could have grouped those ops
(:func:`.fusion.one_group`).
"""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad
from tir.functor import pre_order_visit

from .copy_tags import contradicted, order_preserving, settle
from .ew_tags import folded_name
from .fusion import FuseNode, one_group
from .kind import blocks_kind
from .recognize.common import shape_of
from .semantic import Reduce


@attrs.frozen
class OpLink:
    """Where one recovered op sits in its PrimFunc."""

    output: object
    """The buffer the op writes (None when it has none: the op cannot be placed)."""
    inputs: tuple = attrs.field(converter=tuple)
    """The buffers the op reads, parameters or intermediates, in operand order."""


def fusable(sem, links: list) -> bool:
    """Whether the ops of ``links`` (in dataflow order) own disjoint sets of blocks covering
    the PrimFunc and could be one group of TVM's FuseOps. One op always stands."""
    if len(links) < 2:
        return True
    if any(link.output is None or None in link.inputs for link in links):
        return False
    owned = [op_blocks(sem, link) for link in links]
    ids = [id(b) for blocks in owned for b in blocks]
    if len(ids) != len(set(ids)) or set(ids) != {id(s.block) for s in sem.stages} - _dead_copies(sem, links):
        return False
    nodes = _nodes(sem, links, owned)
    return nodes is not None and one_group(nodes)


def _dead_copies(sem, links: list) -> set:
    """ids of the blocks that copy, element for element, a parameter one of the ops reads
    into an intermediate nothing reads: a multi-output op's other outputs that the graph
    dropped (batch_norm's moving mean and variance), kept by FuseTIR."""
    read = set()
    for st in sem.stages:
        read.update(id(b) for b in _read_buffers(st.block))
    inputs = {id(b) for link in links for b in link.inputs}
    dead = set()
    for st in sem.stages:
        e = st.expr
        if (st.buffer is not None and not sem.is_param(st.buffer) and id(st.buffer) not in read
                and _plain_copy(st) and sem.is_param(e.buffer) and id(e.buffer) in inputs):
            dead.add(id(st.block))
    return dead


def tags_agree(sem, ops, links: list) -> bool:
    """Whether no copy op of a several-op decomposition sits in blocks whose compute tags
    name another op (:func:`.copy_tags.contradicted`): inside a fused kernel each op keeps
    its own blocks and their tags."""
    if len(links) < 2:
        return True
    return not any(link.output is not None and contradicted(op, [b.name for b in op_blocks(sem, link)])
                   for op, link in zip(ops, links))


def settle_copies(sem, ops, links: list) -> "tuple | None":
    """``ops`` with every copy that keeps its data in row-major order (an identity-like
    reshape, broadcast_to to the same size, tile by ones, ...: :func:`.copy_tags.order_preserving`)
    settled by the compute tags of its own blocks, as a lone copy is (:func:`.copy_tags.settle`);
    None when one cannot be. Several ops lower to such a copy, and so does a cache or reindex
    copy a schedule left in place (rfactor then reindex: ``x_red.rf_reindex``), which is no op
    of the graph at all: only the tag of the op it names tells."""
    if len(links) < 2:
        return tuple(ops)
    out = []
    for op, link in zip(ops, links):
        if link.output is not None and len(link.inputs) == 1 and link.inputs[0] is not None:
            shapes = [shape_of(b) for b in (link.inputs[0], link.output)]
            if order_preserving(op, *shapes):
                op = settle(op, *shapes, [b.name for b in op_blocks(sem, link)])
                if op is None:
                    return None
        out.append(op)
    return tuple(out)


def folded_copies(sem) -> list:
    """(stage, op name) of the blocks that copy another buffer element for element under the
    compute tag of an arithmetic op (``T_divide``: ``x / 1`` with its constant folded)."""
    found = []
    for st in sem.stages:
        name = folded_name(st.block.name)
        if name is not None and _plain_copy(st):
            found.append((st, name))
    return found


def _plain_copy(st) -> bool:
    """Whether stage ``st`` stores another buffer's element at its own indices."""
    e = st.expr
    return isinstance(e, BufferLoad) and len(e.indices) == len(st.indices) and \
        all(i is j for i, j in zip(e.indices, st.indices))


def folds_accounted(sem, ops, links: list) -> bool:
    """Whether every folded-constant copy (:func:`folded_copies`) of a reduction's result is an
    op of its own: an op of the copy's name among those owning that block. Reading through it
    drops an op TVM computed there (``mean`` over extent-1 axes is a sum, then a copy tagged
    ``T_divide``: it was named ``sum``)."""
    owners = [(op, op_blocks(sem, link) if link.output is not None else None) for op, link in zip(ops, links)]
    reduced = {id(st.buffer) for st in sem.stages if isinstance(st.expr, Reduce)}
    for st, name in folded_copies(sem):
        if id(st.expr.buffer) not in reduced:
            continue  # inside a several-block form (slice_scatter's arange - 0) it is the form's
        mine = [op for op, blocks in owners if blocks is None or any(b is st.block for b in blocks)]
        # a copy no op's dataflow reaches is a side output the op's family absorbed
        # (batch_norm's moving statistics: ``T_multiply`` copies of the parameters)
        if mine and not any(op.name == name for op in mine):
            return False
    return True


def op_blocks(sem, link: OpLink) -> list:
    """The blocks computing ``link.output`` from ``link.inputs``, in program order."""
    stop = {id(b) for b in link.inputs} | {id(p) for p in sem.params}
    found, todo, seen = {}, [link.output], set()
    while todo:
        buf = todo.pop()
        for stage in sem.producers.get(id(buf), []):
            found[id(stage.block)] = stage.block
            for read in _read_buffers(stage.block):
                if id(read) not in stop and id(read) not in seen and read is not buf:
                    seen.add(id(read))
                    todo.append(read)
    order = {id(s.block): k for k, s in enumerate(sem.stages)}
    return sorted(found.values(), key=lambda b: order[id(b)])


def _read_buffers(block) -> list:
    found = []
    for part in (block.body, block.init):
        if part is not None:
            pre_order_visit(part, lambda n: found.append(n.buffer) if isinstance(n, BufferLoad) else True)
    return found


def _nodes(sem, links: list, owned: list) -> "list | None":
    """FuseNodes: the parameters (external), then the ops with their kinds and producers."""
    nodes = [FuseNode(0, (), True) for _ in sem.params]
    where = {id(p): k for k, p in enumerate(sem.params)}
    for link, blocks in zip(links, owned):
        inputs = [where.get(id(b)) for b in link.inputs]
        if None in inputs or not blocks:
            return None
        nodes.append(FuseNode(blocks_kind(blocks, {id(link.output)}), inputs))
        where[id(link.output)] = len(nodes) - 1
    return nodes
