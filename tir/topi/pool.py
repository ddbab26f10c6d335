"""Pooling in the loop forms of TVM's topi: an optional ``pad_temp`` stage (only padded sides
tested), then ``pool_max``, or ``pool_sum`` and ``pool_avg`` (divide by the window count);
adaptive average pooling of every rank (``adaptive_pool_sum``, ``adaptive_pool_avg``)."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, max_, sum_
from ..expr import LT, Cast, Div, Max, Min, PrimExpr, const, if_then_else, logical_and, min_value
from .common import OpError, add, index, ints, mul, pad, padding, static, sub, window
from .layouts import parse_layout


def _spatial_axes(layout: str, nd: int, op: str) -> list:
    axes = [i for i, (a, _) in enumerate(parse_layout(layout, op, "layout")) if a in "DHW"]
    if len(axes) != nd or "N" not in layout or "C" not in layout:
        raise OpError(op, "layout", f"expected a {nd}-d layout such as {'NC' + 'DHW'[3 - nd:]!r}, got {layout!r}")
    return axes


def _window_setup(data: Buffer, op, nd, pool_size, strides, dilation, padding_, ceil_mode, layout, out_layout):
    if out_layout not in (None, "", layout):
        raise OpError(op, "out_layout", f"must equal layout {layout!r}, got {out_layout!r}")
    axes = _spatial_axes(layout, nd, op)
    if data.ndim != len(parse_layout(layout, op)):
        raise OpError(op, "data", f"rank {data.ndim} does not match layout {layout!r}")
    ks, st = ints(pool_size, nd, op, "pool_size"), ints(strides, nd, op, "strides")
    dl = ints(dilation, nd, op, "dilation")
    head, tail = padding(padding_, nd, op)
    tail = list(tail)
    out, extra = [], []
    for i, ax in enumerate(axes):
        size = static(data.shape[ax], op, "data")
        span = (ks[i] - 1) * dl[i] + 1
        o = (size + head[i] + tail[i] - span + (st[i] - 1 if ceil_mode else 0)) // st[i] + 1
        if ceil_mode and (o - 1) * st[i] >= size + head[i]:
            o -= 1  # as TVM: the last window must start inside the input or its before-padding
        if o < 1:
            raise OpError(op, "pool_size", f"the window {ks[i]} (dilation {dl[i]}) exceeds the padded input {size}")
        extra.append(st[i] - 1 if ceil_mode else 0)
        out.append(o)
    return axes, ks, st, dl, head, tail, extra, out


def pool(b: Builder, data: Buffer, *, op: str, nd: int, kind: str, pool_size=1, strides=1, dilation=1,
         padding_=0, ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None) -> Buffer:
    """Max (``kind="max"``) or average pooling over the D/H/W axes of ``layout``."""
    axes, ks, st, dl, head, tail, extra, out = _window_setup(
        data, op, nd, pool_size, strides, dilation, padding_, ceil_mode, layout, out_layout)
    before = [0] * data.ndim
    after = [0] * data.ndim
    for i, ax in enumerate(axes):
        before[ax], after[ax] = head[i], tail[i] + extra[i]
    pad_value = min_value(data.dtype) if kind == "max" else const(0.0, data.dtype)
    names = [f"ax{d}" for d in range(data.ndim)]
    src = data
    if any(before) or any(after):
        src = pad(b, data, before, after, pad_value, per_side=True, names=names)
    rv = [b.reduce_axis(k, f"rv{i}") for i, k in enumerate(ks)]
    out_shape = list(data.shape)
    for i, ax in enumerate(axes):
        out_shape[ax] = out[i]

    def body(*o):
        idx = list(o)
        for i, ax in enumerate(axes):
            idx[ax] = window(o[ax], st[i], rv[i].var, dl[i])
        return (max_ if kind == "max" else sum_)(src[tuple(idx)], rv)

    if kind == "max":
        return b.compute("pool_max", out_shape, body, names=names,
                         annotations={"schedule_rule": "meta_schedule.pool_max"})
    total = b.compute("pool_sum", out_shape, body, names=names)

    def average(*o):
        counts = [_count(o[ax], data.shape[ax], i, ks, st, dl, head, tail, count_include_pad)
                  for i, ax in enumerate(axes)]
        num = counts[0]
        for c in counts[1:]:
            num = num * c
        if not count_include_pad:
            num = Max(num, index(1))
        return total[o] / Cast(data.dtype, num)

    return b.compute("pool_avg", out_shape, average, names=names,
                     annotations={"schedule_rule": "meta_schedule.pool_avg"})


def _count(o, size, i, ks, st, dl, head, tail, include_pad) -> PrimExpr:
    """Number of window positions averaged along one axis (TVM's formula)."""
    start = sub(mul(o, st[i]), head[i])
    end = add(start, (ks[i] - 1) * dl[i])
    if include_pad:
        end = Min(end, index(static(size, "pool", "data") + tail[i] - 1))
        low = start
    else:
        end = Min(end, sub(size, 1))
        # the first tap inside the data: on the dilation grid from ``start`` (TVM's formula)
        low = Max(start, index(0)) if dl[i] == 1 else \
            add(start, mul(Max(Div(sub(index(dl[i] - 1), start), index(dl[i])), index(0)), dl[i]))
    span = sub(end, low)
    return add(span if dl[i] == 1 else Div(span, index(dl[i])), 1)


def _adaptive_axis(size: int, osize: int):
    """(whether every window has ``size // osize`` rows, the largest window)."""
    even = size % osize == 0
    return even, max(-(-(j + 1) * size // osize) - j * size // osize for j in range(osize))


def adaptive_avg_pool(b: Builder, data: Buffer, *, op: str, nd: int, output_size=None, layout="NCHW",
                      out_layout=None) -> Buffer:
    """Adaptive average pooling over the D/H/W axes of ``layout``: output cell ``o`` of an axis
    averages rows ``[o*S//O, ceil((o+1)*S/O))``. An axis whose windows are all equal reads
    ``o*k + r``; an uneven one reduces over its largest window with the rows past its own
    masked (TVM loops over each window's own extent: the same sum, in the same order). The
    divisor is the product of the window extents, in the data type (TVM's form)."""
    if out_layout not in (None, "", layout):
        raise OpError(op, "out_layout", f"must equal layout {layout!r}, got {out_layout!r}")
    axes = _spatial_axes(layout, nd, op)
    if data.ndim != len(parse_layout(layout, op)):
        raise OpError(op, "data", f"rank {data.ndim} does not match layout {layout!r}")
    sizes = [static(data.shape[ax], op, "data") for ax in axes]
    osize = sizes if output_size is None else ints(output_size, nd, op, "output_size")
    if any(o < 1 for o in osize):
        raise OpError(op, "output_size", f"must be positive, got {output_size!r}")
    shapes = [_adaptive_axis(s, o) for s, o in zip(sizes, osize)]
    rv = [b.reduce_axis(k, f"rv{i}") for i, (_, k) in enumerate(shapes)]
    names = [f"ax{d}" for d in range(data.ndim)]
    out_shape = list(data.shape)
    for i, ax in enumerate(axes):
        out_shape[ax] = osize[i]

    def start(o, i):
        return mul(o, sizes[i] // osize[i]) if shapes[i][0] else (o * index(sizes[i])) // index(osize[i])

    def extent(o, i):
        return ((o + 1) * index(sizes[i]) + index(osize[i] - 1)) // index(osize[i]) - start(o, i)

    def body(*o):
        idx = list(o)
        for i, ax in enumerate(axes):
            idx[ax] = add(start(o[ax], i), rv[i].var)
        masks = [LT(rv[i].var, extent(o[ax], i)) for i, ax in enumerate(axes) if not shapes[i][0]]
        load = data[tuple(idx)]
        return sum_(if_then_else(logical_and(*masks), load, const(0.0, data.dtype)) if masks else load, rv)

    total = b.compute("adaptive_pool_sum", out_shape, body, names=names)

    def average(*o):
        even = 1
        for i, (is_even, k) in enumerate(shapes):
            even *= k if is_even else 1
        num = None if even == 1 and not all(s[0] for s in shapes) else const(float(even), data.dtype)
        for i, ax in enumerate(axes):
            if not shapes[i][0]:
                factor = Cast(data.dtype, extent(o[ax], i))
                num = factor if num is None else num * factor
        return total[o] / num

    return b.compute("adaptive_pool_avg", out_shape, average, names=names,
                     annotations={"schedule_rule": "meta_schedule.adaptive_pool_avg"})
