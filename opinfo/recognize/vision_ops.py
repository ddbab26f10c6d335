"""``vision.get_valid_counts``, recognised by running the PrimFunc.

TVM 0.27 legalizes it to an ``ir_builder`` extern with three outputs (``valid_count``
(B,) int32, ``out_tensor`` of the data's shape (B, N, K), ``out_indices`` (B, N) int32):
per batch, the boxes ``j`` with ``data[b, j, score_index] > score_threshold`` and
``data[b, j, id_index] >= 0`` are copied, in order, to the top of ``out_tensor`` (their
``j`` to ``out_indices``); the remaining rows hold -1. A negative ``id_index`` drops the
class test from the loops; such a function is not claimed (which negative value Relax
recorded is not observable).

``score_threshold`` candidates are the float constants of the function; ``score_index``
and ``id_index`` range over the K columns. The function is run on data whose scores sit
exactly on, just above and just below each candidate threshold, with class ids on both
sides of 0 and outputs pre-filled with noise (every element must be written), and all
three outputs are compared with a numpy reference of each candidate: exactly one must
agree on every trial. A symbolic function is run with its symbols bound to two of the
other extents and to a value above every integer constant of the function (a clamp of
the batch extent shows only there).
"""
from __future__ import annotations

import numpy as np

from tir.function import PrimFunc

from ..info import OpInfo, Operand
from .running import above_constants, concrete_shapes, float_constants, run_all, shape_bindings, symbols_exercised
from .running import runnable as _runnable, signature as _signature, size as _size

MAX_ELEMENTS = 4096
"""Data elements above which the function (run one box at a time) is not run."""
TRIALS = 5
BOXES = 96
MAX_TRIALS = 32
"""At least TRIALS runs, more for few boxes (BOXES boxes seen in all, at most MAX_TRIALS
runs): with a threshold of 0, telling the id column from the score column needs boxes
holding an exact 0, and ``>`` from ``>=`` boxes exactly on the threshold."""


def valid_counts_reference(data, threshold, id_index, score_index) -> tuple:
    """(valid_count, out_tensor, out_indices) of TVM's get_valid_counts."""
    b, n, _ = data.shape
    count = np.zeros(b, np.int32)
    out = np.full(data.shape, -1, data.dtype)
    idx = np.full((b, n), -1, np.int32)
    thr = data.dtype.type(threshold)
    for i in range(b):
        keep = (data[i, :, score_index] > thr) & (data[i, :, id_index] >= 0)
        rows = np.flatnonzero(keep)
        count[i] = rows.size
        out[i, :rows.size] = data[i, rows]
        idx[i, :rows.size] = rows
    return count, out, idx


def _roles(shapes, bufs) -> bool:
    """The TVM signature: data (B, N, K) float, then (B,) int32, data's shape, (B, N) int32."""
    if len(bufs) != 4 or len(shapes[0]) != 3 or not bufs[0].dtype.is_float:
        return False
    b, n, _ = shapes[0]
    return (str(bufs[1].dtype), str(bufs[2].dtype), str(bufs[3].dtype)) == ("int32", str(bufs[0].dtype), "int32") \
        and shapes[1:] == [(b,), shapes[0], (b, n)]


def _data(rng, shape, dtype, thresholds, trial: int) -> np.ndarray:
    """Scores exactly on the thresholds (40%), one step above or below (30%), ids around 0."""
    exact = np.array([dtype.type(t) for t in thresholds], dtype)
    near = np.array([np.nextafter(v, dtype.type(d)) for v in exact for d in (-np.inf, np.inf)], dtype)
    other = rng.uniform(-2, 2, shape)
    if trial:  # ids on both sides of 0 (trial 0: the score test alone)
        other = np.where(rng.random(shape) < 0.5, -np.abs(other), np.abs(other))
    else:
        other = np.abs(other)
    pick = rng.random(shape)
    return np.where(pick < 0.4, rng.choice(exact, shape),
                    np.where(pick < 0.7, rng.choice(near, shape), other)).astype(dtype)


def _readings(func, bufs, shapes, thresholds) -> set:
    dtype = np.dtype(str(bufs[0].dtype))
    k = shapes[0][2]
    cands = [(t, ii, si) for t in thresholds for ii in range(k) for si in range(k)]
    rng = np.random.default_rng(17)
    boxes = shapes[0][0] * shapes[0][1]
    for trial in range(max(TRIALS, min(MAX_TRIALS, -(-BOXES // max(boxes, 1))))):
        data = _data(rng, shapes[0], dtype, thresholds, trial)
        noise = [rng.integers(-7, 7, shapes[1]).astype("int32"), rng.uniform(-9, 9, shapes[2]).astype(dtype),
                 rng.integers(-7, 7, shapes[3]).astype("int32")]  # every output element must be written
        got = run_all(func, [data] + noise)
        if got is None:  # a form the interpreter cannot run is not claimed
            return set()
        outs = got[1:]
        cands = [c for c in cands
                 if all(np.array_equal(got, want) for got, want in zip(outs, valid_counts_reference(data, *c)))]
        if not cands:
            return set()
    return set(cands)


def recognize_get_valid_counts(func: PrimFunc) -> "OpInfo | None":
    """The ``vision.get_valid_counts`` ``func`` computes, or None (see the module doc)."""
    bufs = _signature(func)
    if bufs is None or len(bufs) != 4:
        return None
    bindings = [s for s in shape_bindings(bufs) if _roles(s, bufs)]
    if bindings and bindings[0] != bindings[-1]:  # symbolic: also every symbol above every constant
        high = concrete_shapes(bufs, above_constants(func))
        bindings = bindings[:2] + ([high] if high is not None and _roles(high, bufs) else [None])
    if not bindings or None in bindings or not symbols_exercised(bufs, bindings) \
            or any(_size(s[0]) > MAX_ELEMENTS for s in bindings) or not _runnable(func):
        return None
    thresholds = float_constants(func)
    if not thresholds or len(thresholds) > 4:
        return None
    readings = None
    for shapes in bindings:  # every binding must agree
        found = _readings(func, bufs, shapes, thresholds)
        readings = found if readings is None else readings & found
    if len(readings) != 1:
        return None
    (threshold, id_index, score_index), = readings
    return OpInfo("vision.get_valid_counts",
                  {"score_threshold": threshold, "id_index": id_index, "score_index": score_index},
                  (Operand("data", bufs[0].name, 0),), Operand("output", bufs[2].name, 2))
