"""``nn.pad`` in the modes that read the data for every output point: reflect, replicate and
circular (pad_mode "edge" is lowered by TVM 0.27 as a constant pad, read by
:mod:`.movement_select`).

TVM writes each padded dimension's index as a function of that output coordinate alone:
``n - 1 - |n - 1 - |v - b||`` (reflect, spelled with selects or min/max), ``max(0, min(n - 1,
v - b))`` (replicate), ``(v + n - b) % n`` (circular). The recognizer does not trust the
spelling. It requires every index of the data load to mention only its own output variable
(and symbolic extents), then evaluates each index over that variable's whole range and
compares it with the index map numpy's ``np.pad`` gives an ``arange`` in the corresponding
mode (``reflect``, ``edge``, ``wrap``) for every split of the dimension's growth into
before/after widths. A dimension that only depends on its own variable is so checked at every
output point. A symbolic extent is bound to a few values (the growth must be the same
constant for all of them). The mode is reported only when exactly one mode, with exactly one
set of widths, fits every dimension; a dimension of extent one or two (where modes coincide)
or a pad wider than the data (where circular widths repeat) can leave it open, and then the
recognizer abstains.

The pad value does not enter these loops: Relax's default 0.0 is reported, marked as assumed
(:attr:`.common.Match.assumed`), so a standalone function abstains and a network reports it.
"""
from __future__ import annotations

import numpy as np

from tir.expr import (Add, And, BufferLoad, Call, EQ, FloorMod, GE, GT, IntImm, LE, LT, Max, Min, Mod, Mul,
                      NE, Not, Or, Select, Sub, Var)
from tir.functor import pre_order_visit

from ..affine import const_of
from ..probe import NotEvaluable, evaluate
from .common import Match, Space
from .extent import sym
from .symbolic import difference, symbol_vars

MODES = (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap"))
"""(Relax pad_mode, numpy np.pad mode)."""
BINDINGS = (0, 5)
"""Offsets above the smallest value tried for a symbolic extent (see :func:`_bindings`)."""
MAX_EXTENT = 1 << 16

_INDEX_NODES = (Add, Sub, Mul, Max, Min, Select, FloorMod, Mod, IntImm, Var,
                EQ, NE, LT, LE, GT, GE, And, Or, Not)
"""What an index map of these modes is written with: integer arithmetic, comparisons and
selects (or ``if_then_else``); no loads, casts, float arithmetic or division (a resize's index, ``v // 2``, can
read like a replicate pad)."""


def match_pad_modes(load: BufferLoad, space: Space, ctx) -> "Match | None":
    """nn.pad (reflect / replicate / circular) of ``load``, a parameter read at the output
    point, when its index maps are proven (see the module doc)."""
    if len(load.indices) != space.rank or not space.rank:
        return None
    symbols = list(symbol_vars(list(load.buffer.shape) + list(space.extents)).values())
    for d, idx in enumerate(load.indices):
        if not _own_index(idx, space.indices[d], symbols):
            return None
    growth = [difference(sym(o), sym(i)) for o, i in zip(space.extents, load.buffer.shape)]
    if any(g is None or g < 0 for g in growth) or not any(growth):
        return None
    found = None
    for env in _bindings(symbols, max(growth)):
        fits = _fitting(load, space, env, growth)
        if fits is None or found is not None and fits != found:
            return None
        found = fits
    if found is None or len(found) != 1:
        return None
    ((mode, width),) = found
    return Match("nn.pad", {"pad_width": list(width), "pad_value": 0.0, "pad_mode": mode},
                 (("data", load, space),), assumed=("pad_value",))


def _own_index(idx, own, symbols) -> bool:
    """Whether ``idx`` is integer index arithmetic over ``own`` and the symbolic extents only."""
    allowed = {id(own)} | {id(s) for s in symbols}
    ok = [True]

    def visit(n):
        if isinstance(n, Call) and n.op == "if_then_else" and len(n.args) == 3:
            return True
        if not isinstance(n, _INDEX_NODES) or isinstance(n, Var) and id(n) not in allowed:
            ok[0] = False
        return ok[0]

    pre_order_visit(idx, visit)
    return ok[0] and idx.dtype.is_integer


def _bindings(symbols, widest: int) -> list:
    """Environments binding each symbolic extent: none when there is none; else two sets of
    values, all large enough (past twice the widest growth) that the modes read differently."""
    if not symbols:
        return [{}]
    base = 2 * widest + 3
    return [{s: np.float64(base + k + 2 * i) for i, s in enumerate(symbols)} for k in BINDINGS]


def _value(e, env) -> "int | None":
    c = const_of(e)
    if c is not None:
        return c
    try:
        v = evaluate(e, env)
    except NotEvaluable:
        return None
    v = np.asarray(v, dtype=float)
    return int(v) if v.shape == () and float(v).is_integer() else None


def _fitting(load, space, env, growth) -> "set | None":
    """{(mode, pad_width)} of every mode whose index maps (with one split of each
    dimension's growth) equal the load's on every output point, under ``env``."""
    per_dim = []
    for d, idx in enumerate(load.indices):
        n, m = _value(load.buffer.shape[d], env), _value(space.extents[d], env)
        if n is None or m is None or n < 1 or m > MAX_EXTENT or m - n != growth[d]:
            return None
        leaves = dict(env)
        leaves[space.indices[d]] = np.arange(m, dtype=float)
        try:
            got = np.broadcast_to(np.asarray(evaluate(idx, leaves), dtype=float), (m,))
        except NotEvaluable:
            return None
        per_dim.append({name: _splits(got, n, growth[d], np_mode) for name, np_mode in MODES})
    out = set()
    for name, _ in MODES:
        splits = [dims[name] for dims in per_dim]
        if all(len(s) == 1 for s in splits):
            width = []
            for (b,) in splits:
                width += [b[0], b[1]]
            out.add((name, tuple(width)))
        elif all(s for s in splits):
            return None  # the mode fits with more than one set of widths: not decided
    return out


def _splits(got: np.ndarray, n: int, w: int, np_mode: str) -> list:
    """The (before, after) splits of growth ``w`` whose np.pad index map is ``got``."""
    base = np.arange(n)
    return [(b, w - b) for b in range(w + 1) if np.array_equal(np.pad(base, (b, w - b), np_mode), got)]
