"""``vision.roi_align`` and ``vision.roi_pool``, recognised by what the whole PrimFunc
computes (compare :mod:`.attention_bias`).

TVM legalizes both through topi to one reduction over each region's bins whose extents
depend on the regions read at run time, so the loops cannot name the attributes; the values
can. The signature must be data (N, C, H, W) or (N, H, W, C), rois (R, 5) -> (R, C, PH, PW)
or (R, PH, PW, C); the pooled size is read from the output's shape, candidate spatial
scales are the float constants of the IR (and 1.0, which folds away). The function is run
on random data and regions (large, small and partly outside boxes) and compared with numpy
references written after topi's; exactly one attribute set must agree on every run.

One pair of readings computes the same numbers: with one sample per bin (``sample_ratio``
1, or -1 with bins of at most one pixel) roi_align's ``avg`` and ``max`` both return that
sample. Between exactly those two the IR decides: topi spells ``avg`` as a sum reduction
(``acc + ...``) and ``max`` as a max reduction (``max(acc, ...)``); the function is named
only when its reduction updates are all of one of the two forms.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from tir.expr import Add, FloatImm, Max
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import BufferStore

from .attention import SYMBOLIC_VALUES
from .info import OpInfo, Operand
from .rfactor import split_update
from .recognize.running import concrete_shapes, poisoned, run, shapes_beyond

SAMPLE_RATIOS = (-1, 1, 2, 3, 4)
TRIALS = 16
BEYOND_TRIALS = 4
"""Runs with symbolic extents past the body's constants (regions of each kind)."""
MAX_OUT = 4096


def _scales(func: PrimFunc) -> list:
    found = {1.0}
    post_order_visit(func.body, lambda n: found.add(float(n.value)) if isinstance(n, FloatImm)
                     and 0.0 < n.value <= 16.0 else None)
    return sorted(found)


def _bilinear(img, y: float, x: float):
    """topi's roi_align sample of ``img`` (C, H, W) at (y, x): zero well outside, clamped."""
    _, h, w = img.shape
    if y < -1.0 or x < -1.0 or y > h or x > w:
        return np.zeros(img.shape[0])
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    y1, x1 = int(math.ceil(y)), int(math.ceil(x))
    ly, lx = y - y0, x - x0
    return (img[:, y0, x0] * (1 - ly) * (1 - lx) + img[:, y0, x1] * (1 - ly) * lx
            + img[:, y1, x0] * ly * (1 - lx) + img[:, y1, x1] * ly * lx)


def roi_align_ref(data, rois, pooled, scale, ratio, aligned, mode):
    """topi's roi_align in float64 on NCHW data: (R, C, PH, PW)."""
    ph, pw = pooled
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for i, roi in enumerate(rois.astype(np.float64)):
        img = data[int(roi[0])].astype(np.float64)
        sw, sh, ew, eh = (v * scale for v in roi[1:])
        rh, rw = (eh - sh, ew - sw) if aligned else (max(eh - sh, 1.0), max(ew - sw, 1.0))
        bh, bw = rh / ph, rw / pw
        gh, gw = (ratio, ratio) if ratio > 0 else (math.ceil(rh / ph), math.ceil(rw / pw))
        for p, q in itertools.product(range(ph), range(pw)):
            vals = [_bilinear(img, sh + p * bh + (a + 0.5) * bh / gh, sw + q * bw + (b + 0.5) * bw / gw)
                    for a in range(gh) for b in range(gw)]
            out[i, :, p, q] = np.sum(vals, axis=0) / (gh * gw) if mode == "avg" else np.max(vals, axis=0)
    return out


def roi_pool_ref(data, rois, pooled, scale):
    """topi's roi_pool in float64 (NCHW): (R, C, PH, PW), empty bins 0."""
    ph, pw = pooled
    _, c, h, w = data.shape
    out = np.zeros((len(rois), c, ph, pw))
    for i, roi in enumerate(rois.astype(np.float64)):
        sw, sh, ew, eh = (int(math.floor(v * scale + 0.5)) for v in roi[1:])
        bh, bw = max(eh - sh + 1, 1) / ph, max(ew - sw + 1, 1) / pw
        for p, q in itertools.product(range(ph), range(pw)):
            h0 = min(max(math.floor(p * bh) + sh, 0), h)
            h1 = min(max(math.ceil((p + 1) * bh) + sh, 0), h)
            w0 = min(max(math.floor(q * bw) + sw, 0), w)
            w1 = min(max(math.ceil((q + 1) * bw) + sw, 0), w)
            if h1 > h0 and w1 > w0:
                out[i, :, p, q] = data[int(roi[0]), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def _rois(rng, n: int, r: int, h: int, w: int, trial: int):
    """Regions in image coordinates (before the spatial scale): large, small and very large
    (a scale of 0.25 shrinks them), some reaching past the border, some starting well before it."""
    span = ((1.0, max(h, w)), (0.2, 3.0), (max(h, w), 4.0 * max(h, w)))[trial % 3]
    lo = (-2.0, -2.0) if trial % 2 else (0.0, 0.0)
    if trial % 4 == 3:  # regions starting well before the image: samples before -1 count as zero
        lo = (-float(w), -float(h))
    rois = np.zeros((r, 5), np.float32)
    rois[:, 0] = rng.integers(0, n, r)
    rois[0, 0] = n - 1 if trial % 2 else rois[0, 0]  # the batch's last image, once in two
    rois[:, 1] = rng.uniform(lo[0], w, r)
    rois[:, 2] = rng.uniform(lo[1], h, r)
    rois[:, 3] = rois[:, 1] + rng.uniform(*span, r)
    rois[:, 4] = rois[:, 2] + rng.uniform(*span, r)
    return rois


def _candidates(func, data_shape, out_shape) -> list:
    """(op, attrs, to_nchw, from_nchw) candidates the shapes allow."""
    out = []
    n, r = data_shape[0], out_shape[0]
    for layout, (c_ax, hw) in (("NCHW", (1, (2, 3))), ("NHWC", (3, (1, 2)))):
        if out_shape[c_ax] != data_shape[c_ax]:
            continue
        pooled = [out_shape[hw[0]], out_shape[hw[1]]]
        for scale in _scales(func):
            if layout == "NCHW":
                out.append(("vision.roi_pool", {"pooled_size": pooled, "spatial_scale": scale, "layout": layout}))
            for ratio, aligned, mode in itertools.product(SAMPLE_RATIOS, (False, True), ("avg", "max")):
                out.append(("vision.roi_align", {"pooled_size": pooled, "spatial_scale": scale,
                                                 "sample_ratio": ratio, "aligned": aligned, "layout": layout,
                                                 "mode": mode}))
    del n, r
    return out


def _reference(name, a, data, rois):
    nchw = data if a["layout"] == "NCHW" else data.transpose(0, 3, 1, 2)
    if name == "vision.roi_pool":
        got = roi_pool_ref(nchw, rois, a["pooled_size"], a["spatial_scale"])
    else:
        got = roi_align_ref(nchw, rois, a["pooled_size"], a["spatial_scale"], a["sample_ratio"], a["aligned"],
                            a["mode"])
    return got if a["layout"] == "NCHW" else got.transpose(0, 2, 3, 1)


def _fits(shapes) -> bool:
    return len(shapes[1]) == 2 and shapes[1][1] == 5 and shapes[2][0] == shapes[1][0]


def _shapes(bufs) -> "tuple | None":
    """(concrete shapes, the value bound to symbolic extents) or None."""
    for value in SYMBOLIC_VALUES:
        shapes = concrete_shapes(bufs, value)
        if shapes is not None and _fits(shapes):
            return shapes, value
    return None


def _holds(func, cand, shapes, rng, trials) -> bool:
    """``cand`` computes what ``func`` does on ``shapes`` for these trials' data and regions."""
    name, a = cand
    data_shape, out_shape = shapes[0], shapes[2]
    hw = (data_shape[2], data_shape[3]) if a["layout"] == "NCHW" else (data_shape[1], data_shape[2])
    for trial in trials:
        data = rng.standard_normal(data_shape).astype(np.float32)
        rois = _rois(rng, data_shape[0], shapes[1][0], *hw, trial)
        got = run(func, [data, rois, poisoned(out_shape, np.float32)])
        if got is None or not np.allclose(got, _reference(name, a, data, rois), rtol=1e-4, atol=1e-4):
            return False
    return True


def _holds_beyond(func, bufs, cand, value: int) -> bool:
    """The reading holds with symbolic extents bound past every integer constant of the body
    (a test ``b < 12`` on the batch never bites at 2): the attributes the shapes give are the
    same there, and a few runs (every kind of region, the last image of the batch among
    them) agree."""
    rng = np.random.default_rng(9)
    for shapes in shapes_beyond(func, bufs, value, _fits):
        if math.prod(shapes[2]) > MAX_OUT or cand not in _candidates(func, shapes[0], shapes[2]):
            return False
        if not _holds(func, cand, shapes, rng, range(BEYOND_TRIALS)):
            return False
    return True


def _combiner(func: PrimFunc) -> "str | None":
    """"avg" when every reduction update of ``func`` (``b[i] = b[i] op e``) is a sum, "max"
    when every one is a max, else None."""
    kinds = set()

    def visit(node):
        update = split_update(node) if isinstance(node, BufferStore) else None
        if update is not None and update[0] in (Add, Max):
            kinds.add("avg" if update[0] is Add else "max")
    post_order_visit(func.body, visit)
    return kinds.pop() if len(kinds) == 1 else None


def _settle_mode(cands: list, func: PrimFunc) -> list:
    """The candidates, with an avg/max pair that agrees on everything else (one sample per
    bin) settled by the reduction's form (see the module doc)."""
    if len(cands) != 2 or {a.get("mode") for _, a in cands} != {"avg", "max"}:
        return cands
    rest = [(nm, {k: v for k, v in a.items() if k != "mode"}) for nm, a in cands]
    if rest[0] != rest[1]:
        return cands
    mode = _combiner(func)
    return [c for c in cands if c[1]["mode"] == mode]


def recognize_roi(func: PrimFunc) -> "OpInfo | None":
    """The roi_align or roi_pool ``func`` computes, or None (see the module doc)."""
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != 3 or len(bufs) != len(func.params):
        return None
    if any(str(b.dtype) != "float32" for b in bufs) or [len(b.shape) for b in bufs] != [4, 2, 4]:
        return None
    found = _shapes(bufs)
    if found is None or math.prod(found[0][2]) > MAX_OUT:
        return None
    shapes, value = found
    data_shape, _, out_shape = shapes
    cands = _candidates(func, data_shape, out_shape)
    rng = np.random.default_rng(5)
    h, w = (data_shape[2], data_shape[3]), (data_shape[1], data_shape[2])
    for trial in range(TRIALS):
        if not cands:
            return None
        data = rng.standard_normal(data_shape).astype(np.float32)
        sizes = {a["layout"]: (h if a["layout"] == "NCHW" else w) for _, a in cands}
        kept = []
        for layout, (hh, ww) in sizes.items():
            rois = _rois(rng, data_shape[0], shapes[1][0], hh, ww, trial)
            got = run(func, [data, rois, poisoned(out_shape, np.float32)])
            if got is None:
                return None
            kept += [(nm, a) for nm, a in cands if a["layout"] == layout
                     and np.allclose(got, _reference(nm, a, data, rois), rtol=1e-4, atol=1e-4)]
        cands = kept
    cands = _settle_mode(cands, func)
    if len(cands) != 1 or not _holds_beyond(func, bufs, cands[0], value):
        return None
    name, attrs = cands[0]
    names = [b.name for b in bufs]
    return OpInfo(name, attrs, (Operand("data", names[0], 0), Operand("rois", names[1], 1)),
                  Operand("output", names[2], 2))
