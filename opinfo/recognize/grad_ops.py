"""``grad.nll_loss_backward``, recognised by running the PrimFunc (``grad.take_backward``:
:mod:`.grad_take`).

TVM 0.27 legalizes it with its own compute, not an op opinfo decomposes:

- ``nll_loss_backward(output_grad, predictions, targets, weights?, reduction, ignore_index)``:
  ``pred_grad[n, c, ...] = Select(c == t[n, ...], -w'[t] * g'[n, ...], 0)`` where ``w'`` is
  ``weights`` (ones without them) with ``w'[ignore_index] = 0`` when ``ignore_index >= 0``,
  and ``g'`` is ``output_grad`` ("none", targets' shape), broadcast from a scalar ("sum"), or
  that divided by ``sum(w'[t])`` ("mean"). The predictions are only read for their shape.
  A negative ``ignore_index`` leaves no trace in the loops (TVM drops the masking): every
  negative value gives the same function, so Relax's default -100 is reported as assumed
  (:attr:`.info.OpInfo.assumed`).

Candidates (which parameter is which, the attributes) come from buffer shapes and dtypes
and, for ``ignore_index``, from the integer constants the function compares with; the
function is then run on random inputs (repeated indices, the candidate ignored classes
among the targets) and compared with a numpy reference of each candidate. Only a single
surviving candidate is reported.

What random values of one scale cannot show is checked apart: the predictions must not be
loaded at all (a test of their values is not the op); nll_loss_backward is also run on
values of widely spread magnitudes (weights of one sign, so no sum cancels), which shows a
clamp or a threshold far from 1.
"""
from __future__ import annotations

import itertools

import numpy as np

from tir.expr import EQ, NE, IntImm
from tir.function import PrimFunc
from tir.functor import pre_order_visit

from ..info import OpInfo, Operand
from .running import agreeing, loads, run, runnable, shape_bindings, signature, size, symbols_exercised
from .running import wide as spread

MAX_ELEMENTS = 50_000
TRIALS = 4
WIDE_TRIALS = 4
"""nll_loss_backward runs on widely spread magnitudes after the plain trials."""
REDUCTIONS = ("mean", "sum", "none")


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
            v = spread(rng, s, str(b.dtype), sign=(1 if trial % 2 else -1) if i == w else (1 if trial % 4 < 2 else -1),
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
    if not cands or any(size(s) > MAX_ELEMENTS for s in shapes):
        return tried, set()
    cands = [c for c in cands if not loads(func, bufs[c[1]])]  # predictions: their shape only
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
    bufs = signature(func)
    if bufs is None or len(bufs) not in (4, 5) or not bufs[-1].dtype.is_float:
        return None
    bindings = shape_bindings(bufs)
    kept = [s for s in bindings if _nll_roles(s, bufs)]
    if not kept or not symbols_exercised(bufs, kept) or not runnable(func):
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
