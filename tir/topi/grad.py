"""Gradient ops (``grad.max_pool2d_backward``, ``grad.avg_pool2d_backward``,
``grad.take_backward``, ``grad.nll_loss_backward``) as TVM 0.27's legalization writes them.

The pool gradients are ``topi.nn.pool_grad`` (dilation 1 only): input element ``i`` sums,
over windows ``(wh, ww)`` of extent ``ceil(k / s)``, the output gradient at
``o = (i + before) // s - w`` (a truncating ``Div``) where ``o`` covers ``i``. Max pooling
adds only where ``maxpool_grad_argmax[o]`` (the first maximum of the window, as a flat
index into the data padded with the lowest value) is ``i``'s own flat index; it bounds ``o``
from below only, so its loads may run past the buffers where the guard is false (TVM reads
undefined values there and discards them). Average pooling divides by ``k_h * k_w``
(``count_include_pad``) or by the window clipped to the data.
"""
from __future__ import annotations

from .. import dtype as dt
from ..buffer import Buffer
from ..builder import Builder, index, sum_
from ..expr import (EQ, GT, LE, LT, And, Cast, Div, Max, Min, Or, Select, Var, as_int, cast, const,
                    if_then_else, logical_and, min_value)
from ..stmt import BufferStore, LetStmt, seq
from .common import OpError, add, differ, dims, ints, mul, pad, padding, static, sub, window
from .gather import _extern, _flat_load, _loop, _prod, _unravel
from .transform import _ax
from .layouts import parse_layout
from .pool import _spatial_axes

OPS: dict = {}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""



# ---------------------------------------------------------------- pool gradients
def _pool_window(op, output_grad: Buffer, data: Buffer, pool_size, strides, padding_, dilation, ceil_mode,
                 layout, out_layout) -> dict:
    """The pooled axes, window, strides, paddings (ceil_mode grows the after-padding by
    ``s - 1``, as topi does) and output extents; the output gradient must have that shape."""
    if out_layout not in (None, "", layout):
        raise OpError(op, "out_layout", f"must equal layout {layout!r}, got {out_layout!r}")
    axes = _spatial_axes(layout, 2, op)
    if data.ndim != len(parse_layout(layout, op)) or output_grad.ndim != data.ndim:
        raise OpError(op, "data", f"rank {data.ndim} (output_grad {output_grad.ndim}) does not match {layout!r}")
    if ints(dilation, 2, op, "dilation") != [1, 1]:
        raise OpError(op, "dilation", "TVM's pool_grad lowers dilation 1 only")
    ks, st = ints(pool_size, 2, op, "pool_size"), ints(strides, 2, op, "strides")
    before, after = padding(padding_, 2, op)
    if min(ks) < 1 or min(st) < 1:
        raise OpError(op, "pool_size", f"window {ks} and strides {st} must be positive")
    after = [a + (s - 1 if ceil_mode else 0) for a, s in zip(after, st)]
    sizes = [static(data.shape[a], op, "data") for a in axes]
    outs = [(n - k + lo + hi) // s + 1 for n, k, lo, hi, s in zip(sizes, ks, before, after, st)]
    if min(outs) < 1 or any(n + lo + hi < k for n, k, lo, hi in zip(sizes, ks, before, after)):
        raise OpError(op, "pool_size", f"the window {ks} exceeds the padded input {sizes}")
    out_shape = list(data.shape)
    for a, o in zip(axes, outs):
        out_shape[a] = index(o)
    for d, (got, want) in enumerate(zip(output_grad.shape, out_shape)):
        g, w = static(got, op, "output_grad") if d in axes else got, want
        if differ(g, w):
            raise OpError(op, "output_grad", f"shape {dims(output_grad.shape)} must be the pooled {dims(out_shape)}")
    return dict(axes=axes, ks=ks, st=st, before=before, after=after, sizes=sizes, outs=outs, out_shape=out_shape)


def _known(e) -> "int | None":
    """The int value of a static extent, None for a symbolic one."""
    return e if isinstance(e, int) else as_int(e)


def _tdiv(a, s: int):
    """``a / s`` on integers as TVM prints it (``T.Div``, truncating; ``a`` when ``s`` is 1)."""
    return a if s == 1 else Div(a, index(s))


def _lowest_window(p, k: int, s: int):
    """The first window covering padded position ``p``: ``p < k ? 0 : (p - k) / s + 1``."""
    return Select(LT(p, index(k)), index(0), add(_tdiv(sub(p, k), s), 1))


def _covering(w: dict, i, wh, ww):
    """(output index, per pooled axis (padded position, window index)) for input index ``i``."""
    o, per_axis = list(i), []
    for a, lo, s, r in zip(w["axes"], w["before"], w["st"], (wh, ww)):
        p = add(i[a], lo)
        o[a] = sub(_tdiv(p, s), r.var)
        per_axis.append((p, o[a]))
    return tuple(o), per_axis


def _window_axes(b: Builder, w: dict) -> tuple:
    return tuple(b.reduce_axis((k + s - 1) // s, name) for k, s, name in zip(w["ks"], w["st"], ("wh", "ww")))


def _padded_shape(data: Buffer, w: dict) -> list:
    shape = list(data.shape)
    for a, lo, hi in zip(w["axes"], w["before"], w["after"]):
        shape[a] = add(shape[a], lo + hi)
    return shape


def _ravel_terms(terms, shape) -> "object":
    """``sum(v * c)`` over ``(dimension, v, factor)`` terms, ``c`` the row-major stride of the
    dimension in ``shape`` times ``factor`` (TVM's expanded ``RavelIndex``)."""
    flat = None
    for d, v, factor in terms:
        term = mul(v, mul(_prod(shape[d + 1:]), factor))
        flat = term if flat is None else add(flat, term)
    return flat


def _argmax(b: Builder, src: Buffer, w: dict, padded: list) -> Buffer:
    """``maxpool_grad_argmax``: the (flat index, value) of each window's first maximum,
    TVM's two-buffer argmax reduction over ``(dh, dw)`` (ties to the smaller index)."""
    names = _ax(src.ndim)
    idx_buf = b.alloc("maxpool_grad_argmax_v0", w["out_shape"], dt.int64)
    val_buf = b.alloc("maxpool_grad_argmax_v1", w["out_shape"], src.dtype)
    ivars = [Var(f"v_{n}", dt.int64) for n in names]
    dh, dw = b.reduce_axis(w["ks"][0], "dh"), b.reduce_axis(w["ks"][1], "dw")
    red = dict(zip(w["axes"], (dh, dw)))
    stride = dict(zip(w["axes"], w["st"]))

    def make_body():
        o = tuple(ivars)
        at = tuple(window(v, stride[d], red[d].var, 1) if d in red else v for d, v in enumerate(o))
        terms = []
        for d, v in enumerate(o):
            terms.append((d, v, stride.get(d, 1)))
            if d in red:
                terms.append((d, red[d].var, 1))
        pos = _ravel_terms(terms, padded)
        cur_i, cur_v, val = idx_buf[o], val_buf[o], src[at]
        new_i, new_v = Var("v_maxpool_grad_argmax_v0", dt.int64), Var("v_maxpool_grad_argmax_v1", src.dtype)
        keep = Or(GT(cur_v, val), And(EQ(cur_v, val), LT(cur_i, pos)))
        body = LetStmt(new_i, Select(keep, cur_i, pos), LetStmt(new_v, Select(GT(cur_v, val), cur_v, val), seq(
            BufferStore(idx_buf, new_i, o), BufferStore(val_buf, new_v, o))))
        init = seq(BufferStore(idx_buf, const(-1, dt.int64), o), BufferStore(val_buf, min_value(src.dtype), o))
        return body, init, (idx_buf, val_buf)

    b.emit_block(b.unique("maxpool_grad_argmax"), list(zip(names, ivars, w["out_shape"])), [dh, dw], make_body)
    return idx_buf


def max_pool2d_backward(b: Builder, output_grad: Buffer, data: Buffer, *, pool_size=1, strides=1, padding=0,
                        dilation=1, ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None):
    """``topi.nn.pool_grad(pool_type="max")``: ``pad_temp`` (when padded), the window
    argmax, then the gradient routed back to each window's first maximum."""
    op = "grad.max_pool2d_backward"
    w = _pool_window(op, output_grad, data, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)
    names = _ax(data.ndim)
    before, after = [0] * data.ndim, [0] * data.ndim
    for a, lo, hi in zip(w["axes"], w["before"], w["after"]):
        before[a], after[a] = lo, hi
    src = data
    if any(before) or any(after):
        src = pad(b, data, before, after, min_value(data.dtype), per_side=True, names=names)
    padded = _padded_shape(data, w)
    argmax = _argmax(b, src, w, padded)
    wh, ww = _window_axes(b, w)
    shifts = dict(zip(w["axes"], w["before"]))

    def body(*i):
        o, per_axis = _covering(w, i, wh, ww)
        own = _ravel_terms([(d, v, 1) for d, v in enumerate(i)] + [(d, index(lo), 1) for d, lo in shifts.items()
                                                                   if lo], padded)
        conds = [LE(_lowest_window(p, k, s), oa) for (p, oa), k, s in zip(per_axis, w["ks"], w["st"])]
        hit = logical_and(*conds, EQ(argmax[o], own))
        return sum_(if_then_else(hit, output_grad[o], const(0.0, data.dtype)), [wh, ww])

    return b.compute("T_pool_grad", data.shape, body, names=names)


def _divisor(w: dict, per_axis, dtype, count_include_pad: bool):
    """The number of elements the window averaged: ``k_h * k_w`` or the window clipped to the data."""
    if count_include_pad:
        count = w["ks"][0] * w["ks"][1]
        return None if count == 1 else const(float(count), dtype)
    spans = []
    for (_, o), k, s, lo, n in zip(per_axis, w["ks"], w["st"], w["before"], w["sizes"]):
        start = sub(mul(o, s), lo)
        spans.append(sub(Min(add(start, k), index(n)), Max(start, index(0))))
    return Cast(dtype, Max(spans[0] * spans[1], index(1)))


def avg_pool2d_backward(b: Builder, output_grad: Buffer, data: Buffer, *, pool_size=1, strides=1, padding=0,
                        dilation=1, ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout=None):
    """``topi.nn.pool_grad(pool_type="avg")``: one ``T_pool_grad`` block, each covering
    window's gradient divided by its element count."""
    op = "grad.avg_pool2d_backward"
    w = _pool_window(op, output_grad, data, pool_size, strides, padding, dilation, ceil_mode, layout, out_layout)
    wh, ww = _window_axes(b, w)

    def body(*i):
        o, per_axis = _covering(w, i, wh, ww)
        conds = []
        for (p, oa), k, s, n_out in zip(per_axis, w["ks"], w["st"], w["outs"]):
            conds += [LE(_lowest_window(p, k, s), oa), LT(oa, index(n_out))]
        divisor = _divisor(w, per_axis, data.dtype, count_include_pad)
        value = output_grad[o] if divisor is None else output_grad[o] / divisor
        return sum_(if_then_else(logical_and(*conds), value, const(0.0, data.dtype)), [wh, ww])

    return b.compute("T_pool_grad", data.shape, body, names=_ax(data.ndim))


OPS["grad.max_pool2d_backward"] = max_pool2d_backward
OPS["grad.avg_pool2d_backward"] = avg_pool2d_backward


# ---------------------------------------------------------------- take_backward
def take_backward(b: Builder, output_grad: Buffer, x: Buffer, indices: Buffer, *, axis=None, mode=""):
    """An ``ir_builder`` extern: ``out`` (``x``'s shape) zeroed, then ``out[.., indices[l], ..]
    += output_grad[.., l, ..]`` on flat positions (with ``axis`` None, ``out.flat[indices[l]]
    += output_grad[l]``); indices are neither wrapped nor clamped. ``mode`` is not read."""
    op = "grad.take_backward"
    if not indices.dtype.is_integer or indices.ndim != 1:
        raise OpError(op, "indices", f"must be a 1-D integer tensor, got {indices.dtype} of rank {indices.ndim}")
    if output_grad.dtype != x.dtype:
        raise OpError(op, "output_grad", f"dtype {output_grad.dtype} differs from x's {x.dtype}")
    n = indices.shape[0]
    want = [n] if axis is None else None
    if axis is not None:
        if not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
            raise OpError(op, "axis", f"axis {axis!r} is out of range for a tensor of rank {x.ndim}")
        axis %= x.ndim
        want = [n if d == axis else e for d, e in enumerate(x.shape)]
    if len(want) != output_grad.ndim or any(differ(g, e) for g, e in zip(output_grad.shape, want)):
        raise OpError(op, "output_grad", f"shape {dims(output_grad.shape)} must be {dims(want)}")
    out = b.alloc("out_buf", x.shape, x.dtype)
    zero = _loop("v", _prod(x.shape), lambda v: BufferStore(out, const(0.0, x.dtype), _unravel(v, out.shape)))

    def accumulate(at_out, at_grad):
        dst = _unravel(at_out, out.shape)
        return BufferStore(out, out[dst] + _flat_load(output_grad, at_grad), dst)

    if axis is None:
        scatter = _loop("v", n, lambda v: accumulate(cast(indices[(v,)], dt.int64), v))
    else:
        nxt = _prod(output_grad.shape[axis + 1:])
        lines = mul(_prod(output_grad.shape[:axis]), nxt)

        def per_line(fused):
            i, j = _floor_div(fused, nxt), (fused % nxt if _known(nxt) != 1 else None)

            def per_index(v):
                at = cast(indices[(v,)], dt.int64)
                dst = add(add(mul(i, mul(nxt, x.shape[axis])), mul(at, nxt)), j if j is not None else 0)
                src = add(add(mul(i, mul(nxt, n)), mul(v, nxt)), j if j is not None else 0)
                return accumulate(dst, src)

            return _loop("v_1", n, per_index)

        scatter = _loop("v", lines, per_line)
    _extern(b, "take_backward", zero, scatter)
    return out


def _floor_div(a, n):
    """``a // n`` (``a`` when ``n`` is 1)."""
    return a if _known(n) == 1 else a // index(n)


OPS["grad.take_backward"] = take_backward


# ---------------------------------------------------------------- nll_loss_backward
def _check_nll(op, output_grad, predictions, targets, weights, reduction) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise OpError(op, "reduction", f"must be one of mean, sum, none, got {reduction!r}")
    if not targets.dtype.is_integer:
        raise OpError(op, "targets", f"must be integer, got {targets.dtype}")
    if predictions.ndim < 1 or targets.ndim != max(predictions.ndim - 1, 0):
        raise OpError(op, "targets", f"needs predictions of rank targets + 1, got {predictions.ndim}, {targets.ndim}")
    t_shape = list(predictions.shape[:1]) + list(predictions.shape[2:]) if predictions.ndim > 1 else []
    if any(differ(a, c) for a, c in zip(targets.shape, t_shape)):
        raise OpError(op, "targets", f"shape {dims(targets.shape)} must be {dims(t_shape)}")
    g_shape = list(targets.shape) if reduction == "none" else []
    if output_grad.ndim != len(g_shape) or any(differ(a, c) for a, c in zip(output_grad.shape, g_shape)):
        raise OpError(op, "output_grad", f"shape {dims(output_grad.shape)} must be {dims(g_shape)} for {reduction!r}")
    classes = predictions.shape[1] if predictions.ndim > 1 else predictions.shape[0]
    if weights is not None and (weights.ndim != 1 or _known(weights.shape[0]) != _known(classes)):
        raise OpError(op, "weights", f"must be a vector over the {dims([classes])[0]} classes")
    for buf in (output_grad, weights):
        if buf is not None and buf.dtype != predictions.dtype:
            raise OpError(op, "output_grad", f"dtypes must be the predictions' {predictions.dtype}")


def nll_loss_backward(b: Builder, output_grad: Buffer, predictions: Buffer, targets: Buffer, *weights,
                      reduction="mean", ignore_index=-100):
    """``pred_grad[n, c, d..] = Select(c == t[n, d..], w'[t] * -1 * g'[n, d..], 0)``: ``w'`` the
    weights (ones without them) with class ``ignore_index`` zeroed (``weights_new``, only when
    it is >= 0), ``g'`` the output gradient, broadcast ("sum") and divided by the picked
    weights' sum ("mean"). The predictions are read for their shape only."""
    op = "grad.nll_loss_backward"
    if len(weights) > 1:
        raise OpError(op, "weights", f"at most one weights tensor, got {len(weights)}")
    w = weights[0] if weights else None
    _check_nll(op, output_grad, predictions, targets, w, reduction)
    f = predictions.dtype
    classes = predictions.shape[1] if predictions.ndim > 1 else predictions.shape[0]
    if w is None:
        w = b.compute("T_full", [classes], lambda i: const(1.0, f), names=["ax0"])
    if not isinstance(ignore_index, int):
        raise OpError(op, "ignore_index", f"must be an integer, got {ignore_index!r}")
    if ignore_index >= 0:
        w0 = w
        w = b.compute("weights_new", w.shape, lambda i: Select(EQ(i, index(ignore_index)), const(0.0, f), w0[(i,)]),
                      names=["i"])
    t_names = [f"i{d}" for d in range(targets.ndim)]
    picked = b.compute("all_weights", targets.shape, lambda *i: w[(targets[i],)], names=t_names)
    grad = output_grad
    if reduction != "none":
        grad = b.compute("T_broadcast_to", targets.shape, lambda *i: output_grad[()], names=_ax(targets.ndim))
    if reduction == "mean":
        total = picked
        if targets.ndim:
            ks = [b.reduce_axis(e, f"k{d}") for d, e in enumerate(targets.shape)]
            total = b.compute("all_weights_red", [], lambda: sum_(picked[tuple(k.var for k in ks)], ks))
        spread = grad
        grad = b.compute("T_divide", targets.shape, lambda *i: spread[i] / total[()], names=_ax(targets.ndim))

    def body(*i):
        rest = (i[0],) + i[2:] if len(i) > 1 else ()
        cls = i[1] if len(i) > 1 else i[0]
        return Select(EQ(cls, cast(targets[rest], dt.int64)), picked[rest] * const(-1.0, f) * grad[rest],
                      const(0.0, f))

    return b.compute("pred_grad", predictions.shape, body, names=[f"i{d}" for d in range(predictions.ndim)])


OPS["grad.nll_loss_backward"] = nll_loss_backward
