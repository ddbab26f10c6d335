"""``grad.take_backward``, recognised by running the PrimFunc (see :mod:`.grad_ops` for
``grad.nll_loss_backward`` and the method).

TVM 0.27 legalizes ``take_backward(output_grad, x, indices, axis)`` as an ``ir_builder``
extern that zeroes the output (``x``'s shape) and accumulates ``out[.., idx[l], ..] +=
g[.., l, ..]`` on flattened buffers; with ``axis=None`` a single loop ``out.flat[idx[l]] +=
g.flat[l]``. Relax records ``mode`` as ``""``. Candidates (which parameter is which, the
axis) come from buffer shapes and dtypes; each is run against a numpy reference on random
inputs whose indices visit every position of the gathered axis over the trials (an index
clamped or tested at a position never drawn is otherwise invisible), and once on gradients
of widely spread magnitudes; only a single surviving candidate is reported.
"""
from __future__ import annotations

import itertools

import numpy as np

from tir.function import PrimFunc
from tir.functor import pre_order_visit
from tir.stmt import BufferStore, For, SeqStmt, Stmt

from ..info import OpInfo, Operand
from .running import agreeing, run, runnable, shape_bindings, signature, size, symbols_exercised, wide

MAX_ELEMENTS = 50_000
TAKE_TRIALS = 2
TAKE_MAX_WINDOWS = 64
"""Trials needed to draw every position of the gathered axis above which take_backward is not run."""
DISTINCT_TRIALS = 2
"""Trials whose indices are all distinct (as far as the axis allows)."""
TAKE_MAX_STEPS = 1024
"""take_backward's accumulation runs one element at a time in the interpreter (its indices
are data): gradients larger than this are not run."""


def take_backward_reference(g, idx, out_shape, axis) -> np.ndarray:
    """``zeros(out_shape)`` with ``g``'s slices added at ``idx`` along ``axis`` (None: flat)."""
    out = np.zeros(out_shape, g.dtype)
    if axis is None:
        np.add.at(out.reshape(-1), idx, g.reshape(-1))
    else:
        np.add.at(np.moveaxis(out, axis, 0), idx, np.moveaxis(g, axis, 0))
    return out


def _accumulation_depth(func: PrimFunc, out) -> "int | None":
    """How many loops enclose the one store to ``out`` that reads ``out`` (None: not one)."""
    found = []

    def walk(stmt, depth):
        if isinstance(stmt, For):
            return walk(stmt.body, depth + 1)
        if isinstance(stmt, BufferStore):
            if stmt.buffer is out and _reads(stmt.value, out):
                found.append(depth)
            return None
        for child in _children(stmt):
            walk(child, depth)
        return None

    walk(func.body, 0)
    return found[0] if len(found) == 1 else None


def _children(stmt) -> list:
    if isinstance(stmt, SeqStmt):
        return list(stmt.seq)
    return [v for v in (getattr(stmt, f, None) for f in ("body", "then_case", "else_case", "block"))
            if isinstance(v, Stmt)]


def _reads(expr, buf) -> bool:
    hits = []
    pre_order_visit(expr, lambda n: not hits and (hits.append(n) if getattr(n, "buffer", None) is buf else True))
    return bool(hits)


def _take_roles(shapes, bufs) -> list:
    """(g, x, idx, axis) assignments the shapes allow (axis None: the flat form)."""
    out = shapes[-1]
    ints = [i for i, b in enumerate(bufs[:-1]) if b.dtype.is_int]
    floats = [i for i, b in enumerate(bufs[:-1]) if str(b.dtype) == str(bufs[-1].dtype)]
    if len(ints) != 1 or len(floats) != 2 or len(shapes[ints[0]]) != 1:
        return []
    i, n = ints[0], shapes[ints[0]][0]
    roles = []
    for g, x in itertools.permutations(floats):
        if shapes[x] != out:
            continue
        roles += [(g, x, i, ax) for ax in range(len(out)) if shapes[g] == out[:ax] + (n,) + out[ax + 1:]]
        if shapes[g] == (n,):
            roles.append((g, x, i, None))
    return roles


def _take_readings(func, bufs, shapes) -> tuple:
    """The candidates {(g, x, idx, axis)} these shapes allow and those of them agreeing
    with every trial on these shapes."""
    out = shapes[-1]
    cands = _take_roles(shapes, bufs)
    tried = set(cands)
    if not cands or any(size(s) > MAX_ELEMENTS for s in shapes) or size(out) == 0 \
            or any(size(shapes[g]) > TAKE_MAX_STEPS for g, *_ in cands):
        return tried, set()
    rng = np.random.default_rng(13)
    bounds = {size(out) if ax is None else out[ax] for *_, ax in cands}
    n = shapes[cands[0][2]][0]
    few = max(1, min(n // 2 + 1, n - 1))  # distinct positions per trial: indices repeat
    windows = -(-max(bounds) // few)
    if windows > TAKE_MAX_WINDOWS:
        return tried, set()
    repeated = max(TAKE_TRIALS, windows)
    for trial in range(repeated + DISTINCT_TRIALS + 1):
        kept = []
        for bound in bounds:
            i = cands[0][2]
            if trial == repeated + DISTINCT_TRIALS:  # gradients of widely spread magnitudes
                args = [(wide(rng, s, str(b.dtype)) if b.dtype.is_float else np.zeros(s)).astype(str(b.dtype))
                        for b, s in zip(bufs, shapes)]
            else:
                args = [rng.uniform(-2, 2, s).astype(str(b.dtype)) for b, s in zip(bufs, shapes)]
            if trial < repeated:
                # few distinct positions, so that repeated indices accumulate; over the
                # trials the windows of positions cover the whole axis
                at = (np.arange(few) + trial * few) % bound
                args[i] = rng.choice(at, shapes[i]).astype(str(bufs[i].dtype))
            else:
                # as many distinct positions as there are indices: an accumulation that
                # reads one slot and writes another shows only when they differ
                args[i] = rng.permutation(bound)[np.arange(n) % bound].astype(str(bufs[i].dtype))
            got = run(func, args)
            kept += [(g, x, i, ax) for g, x, i, ax in cands
                     if (size(out) if ax is None else out[ax]) == bound and got is not None
                     and np.allclose(got, take_backward_reference(args[g], args[i], out, ax), rtol=1e-5, atol=1e-6)]
        cands = kept
        if not cands:
            return tried, set()
    return tried, set(cands)


def recognize_take_backward(func: PrimFunc) -> "OpInfo | None":
    """The ``grad.take_backward`` ``func`` computes, or None (see the module doc)."""
    bufs = signature(func)
    if bufs is None or len(bufs) != 4 or not bufs[-1].dtype.is_float:
        return None
    bindings = shape_bindings(bufs)
    kept = [s for s in bindings if _take_roles(s, bufs)]
    if not kept or not symbols_exercised(bufs, kept) or not runnable(func):
        return None
    readings = []
    for shapes in bindings:
        if _take_roles(shapes, bufs):
            readings.append(_take_readings(func, bufs, shapes))
    readings = agreeing(readings)
    if len({r[:3] for r in readings}) != 1:
        return None
    depth = _accumulation_depth(func, bufs[-1])
    if {r[3] for r in readings} == {0, None}:  # one-dimensional x: the loops tell
        readings = {r for r in readings if (r[3] is None) == (depth == 1)}
    if len(readings) != 1 or depth != (1 if next(iter(readings))[3] is None else 2):
        return None
    (g, x, i, axis), = readings
    return OpInfo("grad.take_backward", {"axis": axis, "mode": ""},
                  (Operand("output_grad", bufs[g].name, g), Operand("x", bufs[x].name, x),
                   Operand("indices", bufs[i].name, i)), Operand("output", bufs[3].name, 3))
