"""Pooling: max and average (pool_size, strides, dilation, padding, ceil_mode,
count_include_pad, layout incl. packed ``NCHW{k}c``) and adaptive average pooling with an
even split (uneven splits: :mod:`.pool_adaptive`).

A pool reduces a (padded) read ``x[..., o * stride + r * dilation - before, ...]`` over its
window variables; every other dimension passes through (the same index in the read and
in the result, which may be a packed ``c // 4``, ``c % 4``). The pad must be a true pad:
its guard is checked to be exactly "in bounds" (``guard``).

ceil_mode policy. TVM lowers ``ceil_mode=True`` by growing the after-padding by
``stride - 1``, which gives exactly the loops of ``ceil_mode=False`` with that larger
padding, so both readings may explain the IR. ``pool_readings``:

a. enumerates the readings (ceil_mode, after-padding) that TVM would lower to these loops
   (output extents; the padded extent when a pad buffer is visible, else which sides the
   inlined guard tests);
b. drops readings that pad some dimension by at least the dilated window (a window made
   only of padding; frameworks do not produce that);
c. reports the reading if exactly one remains;
d. if several remain and differ only in the flag (every stride 1, or the extra padding is
   never read), ceil_mode has no effect: abstains (not observable); otherwise reports
   ``ceil_mode=False`` only when that reading is unique and its padding is symmetric in
   every dimension (the form frameworks emit); else abstains.

Average pooling first keeps only the readings (and ``count_include_pad``) whose TVM divisor
formula the divisor expression is (``pool_divisor``): with ``count_include_pad`` the clip
bound names the true after-padding, which usually settles ceil_mode.
"""
from __future__ import annotations

import attrs

from tir.expr import Div, FloorDiv, FloorMod, Var, min_value
from tir.functor import pre_order_visit

from ..affine import const_of, float_of
from ..semantic import Reduce
from ..tags import tags
from .common import Match, Space, strip
from .guard import guard_sides, same_on_domain
from .pool_divisor import settle
from .pool_readings import Axis, choose, readings
from .window import dim_of, padded_extent, unpad

SPATIAL = "DHW"


@attrs.frozen
class Window:
    """A recognized pooling window: the padded read and its pooled dimensions."""

    padded: object
    """window.Padded of the data read."""
    spatial: tuple
    """Data dimensions that are pooled, in order."""
    dims: tuple
    """window.Dim of each pooled dimension."""
    sides: "tuple | None"
    """guard.Sides per data dimension (None without a guard)."""
    rext: dict
    """id(reduction var) -> extent."""


def _domain(red: Reduce, space: Space) -> dict:
    dom = dict(space.dom)
    dom.update({iv.var: iv.dom.extent for iv in red.axes})
    return dom


def _window(red: Reduce, space: Space, ctx, pad_value_ok) -> "Window | None":
    p = unpad(red.source, ctx)
    if p is None or len(p.load.indices) != space.rank:
        return None
    if p.pad_value is not None and not pad_value_ok(p.pad_value, p.load.dtype):
        return None
    out_ids = {id(v) for v in space.indices if isinstance(v, Var)}
    red_ids = {id(iv.var) for iv in red.axes}
    spatial, dims, used = [], [], []
    dom = _domain(red, space)
    for d, (idx, o) in enumerate(zip(p.load.indices, space.indices)):
        if not _uses(idx, red_ids) and same_on_domain(idx, o, dom):
            continue
        dm = dim_of(idx, out_ids, red_ids)
        if dm is None or dm.red is None or dm.out is not o or dm.group is not None:
            return None
        spatial.append(d)
        dims.append(dm)
        used.append(id(dm.red))
    if not 1 <= len(spatial) <= 3 or sorted(used) != sorted(red_ids):
        return None
    sides = None
    if p.conds:
        sides = guard_sides(p.conds, p.load.indices, p.load.buffer.shape, dom)
        if sides is None:
            return None
    rext = {id(iv.var): const_of(iv.dom.extent) for iv in red.axes}
    return Window(p, tuple(spatial), tuple(dims), sides, rext)


def _uses(e, ids) -> bool:
    found = []
    pre_order_visit(e, lambda n: found.append(n) if isinstance(n, Var) and id(n) in ids else True)
    return bool(found)


def _layout(w: Window, space: Space) -> "str | None":
    """Layout letters: pooled dims D/H/W, the others N, C (and ``{k}c`` when packed)."""
    letters = SPATIAL[-len(w.spatial):]
    rest = [d for d in range(space.rank) if d not in w.spatial]
    names = {d: letters[i] for i, d in enumerate(w.spatial)}
    if len(rest) == 2:
        names.update({rest[0]: "N", rest[1]: "C"})
    elif len(rest) == 3 and _packed(space, rest[1], rest[2]):
        k = const_of(space.extents[rest[2]])
        names.update({rest[0]: "N", rest[1]: "C", rest[2]: f"{k}c"})
    else:
        return None
    return "".join(names[d] for d in range(space.rank))


def _packed(space: Space, outer: int, inner: int) -> bool:
    """Whether result dims ``outer``/``inner`` hold one channel axis split by the inner extent
    (``c // k``, ``c % k``; ``0``, ``c`` when there is one block; or the packed loops)."""
    k = const_of(space.extents[inner])
    a, b = space.indices[outer], space.indices[inner]
    if k is None:
        return False
    if isinstance(a, Var) and isinstance(b, Var):
        return True
    if isinstance(a, FloorDiv) and isinstance(b, FloorMod) and a.a == b.a:
        return const_of(a.b) == k and const_of(b.b) == k
    unit = const_of(a) == 0 and const_of(space.extents[outer]) == 1
    return unit and isinstance(b, Var) and const_of(space.dom.get(b)) == k


def _axes(w: Window, space: Space) -> "list | None":
    p, out = w.padded, []
    style_both = w.sides is not None and any(
        w.sides[d].lower and dm.offset == 0 for d, dm in zip(w.spatial, w.dims))
    for d, dm in zip(w.spatial, w.dims):
        size, o, k = const_of(p.load.buffer.shape[d]), const_of(space.extents[d]), w.rext[id(dm.red)]
        if None in (size, o, k) or dm.stride <= 0 or dm.dilation <= 0 or dm.offset > 0:
            return None
        before = -dm.offset
        padded = guarded = None
        extent = padded_extent(p, dm.out, dm.red)
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


def _attrs(axes, reading, layout, include=False) -> dict:
    return {"pool_size": [a.kernel for a in axes], "strides": [a.stride for a in axes],
            "dilation": [a.dilation for a in axes],
            "padding": [a.before for a in axes] + list(reading.after),
            "ceil_mode": reading.ceil, "count_include_pad": include, "layout": layout,
            "out_layout": layout}


def _is_lowest(v: float, dtype) -> bool:
    low = float_of(min_value(dtype))
    return low is not None and v <= low


def match_max_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not isinstance(e, Reduce) or e.combiner != "max" or not _is_lowest(float_of(e.init) or 0.0, e.dtype):
        return None
    w = _window(e, space, ctx, _is_lowest)
    if w is None:
        return None
    layout, axes = _layout(w, space), _axes(w, space)
    if layout is None or axes is None:
        return None
    reading = choose(axes, readings(axes))
    if reading is None:
        return None
    return Match(f"nn.max_pool{len(axes)}d", _attrs(axes, reading, layout),
                 (("data", w.padded.load, space),))


def match_avg_pool(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if isinstance(e, Reduce) and e.combiner == "sum":
        return _adaptive_identity(e, space, ctx)
    if not isinstance(e, Div) or not isinstance(strip(e.a), Reduce) or strip(e.a).combiner != "sum":
        return None
    red = strip(e.a)
    if float_of(red.init) != 0.0:
        return None
    w = _window(red, space, ctx, lambda v, dtype: v == 0.0)
    if w is None:
        return None
    layout, axes = _layout(w, space), _axes(w, space)
    if layout is None or axes is None:
        return None
    if float_of(e.b) is not None:
        return _adaptive(e, w, axes, layout, space)
    out_vars = [space.indices[d] for d in w.spatial]
    pairs = settle(e.b, out_vars, axes, readings(axes))
    if not pairs or len({inc for _, inc in pairs}) != 1:
        return None
    reading = choose(axes, [r for r, _ in pairs])
    if reading is None:
        return None
    return Match(f"nn.avg_pool{len(axes)}d", _attrs(axes, reading, layout, pairs[0][1]),
                 (("data", w.padded.load, space),))


def _adaptive_identity(red: Reduce, space: Space, ctx) -> "Match | None":
    """An adaptive average pool to the input's own size: TVM sums one-element windows
    ``x[..., o + r]`` and drops the division by one. An avg_pool of one-element windows
    whose divisor TVM folds to one (ceil_mode) has the very same loops: as in
    :mod:`opinfo.copy_tags`, the compute tag (block name) tells them apart."""
    if float_of(red.init) != 0.0 or _TAGS[True] not in _tags(ctx) or _TAGS[False] in _tags(ctx):
        return None
    w = _window(red, space, ctx, lambda v, dtype: False)
    if w is None or w.padded.conds:
        return None
    layout, axes = _layout(w, space), _axes(w, space)
    if layout is None or axes is None or any(a.kernel != 1 or a.size != a.out for a in axes):
        return None
    return _adaptive(None, w, axes, layout, space)


_TAGS = {True: "adaptive_pool_sum", False: "pool_sum"}


def _tags(ctx) -> set:
    """The function's compute tags (:mod:`opinfo.tags`)."""
    return set(tags(ctx.sem.func))


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
    if (float(n) if e is None else float_of(e.b)) != float(n):
        return None
    attrs = {"output_size": [a.out for a in axes], "layout": layout, "out_layout": layout}
    return Match(f"nn.adaptive_avg_pool{len(axes)}d", attrs, (("data", w.padded.load, space),))
