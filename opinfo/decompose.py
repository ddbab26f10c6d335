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

import numpy as np

from tir.expr import BufferLoad, Call, Cast, FloatImm, IntImm, PrimExpr, Select, CmpOp, Var
from tir.functor import pre_order_visit

from .info import OpInfo, Operand
from .op_graph import OpLink
from .probe import NotEvaluable, evaluate
from .recognize import elementwise as ew
from .affine import const_of
from .recognize.common import Space, aligned, strip
from .recognize.ew_forms import calls_allowed
from .semantic import ArgReduce, Inlined, Reduce, Semantics

MAX_HOLES = 40


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
        self._buffers[id(operand)] = buffer
        return operand

    def _produce(self, expr, space, out):
        if isinstance(expr, BufferLoad) and self.is_param(expr.buffer) and out is None:
            return self._note(self.operand("input", expr.buffer), expr.buffer)
        if out is None:
            out = self._temp(expr)
        for family in self.families:
            m = family(expr, space, self)
            if m is not None:
                return self._emit(m, out)
        inner = strip(expr)
        if inner is not expr:
            return self._produce(inner, space, out)
        return self._elementwise(expr, space, out)

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
            buffers.append(self._buffers.get(id(got)))
        self.ops.append(OpInfo(m.name, m.attrs, tuple(operands), out))
        self.links.append(OpLink(self._buffers.get(id(out)), tuple(buffers)))
        return out

    # ------------------------------------------------------------------ elementwise
    def _elementwise(self, expr, space, out):
        leaves = sorted(_leaves(expr), key=self._param_pos)
        if not leaves:
            return None
        for sub in self._cuts(expr, leaves):
            if self._leaves_ok(sub, space):
                found = _identify(expr, sub)
                if found is not None and not (sub is leaves and _inner_same(expr, leaves, found)):
                    return self._emit_ew(found, sub, space, out)
        return None

    def _cuts(self, expr, leaves):
        """Operand sets to try: the whole tree over its leaves (one op over several blocks,
        like gelu), one intermediate cut out at a time, then the buffers this block reads
        (a block combining two intermediates)."""
        yield leaves
        for hole in _holes(expr, leaves):
            yield [l for l in leaves if _occurs_outside(expr, l, hole)] + [hole]
        direct = sorted(_direct(expr), key=self._param_pos)
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
        return True

    def _emit_ew(self, found, leaves, space, out):
        name, attrs, order, roles = found
        inputs = tuple((role, leaves[i], space) for role, i in zip(roles, order))
        from .recognize.common import Match
        return self._emit(Match(name, attrs, inputs), out)


def _domains(block) -> dict:
    return {iv.var: iv.dom.extent for iv in block.iter_vars}


def _reads_whole(inl: Inlined, space: Space) -> bool:
    """Whether an intermediate is read at exactly the indices of ``space``."""
    return len(inl.indices) == space.rank and all(a is b for a, b in zip(inl.indices, space.indices))


def _pure(indices) -> bool:
    return all(isinstance(i, Var) for i in indices) and len({id(i) for i in indices}) == len(indices)


def _leaves(expr) -> list:
    """Distinct maximal non-elementwise sub-trees: loads, and the intermediates holding a
    reduction's result (the buffer between the reducing op and this one)."""
    found = []

    def visit(n):
        if isinstance(n, Inlined) and isinstance(strip(n), (Reduce, ArgReduce)) or \
                isinstance(n, (BufferLoad, Reduce, ArgReduce)):
            if n not in found:
                found.append(n)
            return False
        return True

    pre_order_visit(expr, visit)
    return found


def _inner_same(expr, leaves, found) -> bool:
    """Whether an intermediate inside ``expr`` already computes ``found`` from the same
    leaves: the blocks after it change nothing on the samples (relu after exp) and are an
    op of their own."""
    return any(_identify(hole, leaves) == found for hole in _holes(expr, leaves))


def _direct(expr) -> list:
    """The distinct loads and intermediates ``expr`` reads without looking into them."""
    found = []

    def visit(n):
        if isinstance(n, (BufferLoad, Inlined, Reduce, ArgReduce)):
            if n not in found:
                found.append(n)
            return False
        return True

    pre_order_visit(expr, visit)
    return found


def _subtrees(expr) -> list:
    out = []

    def visit(n):
        if isinstance(n, (BufferLoad, Reduce, ArgReduce)):
            return False
        if isinstance(n, PrimExpr) and not isinstance(n, (FloatImm, IntImm)):
            out.append(n)
        return True

    pre_order_visit(expr, visit)
    return out


def _size(e) -> int:
    n = [0]
    pre_order_visit(e, lambda x: n.__setitem__(0, n[0] + 1))
    return n[0]


def _holes(expr, leaves) -> list:
    """Intermediate buffers inside ``expr`` where it may be cut into two ops, smallest first
    (a cut elsewhere would split one block's computation into two ops)."""
    cands = []
    for n in _subtrees(expr):
        if n is expr or n in cands or not isinstance(n, Inlined) or not _leaves(n):
            continue
        cands.append(n)
    cands.sort(key=_size)
    return cands[:MAX_HOLES]


def _occurs_outside(expr, leaf, hole) -> bool:
    """Whether ``leaf`` is used in ``expr`` other than inside ``hole``."""
    found = []

    def visit(n):
        if n == hole:
            return False
        if n == leaf:
            found.append(n)
            return False
        return True

    pre_order_visit(expr, visit)
    return bool(found)


def _consts(expr):
    vals, cmp_vals = [], []

    def visit(n):
        if isinstance(n, (FloatImm, IntImm)) and not isinstance(n.value, bool):
            vals.append(float(n.value))
        if isinstance(n, CmpOp):
            for side in (n.a, n.b):
                if isinstance(side, (FloatImm, IntImm)):
                    cmp_vals.append(float(side.value))
        return not isinstance(n, (BufferLoad, Reduce, ArgReduce))

    pre_order_visit(expr, visit)
    return vals, cmp_vals


def _fn(expr, leaves):
    def f(*values):
        env = dict(zip(leaves, (np.asarray(v, dtype=float) for v in values)))
        return np.broadcast_to(evaluate(expr, env), np.shape(values[0])).astype(float)
    return f


def _identify(expr, leaves):
    """(name, attrs, leaf order, roles) when ``expr`` over ``leaves`` is one known op."""
    try:
        found = _identify_impl(expr, leaves)
    except NotEvaluable:
        return None
    return found if found is not None and calls_allowed(found[0], expr, leaves) else None


def _identify_impl(expr, leaves):
    root = expr
    while isinstance(root, Inlined):
        root = root.value
    if len(leaves) == 1:
        if isinstance(root, Cast) and strip(root.value) == leaves[0]:
            return "astype", {"dtype": str(root.dtype)}, (0,), ("data",)
        integer = not leaves[0].dtype.is_float
        consts, cmp_consts = _consts(expr)
        got = ew.identify_unary(_fn(expr, leaves), consts, cmp_consts, integer)
        if got is None:
            return None
        return got[0], got[1], (0,), ("data",)
    if len(leaves) == 2:
        integer = not leaves[0].dtype.is_float
        got = ew.identify_binary(_fn(expr, leaves), integer)
        if got is None:
            return None
        order = (1, 0) if got[1] else (0, 1)
        return got[0], {}, order, ("lhs", "rhs")
    if len(leaves) == 3:
        return _where(root, leaves)
    return None


def _where(root, leaves):
    """Three leaves, one of them bool: ``where(cond, x1, x2)`` by probing."""
    conds = [i for i, l in enumerate(leaves) if l.dtype.is_bool]
    if len(conds) != 1:
        return None
    c = conds[0]
    rest = [i for i in range(3) if i != c]
    rng = np.random.default_rng(3)
    vals = [None] * 3
    vals[c] = rng.integers(0, 2, 16).astype(float)
    vals[rest[0]], vals[rest[1]] = rng.uniform(-3, 3, 16), rng.uniform(-3, 3, 16)
    got = _fn(root, leaves)(*vals)
    for t, f in (rest, rest[::-1]):
        if np.array_equal(got, np.where(vals[c] != 0, vals[t], vals[f])):
            return "where", {}, (c, t, f), ("condition", "x1", "x2")
    return None
