"""``image.grid_sample``, recognised by what the whole PrimFunc computes (compare
:mod:`.roi`).

TVM legalizes it through topi to one ``compute`` block whose reads of the data are at
positions computed from the grid's values at run time (floors, rounding, clipping and
reflections of them), so the loops cannot name the attributes; the values can. The
signature must be data (N, C, H, W), grid (N, 2, OH, OW) -> (N, C, OH, OW), float32, the
layout NCHW (topi's only 2-D layout) and every block tagged ``compute`` (cache copies set
aside). The function is run
on random data and grids reaching well outside [-1, 1] (so the padding modes differ) and
compared with a numpy reference written after topi's for every method x padding_mode x
align_corners; exactly one must agree on every run. Images of height or width 1 (where
align_corners makes the coordinates vanish) abstain.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from tir.function import PrimFunc

from .attention import SYMBOLIC_VALUES
from .info import OpInfo, Operand
from .recognize.running import concrete_shapes, poisoned, run, shapes_beyond
from .tags import under_tag

METHODS = ("nearest", "bilinear", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")
TAG = "compute"
SPANS = (1.6, 4.0, 1.2, 2.5)  # grids uniform in [-span, span]: some points just past the edges, some far
TRIALS = 4
MAX_OUT = 4096
CUBIC_A = np.float32(-0.75)
F32 = np.float32


def _unnormalize(g, size: int, align: bool):
    """topi's map from [-1, 1] to pixel coordinates, in float32 as TVM evaluates it."""
    if align:
        return (g + F32(1)) * F32(size - 1) / F32(2)
    return F32(-0.5) + (g + F32(1)) * F32(size) / F32(2)


def _reflect(x, size: int, corner: float):
    """topi's ``_reflect_coordinates`` of ``x`` (float32) into [corner, size + corner]."""
    dist = np.abs(F32(corner) - x)
    times = np.trunc(dist).astype(np.int64) // size
    extra = dist - (times * size).astype(F32)
    bounced = np.where(times % 2 == 0, extra + F32(corner), F32(size) - extra + F32(corner))
    return np.where((x >= F32(corner)) & (x <= F32(size + corner)), x, bounced).astype(F32)


def _pad(x, size: int, padding: str, align: bool):
    """A coordinate after topi's padding: as is, clipped, or reflected then clipped."""
    if padding == "zeros":
        return x
    if padding == "reflection":
        x = _reflect(x, size - 1, 0.0) if align else _reflect(x, size, -0.5)
    return np.minimum(np.maximum(x, F32(0)), F32(size - 1))


def _pixels(data, yi, xi):
    """data[n, :, yi, xi] for integer (N, OH, OW) positions, 0 outside: (N, C, OH, OW)."""
    n, _, h, w = data.shape
    inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
    batch = np.arange(n)[:, None, None]
    vals = data[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (N, OH, OW, C)
    return vals.transpose(0, 3, 1, 2) * inside[:, None]


def _cubic_weights(f):
    """The four weights of topi's cubic interpolation at fraction ``f`` (A = -0.75)."""
    a = CUBIC_A

    def near(t):
        return ((a + F32(2)) * t - (a + F32(3))) * t * t + F32(1)

    def far(t):
        return ((a * t - F32(5) * a) * t + F32(8) * a) * t - F32(4) * a

    return far(f + F32(1)), near(f), near(F32(1) - f), far(F32(2) - f)


def _bicubic(data, y, x, padding: str, align: bool):
    _, _, h, w = data.shape
    y0, x0 = np.floor(y), np.floor(x)
    wy, wx = _cubic_weights((y - y0)[:, None]), _cubic_weights((x - x0)[:, None])
    rows = [_pad(y0 + F32(i - 1), h, padding, align).astype(np.int64) for i in range(4)]
    cols = [_pad(x0 + F32(k - 1), w, padding, align).astype(np.int64) for k in range(4)]
    out = 0
    for row, weight in zip(rows, wy):
        out = out + weight * sum(_pixels(data, row, col) * wk for col, wk in zip(cols, wx))
    return out


def grid_sample_ref(data, grid, method: str, padding: str, align: bool):
    """topi's 2-D grid_sample of NCHW float32 ``data`` at ``grid`` (N, 2, OH, OW)."""
    _, _, h, w = data.shape
    y, x = _unnormalize(grid[:, 1], h, align), _unnormalize(grid[:, 0], w, align)
    if method == "bicubic":
        return _bicubic(data, y, x, padding, align)
    y, x = _pad(y, h, padding, align), _pad(x, w, padding, align)
    if method == "nearest":
        return _pixels(data, np.rint(y).astype(np.int64), np.rint(x).astype(np.int64))
    y0, x0 = np.floor(y), np.floor(x)
    fy, fx = (y - y0)[:, None], (x - x0)[:, None]
    yi, xi = y0.astype(np.int64), x0.astype(np.int64)
    return (_pixels(data, yi, xi) * (1 - fy) * (1 - fx) + _pixels(data, yi, xi + 1) * (1 - fy) * fx
            + _pixels(data, yi + 1, xi) * fy * (1 - fx) + _pixels(data, yi + 1, xi + 1) * fy * fx)


def _fits(shapes) -> bool:
    (n, c, h, w), grid, out = shapes
    return grid[:2] == (n, 2) and out == (n, c) + grid[2:] and min(h, w) >= 2


def _shapes(bufs) -> "tuple | None":
    """(concrete (data, grid, out) shapes of a grid_sample signature, the value bound to
    symbolic extents) or None."""
    for value in SYMBOLIC_VALUES:
        shapes = concrete_shapes(bufs, value)
        if shapes is not None and _fits(shapes):
            return shapes, value
    return None


def _holds(func, shapes, cand, trials, rng) -> bool:
    for trial in trials:
        data = rng.standard_normal(shapes[0]).astype(F32)
        span = SPANS[trial % len(SPANS)]
        grid = rng.uniform(-span, span, shapes[1]).astype(F32)
        got = run(func, [data, grid, poisoned(shapes[2], F32)])
        if got is None or not _agrees(got, grid_sample_ref(data, grid, *cand)):
            return False
    return True


def _trials(shapes) -> int:
    """Runs for the candidates: more for a small output, so that about a thousand sample
    points meet the padding folds (a 2x2 output over four grids missed a reflection fold's
    changed period)."""
    points = max(1, math.prod(shapes[2]))
    return max(TRIALS, min(64, -(-1024 // points)))


def _holds_beyond(func, bufs, cand, value: int) -> bool:
    """The reading holds with symbolic extents bound past every integer constant of the body
    (a test ``n < 12`` never bites at 2; see :func:`.recognize.running.shapes_beyond`)."""
    rng = np.random.default_rng(9)
    for shapes in shapes_beyond(func, bufs, value, _fits):
        if math.prod(shapes[2]) > MAX_OUT or not _holds(func, shapes, cand, range(len(SPANS)), rng):
            return False
    return True


def _agrees(got, want) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))


def recognize_grid_sample(func: PrimFunc) -> "OpInfo | None":
    """The image.grid_sample ``func`` computes, or None (see the module doc)."""
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != 3 or len(bufs) != len(func.params):
        return None
    if any(str(b.dtype) != "float32" for b in bufs) or [len(b.shape) for b in bufs] != [4, 4, 4]:
        return None
    if under_tag(func, TAG) is None:
        return None
    found = _shapes(bufs)
    if found is None or math.prod(found[0][2]) > MAX_OUT:
        return None
    shapes, value = found
    cands = list(itertools.product(METHODS, PADDING_MODES, (False, True)))
    rng = np.random.default_rng(7)
    for trial in range(_trials(shapes)):
        data = rng.standard_normal(shapes[0]).astype(F32)
        span = SPANS[trial % len(SPANS)]
        grid = rng.uniform(-span, span, shapes[1]).astype(F32)
        got = run(func, [data, grid, poisoned(shapes[2], F32)])
        if got is None:
            return None
        cands = [cand for cand in cands if _agrees(got, grid_sample_ref(data, grid, *cand))]
        if not cands:
            return None
    if len(cands) != 1 or not _holds_beyond(func, bufs, cands[0], value):
        return None
    method, padding, align = cands[0]
    names = [b.name for b in bufs]
    attrs = {"method": method, "layout": "NCHW", "padding_mode": padding, "align_corners": align}
    return OpInfo("image.grid_sample", attrs, (Operand("data", names[0], 0), Operand("grid", names[1], 1)),
                  Operand("output", names[2], 2))
