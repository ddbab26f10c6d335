"""Decompose the meaning of a PrimFunc's outputs into a sequence of recognized ops.

Starting from an output expression, a structural recognizer (conv, pooling, reduction,
softmax, norms, data movement, ...) may claim the root; its operands that are not
parameters are decomposed the same way first, so ops come out in dataflow order.
An elementwise root is identified by probing; if the whole elementwise tree is not one
op, a sub-tree (preferably an intermediate buffer of the original program) is cut out
as the operand of a smaller root op. Any part left unexplained makes the whole
function abstain.

Ops meet at buffers: an operand of a recognized op is a parameter or an intermediate
buffer of the program (an :class:`Inlined`), never an expression computed inside the
op's own blocks, because TVM's fused kernels keep every op's blocks and the buffer each
writes. An intermediate read at other indices than the op reads its operand space is
decomposed over its own index space. :attr:`Decomposer.links` records, for every op, the
buffer it writes and the buffers it reads (see :mod:`.op_graph`).
"""
from __future__ import annotations

from tir.expr import BufferLoad, PrimExpr, Var
from tir.functor import collect_distinct

from .info import OpInfo, Operand
from .op_graph import OpLink, op_blocks
from .tags import tag
from . import ew_tags
from .affine import const_of
from . import ew_tree
from .recognize.common import Match, Space, aligned, strip
from .recognize.ew_forms import op_form_ok
from .recognize.multi_forms import form_allowed
from .semantic import Inlined, Semantics


class Decomposer:
    """Collects the ops that compute a function's outputs."""

    def __init__(self, sem: Semantics, families):
        self.sem = sem
        self.families = families
        self.ops: list = []
        self.links: list = []
        """One :class:`OpLink` per op of ``ops``."""
        self.done: dict = {}
        self._buffers: dict = {}
        """id(Operand) -> (the Operand, kept alive so its id stays its own, its Buffer)."""
        self.counter = 0

    def is_param(self, buf) -> bool:
        return self.sem.is_param(buf)

    def operand(self, role: str, buf) -> Operand:
        idx = next((i for i, p in enumerate(self.sem.params) if p is buf), None)
        return Operand(role, buf.name, idx)

    # ------------------------------------------------------------------ driver
    def output(self, stage) -> bool:
        expr = self.sem.meaning(stage)
        space = Space(tuple(stage.indices), tuple(stage.buffer.shape), _domains(stage.block))
        out = self._note(self.operand("output", stage.buffer), stage.buffer)
        return self.produce(expr, space, out) is not None

    def produce(self, expr: PrimExpr, space: Space, out: "Operand | None" = None):
        """Record ops computing ``expr`` over ``space``; the Operand holding the result."""
        key = (expr, space.indices)
        if key in self.done:
            return self.done[key]
        result = self._produce(expr, space, out)
        if result is not None:
            self.done[key] = result
        return result

    def _note(self, operand: Operand, buffer) -> Operand:
        self._buffers[id(operand)] = (operand, buffer)
        return operand

    def _produce(self, expr, space, out):
        if isinstance(expr, BufferLoad) and self.is_param(expr.buffer) and out is None:
            return self._note(self.operand("input", expr.buffer), expr.buffer)
        if out is None:
            out = self._temp(expr)
        folded = self._folded_identity(expr, space, out)
        if folded is not None:
            return folded
        for family in self.families:
            m = family(expr, space, self)
            if m is not None and self._form_fits(m, expr):
                return self._emit(m, out)
        inner = strip(expr)
        if inner is not expr:
            return self._produce(inner, space, out)
        return self._elementwise(expr, space, out)

    @staticmethod
    def _form_fits(m, expr) -> bool:
        """Whether ``expr`` is written like op ``m``'s TVM form down to its inputs: the
        intrinsics it calls (:func:`.multi_forms.form_allowed`), no cast of a cast (two
        astype ops after it) and no more operations above its reductions
        (:func:`.ew_forms.op_form_ok`): an op inlined after it into its last block (dlight,
        ``reverse_compute_inline``) is not swallowed."""
        inputs = [e for _, e, _ in m.inputs]
        if not form_allowed(m.name, expr, inputs):
            return False
        # an input intermediate read at other indices than the op's operand (a broadcast of
        # it, the op's own re-indexing) is that input too, not part of the op's form
        held = {id(e.buffer) for e in inputs if isinstance(e, (Inlined, BufferLoad))}
        stops = inputs + collect_distinct(expr, lambda n: isinstance(n, (Inlined, BufferLoad)) and id(n.buffer) in held)
        return not ew_tree.cast_of_cast(expr, stops) and op_form_ok(m.name, m.attrs, expr, inputs, stops)

    def _operand_of(self, expr, space):
        """The Operand holding an op's input: a parameter, or an intermediate decomposed over
        the space it is read in, or its own index space when read at other indices."""
        if isinstance(expr, BufferLoad) and self.is_param(expr.buffer):
            return self.produce(expr, space)
        if not isinstance(expr, Inlined):
            return None
        if not _reads_whole(expr, space):
            expr, space = self._natural(expr)
        return self.produce(expr, space) if expr is not None else None

    def _natural(self, inl: Inlined) -> tuple:
        """``inl``'s intermediate as its producer block computes it, over that block's indices."""
        stages = self.sem.producers.get(id(inl.buffer), [])
        if len(stages) != 1 or stages[0].expr is None or not _pure(stages[0].indices):
            return None, None
        stage = stages[0]
        value = Inlined(inl.buffer, stage.indices, self.sem.meaning(stage))
        return value, Space(tuple(stage.indices), tuple(inl.buffer.shape), _domains(stage.block))

    def _temp(self, expr) -> Operand:
        if isinstance(expr, Inlined):
            return self._note(Operand("output", expr.buffer.name, None), expr.buffer)
        self.counter += 1
        return Operand("output", f"%t{self.counter}", None)

    def _emit(self, m, out):
        operands, buffers = [], []
        for role, e, sp in m.inputs:
            got = self._operand_of(e, sp)
            if got is None:
                return None
            operands.append(Operand(role, got.buffer, got.param))
            buffers.append(self._buffer_of(got))
        self.ops.append(OpInfo(m.name, m.attrs, tuple(operands), out, assumed=m.assumed,
                               unconventional=m.unconventional, constants=m.constants))
        self.links.append(OpLink(self._buffer_of(out), tuple(buffers)))
        return out

    def _buffer_of(self, operand) -> "object | None":
        entry = self._buffers.get(id(operand))
        return entry[1] if entry is not None and entry[0] is operand else None

    # ------------------------------------------------------------------ elementwise
    def _elementwise(self, expr, space, out):
        leaves = sorted(ew_tree.leaves_of(expr), key=self._param_pos)
        if not leaves:
            return None
        for sub in self._cuts(expr, leaves):
            if self._leaves_ok(sub, space):
                found = ew_tree.identify(expr, sub)
                if found is not None and not ew_tree.inner_same(expr, sub, found):
                    found = self._tag_settled(found, expr, sub, out)
                    if found is not None:
                        return self._emit_ew(found, sub, space, out, expr)
        return None

    def _folded_identity(self, expr, space, out):
        """A block storing its operand unchanged whose compute tag names an arithmetic op:
        TVM folded the op's constant (``x * 1``, ``x + 0``) and only the tag is left (a copy
        op's recognizer would name it for its values). The tensor is the left operand
        (``0 - x`` or ``1 / x`` is no copy). The Operand written, or None."""
        outbuf = self._buffer_of(out)
        value = expr.value if isinstance(expr, Inlined) and expr.buffer is outbuf else expr
        if outbuf is None or not (isinstance(value, Inlined) or
                                  isinstance(value, BufferLoad) and self.is_param(value.buffer)):
            return None
        names = {ew_tags.folded_name(b.name) for b in op_blocks(self.sem, OpLink(outbuf, [value.buffer]))}
        name = names.pop() if len(names) == 1 else None
        if name is None or not self._leaves_ok([value], space):
            return None
        inputs = (("lhs", value, space),)
        constants = (("rhs", ew_tags.IDENTITY_CONSTANTS[name]),)
        return self._emit(Match(name, {}, inputs, constants=constants), out)

    def _tag_settled(self, found, expr, leaves, out):
        """``found``, or the other reading of the same values whose TVM form carries the
        compute tags of the op's own blocks, or None when no reading does (:mod:`.ew_tags`).
        Without the op's buffers (an operand computed inside the block) nothing is checked."""
        outbuf = self._buffer_of(out)
        bufs = [getattr(leaf, "buffer", None) for leaf in leaves]
        if outbuf is None or None in bufs:
            return found
        block_tags = {tag(b.name) for b in op_blocks(self.sem, OpLink(outbuf, bufs))}
        dtypes = [leaf.dtype for leaf in leaves]
        for reading in [found] + ew_tags.alternatives(found, expr, leaves):
            if not ew_tags.contradicts(reading[0], reading[1], dtypes, block_tags):
                return reading
        return None

    def _cuts(self, expr, leaves):
        """Operand sets to try: the whole tree over its leaves (one op over several blocks,
        like gelu), one intermediate cut out at a time, then the buffers this block reads
        (a block combining two intermediates)."""
        yield leaves
        for hole in ew_tree.holes(expr, leaves):
            yield [l for l in leaves if ew_tree.occurs_outside(expr, l, hole)] + [hole]
        direct = sorted(ew_tree.direct(expr), key=self._param_pos)
        if direct != leaves:
            yield direct

    def _param_pos(self, leaf) -> int:
        if isinstance(leaf, BufferLoad):
            for i, p in enumerate(self.sem.params):
                if p is leaf.buffer:
                    return i
        return len(self.sem.params)

    def _leaves_ok(self, leaves, space) -> bool:
        covered = {id(i) for leaf in leaves for i in getattr(leaf, "indices", space.indices)}
        if any(id(v) not in covered for v in space.indices if const_of(v) is None):
            return False
        for leaf in leaves:
            if isinstance(leaf, BufferLoad) and not (self.is_param(leaf.buffer) and aligned(leaf, space)):
                return False
            if isinstance(leaf, Inlined) and not aligned(leaf, space):
                return False
            if isinstance(leaf, (BufferLoad, Inlined)) and not _read_whole(leaf, space):
                return False
        return True

    def _emit_ew(self, found, leaves, space, out, expr=None):
        name, attrs, order, roles = found
        inputs = tuple((role, leaves[i], space) for role, i in zip(roles, order))
        constants = ()
        if expr is not None and len(roles) == 1 and roles[0] in ("lhs", "rhs") and len(leaves) == 1:
            constants = ew_tree.scalar_constants(name, roles[0], expr, leaves[0])
        return self._emit(Match(name, attrs, inputs, constants=constants), out)


def _domains(block) -> dict:
    return {iv.var: iv.dom.extent for iv in block.iter_vars}


def _reads_whole(inl: Inlined, space: Space) -> bool:
    """Whether an intermediate is read at exactly the indices of ``space``, all of it."""
    return len(inl.indices) == space.rank and all(a is b for a, b in zip(inl.indices, space.indices)) and \
        all(_same_extent(n, x) for n, x in zip(inl.buffer.shape, space.extents))


def _read_whole(leaf, space: Space) -> bool:
    """Whether every dimension of ``leaf``'s buffer that follows a result index is as long
    as the result's: an elementwise op reads its operands whole. A longer one is read in
    part -- a strided_slice (or take) fused after the op, whose blocks the op would swallow."""
    r, rank = len(leaf.indices), space.rank
    for d, idx in enumerate(leaf.indices):
        o = space.indices[rank - r + d]
        if idx is o and isinstance(o, Var) and not _same_extent(leaf.buffer.shape[d], space.extents[rank - r + d]):
            return False
    return True


def _same_extent(a, b) -> bool:
    ca, cb = const_of(a), const_of(b)
    if ca is not None or cb is not None:
        return ca == cb
    return a == b


def _pure(indices) -> bool:
    return all(isinstance(i, Var) for i in indices) and len({id(i) for i in indices}) == len(indices)
