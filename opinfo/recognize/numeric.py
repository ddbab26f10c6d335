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

from tir.expr import BufferLoad, Call, Cast, FloatImm, Var

from ..probe import NotEvaluable
from ..semantic import Inlined, Reduce
from .common import Space
from .sample import Evaluator, extent_value, hashed, points, symbol_values, visit_once

DATA_SEED = 97
BUDGET = 400_000
"""Sample positions times the largest reduction size: bounds the arrays built."""
SCALES = (1.0, 1e-3)
"""Data scales: the small one makes an epsilon visible next to the variance."""
EXHAUSTIVE = 65_536
"""Output positions times the largest reduction size up to which every output position is
evaluated: a condition on the output indices (a ``tril`` inlined into the op's last block
zeroing one corner) changes positions a random sample misses."""
REACH = 4.0
"""A further data scale puts values this many times beyond the largest float constant of the
expression (above 1): a clip or a select at ``6`` never reached by data in [-1, 1) would
otherwise go unseen (softmax of ``clip(x, -6, 6)`` read as softmax)."""
UNREACHABLE = 65504.0
"""Constants this large (a float16 or float32 extreme: a max reduction's init) are not
reached: data scaled beyond them overflows."""


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

    visit_once(expr, visit)
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
        self.data_buffer = None
        """The data operand of the candidate being checked: its data uses DATA_SEED."""
        self.rtol = 4e-3 if narrow_casts(expr) else 2e-5
        """Half-precision casts round intermediate results to about three digits."""
        self._got: dict = {}
        self._memo: dict = {}
        self.pts = None
        if None not in self.extents:
            largest = max(reduction_sizes(self), default=1)
            self.pts = positions(self.extents, largest)
        self.scales = scales(expr)

    def memo(self, key, compute):
        """``compute()`` once per ``key`` for this check (reference statistics)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def use_points(self, pts: np.ndarray) -> None:
        """Evaluate at ``pts`` from now on."""
        self.pts = pts
        self._got = {}
        self._memo = {}

    @property
    def ok(self) -> bool:
        """Positions could be chosen (extents known) and the output indices are variables."""
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

    def shape_of(self, buffer) -> list:
        """``buffer``'s extents with symbolic extents bound."""
        return [extent_value(e, self.sym) for e in buffer.shape]

    def matches(self, data: Operand, reference) -> bool:
        """Whether the expression equals ``reference(scale)`` at every position, on every scale."""
        self.data_buffer = data.buffer
        for scale in self.scales:
            got = self.run(data, scale)
            if got is None:
                return False
            try:
                want = reference(scale)
            except (KeyError, ValueError, IndexError, ZeroDivisionError):
                return False
            if want is None or not close(got, want, self.rtol, self._floor(want)):
                return False
        return True

    def _floor(self, want: np.ndarray) -> float:
        """The absolute error allowed everywhere: none beyond ``close``'s own in float32; with
        half-precision casts one float16 step at the largest magnitude, since a small result
        can be the sum of rounded terms of that magnitude (a group_norm's ``norm * gamma +
        beta`` in float16 near zero), and never finer than float16's subnormals."""
        if self.rtol <= 2e-5:
            return 0.0
        with np.errstate(all="ignore"):
            largest = float(np.abs(want).max(initial=0.0))
        if not np.isfinite(largest):
            return HALF_SPACING
        return max(HALF_SPACING, float(np.spacing(np.float16(min(largest, HALF_MAX)))))


def positions(extents: list, largest: int) -> np.ndarray:
    """(P, rank) output positions to evaluate at: all of them when the output times its
    largest reduction stays within EXHAUSTIVE; else both corners and random positions
    (:func:`.sample.points`), every corner of the box (up to rank 6: a condition
    comparing two indices, a ``tril`` with a large offset, bites there) and one sweep of
    each axis's values (a condition on one index), as far as BUDGET allows."""
    ext = [int(e) for e in extents]
    total = int(np.prod(ext)) if ext else 1
    if total * max(largest, 1) <= EXHAUSTIVE:
        return np.indices(ext).reshape(len(ext), -1).T.astype(np.int64) if ext else np.zeros((1, 0), np.int64)
    base = points(ext, int(min(12, max(2, BUDGET // largest))))
    room = BUDGET // max(largest, 1) - len(base)
    rows = []
    if len(ext) <= 6 and 2 ** len(ext) <= room:
        rows += [[(e - 1) * bit for e, bit in zip(ext, bits)] for bits in np.ndindex(*([2] * len(ext)))]
    rng = np.random.default_rng(1)
    sweep = sum(ext)
    if len(rows) + sweep <= room:
        for d, e in enumerate(ext):
            block = rng.integers(0, ext, size=(e, len(ext)))
            block[:, d] = np.arange(e)
            rows += block.tolist()
    if not rows:
        return base
    return np.unique(np.concatenate([base, np.asarray(rows, dtype=np.int64).reshape(-1, len(ext))]), axis=0)


def scales(expr) -> tuple:
    """SCALES, and one beyond the expression's largest float constant above 1 (REACH)."""
    top = max((abs(c) for c in float_consts(expr) if 1.0 < abs(c) < UNREACHABLE), default=None)
    return SCALES if top is None else SCALES + (REACH * top,)


HALF_SPACING = 2.0 ** -23
"""Twice the spacing of float16's subnormals: a float16 result near zero is this coarse."""
HALF_MAX = 65504.0
"""The largest finite float16."""


def close(got: np.ndarray, want: np.ndarray, rtol: float, floor: float = 0.0) -> bool:
    """Equal up to rounding of intermediate results (and to ``floor`` absolutely)."""
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(want)):
            return False
        atol = max(rtol * 1e-2 * max(float(np.abs(want).max(initial=0.0)), 1e-7), floor)
        return bool(np.allclose(got, want, rtol=rtol, atol=atol))


@lru_cache(maxsize=1024)
def narrow_casts(expr) -> bool:
    """Whether ``expr`` casts to a float type of 16 bits or fewer."""
    found = []
    visit_once(expr, lambda n: found.append(n) if isinstance(n, Cast) and n.dtype.is_float
               and n.dtype.bits <= 16 else True)
    return bool(found)


def data_operands(check: Check) -> list:
    """Buffers that may be the op's data: parameters of the output's shape read in the
    expression, then intermediates read at exactly the output indices."""
    expr, space, ctx = check.expr, check.space, check.ctx
    params, inter = [], []

    def visit(n):
        if isinstance(n, Inlined):
            if _aligned(n.indices, space):
                src = _copied(n, space)
                if isinstance(src, Inlined) and src.buffer not in [o.buffer for o in inter]:
                    inter.append(Operand(src.buffer, src, False))
            return True
        if isinstance(n, BufferLoad) and ctx.is_param(n.buffer):
            if n.buffer not in [o.buffer for o in params] and check.shape_of(n.buffer) == check.extents:
                params.append(Operand(n.buffer, BufferLoad(n.buffer, space.indices), True))
        return True

    visit_once(expr, visit)
    return params + inter


def _copied(n, space: Space):
    """What an intermediate at the output indices copies (through same-type casts)."""
    while True:
        v = n.value
        while isinstance(v, Cast) and v.dtype == v.value.dtype:
            v = v.value
        if isinstance(v, Inlined) and _aligned(v.indices, space):
            n = v
            continue
        return n


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

    visit_once(expr, visit)
    return found


@lru_cache(maxsize=1024)
def float_consts(expr) -> tuple:
    """Distinct float constants in ``expr`` (epsilon candidates)."""
    found: list = []
    visit_once(expr, lambda n: found.append(n.value) if isinstance(n, FloatImm) and n.value not in found else True)
    return tuple(found)


def reduction_sizes(check: Check) -> set:
    """The number of elements each reduction in the expression combines."""
    return check.memo("reduction sizes", lambda: _reduction_sizes(check))


def _reduction_sizes(check: Check) -> set:
    sizes = set()

    def visit(n):
        if isinstance(n, Reduce):
            exts = [extent_value(iv.dom.extent, check.sym) for iv in n.axes]
            if None not in exts:
                sizes.add(int(np.prod(exts)))
        return True

    visit_once(check.expr, visit)
    return sizes


def unique(found: list) -> "object | None":
    """The one distinct candidate found, else None (ambiguous or nothing)."""
    distinct = []
    for f in found:
        if f not in distinct:
            distinct.append(f)
    return distinct[0] if len(distinct) == 1 else None


def claim(expr, space: Space, ctx, find, wanted) -> "object | None":
    """``find(check)`` at the root, unless an intermediate of the output's shape inside the
    root already computes the same op: the root then adds ops that change nothing on the
    sampled data (a relu after a softmax) and the decomposer must cut them off.
    ``wanted(expr, ctx)`` is a cheap structural filter tried first."""
    if not wanted(expr, ctx):
        return None
    check = Check(expr, space, ctx)
    if not check.ok:
        return None
    got = find(check)
    if got is None:
        return None
    wrapped = _wrapped_result(expr, space, ctx)
    for inner in _inner_outputs(expr, space):
        if inner is wrapped:
            continue
        other = find(Check(inner, space, ctx)) if wanted(inner, ctx) else None
        if other is not None and (other.name, other.attrs) == (got.name, got.attrs):
            return None
    return got


def _wrapped_result(expr, space: Space, ctx):
    """The op's float32 result when ``expr`` casts it back to float16, the type of every
    float parameter: TVM's form of a float16 norm (computed in float32 between casts). That
    cast is no op of its own."""
    core = _core(expr, space)
    if not (isinstance(core, Cast) and core.dtype.is_float and core.dtype.bits <= 16
            and isinstance(core.value, Inlined) and core.value.dtype.bits > core.dtype.bits):
        return None
    floats = [p.dtype for p in ctx.sem.params if p.dtype.is_float]
    return core.value if floats and all(d == core.dtype for d in floats) else None


def _core(expr, space: Space):
    """The computation of ``expr``: inside the intermediate it stores to, through copies
    of other intermediates at the same indices (TVM's casts around rms_norm) and casts
    to the same type."""
    while True:
        if isinstance(expr, Inlined) and _aligned(expr.indices, space):
            expr = expr.value
        elif isinstance(expr, Cast) and expr.dtype == expr.value.dtype:
            expr = expr.value
        else:
            return expr


def _inner_outputs(expr, space: Space) -> list:
    """Intermediates of the output's shape read at the output indices inside the core."""
    core = _core(expr, space)
    found = []

    def visit(n):
        if isinstance(n, Inlined) and n is not core and _aligned(n.indices, space) and n not in found:
            found.append(n)
        return True

    visit_once(core, visit)
    return found
