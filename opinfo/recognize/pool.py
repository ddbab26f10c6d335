"""Pooling: max and average (pool_size, strides, dilation, padding, ceil_mode,
count_include_pad, layout incl. packed ``NCHW{k}c``) and adaptive average pooling with an
even split (uneven splits: :mod:`.pool_adaptive`).

A pool reduces a (padded) read ``x[..., o * stride + r * dilation - before, ...]`` over its
window variables; every other dimension passes through (the same index in the read and
in the result, which may be a packed ``c // 4``, ``c % 4``). The pad must be a true pad:
its guard is checked to be exactly "in bounds" (``guard``). Which dimensions are pooled,
also when TVM's ``transform_layout`` folded a window or output variable of extent 1 out of
the read, is :mod:`.pool_window`'s; such a reading needs TVM's compute tag of the pool.

ceil_mode policy. TVM lowers ``ceil_mode=True`` by growing the after-padding by
``stride - 1``, which gives exactly the loops of ``ceil_mode=False`` with that larger
padding, so both readings may explain the IR. ``pool_readings``:

a. enumerates the readings (ceil_mode, after-padding) that TVM would lower to these loops
   (output extents; the padded extent when a pad buffer is visible, else which sides the
   inlined guard tests);
b. drops readings that pad some dimension by at least the dilated window (a window made
   only of padding; frameworks do not produce that);
c. reports the reading if exactly one remains;
d. if several remain, the loops do not decide ceil_mode: the unique ``ceil_mode=False``
   reading (the flag framework importers write, with the padding they mean) is reported
   as a convention, naming the attributes it assumes (``Match.assumed``); analyze keeps it
   only inside a network (see ``opinfo.api.analyze``'s ``conventions``).

Average pooling first keeps only the readings (and ``count_include_pad``) whose TVM divisor
formula the divisor expression is (``pool_divisor``): with ``count_include_pad`` the clip
bound names the true after-padding, which usually settles ceil_mode.
"""
from __future__ import annotations

import numpy as np

from tir.expr import Div, IntImm, min_value
from tir.functor import substitute

from ..affine import const_of, float_of
from ..probe import NotEvaluable, evaluate
from ..semantic import Reduce
from ..tags import tags
from ..unit_axes import scheduled
from .common import Match, Space, strip
from .pool_divisor import settle
from .pool_readings import Axis, choose, readings
from .pool_window import Window, layout_of, padded_extent_of, window
from .window import SYMBOLIC_SAMPLES, symbolic_in

MAX_TAGS = frozenset({"pool_max"})
AVG_TAGS = frozenset({"pool_sum", "pool_avg"})
ADAPTIVE_TAGS = frozenset({"adaptive_pool_sum", "adaptive_pool_avg"})


def _trusted(w: "Window | None", ctx, kind: frozenset, strides: bool = True) -> bool:
    """Whether ``w`` may be read as a pool of ``kind`` (its compute tags): a window with a
    folded axis is placed by the order TVM's pools give their reduction variables
    (:mod:`.pool_window`), so a block of TVM's pool must be there; a pool with ``strides``
    needs every stride in the loops."""
    if w is None or (strides and w.strideless):
        return False
    return not w.folded or bool(kind & _tags(ctx))


def _axes(w: Window, space: Space, binding: "dict | None" = None) -> "list | None":
    """The pooled dimensions as :class:`Axis`; ``binding``: values for the symbolic extents
    (a symbolic pool is read at several, :func:`_symbolic_readings`)."""
    p, out = w.padded, []
    style_both = w.sides is not None and any(
        w.sides[d].lower and dm.offset == 0 for d, dm in zip(w.spatial, w.dims))
    for d, dm in zip(w.spatial, w.dims):
        size, o = p.load.buffer.shape[d], space.extents[d]
        if binding:
            size, o = substitute(size, binding), substitute(o, binding)
        size, o, k = const_of(size), const_of(o), w.rext[id(dm.red)]
        if None in (size, o, k) or dm.stride <= 0 or dm.dilation <= 0 or dm.offset > 0:
            return None
        before = -dm.offset
        padded = guarded = None
        if binding and p.padded_shape is not None and p.pad_value is not None:
            # a pad buffer of symbolic extents: its extent at this length
            declared = padded_extent_of(w, dm, declared=True)
            extent = const_of(substitute(declared, binding)) if declared is not None else None
            if extent is None:
                return None
        else:
            extent = padded_extent_of(w, dm)
        if extent is not None:
            padded = extent - size - before
        elif p.padded_shape is not None and p.pad_value is not None:
            return None
        elif w.sides is None:
            guarded = False
        elif not style_both:
            guarded = w.sides[d].upper
        out.append(Axis(size, o, k, dm.stride, dm.dilation, before, padded, guarded))
    return out


def _symbolic_readings(w: Window, space: Space) -> tuple:
    """``(axes, readings)`` of a pool over symbolic extents: the readings that explain it at
    every length of :data:`.window.SYMBOLIC_SAMPLES` where it has outputs (at one length
    ceil_mode or a larger after-padding may explain it as well; at another not), and the
    axes at the first such length (their window, stride, dilation and before-padding are
    the same at all); ``(None, None)`` when that leaves nothing."""
    symbols = symbolic_in(list(w.padded.load.buffer.shape) + list(space.extents))
    first, common, seen = None, None, 0
    for n in SYMBOLIC_SAMPLES if symbols else ():
        binding = {v: IntImm(v.dtype, n) for v in symbols}
        if any((const_of(substitute(e, binding)) or 0) < 1 for e in space.extents):
            continue  # no outputs at this length
        axes = _axes(w, space, binding)
        if axes is None:
            return None, None
        got = readings(axes)
        first = first or (axes, got)
        common = set(got) if common is None else common & set(got)
        seen += 1
    if first is None or seen < 2 * max(a.stride for a in first[0]):
        return None, None
    return first[0], [r for r in first[1] if r in common]


def _attrs(axes, reading, layout, include=False) -> dict:
    return {"pool_size": [a.kernel for a in axes], "strides": [a.stride for a in axes],
            "dilation": [a.dilation for a in axes],
            "padding": [a.before for a in axes] + list(reading.after),
            "ceil_mode": reading.ceil, "count_include_pad": include, "layout": layout,
            "out_layout": layout}


def _is_lowest(v: "float | None", dtype) -> bool:
    low = float_of(min_value(dtype))
    return low is not None and v is not None and v <= low


def match_max_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "max" or not _is_lowest(float_of(e.init), e.dtype):
        return None
    w = window(e, space, ctx, _is_lowest)
    if not _trusted(w, ctx, MAX_TAGS):
        return None
    layout, axes = layout_of(w.spatial, space, not scheduled(ctx.sem.func)), _axes(w, space)
    cands = readings(axes) if axes is not None else None
    if axes is None:  # over a symbolic extent: the readings that hold at every length
        axes, cands = _symbolic_readings(w, space)
    if layout is None or axes is None:
        return None
    reading, assumed = choose(axes, cands)
    if reading is None:
        return None
    assumed += ("dilation",) if w.blind else ()
    return Match(f"nn.max_pool{len(axes)}d", _attrs(axes, reading, layout),
                 (("data", w.padded.load, space),), assumed)


def match_avg_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if isinstance(e, Reduce) and e.combiner == "sum":
        return _adaptive_identity(e, space, ctx)
    if not isinstance(e, Div) or not isinstance(strip(e.a), Reduce) or strip(e.a).combiner != "sum":
        return None
    red = strip(e.a)
    if float_of(red.init) != 0.0:
        return None
    w = window(red, space, ctx, lambda v, dtype: v == 0.0)
    adaptive = _constant(e.b) is not None
    if not _trusted(w, ctx, ADAPTIVE_TAGS if adaptive else AVG_TAGS, strides=not adaptive):
        return None
    layout, axes = layout_of(w.spatial, space, not scheduled(ctx.sem.func)), _axes(w, space)
    if layout is None or axes is None:
        return None
    if adaptive:
        return _adaptive(e, w, axes, layout, space)
    out_vars = [space.indices[d] for d in w.spatial]
    pairs = settle(e.b, out_vars, axes, readings(axes))
    if not pairs or len({inc for _, inc in pairs}) != 1:
        return None
    reading, assumed = choose(axes, [r for r, _ in pairs])
    if reading is None:
        return None
    assumed += ("dilation",) if w.blind else ()
    return Match(f"nn.avg_pool{len(axes)}d", _attrs(axes, reading, layout, pairs[0][1]),
                 (("data", w.padded.load, space),), assumed)



def _adaptive_identity(red: Reduce, space: Space, ctx) -> "Match | None":
    """An adaptive average pool to the input's own size: TVM sums one-element windows
    ``x[..., o + r]`` and drops the division by one. An avg_pool of one-element windows
    whose divisor TVM folds to one (ceil_mode) has the very same loops: as in
    :mod:`opinfo.copy_tags`, the compute tag (block name) tells them apart."""
    if float_of(red.init) != 0.0 or _TAGS[True] not in _tags(ctx) or _TAGS[False] in _tags(ctx):
        return None
    w = window(red, space, ctx, lambda v, dtype: False)
    if not _trusted(w, ctx, ADAPTIVE_TAGS, strides=False) or w.padded.conds:
        return None
    layout, axes = layout_of(w.spatial, space, not scheduled(ctx.sem.func)), _axes(w, space)
    if layout is None or axes is None or any(a.kernel != 1 or a.size != a.out for a in axes):
        return None
    return _adaptive(None, w, axes, layout, space)


_TAGS = {True: "adaptive_pool_sum", False: "pool_sum"}


def _tags(ctx) -> set:
    """The function's compute tags (:mod:`opinfo.tags`)."""
    return set(tags(ctx.sem.func))


def _constant(e) -> "float | None":
    """The value of a constant expression (float16 divisors stay a product: 8.0 * 2.0)."""
    v = float_of(e)
    if v is not None:
        return v
    try:
        got = evaluate(e, {})
    except NotEvaluable:
        return None
    return float(got) if np.ndim(got) == 0 else None


def _adaptive(e, w, axes, layout, space):
    """An even adaptive average pool: window = stride = input / output, constant divisor
    (none when ``e`` is None: windows of one element)."""
    if w.padded.pad_value is not None:
        return None
    for a in axes:
        if a.dilation != 1 or a.before or a.kernel != a.stride or a.size != a.out * a.kernel:
            return None
    n = 1
    for a in axes:
        n *= a.kernel
    if (float(n) if e is None else _constant(e.b)) != float(n):
        return None
    attrs = {"output_size": [a.out for a in axes], "layout": layout, "out_layout": layout}
    # output size = input size: Relax's output_size=None (keep the input's size) lowers the
    # same, so the value written is a convention (a standalone function abstains)
    same = ("output_size",) if all(a.kernel == 1 for a in axes) else ()
    return Match(f"nn.adaptive_avg_pool{len(axes)}d", attrs, (("data", w.padded.load, space),), same)
