"""``vision.multibox_transform_loc``, recognised by running the PrimFunc.

TVM 0.27 legalizes it (topi ``vision.multibox_transform_loc``) to one PrimFunc of
``cls_pred (B, C, N)``, ``loc_pred (B, 4N)``, ``anchor (1, N, 4)`` (left, top, right, bottom)
writing ``boxes (B, N, 4)`` (ymin, xmin, ymax, xmax) and ``scores (B, C, N)``: per anchor the
encodings ``(x, y, w, h)`` decode as ``ycenter = y * vy * ah + ay``, ``half_h = 0.5 *
exp(h * vh) * ah`` (x alike with ``vx``, ``vw`` and the anchor width), optionally clamped to
[0, 1]; the scores are ``cls_pred`` or its softmax over the classes, times ``score >=
threshold``, with class 0 zeroed unless ``keep_background``.

Candidates come from the float constants of the function (and 0 and 1, which TVM may fold
away): the boxes are checked per axis, ``(vy, vh, clip)`` against ymin/ymax and ``(vx, vw,
clip)`` against xmin/xmax, on anchors and encodings that put boxes on both sides of [0, 1];
the scores ``(apply_softmax, threshold, keep_background)`` on class scores exactly on, just
above and just below every candidate threshold (and moderate logits, for the softmax).
Exactly one candidate of each must agree on every trial. After a softmax (scores in [0, 1])
a threshold <= 0 or > 1 has no effect on any input: above 1 the function is not claimed; at
or below 0 it is read from the comparison TVM writes (``threshold <= score``, the constant
as given) when exactly one such comparison exists, else Relax's default 0.0 is reported as
assumed (a lone function abstains).
"""
from __future__ import annotations

import numpy as np

from tir.expr import GE, LE, FloatImm
from tir.function import PrimFunc
from tir.functor import pre_order_visit

from ..info import OpInfo, Operand
from .common import loads_in
from .running import float_constants, run_all, runnable, shape_bindings, signature, size, symbols_exercised

MAX_ELEMENTS = 4096
"""Score elements above which the function is not run."""
MAX_CONSTANTS = 12
TRIALS = 8


def _compared_constants(func: PrimFunc) -> list:
    """The float constants a ``>=`` / ``<=`` compares a loaded value with (TVM's ``score >=
    threshold``, written ``threshold <= score``): the score as a load of its own block, or
    computed in place where the softmax's division was inlined into the comparison
    (``threshold <= exp[...] / expsum[...]``)."""
    found = set()

    def visit(node):
        if isinstance(node, (GE, LE)):
            for const, other in ((node.a, node.b), (node.b, node.a)):
                if isinstance(const, FloatImm) and other.dtype.is_float and loads_in(other):
                    found.add(float(const.value))
        return True

    pre_order_visit(func.body, visit)
    return sorted(found)


def _roles(shapes, bufs) -> bool:
    """cls (B, C, N), loc (B, 4N) -- or (1, 4N), the same encodings for every batch, as TVM
    reads them --, anchor (1, N, 4), boxes (B, N, 4), scores (B, C, N), one float dtype."""
    if len(bufs) != 5 or len({str(b.dtype) for b in bufs}) != 1 or not bufs[0].dtype.is_float:
        return False
    if len(shapes[0]) != 3:
        return False
    b, c, n = shapes[0]
    return shapes[1] in ((b, 4 * n), (1, 4 * n)) and shapes[2:] == [(1, n, 4), (b, n, 4), (b, c, n)] \
        and c >= 1 and n >= 1


def decode_reference(loc, anchor, variances, clip, dtype) -> np.ndarray:
    """(B, N, 4) boxes (ymin, xmin, ymax, xmax) in ``dtype``, in TVM's order of operations."""
    t = np.dtype(dtype).type
    vx, vy, vw, vh = (t(v) for v in variances)
    half, b, n = t(0.5), loc.shape[0], anchor.shape[1]
    enc = loc.reshape(b, n, 4)
    left, top, right, bottom = (anchor[0, :, i] for i in range(4))
    ay, ax = (top + bottom) * half, (left + right) * half
    ah, aw = bottom - top, right - left
    ycenter = enc[..., 1] * vy * ah + ay
    xcenter = enc[..., 0] * vx * aw + ax
    half_h = half * np.exp(enc[..., 3] * vh) * ah
    half_w = half * np.exp(enc[..., 2] * vw) * aw
    out = np.stack([ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w], -1).astype(dtype)
    return np.clip(out, t(0), t(1)).astype(dtype) if clip else out


def softmax_reference(cls, dtype) -> np.ndarray:
    e = np.exp(cls - cls.max(axis=1, keepdims=True)).astype(dtype)
    return (e / e.sum(axis=1, keepdims=True, dtype=dtype)).astype(dtype)


def scores_reference(cls, threshold, keep_background, apply_softmax, dtype) -> np.ndarray:
    s = softmax_reference(cls, dtype) if apply_softmax else cls
    out = (s * (s >= np.dtype(dtype).type(threshold)).astype(dtype)).astype(dtype)
    if not keep_background:
        out[:, 0] = 0
    return out


def _tol(dtype) -> float:
    return 2e-2 if np.dtype(dtype).itemsize <= 2 else 1e-4


def _close(got, want, dtype) -> np.ndarray:
    return np.isclose(got, want, rtol=_tol(dtype), atol=_tol(dtype) / 10, equal_nan=True)


def _scores_agree(got, cls, threshold, keep, soft, dtype) -> bool:
    """Exact without softmax; after it, a score within rounding of the threshold may go either way."""
    if not soft:
        return np.array_equal(got, scores_reference(cls, threshold, keep, soft, dtype), equal_nan=True)
    s = softmax_reference(cls, dtype)
    want = scores_reference(cls, threshold, keep, soft, dtype)
    ok = _close(got, want, dtype)
    edge = np.abs(s.astype(float) - threshold) <= _tol(dtype) * max(1.0, abs(threshold))
    if not keep:
        edge[:, 0] = False
    return bool(np.all(ok | (edge & ((got == 0) | _close(got, s, dtype)))))


def _inputs(rng, shapes, dtype, constants, trial: int):
    t = np.dtype(dtype).type
    b, c, n = shapes[0]
    exact = np.array([t(v) for v in constants if np.isfinite(t(v))], dtype)
    with np.errstate(all="ignore"):
        near = np.array([np.nextafter(v, t(d)) for v in exact for d in (-np.inf, np.inf)], dtype)
    if trial % 2:  # moderate logits: softmax values spread over (0, 1)
        cls = rng.uniform(-3, 3, shapes[0]).astype(dtype)
    else:
        pick = rng.random(shapes[0])
        cls = np.where(pick < 0.35, rng.choice(exact, shapes[0]),
                       np.where(pick < 0.7, rng.choice(near, shapes[0]),
                                rng.uniform(-2, 2, shapes[0]))).astype(dtype)
    loc = rng.uniform(-1.5, 1.5, shapes[1]).astype(dtype)
    lo = rng.uniform(-0.6, 1.2, (1, n, 2))
    anchor = np.concatenate([lo, lo + rng.uniform(0.05, 0.8, (1, n, 2))], -1).astype(dtype)
    return cls, loc, anchor


def _readings(func, shapes, dtype, constants):
    """(box candidates, score candidates) agreeing with every trial on these shapes."""
    values = sorted(set(constants) | {0.0, 1.0})
    axis_cands = [(v, w, clip) for v in values for w in values for clip in (False, True)]
    y_cands, x_cands = list(axis_cands), list(axis_cands)
    score_cands = [(soft, thr, keep) for soft in (False, True) for thr in values for keep in (False, True)]
    rng = np.random.default_rng(29)
    for trial in range(TRIALS):
        cls, loc, anchor = _inputs(rng, shapes, dtype, values, trial)
        got = run_all(func, [cls, loc, anchor, rng.uniform(-9, 9, shapes[3]).astype(dtype),
                             rng.uniform(-9, 9, shapes[4]).astype(dtype)])
        if got is None:  # a form the interpreter cannot run is not claimed
            return set(), set()
        boxes, scores = got[3], got[4]
        with np.errstate(all="ignore"):
            def axis_ok(cand, cols, var_of):
                v, w, clip = cand
                want = decode_reference(loc, anchor, var_of(v, w), clip, dtype)
                return bool(np.all(_close(boxes[..., cols], want[..., cols], dtype)))

            y_cands = [c for c in y_cands if axis_ok(c, [0, 2], lambda v, w: (1.0, v, 1.0, w))]
            x_cands = [c for c in x_cands if axis_ok(c, [1, 3], lambda v, w: (v, 1.0, w, 1.0))]
            score_cands = [c for c in score_cands if _scores_agree(scores, cls, c[1], c[2], c[0], dtype)]
        if not (y_cands and x_cands and score_cands):
            return set(), set()
    box = {(x[0], y[0], x[1], y[1], x[2]) for x in x_cands for y in y_cands if x[2] == y[2]}
    return box, set(score_cands)


def recognize_multibox_transform_loc(func: PrimFunc) -> "OpInfo | None":
    """The ``vision.multibox_transform_loc`` ``func`` computes, or None (see the module doc)."""
    bufs = signature(func)
    if bufs is None or len(bufs) != 5:
        return None
    bindings = [s for s in shape_bindings(bufs) if _roles(s, bufs)][:2]
    if not bindings or not symbols_exercised(bufs, bindings) or any(size(s[4]) > MAX_ELEMENTS for s in bindings) \
            or not runnable(func):
        return None
    constants = float_constants(func)
    if not constants or len(constants) > MAX_CONSTANTS:
        return None
    dtype = str(bufs[0].dtype)
    box = score = None
    for shapes in bindings:
        b, s = _readings(func, shapes, dtype, constants)
        box = b if box is None else box & b
        score = s if score is None else score & s
    if len(box) != 1 or not score:
        return None
    (vx, vy, vw, vh, clip), = box
    softs = {c[0] for c in score}
    keeps = {c[2] for c in score}
    if len(softs) != 1 or len(keeps) != 1:
        return None
    soft, keep = softs.pop(), keeps.pop()
    thresholds = sorted(c[1] for c in score)
    assumed = ()
    if soft and all(t <= 0 for t in thresholds):
        written = _compared_constants(func)
        if len(written) == 1 and written[0] <= 0:
            threshold = written[0]  # no effect on a softmax, but TVM writes it as given: score >= t
        else:
            threshold, assumed = 0.0, ("threshold",)  # Relax's default, by convention
    elif len(thresholds) != 1 or (soft and thresholds[0] > 1):
        return None
    else:
        threshold = thresholds[0]
    attrs = {"clip": bool(clip), "threshold": float(threshold), "variances": [float(vx), float(vy), float(vw), float(vh)],
             "keep_background": bool(keep), "apply_softmax": bool(soft)}
    return OpInfo("vision.multibox_transform_loc", attrs,
                  (Operand("cls_pred", bufs[0].name, 0), Operand("loc_pred", bufs[1].name, 1),
                   Operand("anchor", bufs[2].name, 2)),
                  Operand("output", bufs[3].name, 3), assumed=assumed)
