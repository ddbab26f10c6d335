"""Numeric checks shared by the softmax, normalisation and resize recognizers.

A :class:`Check` fixes, for one root expression, the values of symbolic extents, a set
of output positions and a data seed per parameter; it evaluates the expression there
(:mod:`.sample`) with one buffer chosen as the op's *data* operand, and gathers hashed
data for numpy references. A candidate (op, attributes) is accepted only when the
expression equals the reference at every position, on two data scales.
"""
from __future__ import annotations

from functools import lru_cache

import attrs
import numpy as np

from tir.expr import BufferLoad, Call, Var
from tir.functor import pre_order_visit

from ..probe import NotEvaluable
from ..semantic import Inlined, Reduce
from .common import Space
from .sample import Evaluator, extent_value, hashed, points, symbol_values

DATA_SEED = 97
SCALES = (1.0, 1e-3)
"""Data scales: the small one makes an epsilon visible next to the variance."""


@lru_cache(maxsize=4096)
def signature(expr) -> tuple:
    """(reduction combiners, called intrinsics) in ``expr``: a cheap first filter."""
    reds, calls = set(), set()

    def visit(n):
        if isinstance(n, Reduce):
            reds.add(n.combiner)
        elif isinstance(n, Call):
            calls.add(n.op)
        return True

    pre_order_visit(expr, visit)
    return frozenset(reds), frozenset(calls)


@attrs.frozen
class Operand:
    """A candidate data operand: its buffer and the expression to decompose for it."""

    buffer: object
    expr: object
    param: bool


class Check:
    """Evaluation of one root expression at sample positions of its output space."""

    def __init__(self, expr, space: Space, ctx):
        self.expr, self.space, self.ctx = expr, space, ctx
        self.sym = symbol_values(ctx.sem.params)
        self.extents = [extent_value(e, self.sym) for e in space.extents]
        self.seeds = {id(p): i + 1 for i, p in enumerate(ctx.sem.params)}
        self.pts = points(self.extents) if None not in self.extents else None
        self._got: dict = {}

    def use_points(self, pts: np.ndarray) -> None:
        """Evaluate at ``pts`` from now on."""
        self.pts = pts
        self._got = {}

    @property
    def ok(self) -> bool:
        return self.pts is not None and all(isinstance(v, Var) for v in self.space.indices)

    def run(self, data: Operand, scale: float) -> "np.ndarray | None":
        """The expression's values with ``data`` hashed (memoised per operand and scale)."""
        key = (id(data.buffer), scale)
        if key not in self._got:
            seeds = dict(self.seeds)
            seeds[id(data.buffer)] = DATA_SEED
            ev = Evaluator(self.sym, seeds, {id(data.buffer)}, scale)
            try:
                self._got[key] = ev.at(self.expr, self.space.indices, self.pts)
            except (NotEvaluable, KeyError, ValueError, IndexError, OverflowError):
                self._got[key] = None
        return self._got[key]

    def values(self, buffer, idx: list, scale: float) -> np.ndarray:
        """Hashed data of ``buffer`` (the data operand or a parameter) at index arrays."""
        seed = DATA_SEED if buffer is self.data_buffer else self.seeds[id(buffer)]
        return hashed(seed, idx, scale)

    def at_points(self, buffer, dims: list, scale: float) -> np.ndarray:
        """``buffer`` read at the sample positions' coordinates ``dims``: shape (P,)."""
        return self.values(buffer, [self.pts[:, d] for d in dims], scale)

    def around(self, buffer, axes: list, scale: float) -> np.ndarray:
        """The data operand over full ``axes`` at each position: (P, ext[a] for a in axes)."""
        idx = []
        for d in range(len(self.extents)):
            if d in axes:
                shape = [1] * (len(axes) + 1)
                shape[1 + axes.index(d)] = self.extents[d]
                idx.append(np.arange(self.extents[d], dtype=float).reshape(shape))
            else:
                idx.append(self.pts[:, d].astype(float).reshape((-1,) + (1,) * len(axes)))
        return self.values(buffer, idx, scale)

    data_buffer = None

    def shape_of(self, buffer) -> list:
        """``buffer``'s extents with symbolic extents bound."""
        return [extent_value(e, self.sym) for e in buffer.shape]

    def matches(self, data: Operand, reference) -> bool:
        """Whether the expression equals ``reference(scale)`` at every position, on every scale."""
        self.data_buffer = data.buffer
        for scale in SCALES:
            got = self.run(data, scale)
            if got is None:
                return False
            try:
                want = reference(scale)
            except (KeyError, ValueError, IndexError, ZeroDivisionError):
                return False
            if want is None or not close(got, want):
                return False
        return True


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal up to float32 rounding of intermediate results."""
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(want)) and np.allclose(got, want, rtol=2e-5, atol=1e-9))


def data_operands(check: Check) -> list:
    """Buffers that may be the op's data: parameters of the output's shape read in the
    expression, then intermediates read at exactly the output indices."""
    expr, space, ctx = check.expr, check.space, check.ctx
    params, inter = [], []

    def visit(n):
        if isinstance(n, Inlined):
            if _aligned(n.indices, space) and n.buffer not in [o.buffer for o in inter]:
                inter.append(Operand(n.buffer, n, False))
            return True
        if isinstance(n, BufferLoad) and ctx.is_param(n.buffer):
            if n.buffer not in [o.buffer for o in params] and check.shape_of(n.buffer) == check.extents:
                params.append(Operand(n.buffer, BufferLoad(n.buffer, space.indices), True))
        return True

    pre_order_visit(expr, visit)
    return params + inter


def _aligned(indices, space: Space) -> bool:
    return len(indices) == space.rank and all(a is b for a, b in zip(indices, space.indices))


def param_loads(expr, ctx, exclude) -> list:
    """Distinct parameter buffers read in ``expr`` other than ``exclude``, with one load each."""
    found: list = []

    def visit(n):
        if isinstance(n, Inlined) and n.buffer is exclude:
            return False
        if isinstance(n, BufferLoad) and ctx.is_param(n.buffer) and n.buffer is not exclude:
            if all(n.buffer is not b for b, _ in found):
                found.append((n.buffer, n))
        return True

    pre_order_visit(expr, visit)
    return found


def float_consts(expr) -> list:
    """Distinct float constants in ``expr`` (epsilon candidates)."""
    from tir.expr import FloatImm
    found: list = []
    pre_order_visit(expr, lambda n: found.append(n.value) if isinstance(n, FloatImm) and n.value not in found else True)
    return found


def reduction_sizes(check: Check) -> set:
    """The number of elements each reduction in the expression combines."""
    sizes = set()

    def visit(n):
        if isinstance(n, Reduce):
            exts = [extent_value(iv.dom.extent, check.sym) for iv in n.axes]
            if None not in exts:
                sizes.add(int(np.prod(exts)))
        return True

    pre_order_visit(check.expr, visit)
    return sizes


def unique(found: list) -> "object | None":
    """The one distinct candidate found, else None (ambiguous or nothing)."""
    distinct = []
    for f in found:
        if f not in distinct:
            distinct.append(f)
    return distinct[0] if len(distinct) == 1 else None
