"""``grad.nll_loss_backward`` and ``grad.take_backward``, recognised by running the PrimFunc.

TVM 0.27 legalizes both with its own compute, not an op opinfo decomposes:

- ``nll_loss_backward(output_grad, predictions, targets, weights?, reduction, ignore_index)``:
  ``pred_grad[n, c, ...] = Select(c == t[n, ...], -w'[t] * g'[n, ...], 0)`` where ``w'`` is
  ``weights`` (ones without them) with ``w'[ignore_index] = 0`` when ``ignore_index >= 0``,
  and ``g'`` is ``output_grad`` ("none", targets' shape), broadcast from a scalar ("sum"), or
  that divided by ``sum(w'[t])`` ("mean"). The predictions are only read for their shape.
  A negative ``ignore_index`` leaves no trace in the loops (TVM drops the masking): every
  negative value gives the same function, so Relax's default -100 is reported as assumed
  (:attr:`.info.OpInfo.assumed`).
- ``take_backward(output_grad, x, indices, axis)``: an ``ir_builder`` extern that zeroes
  the output (``x``'s shape) and accumulates ``out[.., idx[l], ..] += g[.., l, ..]`` on
  flattened buffers; with ``axis=None`` a single loop ``out.flat[idx[l]] += g.flat[l]``.
  Relax records ``mode`` as ``""``.

Candidates (which parameter is which, the attributes) come from buffer shapes and dtypes
and, for ``ignore_index``, from the integer constants the function compares with; the
function is then run on random inputs (repeated indices, the candidate ignored classes
among the targets) and compared with a numpy reference of each candidate. Only a single
surviving candidate is reported.

What random values of one scale cannot show is checked apart: the predictions must not be
loaded at all (a test of their values is not the op); nll_loss_backward is also run on
values of widely spread magnitudes (weights of one sign, so no sum cancels), which shows a
clamp or a threshold far from 1; take_backward's indices visit every position of the
gathered axis over the trials (an index clamped or tested at a position never drawn is
otherwise invisible) and its gradients are also drawn of widely spread magnitudes.
"""
from __future__ import annotations

import itertools

import numpy as np

from tir.expr import EQ, NE, BufferLoad, IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import pre_order_visit
from tir.stmt import BufferStore, For, SeqStmt, Stmt, While

from ..affine import const_of
from ..info import OpInfo, Operand
from .running import run

MAX_ELEMENTS = 50_000
TRIALS = 4
WIDE_TRIALS = 4
"""nll_loss_backward runs on widely spread magnitudes after the plain trials."""
DEFAULT_EXTENT = 3
"""Value tried for a symbolic extent besides the constant extents of the other buffers."""
REDUCTIONS = ("mean", "sum", "none")
TAKE_TRIALS = 2
TAKE_MAX_WINDOWS = 64
"""Trials needed to draw every position of the gathered axis above which take_backward is not run."""
TAKE_MAX_STEPS = 1024
"""take_backward's accumulation runs one element at a time in the interpreter (its indices
are data): gradients larger than this are not run."""


def _signature(func: PrimFunc) -> "list | None":
    """The parameters' buffers (every parameter a buffer, the output last), or None."""
    bufs = [func.buffer_map.get(p) for p in func.params]
    return bufs if bufs and None not in bufs else None


def _runnable(func: PrimFunc) -> bool:
    """No ``while`` loop: running the function ends."""
    found = []

    def visit(node):
        if isinstance(node, While):
            found.append(node)
        return not found and not isinstance(node, PrimExpr)

    pre_order_visit(func.body, visit)
    return not found


def shape_bindings(bufs) -> list:
    """Concrete shapes for ``bufs``, one list per binding of the symbolic extents to a
    constant extent found in another buffer (or :data:`DEFAULT_EXTENT`); [] when an extent
    is neither a constant nor a variable, or more than two variables are free."""
    symbols, consts = [], {DEFAULT_EXTENT}
    for b in bufs:
        for s in b.shape:
            c = const_of(s)
            if c is not None:
                consts.add(c)
            elif isinstance(s, Var):
                symbols.append(s) if all(s is not v for v in symbols) else None
            else:
                return []
    if len(symbols) > 2:
        return []
    out = []
    for values in itertools.product(sorted(consts), repeat=len(symbols)):
        env = [(v, x) for v, x in zip(symbols, values)]
        out.append([tuple(const_of(s) if const_of(s) is not None else next(x for v, x in env if v is s)
                          for s in b.shape) for b in bufs])
    return out


def _loaded(func: PrimFunc, buf) -> bool:
    """Whether ``func`` loads ``buf`` anywhere."""
    found = []
    pre_order_visit(func.body, lambda n: not found and (
        found.append(n) if isinstance(n, BufferLoad) and n.buffer is buf else True))
    return bool(found)


def _wide(rng, shape, dtype: str, sign=None, large: bool = False) -> np.ndarray:
    """Values of magnitudes spread over many decades (a quarter of the dtype's exponent range
    up, a twelfth down; with ``large`` only the upper half of that), of random sign unless
    ``sign`` is given."""
    top = np.log10(float(np.finfo(dtype).max)) / 4
    v = 10.0 ** rng.uniform(top / 2 if large else -top / 3, top, shape)
    return v * (rng.choice([-1, 1], shape) if sign is None else sign)


def agreeing(results) -> set:
    """The candidates that agreed with the trials on some binding of the symbolic extents and
    on every binding whose shapes allow them (``results``: (allowed, agreeing) per binding;
    a binding that could not be run refutes all it allows)."""
    ok, refuted = set(), set()
    for tried, kept in results:
        ok |= kept
        refuted |= tried - kept
    return ok - refuted


def _size(shape) -> int:
    return int(np.prod(shape)) if shape else 1


def _eq_constants(func: PrimFunc) -> set:
    """Non-negative integer constants the function compares (``==``/``!=``) with."""
    found = set()

    def visit(node):
        if isinstance(node, (EQ, NE)):
            for side in (node.a, node.b):
                if isinstance(side, IntImm) and side.value >= 0:
                    found.add(side.value)
        return True

    pre_order_visit(func.body, visit)
    return found


# ----------------------------------------------------------------------------- nll_loss_backward

def nll_backward_reference(g, t, w, reduction: str, ignore, classes: int, out_shape) -> np.ndarray:
    """The op's result (``w`` None: unit weights; ``ignore`` None: nothing masked)."""
    w = np.ones(classes, np.float32) if w is None else w.astype(np.float32).copy()
    if ignore is not None:
        w[ignore] = 0
    picked = w[t]
    grad = g if reduction == "none" else np.broadcast_to(g, t.shape)
    with np.errstate(all="ignore"):  # "mean" with every target ignored: 0/0, as TVM
        if reduction == "mean":
            grad = grad / picked.sum(dtype=np.float32)
        value = picked * np.float32(-1) * grad
    cls = np.arange(classes).reshape((1, classes) + (1,) * (len(out_shape) - 2)) if len(out_shape) > 1 \
        else np.arange(classes)
    hit = cls == (t if len(out_shape) == 1 else np.expand_dims(t, 1))
    return np.where(hit, value if len(out_shape) == 1 else np.expand_dims(value, 1), 0).astype(np.float32)


def _nll_roles(shapes, bufs) -> list:
    """(g, pred, t, w or None, reductions) assignments of the inputs the shapes allow."""
    out = shapes[-1]
    ints = [i for i, b in enumerate(bufs[:-1]) if b.dtype.is_int]
    floats = [i for i, b in enumerate(bufs[:-1]) if str(b.dtype) == str(bufs[-1].dtype)]
    if len(ints) != 1 or len(ints) + len(floats) != len(bufs) - 1 or len(floats) not in (2, 3) or not out:
        return []
    t = ints[0]
    t_shape = out[:1] + out[2:] if len(out) > 1 else ()
    classes = out[1] if len(out) > 1 else out[0]
    if shapes[t] != t_shape:
        return []
    roles = []
    for perm in itertools.permutations(floats):
        g, pred, w = perm[0], perm[1], (perm[2] if len(perm) == 3 else None)
        if shapes[pred] != out or (w is not None and shapes[w] != (classes,)):
            continue
        reds = [r for r in REDUCTIONS if shapes[g] == (t_shape if r == "none" else ())]
        if reds:
            roles.append((g, pred, t, w, reds))
    return roles


def _nll_inputs(rng, shapes, bufs, t: int, w, classes: int, ignored: list, trial: int, wide: bool) -> list:
    args = []
    for i, (b, s) in enumerate(zip(bufs, shapes)):
        if i == t:
            v = rng.integers(0, classes, s)
            if ignored and trial % 2 == 0:
                v.reshape(-1)[trial // 2 % v.size] = ignored[trial // 2 % len(ignored)]
        elif wide:  # wide magnitudes (all large every other trial); weights of one sign
            v = _wide(rng, s, str(b.dtype), sign=(1 if trial % 2 else -1) if i == w else (1 if trial % 4 < 2 else -1),
                      large=trial % 4 in (0, 3))
        else:
            v = rng.uniform(0.5, 1.5, s) * rng.choice([-1, 1], s)
        args.append(np.asarray(v).astype(str(b.dtype)))
    return args


def _nll_readings(func, bufs, shapes, ignored) -> tuple:
    """The candidates {(g, pred, t, w, reduction, ignore)} these shapes allow and those of
    them agreeing with every trial on these shapes."""
    out = shapes[-1]
    classes = out[1] if len(out) > 1 else out[0]
    roles = _nll_roles(shapes, bufs)
    cands = [(g, p, t, w, r, ig) for g, p, t, w, reds in roles for r in reds
             for ig in [None] + [k for k in ignored if k < classes]]
    tried = set(cands)
    if not cands or any(_size(s) > MAX_ELEMENTS for s in shapes):
        return tried, set()
    cands = [c for c in cands if not _loaded(func, bufs[c[1]])]  # predictions: their shape only
    rng = np.random.default_rng(11)
    t = cands[0][2] if cands else None
    plain = max(TRIALS, 2 * len(ignored))
    for trial in range(plain + WIDE_TRIALS):
        if not cands:
            return tried, set()
        ws = {c[3] for c in cands}
        args = _nll_inputs(rng, shapes, bufs, t, next(iter(ws)) if len(ws) == 1 else None, classes,
                           [k for k in ignored if k < classes], trial, trial >= plain)
        got = run(func, args)
        if got is None:
            return tried, set()
        cands = [c for c in cands if np.allclose(
            got, nll_backward_reference(args[c[0]], args[t], None if c[3] is None else args[c[3]],
                                        c[4], c[5], classes, out), rtol=1e-4, atol=1e-6, equal_nan=True)]
        if not cands:
            return tried, set()
    return tried, set(cands)


def recognize_nll_loss_backward(func: PrimFunc) -> "OpInfo | None":
    """The ``grad.nll_loss_backward`` ``func`` computes, or None (see the module doc)."""
    bufs = _signature(func)
    if bufs is None or len(bufs) not in (4, 5) or not bufs[-1].dtype.is_float:
        return None
    bindings = shape_bindings(bufs)
    if not bindings or not any(_nll_roles(s, bufs) for s in bindings) or not _runnable(func):
        return None
    constants = _eq_constants(func)
    readings = []
    for shapes in bindings:
        if _nll_roles(shapes, bufs):
            readings.append(_nll_readings(func, bufs, shapes, sorted(constants)))
    readings = agreeing(readings)
    if len(readings) != 1:
        return None
    (g, pred, t, w, reduction, ignore), = readings
    if ignore is None and any(k >= min(s[-1][1 if len(s[-1]) > 1 else 0] for s in bindings) for k in constants):
        return None  # a constant mask the trials could not show (ignore_index >= classes?)
    operands = [Operand("output_grad", bufs[g].name, g), Operand("predictions", bufs[pred].name, pred),
                Operand("targets", bufs[t].name, t)]
    if w is not None:
        operands.append(Operand("weights", bufs[w].name, w))
    n = len(bufs) - 1
    return OpInfo("grad.nll_loss_backward",
                  {"reduction": reduction, "ignore_index": -100 if ignore is None else ignore},
                  operands, Operand("output", bufs[n].name, n),
                  assumed=("ignore_index",) if ignore is None else ())


# ----------------------------------------------------------------------------- take_backward

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
    if not cands or any(_size(s) > MAX_ELEMENTS for s in shapes) or _size(out) == 0 \
            or any(_size(shapes[g]) > TAKE_MAX_STEPS for g, *_ in cands):
        return tried, set()
    rng = np.random.default_rng(13)
    bounds = {_size(out) if ax is None else out[ax] for *_, ax in cands}
    n = shapes[cands[0][2]][0]
    few = max(1, min(n // 2 + 1, n - 1))  # distinct positions per trial: indices repeat
    windows = -(-max(bounds) // few)
    if windows > TAKE_MAX_WINDOWS:
        return tried, set()
    for trial in range(max(TAKE_TRIALS, windows) + 1):
        kept = []
        for bound in bounds:
            i = cands[0][2]
            if trial == max(TAKE_TRIALS, windows):  # gradients of widely spread magnitudes
                args = [(_wide(rng, s, str(b.dtype)) if b.dtype.is_float else np.zeros(s)).astype(str(b.dtype))
                        for b, s in zip(bufs, shapes)]
            else:
                args = [rng.uniform(-2, 2, s).astype(str(b.dtype)) for b, s in zip(bufs, shapes)]
            # few distinct positions, so that repeated indices accumulate; over the trials
            # the windows of positions cover the whole axis
            at = (np.arange(few) + trial * few) % bound
            args[i] = rng.choice(at, shapes[i]).astype(str(bufs[i].dtype))
            got = run(func, args)
            kept += [(g, x, i, ax) for g, x, i, ax in cands
                     if (_size(out) if ax is None else out[ax]) == bound and got is not None
                     and np.allclose(got, take_backward_reference(args[g], args[i], out, ax), rtol=1e-5, atol=1e-6)]
        cands = kept
        if not cands:
            return tried, set()
    return tried, set(cands)


def recognize_take_backward(func: PrimFunc) -> "OpInfo | None":
    """The ``grad.take_backward`` ``func`` computes, or None (see the module doc)."""
    bufs = _signature(func)
    if bufs is None or len(bufs) != 4 or not bufs[-1].dtype.is_float:
        return None
    bindings = shape_bindings(bufs)
    if not bindings or not any(_take_roles(s, bufs) for s in bindings) or not _runnable(func):
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
