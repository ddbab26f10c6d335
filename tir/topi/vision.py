"""``image.grid_sample``, ``vision.roi_align``, ``vision.roi_pool``,
``vision.multibox_transform_loc`` and ``vision.get_valid_counts`` as TVM 0.27's legalization
writes them (its coordinate arithmetic, sampling grids and casts)."""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer, Range
from ..builder import Builder, access_regions, index, max_, store_regions, sum_
from ..expr import (EQ, GE, GT, LE, LT, BufferLoad, Cast, FloatImm, Max, Min, PrimExpr, Select, Var, as_int,
    const, if_then_else, logical_and, logical_or, min_value, truncdiv, truncmod)
from ..stmt import Block, BlockRealize, BufferStore, For, ForKind, IfThenElse, IterKind, IterVar, seq
from .common import TRUE, OpError, add, ints, mul, static
from .gather import _loop
from .nn_extra import _call, _f
from .softmax import softmax

OPS: dict = {}
"""Op name -> lowering function, merged into ``ops.op_table``."""


# ---------------------------------------------------------------- image.grid_sample
_CUBIC_A = -0.75


def _unnormalize(g: PrimExpr, size: int, align_corners: bool) -> PrimExpr:
    """topi's map of a grid value in [-1, 1] to a pixel coordinate."""
    one, two = _f(1.0, g.dtype), _f(2.0, g.dtype)
    if align_corners:
        return (g + one) * _f(size - 1, g.dtype) / two
    return _f(-0.5, g.dtype) + (g + one) * _f(size, g.dtype) / two


def _clip(x: PrimExpr, size: int) -> PrimExpr:
    return Min(Max(x, const(0, x.dtype)), const(size - 1, x.dtype))


def _reflect(x: PrimExpr, size: int, align_corners: bool) -> PrimExpr:
    """topi's ``_reflect_coordinates``: a float coordinate folded back into
    ``[corner, span + corner]`` (corner 0 and span ``size - 1`` with ``align_corners``, else
    -0.5 and ``size``), by whole periods of ``2 * span``."""
    span, corner = (size - 1, 0.0) if align_corners else (size, -0.5)
    fc, fspan = _f(corner, x.dtype), _f(span, x.dtype)
    dist = _call("fabs", fc - x)
    times = truncdiv(Cast(dt.int64, dist), index(span))
    extra = dist - Cast(x.dtype, times * index(span))
    folded = if_then_else(EQ(truncmod(times, index(2)), index(0)), extra + fc, fspan - extra + fc)
    return if_then_else(logical_and(LE(fc, x), LE(x, _f(span + corner, x.dtype))), x, folded)


def _pad_coordinate(x: PrimExpr, size: int, padding_mode: str, align_corners: bool) -> PrimExpr:
    if padding_mode == "reflection":
        x = _reflect(x, size, align_corners)
    return x if padding_mode == "zeros" else _clip(x, size)


def _floor_int(x: PrimExpr) -> PrimExpr:
    return Cast(dt.int64, _call("floor", x))


def _fraction(x: PrimExpr) -> PrimExpr:
    """``x - floor(x)`` as topi writes it (the floor through int32)."""
    return x - Cast(x.dtype, Cast(dt.int32, _call("floor", x)))


def _cubic_weights(t: PrimExpr) -> list:
    a = _CUBIC_A

    def near(u):
        return (_f(a + 2, t.dtype) * u - _f(a + 3, t.dtype)) * u * u + _f(1.0, t.dtype)

    def far(u):
        return ((_f(a, t.dtype) * u - _f(5 * a, t.dtype)) * u + _f(8 * a, t.dtype)) * u - _f(4 * a, t.dtype)

    one, two = _f(1.0, t.dtype), _f(2.0, t.dtype)
    return [far(t + one), near(t), near(one - t), far(two - t)]


def _weighted(values: list, weights: list) -> PrimExpr:
    out = values[0] * weights[0]
    for v, w in zip(values[1:], weights[1:]):
        out = out + v * w
    return out


def grid_sample(b: Builder, data: Buffer, grid: Buffer, *, method="bilinear", layout="NCHW",
                padding_mode="zeros", align_corners=True) -> Buffer:
    """2-D ``image.grid_sample`` (topi ``_grid_sample_2d``): ``out[n, c, h, w]`` samples
    ``data[n, c]`` at ``(grid[n, 1, h, w], grid[n, 0, h, w])`` mapped from [-1, 1]; pixels
    outside read 0."""
    op = "image.grid_sample"
    if method not in ("nearest", "bilinear", "bicubic"):
        raise OpError(op, "method", f"expected nearest, bilinear or bicubic, got {method!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise OpError(op, "padding_mode", f"expected zeros, border or reflection, got {padding_mode!r}")
    if layout != "NCHW" or data.ndim != 4:
        raise OpError(op, "layout", f"only 4-d NCHW data is lowered, got {layout!r} and rank {data.ndim}")
    if grid.ndim != 4 or as_int(grid.shape[1]) != 2:
        raise OpError(op, "grid", "must be (batch, 2, out_height, out_width)")
    height, width = static(data.shape[2], op, "data"), static(data.shape[3], op, "data")

    def pixel(n, c, y, x):
        inside = logical_and(LE(index(0), y), LE(index(0), x), LT(y, index(height)), LT(x, index(width)))
        return if_then_else(inside, data[n, c, y, x], _f(0.0, data.dtype))

    def body(n, c, h, w):
        y = _unnormalize(grid[n, index(1), h, w], height, align_corners)
        x = _unnormalize(grid[n, index(0), h, w], width, align_corners)
        if method == "bicubic":
            return _bicubic(pixel, n, c, y, x, height, width, padding_mode, align_corners)
        y = _pad_coordinate(y, height, padding_mode, align_corners)
        x = _pad_coordinate(x, width, padding_mode, align_corners)
        if method == "nearest":
            return pixel(n, c, Cast(dt.int64, _call("nearbyint", y)), Cast(dt.int64, _call("nearbyint", x)))
        y0, x0 = _floor_int(y), _floor_int(x)
        fy, fx = _fraction(y), _fraction(x)
        one = _f(1.0, y.dtype)
        return (pixel(n, c, y0, x0) * (one - fy) * (one - fx) + pixel(n, c, y0, x0 + index(1)) * (one - fy) * fx
                + pixel(n, c, y0 + index(1), x0) * fy * (one - fx)
                + pixel(n, c, y0 + index(1), x0 + index(1)) * fy * fx)

    return b.compute("compute", [data.shape[0], data.shape[1], grid.shape[2], grid.shape[3]], body,
                     names=["n", "c", "h", "w"])


def _bicubic(pixel, n, c, y, x, height, width, padding_mode, align_corners) -> PrimExpr:
    """Keys' cubic (A = -0.75) over the 4x4 pixels around ``(y, x)``: rows interpolated
    along x first; padding applies to the integer pixel positions."""
    y0, x0 = _floor_int(y), _floor_int(x)

    def position(p, size):
        if padding_mode == "zeros":
            return p
        if padding_mode == "border":
            return _clip(p, size)
        return Cast(dt.int64, _clip(_reflect(Cast(y.dtype, p), size, align_corners), size))

    cols = [position(x0 + index(k - 1), width) for k in range(4)]
    wx, wy = _cubic_weights(_fraction(x)), _cubic_weights(_fraction(y))
    rows = [_weighted([pixel(n, c, position(y0 + index(i - 1), height), col) for col in cols], wx)
            for i in range(4)]
    return _weighted(rows, wy)


OPS["image.grid_sample"] = grid_sample


# ---------------------------------------------------------------- vision.roi_align / roi_pool
def _roi_layout(op: str, data: Buffer, rois: Buffer, layout: str, layouts=("NCHW", "NHWC")) -> tuple:
    """(height, width, channel axis) of ``data`` in ``layout``, after checking the shapes."""
    if layout not in layouts:
        raise OpError(op, "layout", f"expected one of {', '.join(layouts)}, got {layout!r}")
    if data.ndim != 4 or rois.ndim != 2 or as_int(rois.shape[1]) != 5:
        raise OpError(op, "rois", "data must be 4-d and rois (num_roi, 5)")
    h_ax, w_ax, c_ax = (2, 3, 1) if layout == "NCHW" else (1, 2, 3)
    return static(data.shape[h_ax], op, "data"), static(data.shape[w_ax], op, "data"), c_ax


def _scaled(v: PrimExpr, scale: float) -> PrimExpr:
    return v if scale == 1.0 else v * _f(scale, v.dtype)


def _bilinear_clamped(read, y: PrimExpr, x: PrimExpr, height: int, width: int) -> PrimExpr:
    """roi_align's sample: 0 beyond one pixel outside, else the bilinear value at the
    position clamped into the image (topi ``bilinear_sample_nchw``: x-major corner order,
    each corner guarded)."""
    f = y.dtype
    outside = logical_or(LT(y, _f(-1.0, f)), LT(x, _f(-1.0, f)), LT(_f(height, f), y), LT(_f(width, f), x))
    y, x = Min(Max(y, _f(0.0, f)), _f(height - 1, f)), Min(Max(x, _f(0.0, f)), _f(width - 1, f))
    y0, x0 = _floor_int(y), _floor_int(x)
    wy, wx = _fraction(y), _fraction(x)
    one = _f(1.0, f)
    val = None
    for xp, wxp in ((x0, one - wx), (x0 + index(1), wx)):
        for yp, wyp in ((y0, one - wy), (y0 + index(1), wy)):
            ok = logical_and(LE(index(0), yp), LE(yp, index(height - 1)), LE(index(0), xp), LE(xp, index(width - 1)))
            term = if_then_else(ok, wxp * wyp * read(yp, xp), _f(0.0, f))
            val = term if val is None else val + term
    return if_then_else(outside, _f(0.0, f), val)


def roi_align(b: Builder, data: Buffer, rois: Buffer, *, pooled_size=(1, 1), spatial_scale=1.0, sample_ratio=-1,
              aligned=False, layout="NCHW", mode="avg") -> Buffer:
    """``vision.roi_align`` (topi): each bin of each region averages (or takes the max of) a
    grid of bilinear samples; ``sample_ratio <= 0`` takes ``ceil(bin size)`` samples a side,
    a reduction whose extent is read from the regions (TVM's two-level block)."""
    op = "vision.roi_align"
    height, width, c_ax = _roi_layout(op, data, rois, layout)
    if mode not in ("avg", "max"):
        raise OpError(op, "mode", f"expected avg or max, got {mode!r}")
    ph_n, pw_n = ints(pooled_size, 2, op, "pooled_size")
    f = rois.dtype
    nchw = layout == "NCHW"
    out_shape = [rois.shape[0]] + ([data.shape[1], ph_n, pw_n] if nchw else [ph_n, pw_n, data.shape[3]])
    names = ["i", "c", "ph", "pw"] if nchw else ["i", "ph", "pw", "c"]

    def roi(i, k):
        return rois[i, index(k)]

    def sizes(i):
        sw, sh = _scaled(roi(i, 1), spatial_scale), _scaled(roi(i, 2), spatial_scale)
        rh, rw = _scaled(roi(i, 4), spatial_scale) - sh, _scaled(roi(i, 3), spatial_scale) - sw
        if not aligned:
            rh, rw = Max(rh, _f(1.0, f)), Max(rw, _f(1.0, f))
        return sh, sw, rh / _f(ph_n, f), rw / _f(pw_n, f)

    def grid_sizes(i):
        if sample_ratio > 0:
            return index(sample_ratio), index(sample_ratio)
        _, _, bh, bw = sizes(i)
        return Cast(dt.int64, _call("ceil", bh)), Cast(dt.int64, _call("ceil", bw))

    def sample(i, c, ph, pw, rh, rw):
        sh, sw, bh, bw = sizes(i)
        gh, gw = grid_sizes(i)
        gh_f = _f(sample_ratio, f) if sample_ratio > 0 else Cast(f, Cast(dt.int32, _call("ceil", bh)))
        gw_f = _f(sample_ratio, f) if sample_ratio > 0 else Cast(f, Cast(dt.int32, _call("ceil", bw)))
        y = sh + Cast(f, ph) * bh + (Cast(f, rh) + _f(0.5, f)) * bh / gh_f
        x = sw + Cast(f, pw) * bw + (Cast(f, rw) + _f(0.5, f)) * bw / gw_f
        n = Cast(dt.int64, roi(i, 0))
        read = (lambda yp, xp: data[n, c, yp, xp]) if nchw else (lambda yp, xp: data[n, yp, xp, c])
        value = _bilinear_clamped(read, y, x, height, width)
        return value / (gh_f * gw_f) if mode == "avg" else value

    def spatial(o):
        return (o[0], o[1], o[2], o[3]) if nchw else (o[0], o[3], o[1], o[2])

    if sample_ratio > 0:
        rh, rw = b.reduce_axis(sample_ratio, "rh"), b.reduce_axis(sample_ratio, "rw")
        reducer = sum_ if mode == "avg" else max_
        return b.compute("compute", out_shape, lambda *o: reducer(sample(*spatial(o), rh.var, rw.var), [rh, rw]),
                         names=names)
    return _dynamic_reduction(b, out_shape, names, data.dtype, mode,
                              lambda o: grid_sizes(o[0]), lambda o, rh, rw: sample(*spatial(o), rh, rw))


def _dynamic_reduction(b: Builder, shape, names, dtype, mode, extents, value) -> Buffer:
    """A sum or max over two reduction axes whose extents depend on the output position
    and on data: TVM's form, an outer ``compute_l1`` block over the output and, inside it,
    loops of the run-time extents around the ``compute`` block that reduces."""
    out = b.alloc("compute", shape, dtype)
    outer = [Var(f"v_{n}", dt.int64) for n in names]
    inner = [Var(f"v_{n}_1", dt.int64) for n in names]
    rvars = [Var("v_rh", dt.int64), Var("v_rw", dt.int64)]
    loops = [Var("rh", dt.int64), Var("rw", dt.int64)]
    ext = extents(outer)
    val = value(inner, *rvars)
    acc = BufferLoad(out, tuple(inner))
    update = acc + val if mode == "avg" else Max(acc, val)
    init = const(0.0, dtype) if mode == "avg" else min_value(dtype)
    body = BufferStore(out, update, tuple(inner))
    init_stmt = BufferStore(out, init, tuple(inner))
    iters = [IterVar(v, Range(o, index(1)), IterKind.SPATIAL) for v, o in zip(inner, outer)]
    iters += [IterVar(r, Range(index(0), e), IterKind.REDUCE) for r, e in zip(rvars, ext)]
    block = Block("compute", iters, access_regions([init_stmt, body], exclude=[out]),
                  store_regions(body, init_stmt), body, init_stmt)
    stmt = BlockRealize(tuple(outer) + tuple(loops), TRUE, block)
    for var, e in reversed(list(zip(loops, ext))):
        stmt = For(var, index(0), e, ForKind.SERIAL, stmt)
    b.emit_block("compute_l1", list(zip(names, outer, shape)), (), lambda: (stmt, None, (out,)))
    return out


OPS["vision.roi_align"] = roi_align


def roi_pool(b: Builder, data: Buffer, rois: Buffer, *, pooled_size=(1, 1), spatial_scale=1.0,
             layout="NCHW") -> Buffer:
    """``vision.roi_pool`` (topi, NCHW): the max over each bin of each region, the region's
    corners rounded half away from zero (``floor(v + 0.5)``); an empty bin is 0."""
    op = "vision.roi_pool"
    height, width, _ = _roi_layout(op, data, rois, layout, ("NCHW",))
    ph_n, pw_n = ints(pooled_size, 2, op, "pooled_size")
    f = rois.dtype

    def corner(i, k):
        return Cast(dt.int64, _call("floor", _scaled(rois[i, index(k)], spatial_scale) + _f(0.5, f)))

    def bounds(i, ph, pw):
        sw, sh, ew, eh = (corner(i, k) for k in (1, 2, 3, 4))
        bin_h = Cast(f, Max(eh - sh + index(1), index(1))) / _f(ph_n, f)
        bin_w = Cast(f, Max(ew - sw + index(1), index(1))) / _f(pw_n, f)

        def edge(rounding, p, size, bin_, start):
            return Min(Max(Cast(dt.int64, _call(rounding, Cast(f, p) * bin_)) + start, index(0)), index(size))

        return (edge("floor", ph, height, bin_h, sh), edge("ceil", ph + index(1), height, bin_h, sh),
                edge("floor", pw, width, bin_w, sw), edge("ceil", pw + index(1), width, bin_w, sw))

    rh, rw = b.reduce_axis(height, "rh"), b.reduce_axis(width, "rw")
    shape = [rois.shape[0], data.shape[1], ph_n, pw_n]
    names = ["i", "c", "ph", "pw"]

    def pooled(i, c, ph, pw):
        h0, h1, w0, w1 = bounds(i, ph, pw)
        inside = logical_and(LE(h0, rh.var), LT(rh.var, h1), LE(w0, rw.var), LT(rw.var, w1))
        value = if_then_else(inside, data[Cast(dt.int64, rois[i, index(0)]), c, rh.var, rw.var],
                             FloatImm(data.dtype, float("-inf")))
        return max_(value, [rh, rw])

    best = b.compute("compute", shape, pooled, names=names)

    def emptied(i, c, ph, pw):
        h0, h1, w0, w1 = bounds(i, ph, pw)
        return if_then_else(logical_or(LE(h1, h0), LE(w1, w0)), _f(0.0, data.dtype), best[i, c, ph, pw])

    return b.compute("compute", shape, emptied, names=names)


OPS["vision.roi_pool"] = roi_pool


# ---------------------------------------------------------------- vision.multibox_transform_loc
def _decoded(loc, anchor, b, a, k: int, variances, clip: bool) -> PrimExpr:
    """Box coordinate ``k`` (ymin, xmin, ymax, xmax) of anchor ``a``: the encoding
    ``(x, y, w, h)`` scaled by the variances around the anchor's centre (TVM's order of
    operations; a variance of 1 is folded away), clamped to [0, 1] with ``clip``."""
    f = loc.dtype
    lo, hi = (1, 3) if k in (0, 2) else (0, 2)  # anchor (left, top, right, bottom): y from top/bottom
    center_var, size_var = (variances[1], variances[3]) if k in (0, 2) else (variances[0], variances[2])

    def scaled(v, s):
        return v if s == 1.0 else v * _f(s, f)

    def corner(j):
        return anchor[index(0), a, index(j)]

    span = corner(hi) - corner(lo)
    center = scaled(loc[b, a, index(lo)], center_var) * span + (corner(lo) + corner(hi)) * _f(0.5, f)
    half = _f(0.5, f) * _call("exp", scaled(loc[b, a, index(hi)], size_var)) * span
    value = center - half if k < 2 else center + half
    return Max(_f(0.0, f), Min(_f(1.0, f), value)) if clip else value


def multibox_transform_loc(b: Builder, cls_pred: Buffer, loc_pred: Buffer, anchor: Buffer, *, clip=False,
                           threshold=0.0, variances=(0.1, 0.1, 0.2, 0.2), keep_background=True,
                           apply_softmax=True) -> tuple:
    """``vision.multibox_transform_loc`` (topi): ``loc_pred`` (B, 4N) reshaped to (B, N, 4)
    and decoded against ``anchor`` (1, N, 4) into ``multibox_boxes``; the scores
    ``cls_pred`` (B, C, N) (after a softmax over C) times ``score >= threshold``, class 0
    zeroed unless ``keep_background``. Returns (boxes, scores)."""
    op = "vision.multibox_transform_loc"
    if cls_pred.ndim != 3 or loc_pred.ndim != 2 or anchor.ndim != 3 or as_int(anchor.shape[2]) != 4:
        raise OpError(op, "anchor", "needs cls_pred (B, C, N), loc_pred (B, 4N) and anchor (1, N, 4)")
    n = static(cls_pred.shape[2], op, "cls_pred")
    rows = static(loc_pred.shape[0], op, "loc_pred")
    batch = as_int(cls_pred.shape[0])
    if as_int(loc_pred.shape[1]) != 4 * n or as_int(anchor.shape[1]) != n or (batch is not None and batch != rows):
        raise OpError(op, "loc_pred", f"needs loc_pred ({batch}, {4 * n}) and anchor (1, {n}, 4)")
    if len(variances) != 4 or not all(isinstance(v, (int, float)) for v in variances):
        raise OpError(op, "variances", f"expected 4 numbers, got {variances!r}")
    variances = [float(v) for v in variances]
    f = cls_pred.dtype

    def reshaped(i, a, k):
        pos = add(mul(a, 4), k)
        first = index(0) if rows == 1 else (pos // index(4 * n) + i) % index(rows)
        return loc_pred[first, pos % index(4 * n)]

    loc = b.compute("T_reshape", [cls_pred.shape[0], n, 4], reshaped, names=["ax0", "ax1", "ax2"])

    def box(i, a, k):
        coords = [_decoded(loc, anchor, i, a, j, variances, clip) for j in range(4)]
        return Select(EQ(k, index(0)), coords[0], Select(EQ(k, index(1)), coords[1],
                                                         Select(EQ(k, index(2)), coords[2], coords[3])))

    boxes = b.compute("multibox_boxes", [cls_pred.shape[0], n, 4], box, names=["b", "a", "k"])
    scores = softmax(b, cls_pred, 1) if apply_softmax else cls_pred
    names = ["ax0", "ax1", "ax2"]
    above = b.compute("T_greater_equal", cls_pred.shape, lambda *i: LE(_f(threshold, f), scores[i]), names=names)
    mask = b.compute("compute", cls_pred.shape, lambda *i: Cast(f, above[i]), names=["i0", "i1", "i2"])
    kept = b.compute("T_multiply", cls_pred.shape, lambda *i: scores[i] * mask[i], names=names)
    if keep_background:
        return boxes, kept
    return boxes, b.compute("multibox_scores_bg", cls_pred.shape,
                            lambda i, c, a: if_then_else(EQ(c, index(0)), _f(0.0, f), kept[i, c, a]),
                            names=["b", "c", "n"])


OPS["vision.multibox_transform_loc"] = multibox_transform_loc


# ---------------------------------------------------------------- vision.get_valid_counts
def get_valid_counts(b: Builder, data: Buffer, *, score_threshold=0.0, id_index=0, score_index=1) -> tuple:
    """``vision.get_valid_counts`` (topi's ir_builder, one opaque block): per batch, boxes
    with ``score > score_threshold`` and ``id >= 0`` (no id test when ``id_index < 0``)
    copied in order to the top of ``out_tensor`` (their index to ``out_indices``), the rest
    -1. Returns (valid_count, out_tensor, out_indices)."""
    op = "vision.get_valid_counts"
    if data.ndim != 3 or not data.dtype.is_float:
        raise OpError(op, "data", f"must be a float (batch, boxes, elements) tensor, got rank {data.ndim}")
    width = static(data.shape[2], op, "data")
    if not isinstance(score_index, int) or not 0 <= score_index < width:
        raise OpError(op, "score_index", f"must index the {width} elements of a box, got {score_index!r}")
    if not isinstance(id_index, int) or id_index >= width:
        raise OpError(op, "id_index", f"must be below {width} (negative: no class test), got {id_index!r}")
    f, i32 = data.dtype, dt.int32
    count = b.alloc("valid_count", [data.shape[0]], i32)
    out = b.alloc("out_tensor", data.shape, f)
    indices = b.alloc("out_indices", data.shape[:2], i32)

    def per_batch(v):
        here = count[(v,)]

        def keep(j):
            cond = GT(data[v, j, index(score_index)], _f(score_threshold, f))
            if id_index >= 0:
                cond = logical_and(cond, GE(data[v, j, index(id_index)], _f(0.0, f)))
            return IfThenElse(cond, seq(
                _loop("v_2", width, lambda k: BufferStore(out, data[v, j, k], (v, here, k))),
                BufferStore(indices, Cast(i32, j), (v, here)),
                BufferStore(count, here + const(1, i32), (v,))))

        def fill(j):
            return IfThenElse(GE(j, Cast(dt.int64, here)), seq(
                _loop("v_2", width, lambda k: BufferStore(out, _f(-1.0, f), (v, j, k))),
                BufferStore(indices, const(-1, i32), (v, j))))

        return seq(BufferStore(count, const(0, i32), (v,)), _loop("v_1", data.shape[1], keep),
                   _loop("v_1", data.shape[1], fill))

    block = Block(b.unique("get_valid_counts"), (), (), (), _loop("v", data.shape[0], per_batch, parallel=True))
    b.stmts.append(BlockRealize((), TRUE, block))
    return count, out, indices


OPS["vision.get_valid_counts"] = get_valid_counts
