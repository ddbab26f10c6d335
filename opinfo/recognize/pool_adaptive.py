"""Adaptive average pooling whose output size does not divide the input
(``nn.adaptive_avg_pool1d/2d/3d``: output_size, layout), recognised from what it computes.

Output position ``o`` of a pooled axis averages the input from ``floor(o * in / out)`` to
``ceil((o + 1) * in / out)``. When ``out`` does not divide ``in`` those windows differ in
length, and TVM lowers the reduction over such an axis as an inner loop whose extent
depends on ``o``, in a nested block: the semantic layer cannot read that (it is opaque),
so the function is run (:func:`tir.interp.interpret`) on random data and compared with a
numpy reference for each layout of the data's rank (the output size is the output's
extents on the layout's spatial axes, the other axes must be unchanged). It is named only
when some axis is uneven: with every axis even, ``avg_pool`` with window = stride computes
the same numbers, and TVM writes that case as ordinary reductions (:mod:`.pool`).

Numbers alone can also match a fixed-window pool: ``avg_pool`` with window 3 and stride 2
over 9 elements averages [0, 3), [2, 5), [4, 7), [6, 9), which are exactly the adaptive
windows of 9 -> 4. Such a pool is named only when TVM's compute tags for adaptive pooling
(``adaptive_pool_sum``/``adaptive_pool_avg``) name its blocks, and no other block is there
(a fused ``clip`` after the pool changes nothing on random data).

Both layouts can agree: (n, 12, 12, 11, 4) pooled to (n, 12, 6, 2, 4) is NDHWC, or NCDHW
with C = 12 and W = 4 pooled to themselves. The loops tell them apart: TVM reads every
pooled axis through a reduction variable (of extent 1 for a window of one) and the channel
axis through a spatial one. The layout named is the one whose pooled axes are those the
reduction variables reach (:func:`reduced_axes`); when the loops do not say, only a layout
the numbers alone single out is named.
"""
from __future__ import annotations

import numpy as np

from tir.expr import BufferLoad
from tir.functor import post_order_visit
from tir.interp_data import np_dtype
from tir.stmt import IterKind

from ..info import OpInfo, Operand
from ..tags import compute_tags
from .running import concrete_shapes, poisoned, run, shapes_beyond
from .symbolic import mentions

ADAPTIVE_TAGS = frozenset({"adaptive_pool_sum", "adaptive_pool_avg"})
MAX_ELEMENTS = 1 << 16
"""Larger inputs are not run."""
SYMBOLIC_VALUE = 2
"""Value bound to symbolic extents for the run (and one past the body's constants after)."""
SYMBOLIC_VALUES = (SYMBOLIC_VALUE, SYMBOLIC_VALUE + 1)
"""Values tried in turn for the first run over symbolic extents, until some pooled axis is
uneven there: an axis pooled to 2 divides an extent of 2 evenly (then every reading is a
plain pool's too) but not one of 3; any other size of 2 or more leaves 2 uneven."""
LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def reference(x: np.ndarray, axes: list, sizes: list) -> np.ndarray:
    """Adaptive average pooling of ``x`` over ``axes`` to ``sizes`` (TVM's windows)."""
    out = x.astype(float)
    for axis, size in zip(axes, sizes):
        n = out.shape[axis]
        parts = []
        for o in range(size):
            start, end = (o * n) // size, -((-(o + 1) * n) // size)
            parts.append(np.take(out, range(start, end), axis=axis).mean(axis=axis, keepdims=True))
        out = np.concatenate(parts, axis=axis)
    return out


def _adaptive_only(func) -> bool:
    """Every block is one of TVM's adaptive pooling blocks: the numbers are compared on
    random data, which a fused ``clip`` after the pool may leave unchanged."""
    found = compute_tags(func)
    return bool(found) and all(t.startswith("adaptive_pool") for t in found) and \
        bool(ADAPTIVE_TAGS.intersection(found))


def _layouts(in_shape, out_shape) -> list:
    """(layout, pooled axes) whose other axes are unchanged and some pooled axis is uneven."""
    found = []
    for layout in LAYOUTS.get(len(in_shape), ()):
        axes = [d for d, ch in enumerate(layout) if ch in "DHW"]
        same = all(in_shape[d] == out_shape[d] for d in range(len(in_shape)) if d not in axes)
        uneven = any(out_shape[d] and in_shape[d] % out_shape[d] for d in axes)
        if same and uneven and all(0 < out_shape[d] for d in axes):
            found.append((layout, axes))
    return found


def recognize_adaptive_pool(func) -> tuple:
    """``(OpInfo,)`` for an uneven adaptive average pool, else ()."""
    bufs = list(func.buffers)
    if len(bufs) != 2 or len(func.params) != 2 or not _adaptive_only(func):
        return ()
    x, y = bufs
    if not x.dtype.is_float or y.dtype != x.dtype or len(x.shape) != len(y.shape):
        return ()
    for value in SYMBOLIC_VALUES:  # static shapes: the same at each
        shapes = concrete_shapes(bufs, value)
        if shapes is None or int(np.prod(shapes[0])) > MAX_ELEMENTS:
            return ()
        candidates = _layouts(*shapes)
        if candidates:
            break
    else:
        return ()
    rng = np.random.default_rng(31)
    data = rng.standard_normal(shapes[0]).astype(np_dtype(x.dtype))
    out = run(func, [data, poisoned(shapes[1], np_dtype(y.dtype))])
    if out is None:
        return ()
    rtol = 1e-2 if x.dtype.bits <= 16 else 1e-5
    agree = [(layout, axes) for layout, axes in candidates
             if np.allclose(out.astype(float), reference(data, axes, [shapes[1][d] for d in axes]),
                            rtol=rtol, atol=rtol * 1e-1)]
    reached = reduced_axes(func, x)
    if reached is not None or len(agree) > 1:  # the loops must confirm, and must choose a tie
        agree = [(layout, axes) for layout, axes in agree if set(axes) == reached]
    if len(agree) != 1:
        return ()
    layout, axes = agree[0]
    sizes = [shapes[1][d] for d in axes]
    if not _holds_beyond(func, bufs, layout, axes, sizes, value):
        return ()
    attrs = {"output_size": sizes, "layout": layout, "out_layout": layout}
    return (OpInfo(f"nn.adaptive_avg_pool{len(axes)}d", attrs, (Operand("data", x.name, 0),),
                   Operand("output", y.name, 1)),)


def _holds_beyond(func, bufs, layout: str, axes: list, sizes: list, small: int) -> bool:
    """The reading holds with symbolic extents bound past every integer constant of the body
    (a test ``n < 12`` never bites at 2; see :func:`.running.shapes_beyond`): the same
    output size, and the numbers."""
    x, y = bufs

    def fits(shapes):
        return (layout, axes) in _layouts(*shapes) and [shapes[1][d] for d in axes] == sizes
    rng = np.random.default_rng(32)
    for shapes in shapes_beyond(func, bufs, small, fits):
        if int(np.prod(shapes[0])) > MAX_ELEMENTS:
            return False
        data = rng.standard_normal(shapes[0]).astype(np_dtype(x.dtype))
        out = run(func, [data, poisoned(shapes[1], np_dtype(y.dtype))])
        rtol = 1e-2 if x.dtype.bits <= 16 else 1e-5
        if out is None or not np.allclose(out.astype(float), reference(data, axes, sizes), rtol=rtol, atol=rtol * 1e-1):
            return False
    return True


def reduced_axes(func, x) -> "set | None":
    """The axes of ``x`` that reduction variables reach in its loads, the same in each of
    them; None when ``x`` is not loaded or its loads disagree."""
    reduce_vars = [iv.var for b in func.blocks() for iv in b.iter_vars if iv.kind == IterKind.REDUCE]
    loads = []
    post_order_visit(func.body, lambda n: loads.append(n) if isinstance(n, BufferLoad) and n.buffer is x else None)
    reached = {frozenset(d for d, i in enumerate(load.indices) if mentions(i, reduce_vars)) for load in loads}
    return set(next(iter(reached))) if len(reached) == 1 else None
