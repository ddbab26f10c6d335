"""Functions over symbolic extents read at concrete ones.

The recognizers read a symbolic batch ``n`` symbolically, but some need integer geometry
along an axis: a convolution's after-padding from an output length ``(n - 1) // 2 + 1``, a
pool's windows over a height ``h``. Where the symbolic reading finds nothing, the function
is read again with its symbolic extents bound to :data:`BINDINGS` consecutive values past
every integer constant of its body (each symbol its own, so that two never coincide). Each
binding is a static function that passes, or fails, every check :func:`opinfo.analyze`
makes on its own. When half the bindings or more name the same windowed ops
(:data:`WINDOWED`) with the same attributes, operands and warnings, none names anything
else or fails a check (a binding may leave attributes open: a pool's ``ceil_mode`` changes
no output length at some lengths), and the answer lowered afresh computes what
the function computes at every extent from 1 up to the bindings, it is the function's
answer.

A function a TVM scheduler marked scheduled (dlight: ``tirx.is_scheduled``) is specialized
over a symbolic batch alone too: its tiles pad the batch to a multiple of the tile
(``(n + 31) // 32 * 32`` rows of a matmul's shared copy), which the symbolic readers do not
read. Its answer may then hold ops without list attributes only (a matmul, elementwise ops):
anything shaped by the batch is left to the symbolic readers.

Attributes that follow the extents (a reshape's target shape, a slice's end at ``n - 1``)
differ between bindings, and so give no answer. Consecutive values meet every residue of a
stride up to their count, which is where the readings of a pool or convolution that agree at
one length part (``ceil_mode`` or more after-padding: output lengths equal at some lengths,
not at all): a reading kept at every binding gives the function's output length at every
residue, hence at every length.
"""
from __future__ import annotations

import math

import attrs
import numpy as np

from tir import dtype as dt
from tir.expr import (EQ, GE, GT, LE, LT, NE, Add, And, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Max,
                      Min, Mul, Not, Or, Select, Sub)
from tir.function import PrimFunc
from tir.functor import pre_order_visit, substitute, transform

from .affine import const_of
from .coverage import block_realizes
from .recognize.running import above_constants
from .recognize.window import symbolic_in
from .unit_axes import scheduled

WINDOWED = ("nn.conv", "nn.max_pool", "nn.avg_pool", "nn.adaptive_avg_pool", "image.resize")
"""Prefixes of the ops a specialized reading may name, and whose answers over symbolic
extents are checked at every extent (:func:`holds_at_every_extent`): those whose geometry
(padding, windows, sizes) the recognizers need integer extents for. Other ops of the answer may only carry
scalar attributes (an ``add`` or ``clip`` fused after a convolution): an answer of slices,
reshapes or pads is the symbolic readers' (:mod:`.recognize.symbolic`), which see what a
binding cannot -- clamps such as ``min(3, n)`` that bite only below every binding."""

BINDINGS = 6
"""How many consecutive values each symbolic extent takes."""

FIRST = 17
"""The first value of the first symbol (later symbols start :data:`SPREAD` further on):
larger than the windows and tiles of usual kernels, small enough to run."""

SPREAD = 7


def symbolic_vars(func: PrimFunc) -> list:
    """The variables in the extents of ``func``'s parameters, in order of appearance."""
    return symbolic_in([e for buf in func.buffers for e in buf.shape])


LARGEST = 64
"""No specialization when the body holds an integer constant of :data:`LARGEST` or more (the
bindings must pass every constant, and would make the function too large to read)."""


LARGEST_TILED = 128
""":data:`LARGEST` for a scheduled function over a symbolic batch: its constants are tile
sizes (32 rows, 64 columns), the bindings past them rows of a matmul."""


def bindings(variables: list, first: int = FIRST) -> list:
    """:data:`BINDINGS` maps ``{var: IntImm}``, consecutive values per variable from ``first``."""
    return [{v: IntImm(v.dtype, first + SPREAD * i + k) for i, v in enumerate(variables)}
            for k in range(BINDINGS)]


def bind(func: PrimFunc, binding: dict) -> PrimFunc:
    """``func`` with the variables of ``binding`` replaced by its constants, and the
    arithmetic on constants that leaves folded as TVM folds a static function's
    (``T.Cast("float32", T.int64(17)) / T.float32(8.0)`` is ``T.float32(2.125)``; a
    comparison of constants is a constant, and an ``if_then_else`` or ``Select`` on one is
    the branch it picks)."""
    return transform(substitute(func, binding), _folded)


_INT = {Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
        FloorDiv: lambda a, b: a // b if b else None, FloorMod: lambda a, b: a % b if b else None,
        Min: min, Max: max}
_FLOAT = {Add: np.add, Sub: np.subtract, Mul: np.multiply, Div: np.divide, Min: np.minimum, Max: np.maximum}


def _folded(n):
    """``n`` computed when its operands are constants (None: kept; also for types numpy
    does not have, bfloat16)."""
    try:
        return _computed(n)
    except TypeError:
        return None


_COMPARE = {EQ: lambda a, b: a == b, NE: lambda a, b: a != b, LT: lambda a, b: a < b,
            LE: lambda a, b: a <= b, GT: lambda a, b: a > b, GE: lambda a, b: a >= b,
            And: lambda a, b: bool(a and b), Or: lambda a, b: bool(a or b)}


def _chosen(n):
    """The branch of an ``if_then_else`` or ``Select`` whose condition is a constant (a
    ceil_mode pool's output length ``if_then_else(w % 2 == 0, w // 2, w // 2 + 1)``, bound);
    None otherwise."""
    if isinstance(n, Select):
        cond, yes, no = n.condition, n.true_value, n.false_value
    elif isinstance(n, Call) and n.op == "if_then_else" and len(n.args) == 3:
        cond, yes, no = n.args
    else:
        return None
    return (yes if cond.value else no) if isinstance(cond, IntImm) and cond.dtype.lanes == 1 else None


def _computed(n):
    if isinstance(n, (Select, Call)):
        return _chosen(n)
    if isinstance(n, Not):
        return IntImm(dt.bool_, int(not n.a.value)) if isinstance(n.a, IntImm) and n.dtype.lanes == 1 else None
    if type(n) in _COMPARE:
        a, b = n.a, n.b
        if isinstance(a, IntImm) and isinstance(b, IntImm) and n.dtype.lanes == 1:
            return IntImm(dt.bool_, int(_COMPARE[type(n)](a.value, b.value)))
        return None
    if isinstance(n, Cast):
        v = n.value
        if isinstance(v, IntImm) and n.dtype.lanes == 1 and (n.dtype.is_integer or n.dtype.is_float):
            return IntImm(n.dtype, v.value) if n.dtype.is_integer else FloatImm(n.dtype, _rounded(v.value, n.dtype))
        if isinstance(v, FloatImm) and n.dtype.is_float and n.dtype.lanes == 1:
            return FloatImm(n.dtype, _rounded(v.value, n.dtype))
        return None
    a, b = getattr(n, "a", None), getattr(n, "b", None)
    if isinstance(a, IntImm) and isinstance(b, IntImm) and type(n) in _INT and not n.dtype.is_bool:
        value = _INT[type(n)](a.value, b.value)
        return None if value is None else IntImm(n.dtype, value)
    if isinstance(a, FloatImm) and isinstance(b, FloatImm) and type(n) in _FLOAT:
        kind = np.dtype(str(n.dtype))
        with np.errstate(all="ignore"):
            value = _FLOAT[type(n)](kind.type(a.value), kind.type(b.value))
        return FloatImm(n.dtype, float(value)) if np.isfinite(value) else None
    return None


def _rounded(value, dtype) -> float:
    return float(np.dtype(str(dtype)).type(value))


def read_specialized(func: PrimFunc, analyze_one) -> "tuple | None":
    """``(ops, warnings)`` that every binding of ``func``'s symbolic extents agrees on, or
    None (no symbolic extents, a binding without ops, bindings that differ).
    ``analyze_one(static_func)`` reads one binding (a :class:`.info.FuncInfo`)."""
    variables = symbolic_vars(func)
    beyond = _beyond_batch(func)
    tiled = not beyond and scheduled(func)
    if not (beyond or tiled) or any(p is v for p in func.params for v in variables) or _clamped(func):
        return None  # a batch at most (read symbolically), a scalar parameter, or clamped
    first = _first(func)
    if first > (LARGEST_TILED if tiled else LARGEST):
        return None
    agreed, named = None, 0
    for k, binding in enumerate(bindings(variables, first)):
        if 2 * (named + BINDINGS - k) < BINDINGS:
            return None  # too few bindings left to name it at half of them
        info = analyze_one(bind(func, binding))
        if info.refused is not None:
            return None  # a check failed
        if not info.ops:
            # nothing read at this binding, or attributes left open there (an adaptive pool
            # whose windows divide evenly reads as a plain pool as well; a pool's ceil_mode
            # that changes no output length at this one): no answer, nothing against one
            continue
        if not (_scalar_only(info.ops) if tiled else _geometric(info.ops)):
            return None
        key = ([op.to_json() for op in info.ops], info.warnings)
        if agreed is None:
            agreed, reading = key, info
        elif key != agreed:
            return None
        named += 1
    if 2 * named < BINDINGS or not _holds_below(func, variables, first, reading.ops):
        return None
    return reading.ops, reading.warnings


def holds_at_every_extent(func: PrimFunc, ops) -> bool:
    """For an answer read over symbolic extents beyond a batch and holding a windowed op (a
    convolution whose after-padding came from its symbolic output length): whether the
    answer, lowered afresh, computes what ``func`` computes at every extent from 1 up past
    the body's constants (:func:`_holds_below`). True for any other answer."""
    if not ops or not any(op.name.startswith(WINDOWED) for op in ops) or not _beyond_batch(func):
        return True
    return _holds_below(func, symbolic_vars(func), min(_first(func), LARGEST), ops)


def _first(func: PrimFunc) -> int:
    """The first binding: past every constant of the body, so that no test (``v < 30``) or
    clamp holds at every binding and fails beyond them."""
    return max(FIRST, above_constants(func))


def _holds_below(func: PrimFunc, variables: list, first: int, ops) -> bool:
    """Whether the answer, lowered afresh, computes what ``func`` computes at every extent
    from 1 up to the bindings (each symbol alone and all together), where the function is
    not empty: a form that changes below every constant (a resize's clamp that bites only
    when it enlarges) shows there. An extent where the answer cannot be built or run is
    left out; one where it computes something else refutes it."""
    from .verify import CHEAP_STEPS, verify_fused, verify_op

    past = above_constants(func)
    for binding in _sweep(variables, first):
        bound = bind(func, binding)
        if any(const_of(e) is None or const_of(e) <= 0 for b in bound.buffers for e in b.shape):
            continue  # no elements (or an extent the binding does not fix): nothing to compare
        if min(v.value for v in binding.values()) >= past and _work(bound) > CHECK_WORK:
            continue  # past every constant of the body, and too large to run in a moment
        if len(ops) == 1:
            refuted = verify_op(bound, ops[0], max_steps=CHEAP_STEPS) is False
        else:
            refuted = False in verify_fused(bound, ops, max_steps=CHEAP_STEPS)
        if refuted:
            return False
    return True


CHECK_WORK = 1 << 24
"""Loop iterations above which :func:`_holds_below` leaves out an extent where every symbol
is past the body's constants (a conv3d_transpose over three symbolic lengths runs tens of
millions at the larger ones, seconds each): the forms it looks for change below the
constants, and every extent up to them is still run."""


def _work(func: PrimFunc) -> int:
    """Loop iterations of ``func`` (its extents constant): each block's enclosing loops'
    extents multiplied, summed over its blocks; a very large number when one is not constant."""
    total = 0
    for _, loops in block_realizes(func.body):
        extents = [const_of(lp.extent) for lp in loops]
        if None in extents:
            return CHECK_WORK + 1
        total += math.prod(extents)
    return total


def _sweep(variables: list, first: int) -> list:
    """Bindings from 1 to past the bindings read: every symbol at each value, and each one
    at each value with the others at their first binding."""
    out = []
    for value in range(1, first + BINDINGS + 1):
        out.append({v: IntImm(v.dtype, value) for v in variables})
        if len(variables) > 1:
            for v in variables:
                out.append({w: IntImm(w.dtype, value if w is v else first + SPREAD * i)
                            for i, w in enumerate(variables)})
    return out


def _beyond_batch(func: PrimFunc) -> bool:
    """Whether a symbolic extent sizes some parameter's axis other than its first: a
    symbolic batch alone is what the symbolic readers handle (nothing to specialize)."""
    return bool(symbolic_in([e for buf in func.buffers for e in buf.shape[1:]]))


def _clamped(func: PrimFunc) -> bool:
    """Whether an extent of a parameter takes a minimum or maximum (``min(4, n) - min(3,
    n)``): the function then changes form at some extent, maybe below every binding."""
    found = []
    for buf in func.buffers:
        for extent in buf.shape:
            pre_order_visit(extent, lambda n: not found and (found.append(n) if isinstance(n, (Min, Max)) else True))
    return bool(found)


def _geometric(ops) -> bool:
    """Whether ``ops`` hold a windowed op and nothing with list attributes besides."""
    windowed = [op.name.startswith(WINDOWED) for op in ops]
    return any(windowed) and _scalar_only([op for w, op in zip(windowed, ops) if not w])


def _scalar_only(ops) -> bool:
    """Whether no op of ``ops`` carries a list attribute (a shape, axes, a window)."""
    return all(not any(isinstance(v, (tuple, list)) for v in dict(op.attrs).values()) for op in ops)


def specialized_info(info, func: PrimFunc, analyze_one):
    """``info`` (the symbolic reading of ``func``, which found nothing) completed by
    :func:`read_specialized` when the bindings agree; else ``info`` unchanged."""
    found = read_specialized(func, analyze_one)
    if found is None:
        return info
    ops, warnings = found
    return attrs.evolve(info, ops=ops, warnings=warnings)
