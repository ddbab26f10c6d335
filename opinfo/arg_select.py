"""What an argmax/argmin update block computes, read from its two Selects by their effect.

TVM lowers argmax and argmin to one reduction block with an index accumulator ``i`` and a
value accumulator ``v``, updated from the new value ``x`` and its index ``k``::

    i = Select(v > x or v == x and i < k, i, k)
    v = Select(v > x, v, x)

(argmin with ``<``). The printer and a schedule's simplifier may write each comparison
either way round (``x < v``) and may turn a Select around, so the conditions are not matched
by spelling: they are evaluated on every ordering of (v, x) and of (i, k), and the update is
argmax (argmin) only when it then picks, in every case, what Relax's argmax (argmin) picks:
the larger (smaller) value, and on equal values the first (smaller) index. A condition that
compares anything else, or a tie broken towards the last index, reads as nothing.
"""
from __future__ import annotations

from tir.expr import And, BufferLoad, EQ, GE, GT, LE, LT, NE, Not, Or, PrimExpr, Select
from tir.functor import pre_order_visit

_COMPARE = {EQ: lambda a, b: a == b, NE: lambda a, b: a != b, LT: lambda a, b: a < b,
            LE: lambda a, b: a <= b, GT: lambda a, b: a > b, GE: lambda a, b: a >= b}

_VALUE_ORDERS = ((2, 1), (1, 2), (1, 1))
"""(v, x): the accumulator greater, smaller, equal."""
_INDEX_ORDERS = ((0, 3), (3, 0))
"""(i, k): the recorded index first, the new index first (indices are never equal)."""


class _Unknown(Exception):
    """A condition uses something other than comparisons of the four operands."""


def _branches(sel: Select, acc: BufferLoad) -> "tuple[bool, PrimExpr] | None":
    """(whether the true branch keeps the accumulator, the other operand)."""
    if sel.true_value == acc and sel.false_value != acc:
        return True, sel.false_value
    if sel.false_value == acc and sel.true_value != acc:
        return False, sel.true_value
    return None


def _truth(cond, env: list) -> bool:
    if isinstance(cond, And):
        return _truth(cond.a, env) and _truth(cond.b, env)
    if isinstance(cond, Or):
        return _truth(cond.a, env) or _truth(cond.b, env)
    if isinstance(cond, Not):
        return not _truth(cond.a, env)
    compare = _COMPARE.get(type(cond))
    if compare is None:
        raise _Unknown
    return compare(_leaf(cond.a, env), _leaf(cond.b, env))


def _leaf(e, env: list):
    for expr, value in env:
        if e == expr:
            return value
    raise _Unknown


def _picks(sel: Select, keeps_acc_if_true: bool, env: list) -> bool:
    """Whether ``sel`` keeps the accumulator under ``env``."""
    return _truth(sel.condition, env) == keeps_acc_if_true


def _reads(expr, accs) -> bool:
    found = []
    pre_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and
                    any(n.buffer is a.buffer for a in accs) else True)
    return bool(found)


def _expected(comb: str, v, x, i, k) -> "tuple[bool | None, bool]":
    """(keep the value accumulator -- None when v == x, either is right --, keep the index)."""
    if v == x:
        return None, i < k
    keep = v > x if comb == "argmax" else v < x
    return keep, keep


def read_arg_update(val_sel, val_acc: BufferLoad, idx_sel, idx_acc: BufferLoad) -> "tuple | None":
    """(combiner, new value x, new index k) of an update ``v = val_sel``, ``i = idx_sel``, or
    None when it is not exactly a first-index argmax or argmin."""
    if not isinstance(val_sel, Select) or not isinstance(idx_sel, Select):
        return None
    vb, ib = _branches(val_sel, val_acc), _branches(idx_sel, idx_acc)
    if vb is None or ib is None:
        return None
    x, k = vb[1], ib[1]
    if _reads(x, (val_acc, idx_acc)) or _reads(k, (val_acc, idx_acc)):
        return None
    for comb in ("argmax", "argmin"):
        if _agrees(comb, val_sel, vb[0], idx_sel, ib[0], (val_acc, x, idx_acc, k)):
            return comb, x, k
    return None


def _agrees(comb, val_sel, val_true, idx_sel, idx_true, leaves) -> bool:
    for v, x in _VALUE_ORDERS:
        for i, k in _INDEX_ORDERS:
            env = list(zip(leaves, (v, x, i, k)))
            keep_v, keep_i = _expected(comb, v, x, i, k)
            try:
                got_v, got_i = _picks(val_sel, val_true, env), _picks(idx_sel, idx_true, env)
            except _Unknown:
                return False
            if (keep_v is not None and got_v != keep_v) or got_i != keep_i:
                return False
    return True
