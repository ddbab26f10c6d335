"""Evaluate scalar expression trees on sample values (numpy, float64).

Used to identify an elementwise function by what it computes rather than how it is
written: ``x * (0.5 + erf(x * 0.7071...) * 0.5)`` is gelu whatever the grouping.
Leaves (loads, inner ops) are given values by the caller.
"""
from __future__ import annotations

import math

import attrs

import numpy as np

from .recognize.guard import conjuncts
from .semantic import Inlined

from tir.expr import (EQ, GE, GT, LE, LT, NE, Add, And, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Max,
                      Min, Mod, Mul, Not, Or, Select, Sub, Var)
from tir.buffer import Buffer
from tir.functor import children

_ERF = np.vectorize(math.erf, otypes=[float])

BINARY_OPS = {
    Add: np.add, Sub: np.subtract, Mul: np.multiply, Max: np.maximum, Min: np.minimum,
    EQ: np.equal, NE: np.not_equal, LT: np.less, LE: np.less_equal, GT: np.greater,
    GE: np.greater_equal, And: np.logical_and, Or: np.logical_or,
}

CALL_OPS = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "tanh": np.tanh, "erf": _ERF,
    "fabs": np.abs, "abs": np.abs, "sin": np.sin, "cos": np.cos, "floor": np.floor,
    "ceil": np.ceil, "round": np.rint, "nearbyint": np.rint, "trunc": np.trunc,
    "log1p": np.log1p, "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "tan": np.tan,
    "pow": np.power, "power": np.power, "fmod": np.fmod, "isnan": np.isnan,
    "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh,
    "copysign": np.copysign, "atan2": np.arctan2, "acosh": np.arccosh, "asinh": np.arcsinh, "atanh": np.arctanh,
    "isinf": np.isinf, "isfinite": np.isfinite,
    "bitwise_not": lambda a: np.invert(_int(a)), "bitwise_and": lambda a, b: np.bitwise_and(_int(a), _int(b)),
    "bitwise_or": lambda a, b: np.bitwise_or(_int(a), _int(b)),
    "bitwise_xor": lambda a, b: np.bitwise_xor(_int(a), _int(b)),
    "shift_left": lambda a, b: np.left_shift(_int(a), _int(b)),
    "shift_right": lambda a, b: np.right_shift(_int(a), _int(b)),
}


def _int(v):
    """Integer view of sample values for the bitwise intrinsics (samples of integer leaves
    are whole numbers already)."""
    return np.trunc(np.asarray(v, dtype=float)).astype(np.int64)


class NotEvaluable(ValueError):
    """The expression holds something the prober does not model (a ValueError: a recognizer
    that meets one abstains, as on any form it was not written for)."""


def evaluate(expr, leaves: dict):
    """Value of ``expr`` where ``leaves`` maps leaf nodes to numpy arrays."""
    with np.errstate(all="ignore"):
        return _eval(expr, leaves)


def _eval(e, leaves):
    if e in leaves:
        return leaves[e]
    if isinstance(e, Inlined):
        return _eval(e.value, leaves)
    if isinstance(e, (FloatImm, IntImm)):
        return np.float64(e.value)
    fn = BINARY_OPS.get(type(e))
    if fn is not None:
        return fn(_eval(e.a, leaves), _eval(e.b, leaves)).astype(float)
    if isinstance(e, Div):
        return divide(e, _eval(e.a, leaves), _eval(e.b, leaves))
    if isinstance(e, FloorDiv):
        return np.floor_divide(_eval(e.a, leaves), _eval(e.b, leaves))
    if isinstance(e, (FloorMod, Mod)):
        a, b = _eval(e.a, leaves), _eval(e.b, leaves)
        return np.mod(a, b) if isinstance(e, FloorMod) else np.fmod(a, b)
    if isinstance(e, Not):
        return np.logical_not(_eval(e.a, leaves)).astype(float)
    if isinstance(e, Select):
        return np.where(_eval(e.condition, leaves) != 0, _eval(e.true_value, leaves),
                        _eval(e.false_value, leaves))
    if isinstance(e, Cast):
        return cast_to(e, _eval(e.value, leaves))
    if isinstance(e, Call):
        return _call(e, leaves)
    raise NotEvaluable(type(e).__name__)


def divide(e, a, b):
    if e.dtype.is_float:
        return a / b
    return np.trunc(a / b)


def cast_to(e, v):
    d = e.dtype
    if d.is_bool:
        return (v != 0).astype(float)
    if d.is_integer:
        return np.trunc(v)
    if d.bits == 16:
        return v.astype(np.float16).astype(float)
    if d.bits == 32:
        return np.asarray(v, dtype=np.float32).astype(float)
    return v


def _call(e, leaves):
    if e.op == "if_then_else":
        c, t, f = (_eval(a, leaves) for a in e.args)
        return np.where(c != 0, t, f)
    fn = CALL_OPS.get(e.op)
    if fn is None:
        raise NotEvaluable(e.op)
    return np.asarray(fn(*[_eval(a, leaves) for a in e.args])).astype(float)


# ------------------------------------------------------------------ loop nests enumerated

def loop_points(loops, ranges, env=None) -> "tuple[dict, int]":
    """Leaves giving every iteration of ``loops`` (For nodes) over ``ranges`` (constant
    ``(min, extent)`` pairs), row-major, as flat float arrays, with ``env`` added; and the
    number of iterations."""
    grids = np.meshgrid(*[np.arange(lo, lo + ext, dtype=float) for lo, ext in ranges], indexing="ij")
    leaves = dict(env or {})
    leaves.update({lp.loop_var: g.reshape(-1) for lp, g in zip(loops, grids)})
    return leaves, math.prod(ext for _, ext in ranges)


def nest_points(loops, env, limit: int) -> "tuple[dict, int] | None":
    """As :func:`loop_points`, for loops whose ``min`` or ``extent`` may use the loops
    around them (``compute_at`` under a loop whose region TVM could not make rectangular
    leaves ``for ax1 in range((f * 2 % 3 + 1) // 3 + 7)``): every iteration in the order
    the loops run them, with ``env`` added; None when a bound is not a whole number at some
    iteration or more than ``limit`` iterations run. A loop of no iteration at some point
    contributes none there."""
    leaves = dict(env or {})
    own: list = []
    size = 1
    for lp in loops:
        try:
            lo = evaluate_points(lp.min, leaves, size)
            ext = evaluate_points(lp.extent, leaves, size)
        except POINT_ERRORS + (KeyError,):
            return None
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(ext))
                and np.all(lo == np.floor(lo)) and np.all(ext == np.floor(ext))):
            return None
        size = _add_loop(leaves, own, size, lp.loop_var, lo, np.maximum(ext, 0), limit)
        if size is None:
            return None
    return leaves, size


def _add_loop(leaves: dict, own: list, size: int, var, lo, ext, limit: int) -> "int | None":
    """Extends the ``size`` iterations enumerated so far (of the loop variables ``own``, in
    ``leaves``) by a loop ``var`` running ``ext`` iterations from ``lo`` at each (arrays over
    them, or one value for all), in the order the loops run them; the new number of
    iterations, or None past ``limit``."""
    ext = np.broadcast_to(np.asarray(ext).astype(np.int64), (size,))
    total = int(ext.sum())
    if total > limit:
        return None
    outer = np.repeat(np.arange(size), ext)
    start = np.cumsum(ext) - ext
    position = np.arange(total) - np.repeat(start, ext)
    for v in own:
        leaves[v] = leaves[v][outer]
    leaves[var] = np.broadcast_to(np.asarray(lo, dtype=float), (size,))[outer] + position
    own.append(var)
    return total


def loops_points(loops, env, limit: int) -> "tuple[dict, int, list] | None":
    """Every iteration of ``loops`` at the shape-variable values ``env``, in the order they
    run: (leaves, count, ranges), by :func:`loop_points` when every range is constant there,
    else by :func:`nest_points`; ``ranges`` holds ``(min, extent)`` per loop, constant, or
    for a range that uses an outer loop its minimum at each iteration (an array) and its
    largest extent. None past ``limit`` iterations or when a range does not evaluate to
    whole numbers."""
    ranges = [(scalar_int(lp.min, env), scalar_int(lp.extent, env)) for lp in loops]
    if all(None not in r for r in ranges):
        ranges = [(lo, max(e, 0)) for lo, e in ranges]
        if math.prod(e for _, e in ranges) > limit:
            return None
        leaves, size = loop_points(loops, ranges, env)
        return leaves, size, ranges
    got = nest_points(loops, env, limit)
    if got is None:
        return None
    leaves, size = got
    ranges = [(evaluate_points(lp.min, leaves, size),
               int(evaluate_points(lp.extent, leaves, size).max()) if size else 0) for lp in loops]
    return leaves, size, ranges


def pruned_points(loops, env, limit: int, predicate) -> "tuple[dict, int, list] | None":
    """As :func:`loops_points` for loops of constant ranges, keeping only the iterations
    where the conjuncts of ``predicate`` that read only the loops enumerated so far (and
    the shape variables) hold, each conjunct applied as soon as its loops are there: the
    iterations a block runs under ``predicate``, in the order they run, when its loops run
    many more (the ``n < ...`` guards of a symbolic loop split by large factors). None past
    ``limit`` iterations at some loop or when a range is not a whole number."""
    ranges = [(scalar_int(lp.min, env), scalar_int(lp.extent, env)) for lp in loops]
    if any(None in r for r in ranges):
        return None
    ranges = [(lo, max(e, 0)) for lo, e in ranges]
    pending = []
    for term in conjuncts(predicate):
        found = vars_in(term)
        pending.append((term, found))
    leaves = dict(env or {})
    own: list = []
    size = 1
    for lp, (lo, ext) in zip(loops, ranges):
        size = _add_loop(leaves, own, size, lp.loop_var, lo, ext, limit)
        if size is None:
            return None
        ready = [(t, vs) for t, vs in pending if all(v in leaves for v in vs)]
        pending = [(t, vs) for t, vs in pending if not all(v in leaves for v in vs)]
        for term, _ in ready:
            try:
                keep = evaluate_points(term, leaves, size) != 0
            except POINT_ERRORS:
                return None
            for var in own:
                leaves[var] = leaves[var][keep]
            size = int(keep.sum())
    return leaves, size, ranges


def inside_points(points, doms, count: int) -> "tuple | None":
    """(the points, one array per axis, that lie inside ``doms``, how many), whole numbers
    only; None when a point is not a whole number."""
    arrays = [np.broadcast_to(np.asarray(p, dtype=float), (count,)) for p in points]
    keep = np.ones(count, dtype=bool)
    for p, (lo, ext) in zip(arrays, doms):
        if np.any(p != np.floor(p)):
            return None
        keep &= (p >= lo) & (p < lo + ext)
    return [p[keep] for p in arrays], int(keep.sum())


def evaluate_points(expr, leaves: dict, size: int) -> np.ndarray:
    """``expr`` at each of ``size`` points (a constant is repeated)."""
    return np.broadcast_to(np.asarray(evaluate(expr, leaves)), (size,))


def flat_points(points, doms, count: int) -> "np.ndarray | None":
    """``count`` points given one array per variable (none: every point is the one point of
    an empty product), as their row-major index in the product of the domains ``doms``
    (``(min, extent)`` pairs); None when one leaves its domain or is not a whole number."""
    flat = np.zeros(count, dtype=np.int64)
    for p, (lo, ext) in zip(points, doms):
        p = np.asarray(p)
        if p.size and (np.any(p < lo) or np.any(p >= lo + ext) or np.any(p != np.floor(p))):
            return None
        flat = flat * ext + (p - lo).astype(np.int64)
    return flat


def distinct(flat: np.ndarray, size: int) -> int:
    """How many distinct values ``flat`` (row-major indices from :func:`flat_points`, each in
    ``[0, size)``) holds: a count per index, not a sort."""
    return int(np.count_nonzero(np.bincount(flat, minlength=size))) if flat.size else 0


POINT_ERRORS = (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError)
"""What evaluating an index or predicate over enumerated points may raise on a form it
cannot take (an unknown call, a division by zero): the points are then not enumerable."""


@attrs.frozen
class BlockPoints:
    """The iterations of a block's loops, enumerated: the loops' ``leaves`` (as from
    :func:`loop_points`), the mask ``keep`` of those the block runs, the block variables'
    values at them (``block_env``, with the shape variables), their ``count`` and the loops'
    ``ranges``: ``(min, extent)``, constant, or for a loop whose range uses an outer loop its
    minimum at each iteration (an array) and its largest extent."""
    leaves: dict
    keep: np.ndarray
    block_env: dict
    count: int
    ranges: list


def block_points(realize, loops, env: dict, limit: int, in_domain: bool = False) -> "BlockPoints | None":
    """Every iteration of ``loops`` around ``realize`` where its predicate holds (and, with
    ``in_domain``, every block variable lies inside its domain), shape variables at the
    values ``env`` gives (loop ranges that use outer loops enumerated by :func:`nest_points`);
    None when a range is not whole numbers there, the loops run more than ``limit``
    iterations, or the predicate or a binding does not evaluate."""
    block = realize.block
    doms = [(scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)) for iv in block.iter_vars] \
        if in_domain else []
    if any(None in d for d in doms):
        return None
    got = loops_points(loops, env, limit)
    if got is None:
        got = pruned_points(loops, env, limit, realize.predicate)
    if got is None:
        return None
    leaves, size, ranges = got
    try:
        keep = evaluate_points(realize.predicate, leaves, size).astype(bool)
        values = [evaluate_points(v, leaves, size) for v in realize.iter_values]
    except POINT_ERRORS:
        return None
    for v, (lo, ext) in zip(values, doms):
        keep = keep & (v >= lo) & (v < lo + ext)
    block_env = dict(env)
    block_env.update({iv.var: v[keep] for iv, v in zip(block.iter_vars, values)})
    return BlockPoints(leaves, keep, block_env, int(keep.sum()), ranges)



def vars_in(expr) -> set:
    """The variables of ``expr`` (:func:`collect_vars` into a fresh set)."""
    found: set = set()
    collect_vars(expr, found)
    return found


def collect_vars(expr, out: set) -> None:
    """Add the variables of ``expr`` to ``out`` (those of the shapes of the buffers it loads
    too, as :func:`tir.functor.post_order_visit` meets them)."""
    stack = [expr]
    buffers: set = set()
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            out.add(n)
            continue
        if isinstance(n, Buffer):
            if id(n) in buffers:
                continue
            buffers.add(id(n))
        stack.extend(children(n))


def shape_vars(func) -> set:
    """The variables of ``func``'s buffer shapes (its symbolic extents)."""
    found: set = set()
    for buf in func.buffers:
        for s in buf.shape:
            collect_vars(s, found)
    return found


def shape_envs(free, values) -> list:
    """One environment per value in ``values`` binding every shape variable of ``free`` to
    it (a function without any is judged once, at the first)."""
    return [{v: np.float64(value) for v in free} for value in (values if free else values[:1])]


_SCALAR_ERRORS = (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError, KeyError,
                  IndexError, AttributeError)


def scalar_int(expr, env) -> "int | None":
    """``expr`` evaluated with ``env`` when it is one finite integer value, else None."""
    try:
        v = np.asarray(evaluate(expr, env))
    except _SCALAR_ERRORS:
        return None
    if v.size != 1 or not np.isfinite(v).all() or float(v) != math.floor(float(v)):
        return None
    return int(v.reshape(-1)[0])
