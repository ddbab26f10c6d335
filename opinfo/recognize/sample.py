"""Evaluate a meaning expression numerically at chosen points of its output space.

Recognizers of multi-block ops (softmax, norms, resize) check a candidate by comparing
the expression with a numpy reference on pseudo-random data. The data of a buffer is a
function of each element's index (a hash), so no tensor is materialised and symbolic
extents only need a value: a point set of P output positions is evaluated at once,
each reduction adding one numpy axis that is summed (or maxed) away again.

Numpy layout: axis 0 runs over the points; every reduction variable of the expression
owns one further axis, so broadcasting keeps arrays as small as their dependencies.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Mod, Not, Select, Var
from tir.functor import children, pre_order_visit

from ..affine import const_of
from ..probe import BINARY_OPS, CALL_OPS, NotEvaluable, cast_to, divide
from ..semantic import Inlined, Reduce

_MIX = (12.9898, 78.233, 37.719, 4.1414, 91.573, 23.371, 55.127, 67.301)
_REDUCERS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
MAX_ELEMENTS = 4_000_000
"""Largest array an evaluation may build; beyond it the check abstains."""


def visit_once(node, fn) -> None:
    """Like ``pre_order_visit``, but each distinct object once: meaning trees repeat
    inlined subtrees many times over."""
    seen: set = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if fn(n) is not False:
            stack.extend(reversed(list(children(n))))


def hashed(seed: int, idx: list, scale: float = 1.0) -> np.ndarray:
    """Pseudo-random values in [-scale, scale) as a function of the index arrays."""
    acc = np.float64(seed) * 0.7548776662
    for d, a in enumerate(idx):
        acc = acc + np.asarray(a, dtype=float) * _MIX[d % len(_MIX)] * (1 + d // len(_MIX))
    v = np.sin(acc) * 43758.5453
    return (2.0 * (v - np.floor(v)) - 1.0) * scale


def symbol_values(buffers) -> dict:
    """A small distinct value for every symbolic extent in the buffers' shapes."""
    out: dict = {}

    def visit(n):
        if isinstance(n, Var) and n not in out:
            out[n] = 3 + len(out)
        return True

    for b in buffers:
        for s in b.shape:
            pre_order_visit(s, visit)
    return out


def extent_value(e, sym: dict) -> "int | None":
    """The value of an extent expression once symbolic extents are bound."""
    c = const_of(e)
    if c is not None:
        return c
    try:
        v = Evaluator(sym, {}, set())._eval(e)
    except (NotEvaluable, KeyError):
        return None
    v = np.asarray(v)
    return int(v) if v.size == 1 else None


def points(extents: list, count: int = 12, seed: int = 0) -> np.ndarray:
    """(P, rank) integer positions: both corners and ``count`` random positions."""
    rng = np.random.default_rng(seed)
    ext = np.asarray(extents, dtype=np.int64)
    rows = [np.zeros_like(ext), ext - 1]
    rows += [rng.integers(0, ext) for _ in range(count)]
    return np.unique(np.stack(rows), axis=0)


class Evaluator:
    """Values of expressions at a point set, with hashed data for every buffer.

    ``seeds`` maps id(buffer) to its data seed; ``opaque`` holds ids of intermediate
    buffers whose Inlined values are replaced by hashed data (an op's operand).
    """

    def __init__(self, sym: dict, seeds: dict, opaque: set, scale: float = 1.0):
        self.sym = sym
        self.seeds = seeds
        self.opaque = opaque
        self.scale = scale
        self.env: dict = dict(sym)
        self.axis: dict = {}
        self.ndim = 1
        self.memo: dict = {}

    def data(self, buffer, idx: list) -> np.ndarray:
        seed = self.seeds.get(id(buffer))
        if seed is None:
            raise NotEvaluable(f"no data for {buffer.name}")
        return hashed(seed, idx, self.scale)

    def at(self, expr, indices: tuple, pts: np.ndarray) -> np.ndarray:
        """``expr`` at each row of ``pts`` (output positions for ``indices``): shape (P,)."""
        self._assign_axes(expr)
        for d, v in enumerate(indices):
            if isinstance(v, Var):
                self.env[v] = self._along(pts[:, d].astype(float), 0)
        self.memo = {}
        got = self._full(self._eval(expr))
        return np.broadcast_to(got, (len(pts),) + (1,) * (self.ndim - 1)).reshape(len(pts))

    def _assign_axes(self, expr) -> None:
        def visit(n):
            if isinstance(n, Reduce):
                for iv in n.axes:
                    if iv.var not in self.axis:
                        self.axis[iv.var] = len(self.axis) + 1
            return not (isinstance(n, Inlined) and id(n.buffer) in self.opaque)

        visit_once(expr, visit)
        self.ndim = 1 + len(self.axis)
        if self.ndim > 32:
            raise NotEvaluable("too many reduction axes")

    def _along(self, values: np.ndarray, axis: int) -> np.ndarray:
        shape = [1] * max(self.ndim, axis + 1)
        shape[axis] = len(values)
        return values.reshape(shape)

    def _eval(self, e):
        try:
            hit = self.memo.get(e)
        except TypeError:
            hit = None
        if hit is not None:
            return hit
        v = self._compute(e)
        if np.size(v) > MAX_ELEMENTS:
            raise NotEvaluable("sample too large")
        self.memo[e] = v
        return v

    def _compute(self, e):
        if isinstance(e, Var):
            if e not in self.env:
                raise NotEvaluable(f"unbound {e.name}")
            return self.env[e]
        if isinstance(e, (FloatImm, IntImm)):
            return np.float64(e.value)
        if isinstance(e, Inlined):
            if id(e.buffer) in self.opaque:
                return self._load(e.buffer, e.indices)
            return self._eval(e.value)
        if isinstance(e, BufferLoad):
            return self._load(e.buffer, e.indices)
        if isinstance(e, Reduce):
            return self._reduce(e)
        return self._scalar(e)

    def _load(self, buffer, indices) -> np.ndarray:
        return self.data(buffer, [self._eval(i) for i in indices])

    def _reduce(self, e: Reduce):
        axes = []
        for iv in e.axes:
            n = extent_value(iv.dom.extent, self.sym)
            lo = extent_value(iv.dom.min, self.sym)
            if n is None or lo is None or n <= 0:
                raise NotEvaluable("reduction extent")
            a = self.axis[iv.var]
            self.env[iv.var] = self._along(np.arange(lo, lo + n, dtype=float), a)
            axes.append(a)
        src = self._full(self._eval(e.source))
        shape = list(src.shape)
        for a, iv in zip(axes, e.axes):
            shape[a] = np.size(self.env[iv.var])
        red = _REDUCERS[e.combiner](np.broadcast_to(src, shape), axis=tuple(axes), keepdims=True)
        return _COMBINE[e.combiner](self._eval(e.init), red)

    def _full(self, v) -> np.ndarray:
        """``v`` with all ``ndim`` axes (scalars become arrays of ones shape)."""
        v = np.asarray(v, dtype=float)
        return v.reshape(v.shape + (1,) * (self.ndim - v.ndim))

    def _scalar(self, e):
        fn = BINARY_OPS.get(type(e))
        if fn is not None:
            return fn(self._eval(e.a), self._eval(e.b)).astype(float)
        if isinstance(e, Div):
            return divide(e, self._eval(e.a), self._eval(e.b))
        if isinstance(e, FloorDiv):
            return np.floor_divide(self._eval(e.a), self._eval(e.b))
        if isinstance(e, (FloorMod, Mod)):
            a, b = self._eval(e.a), self._eval(e.b)
            return np.mod(a, b) if isinstance(e, FloorMod) else np.fmod(a, b)
        if isinstance(e, Not):
            return np.logical_not(self._eval(e.a)).astype(float)
        if isinstance(e, Select):
            return np.where(self._eval(e.condition) != 0, self._eval(e.true_value), self._eval(e.false_value))
        if isinstance(e, Cast):
            return cast_to(e, np.asarray(self._eval(e.value), dtype=float))
        if isinstance(e, Call):
            return self._call(e)
        raise NotEvaluable(type(e).__name__)

    def _call(self, e: Call):
        args = [self._eval(a) for a in e.args]
        if e.op == "if_then_else":
            return np.where(args[0] != 0, args[1], args[2])
        fn = CALL_OPS.get(e.op)
        if fn is None:
            raise NotEvaluable(e.op)
        return fn(*args)
