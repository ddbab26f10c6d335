"""Evaluation of expressions with numpy, over scalars or whole grids of iterations at once.

Values are numpy scalars or arrays that broadcast against each other (a loop variable of a
vectorised nest is an ``arange`` along its own axis). Arithmetic stays in the expression's
dtype: float32 is computed in float32, integers wrap as in C. A ``mask`` (bool, broadcastable)
marks the lanes that really execute: ``if_then_else`` narrows it for each branch, so a load
guarded by a condition is neither checked nor read on lanes where the condition is false.
"""
from __future__ import annotations

import contextlib
import contextvars

import attrs
import numpy as np

from . import expr as E
from . import interp_intrin as intrin
from .interp_data import InterpError, np_dtype, round_bfloat16
from .interp_shared import MISSING as _MISSING, Shared, shared_classes
from .intrinsics import CALL_STATEMENTS, legalized


@attrs.define
class Ctx:
    """The environment of a run: variable values, buffer storage, and where we are."""

    vars: dict = attrs.field(factory=dict)
    """Var -> numpy scalar or array."""
    bufs: dict = attrs.field(factory=dict)
    """Buffer -> BufferData."""
    where: str = "function body"
    """Description of the current block, for error messages."""
    poison: "Poison | None" = None
    """While a stored value is evaluated: the lanes that read out of bounds (else None, and
    an out-of-bounds load is an error at once)."""
    scratch_fill: "float | None" = None
    """Value storage the function allocates itself starts with (None: zeros). A check that a
    function never reads such storage before writing it runs with a value no computation
    is likely to produce."""
    drop_strays: bool = False
    """Accesses out of bounds are placed by the layout, those past the storage dropped
    (stores) or poisoned (loads), instead of an error (``tir.interpret``'s ``drop_strays``)."""
    steps_left: "int | None" = None
    """Loop iterations the run may still walk one at a time (None: no limit); a vectorised
    nest counts as one."""
    shared: "Shared | None" = None
    """While a large stored value is evaluated: the values of its repeated subtrees (see
    :mod:`tir.interp_shared`)."""

    def data(self, buffer):
        try:
            return self.bufs[buffer]
        except KeyError:
            raise InterpError(f"{self.where}: buffer {buffer.name!r} is not allocated here") from None


@attrs.define
class Poison:
    """Lanes of a value being computed that read out of bounds.

    TVM's slice_scatter takes its source at clamped indices that may lie past the source's
    end, then discards those lanes with a select: the load is undefined in TIR but its value
    is never used. A poisoned value may be stored in scratch storage; it is an error only once
    it reaches a parameter or is read where it is not tracked (see :class:`BufferData`).
    """

    lanes: object = False
    """Bool lanes (broadcastable), or False."""
    message: str = ""
    """The first out-of-bounds load, for the error if the value is used."""

    def add(self, lanes, message: str) -> None:
        if lanes is not False:
            self.lanes = np.logical_or(self.lanes, lanes)
            self.message = self.message or message


def and_mask(mask, cond):
    """Conjunction of two masks (None is all-true)."""
    if mask is None:
        return cond
    return np.logical_and(mask, cond)


def evaluate(e: E.PrimExpr, ctx: Ctx, mask=None):
    """The value of ``e`` in ``ctx`` on the lanes of ``mask``."""
    handler = _HANDLERS.get(type(e))
    if handler is None:
        raise InterpError(f"{ctx.where}: cannot evaluate {type(e).__name__}")
    shared = ctx.shared
    if shared is not None:
        number = shared.classes.get(id(e))
        if number is not None:
            value = shared.lookup(number, mask)
            if value is _MISSING:
                value = shared.values[(number, id(mask))] = handler(e, ctx, mask)
                shared.alive.append(mask)
            return value
    return handler(e, ctx, mask)


def evaluate_shared(e: E.PrimExpr, ctx: Ctx, mask=None):
    """:func:`evaluate`, computing each repeated subtree of ``e`` once per mask (a large
    value TVM printed as a tree; see :mod:`tir.interp_shared`)."""
    classes = _per_node(_SHARED_CLASSES, e, lambda: shared_classes(e))
    if classes is None or ctx.shared is not None:
        return evaluate(e, ctx, mask)
    ctx.shared = Shared(classes)
    try:
        return evaluate(e, ctx, mask)
    finally:
        ctx.shared = None


_SHARED_CLASSES: dict = {}
"""Stored value -> :func:`shared_classes` of it (:func:`_per_node`)."""


def narrow(ctx: Ctx, mask, cond, negate: bool = False):
    """``mask`` and ``cond`` (or not ``cond``): the same object for the same mask and
    condition value while a value is evaluated with sharing, so that equal subtrees under
    equal conditions share their values."""
    shared = ctx.shared
    if shared is None:
        return and_mask(mask, np.logical_not(cond) if negate else cond)
    key = (id(mask), id(cond), negate)
    out = shared.masks.get(key)
    if out is None:
        out = shared.masks[key] = and_mask(mask, np.logical_not(cond) if negate else cond)
        shared.parents[id(out)] = mask
        shared.alive.extend((mask, cond, out))
    return out


def _var(e, ctx, mask):
    try:
        return ctx.vars[e]
    except KeyError:
        raise InterpError(f"{ctx.where}: variable {e.name!r} is not bound") from None


def _int_imm(e, ctx, mask):
    return _constant(e)


def _float_imm(e, ctx, mask):
    # a bfloat16 constant is a float one in TVM's build (its bfloat16 compute runs in float)
    return _constant(e)


_CONSTANTS: dict = {}
"""IntImm/FloatImm node -> its numpy scalar (:func:`_per_node`; numpy scalars are immutable,
so one value serves every evaluation)."""


def _constant(e):
    return _per_node(_CONSTANTS, e, lambda: np_dtype(e.dtype).type(e.value))


def _is_int(v) -> bool:
    return np.asarray(v).dtype.kind in "iub"


def _safe_divisor(b, ctx, mask):
    if mask is None and not isinstance(b, np.ndarray):
        if b == 0:
            raise InterpError(f"{ctx.where}: integer division by zero")
        return b
    if mask is not None and not np.all(mask):
        b = np.where(mask, b, np.ones_like(b))
    if np.any(b == 0):
        raise InterpError(f"{ctx.where}: integer division by zero")
    return b


def _trunc_div(a, b):
    return (a - np.fmod(a, b)) // b


def _floor_mod(a, b):
    if _is_int(a):
        return np.mod(a, b)
    return a - np.floor(a / b) * b


def _floor_div(a, b):
    return np.floor_divide(a, b) if _is_int(a) else np.floor(a / b)


def _true_div(a, b):
    return _trunc_div(a, b) if _is_int(a) else np.true_divide(a, b)


_NAN_MINMAX = contextvars.ContextVar("nan_minmax", default=False)


@contextlib.contextmanager
def nan_propagating_minmax():
    """Within it, ``max``/``min`` return NaN when either operand is NaN. TVM computes them
    as ``select(a > b, a, b)``, which drops a NaN first operand: an accumulator that was never
    initialised, poisoned with NaN by a checking run, would pass for initialised. Runs that
    check a function (opinfo's recognizers) use this; ``tir.run`` keeps TVM's semantics."""
    token = _NAN_MINMAX.set(True)
    try:
        yield
    finally:
        _NAN_MINMAX.reset(token)


def min_of(a, b):
    """TVM's ``min`` (or NaN-propagating within :func:`nan_propagating_minmax`)."""
    return np.minimum(a, b) if _NAN_MINMAX.get() else np.where(a < b, a, b)


def max_of(a, b):
    """TVM's ``max`` (or NaN-propagating within :func:`nan_propagating_minmax`)."""
    return np.maximum(a, b) if _NAN_MINMAX.get() else np.where(a > b, a, b)


_ARITH = {
    E.Add: np.add,
    E.Sub: np.subtract,
    E.Mul: np.multiply,
    E.Min: min_of,
    E.Max: max_of,
    E.EQ: np.equal,
    E.NE: np.not_equal,
    E.LT: np.less,
    E.LE: np.less_equal,
    E.GT: np.greater,
    E.GE: np.greater_equal,
    E.And: np.logical_and,
    E.Or: np.logical_or,
}

_DIVISION = {E.Div: _true_div, E.Mod: np.fmod, E.FloorDiv: _floor_div, E.FloorMod: _floor_mod}


def _logical(e, ctx, mask):
    """``a and b`` / ``a or b``: ``b`` is read only on the lanes ``a`` leaves open, as C's
    ``&&`` and ``||`` (the C engine) do: TVM guards a load with the conjunction
    (``0 <= i and argmax[i] == k``), whose value on the other lanes cannot matter."""
    a = evaluate(e.a, ctx, mask)
    is_and = isinstance(e, E.And)
    combine = np.logical_and if is_and else np.logical_or
    if np.ndim(a) == 0:
        return combine(a, evaluate(e.b, ctx, mask)) if bool(a) == is_and else np.bool_(a)
    open_mask = narrow(ctx, mask, a, negate=not is_and)
    if not np.any(open_mask):
        return np.asarray(a, dtype=bool)
    return combine(a, evaluate(e.b, ctx, open_mask))


def _binary(e, ctx, mask):
    a = evaluate(e.a, ctx, mask)
    b = evaluate(e.b, ctx, mask)
    fn = _ARITH.get(type(e))
    if fn is None:
        fn = _DIVISION[type(e)]
        # a nonzero constant divisor (the usual case) needs no check on every lane
        if not (isinstance(e.b, E.IntImm) and e.b.value != 0) and _is_int(b):
            b = _safe_divisor(b, ctx, mask)
    out = fn(a, b)
    return _fix_dtype(out, _dtype_of(e))


_DTYPES: dict = {}
"""Binary node -> its dtype (:func:`_per_node`): ``BinaryOp.dtype`` walks the left operands
down to a leaf, once per evaluation otherwise (a data-dependent loop run point by point
evaluates the same nodes millions of times)."""
_PER_NODE_MAX = 1 << 16


def _dtype_of(e):
    return _per_node(_DTYPES, e, lambda: e.dtype)


def _per_node(table: dict, e, compute):
    """``compute()`` for node ``e``, remembered in ``table`` as ``id(e) -> (e, value)``: the
    node is kept with its value, so an id is never reused while its entry stands (keying by
    the node itself would compare frozen nodes structurally); emptied past
    :data:`_PER_NODE_MAX` entries."""
    hit = table.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    if len(table) >= _PER_NODE_MAX:
        table.clear()
    value = compute()
    table[id(e)] = (e, value)
    return value


def _fix_dtype(out, d):
    """``out`` in ``d``'s numpy type; bfloat16 arithmetic stays in float32 (TVM's build
    computes bfloat16 in float and rounds at stores and casts)."""
    npd = np_dtype(d)
    if isinstance(out, np.ndarray):
        return out if out.dtype == npd else out.astype(npd)
    return out if type(out) is npd.type else npd.type(out)


def _not(e, ctx, mask):
    return np.logical_not(evaluate(e.a, ctx, mask))


def _select(e, ctx, mask):
    """Only the chosen side is read on each lane, as the C engine's ``c ? a : b`` does."""
    v = if_then_else(e.condition, e.true_value, e.false_value, ctx, mask)
    return v[()] if isinstance(v, np.ndarray) else v


def if_then_else(cond_e, then_e, else_e, ctx, mask):
    """Evaluate only the taken branch on each lane."""
    c = evaluate(cond_e, ctx, mask)
    if np.ndim(c) == 0:
        return evaluate(then_e if c else else_e, ctx, mask)
    if np.size(c) == 0:  # no lanes (a reduction over a data-dependent empty range)
        return np.zeros(np.shape(c), dtype=np_dtype(then_e.dtype))
    t = evaluate(then_e, ctx, narrow(ctx, mask, c)) if np.any(c) else None
    f = evaluate(else_e, ctx, narrow(ctx, mask, c, negate=True)) if not np.all(c) else None
    if t is None:
        return f
    if f is None:
        return t
    return np.where(c, t, f)


def cast_value(v, d):
    """Convert ``v`` to dtype ``d`` as C does (truncation towards zero, bool is != 0)."""
    npd = np_dtype(d)
    if d.is_bool:
        return np.not_equal(v, 0)
    src = np.asarray(v).dtype
    if src.kind == "f" and npd.kind in "iu":
        with np.errstate(invalid="ignore"):
            v = np.trunc(v)
        if npd.itemsize == 1:
            return _saturate_byte(v, npd)
    out = np.asarray(v).astype(npd) if isinstance(v, np.ndarray) else npd.type(v)
    return round_bfloat16(out) if d.code == "bfloat" else out


def _saturate_byte(v, npd):
    """A float converted to an 8-bit integer: out of range, the conversion is undefined (in
    TIR, C and LLVM alike); TVM's build on x86 packs vectorised conversions with saturation
    (a float32/float64 tensor cast to uint8 reads -2.9 as 0 and 300 as 255, measured on TVM
    0.27 for 8 elements and more), so both engines saturate: the value truncated to int32
    (NaN and values outside int32 become INT32_MIN, as x86's cvtt does), then clamped."""
    a = np.asarray(v, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.isnan(a) | (a < -2.0 ** 31) | (a >= 2.0 ** 31)
    a = np.where(bad, -2.0 ** 31, a)
    info = np.iinfo(npd)
    out = np.clip(a, info.min, info.max).astype(npd)
    return out if isinstance(v, np.ndarray) else npd.type(out)


def _cast(e, ctx, mask):
    return cast_value(evaluate(e.value, ctx, mask), e.dtype)


def _call(e, ctx, mask):
    if e.op in CALL_STATEMENTS:
        from .interp_packed import call_runtime

        return call_runtime(e, ctx, evaluate)
    if e.op == "if_then_else":
        return if_then_else(*e.args, ctx, mask)
    if e.op in ("max_value", "min_value", "infinity"):
        return intrin.extreme(e.op, np_dtype(e.dtype))
    if e.op in ("likely", "assume"):
        return evaluate(e.args[0], ctx, mask)
    if e.op == "reinterpret":
        v = np.asarray(evaluate(e.args[0], ctx, mask))
        return v.view(np_dtype(e.dtype))[()]
    expanded = legalized(e)
    if expanded is not None:  # computed from other operations, as TVM's build does
        return evaluate(expanded, ctx, mask)
    args = [evaluate(a, ctx, mask) for a in e.args]
    try:
        return intrin.apply(e.op, args, np_dtype(e.dtype))
    except KeyError:
        raise InterpError(f"{ctx.where}: unsupported intrinsic {e.op!r}") from None


def _load(e, ctx, mask):
    idx = [evaluate(i, ctx, mask) for i in e.indices]
    data = ctx.data(e.buffer)
    if ctx.poison is None:
        return data.load(idx, mask, ctx.where)
    value, lanes, message = data.load_poisoned(idx, mask, ctx.where)
    ctx.poison.add(lanes, message)
    return value


def _let(e, ctx, mask):
    ctx.vars[e.var] = evaluate(e.value, ctx, mask)
    try:
        return evaluate(e.body, ctx, mask)
    finally:
        del ctx.vars[e.var]


def _string(e, ctx, mask):
    raise InterpError(f"{ctx.where}: a string constant {e.value!r} has no numeric value")


_HANDLERS = {
    E.Var: _var,
    E.SizeVar: _var,
    E.IntImm: _int_imm,
    E.FloatImm: _float_imm,
    E.StringImm: _string,
    E.Not: _not,
    E.Select: _select,
    E.Cast: _cast,
    E.Call: _call,
    E.BufferLoad: _load,
    E.Let: _let,
    **{cls: _binary for cls in (*E.ARITH_OPS, *E.CMP_OPS)},
    **{cls: _logical for cls in E.LOGIC_OPS},
}
