"""The lowerings of ``grad.max_pool2d_backward``, ``grad.avg_pool2d_backward``,
``grad.take_backward``, ``grad.nll_loss_backward``, ``vision.multibox_transform_loc`` and
``vision.get_valid_counts``: run in the interpreter against numpy references, and lowered
with random attributes then read back by :func:`opinfo.analyze` (hypothesis round trips).

What opinfo cannot tell from the loops is tested as such: a max-pool gradient names
``ceil_mode`` by convention (``conventions=True``); an average-pool gradient never shows its
after-padding, so it is named only when one after-padding fits the output extent; an
unbatched ``nll_loss_backward`` with "sum" and "none" is one function.
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import opinfo
import tir.topi
from tir.expr import BufferLoad, as_int, if_then_else, logical_and
from tir.functor import transform
from tir.interp import interpret
from tir.interp_data import np_dtype

SETTINGS = settings(max_examples=10, deadline=None)


def _run(func, inputs) -> list:
    """The output arrays of ``func`` run on ``inputs`` (outputs start as zeros)."""
    outs = [np.zeros([as_int(e) for e in b.shape], np_dtype(b.dtype)) for b in func.buffers[len(inputs):]]
    args = [np.array(a, copy=True) for a in inputs] + outs
    with np.errstate(all="ignore"):
        interpret(func, *args)
    return args[len(inputs):]


def _guarded(func):
    """``func`` with every load reading 0 out of bounds: TVM's max-pool gradient loads past
    its buffers where its guard is false (the values are discarded)."""
    def post(n):
        if not isinstance(n, BufferLoad):
            return None
        conds = []
        for i, e in zip(n.indices, n.buffer.shape):
            conds += [0 <= i, i < e]
        return if_then_else(logical_and(*conds), n, 0) if conds else None

    return attrs.evolve(func, body=transform(func.body, post))


def _plain(attrs: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dict(attrs).items()}


def _named(func, conventions=None):
    ops = opinfo.analyze(func, conventions=conventions).ops
    return (ops[0].name, _plain(ops[0].attrs)) if len(ops) == 1 else None


# ---------------------------------------------------------------- pool gradients
def pool_grad_ref(kind, grad, data, k, s, before, include_pad, layout):
    """The input gradient of 2-d max/avg pooling (windows of ``data`` padded by ``before``)."""
    axes = (2, 3) if layout == "NCHW" else (1, 2)
    g, x = np.moveaxis(grad, axes, (-2, -1)), np.moveaxis(data, axes, (-2, -1))
    out = np.zeros_like(x)
    height, width = x.shape[-2:]
    for oh in range(g.shape[-2]):
        for ow in range(g.shape[-1]):
            h0, w0 = oh * s[0] - before[0], ow * s[1] - before[1]
            cells = [(h, w) for h in range(h0, h0 + k[0]) for w in range(w0, w0 + k[1])]
            if kind == "avg":
                div = k[0] * k[1] if include_pad else max(
                    (min(h0 + k[0], height) - max(h0, 0)) * (min(w0 + k[1], width) - max(w0, 0)), 1)
                for h, w in cells:
                    if 0 <= h < height and 0 <= w < width:
                        out[..., h, w] += g[..., oh, ow] / np.float32(div)
                continue
            low = np.finfo(x.dtype).min
            vals = np.stack([x[..., h, w] if 0 <= h < height and 0 <= w < width else np.full(x.shape[:-2], low)
                             for h, w in cells], -1)
            first = np.argmax(vals, -1)  # the first maximum: TVM's ties go to the smaller flat index
            for c, (h, w) in enumerate(cells):
                if 0 <= h < height and 0 <= w < width:
                    out[..., h, w] += np.where(first == c, g[..., oh, ow], 0)
    return np.moveaxis(out, (-2, -1), axes)


def _pool_shapes(layout, size, k, s, before, after, ceil_mode=False):
    after = [a + (st_ - 1 if ceil_mode else 0) for a, st_ in zip(after, s)]
    out = [(n - kk + lo + hi) // st_ + 1 for n, kk, lo, hi, st_ in zip(size, k, before, after, s)]
    data = (1, 2) + tuple(size) if layout == "NCHW" else (1,) + tuple(size) + (2,)
    grad = (1, 2) + tuple(out) if layout == "NCHW" else (1,) + tuple(out) + (2,)
    return grad, data, out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("layout,k,s,pad,ceil,include", [
    ("NCHW", (3, 2), (2, 1), (0, 1, 0, 1), False, False),
    ("NHWC", (2, 2), (2, 2), (1, 0, 1, 0), True, False),
    ("NCHW", (3, 3), (1, 2), (1, 1, 2, 0), False, True),
    ("NHWC", (1, 3), (2, 2), (0, 1, 0, 2), True, True),
])
def test_pool_grad_numeric(kind, layout, k, s, pad, ceil, include):
    grad_shape, data_shape, _ = _pool_shapes(layout, (6, 5), k, s, pad[:2], pad[2:], ceil)
    func = tir.topi.lower(f"grad.{kind}_pool2d_backward", [(grad_shape, "float32"), (data_shape, "float32")],
                          pool_size=list(k), strides=list(s), padding=list(pad), ceil_mode=ceil,
                          count_include_pad=include, layout=layout)
    rng = np.random.default_rng(1)
    for data in (rng.standard_normal(data_shape), rng.integers(0, 3, data_shape)):  # integers: ties
        grad = rng.standard_normal(grad_shape).astype("float32")
        data = data.astype("float32")
        got, = _run(_guarded(func) if kind == "max" else func, [grad, data])
        want = pool_grad_ref(kind, grad, data, k, s, pad[:2], include, layout)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_pool_grad_rejects_bad_attributes():
    inputs = [((1, 2, 3, 3), "float32"), ((1, 2, 6, 6), "float32")]
    with pytest.raises(tir.topi.OpError, match="dilation"):
        tir.topi.lower("grad.max_pool2d_backward", inputs, pool_size=[2, 2], strides=[2, 2], dilation=[2, 2])
    with pytest.raises(tir.topi.OpError, match="output_grad"):
        tir.topi.lower("grad.avg_pool2d_backward", inputs, pool_size=[3, 3], strides=[1, 1])


_POOL = dict(layout=st.sampled_from(["NCHW", "NHWC"]), k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
             s=st.tuples(st.integers(1, 2), st.integers(1, 2)), size=st.tuples(st.integers(3, 6), st.integers(3, 6)),
             pads=st.tuples(*[st.integers(0, 2)] * 4))


@SETTINGS
@given(**_POOL)
def test_max_pool_grad_round_trip(layout, k, s, size, pads):
    before, after = list(pads[:2]), list(pads[2:])
    assume(all(b < kk and a < kk for b, a, kk in zip(before, after, k)))
    grad_shape, data_shape, _ = _pool_shapes(layout, size, k, s, before, after)
    attrs = dict(pool_size=list(k), strides=list(s), dilation=[1, 1], padding=before + after, ceil_mode=False,
                 count_include_pad=False, layout=layout, out_layout=layout)
    func = tir.topi.lower("grad.max_pool2d_backward", [(grad_shape, "float32"), (data_shape, "float32")], **attrs)
    # ceil_mode (and how much after-padding it stands for) is mostly open in the loops: by convention
    assert _named(func, conventions=True) == ("grad.max_pool2d_backward", attrs)


@SETTINGS
@given(include=st.booleans(), **_POOL)
def test_avg_pool_grad_round_trip(include, layout, k, s, size, pads):
    before, after = list(pads[:2]), list(pads[2:])
    assume(all(b < kk and a < kk for b, a, kk in zip(before, after, k)))
    grad_shape, data_shape, out = _pool_shapes(layout, size, k, s, before, after)
    attrs = dict(pool_size=list(k), strides=list(s), dilation=[1, 1], padding=before + after, ceil_mode=False,
                 count_include_pad=include, layout=layout, out_layout=layout)
    func = tir.topi.lower("grad.avg_pool2d_backward", [(grad_shape, "float32"), (data_shape, "float32")], **attrs)
    fits = [[a for a in range(kk) if (n - kk + b + a) // ss + 1 == o]
            for n, kk, b, ss, o in zip(size, k, before, s, out)]
    assume(k != (1, 1))  # a window of one element: both count_include_pad divide by 1
    partial = any(b > 0 or (o - 1) * ss - b + kk > n for n, kk, b, ss, o in zip(size, k, before, s, out))
    named = _named(func, conventions=True)
    if any(len(f) > 1 for f in fits):  # several after-paddings give this output: opinfo abstains
        assert named is None
    elif partial:  # opinfo abstains where a tiny axis allows too many (stride, padding) readings
        assert named in (None, ("grad.avg_pool2d_backward", attrs))
    else:  # every window lies inside the data: both count_include_pad compute this
        assert named in (None, ("grad.avg_pool2d_backward", {**attrs, "count_include_pad": False}),
                         ("grad.avg_pool2d_backward", {**attrs, "count_include_pad": True}))


@pytest.mark.parametrize("layout,size,k,s,pad,include", [
    ("NCHW", (8, 8), (3, 2), (2, 1), (0, 1, 0, 1), True),  # TVM 0.27 examples opinfo names
    ("NHWC", (10, 4), (3, 1), (2, 1), (0, 0, 0, 0), True),
    ("NCHW", (8, 6), (3, 1), (1, 2), (1, 0, 1, 0), False),
])
def test_avg_pool_grad_named(layout, size, k, s, pad, include):
    grad_shape, data_shape, _ = _pool_shapes(layout, size, k, s, pad[:2], pad[2:])
    attrs = dict(pool_size=list(k), strides=list(s), dilation=[1, 1], padding=list(pad), ceil_mode=False,
                 count_include_pad=include, layout=layout, out_layout=layout)
    func = tir.topi.lower("grad.avg_pool2d_backward", [(grad_shape, "float32"), (data_shape, "float32")], **attrs)
    assert _named(func, conventions=True) == ("grad.avg_pool2d_backward", attrs)


# ---------------------------------------------------------------- take_backward
def take_backward_ref(g, idx, shape, axis):
    out = np.zeros(shape, g.dtype)
    if axis is None:
        np.add.at(out.reshape(-1), idx, g)
    else:
        np.add.at(np.moveaxis(out, axis, 0), idx, np.moveaxis(g, axis, 0))
    return out


@SETTINGS
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=3), n=st.integers(2, 5), data=st.data())
def test_take_backward(shape, n, data):
    axis = data.draw(st.sampled_from([None] + list(range(len(shape)))))
    bound = int(np.prod(shape)) if axis is None else shape[axis]
    grad_shape = [n] if axis is None else shape[:axis] + [n] + shape[axis + 1:]
    func = tir.topi.lower("grad.take_backward", [(grad_shape, "float32"), (shape, "float32"), ((n,), "int64")],
                          axis=axis, mode="")
    rng = np.random.default_rng(n)
    g = rng.standard_normal(grad_shape).astype("float32")
    idx = rng.integers(0, bound, n)  # repeats accumulate
    got, = _run(func, [g, np.zeros(shape, "float32"), idx])
    np.testing.assert_allclose(got, take_backward_ref(g, idx, shape, axis), rtol=1e-5, atol=1e-6)
    assert _named(func) == ("grad.take_backward", {"axis": axis, "mode": ""})


# ---------------------------------------------------------------- nll_loss_backward
def nll_backward_ref(g, t, w, reduction, ignore_index, pred_shape):
    """The recognizer's reference (opinfo.recognize.grad_ops), in this file's terms."""
    from opinfo.recognize.grad_ops import nll_backward_reference

    classes = pred_shape[0] if len(pred_shape) == 1 else pred_shape[1]
    ignore = ignore_index if 0 <= ignore_index < classes else None
    return nll_backward_reference(g, t, w, reduction, ignore, classes, pred_shape)


@SETTINGS
@given(pred_shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), reduction=st.sampled_from(["mean", "sum", "none"]),
       weighted=st.booleans(), data=st.data())
def test_nll_loss_backward(pred_shape, reduction, weighted, data):
    classes = pred_shape[1] if len(pred_shape) > 1 else pred_shape[0]
    ignore = data.draw(st.sampled_from([-100] + list(range(classes))))
    t_shape = pred_shape[:1] + pred_shape[2:] if len(pred_shape) > 1 else []
    g_shape = t_shape if reduction == "none" else []
    inputs = [(g_shape, "float32"), (pred_shape, "float32"), (t_shape, "int64")] + [((classes,), "float32")] * weighted
    func = tir.topi.lower("grad.nll_loss_backward", inputs, reduction=reduction, ignore_index=ignore)
    rng = np.random.default_rng(classes)
    g = rng.uniform(0.5, 1.5, g_shape).astype("float32")
    t = rng.integers(0, classes, t_shape)
    w = rng.uniform(0.5, 1.5, classes).astype("float32") if weighted else np.ones(classes, "float32")
    args = [g, np.zeros(pred_shape, "float32"), t] + [w] * weighted
    got, = _run(func, args)
    np.testing.assert_allclose(got, nll_backward_ref(g, t, w, reduction, ignore, pred_shape), rtol=1e-5, equal_nan=True)
    if classes < 2 or not t_shape and reduction != "mean" or reduction != "none" and not weighted and t.size == 1:
        return  # one function for several answers: unbatched "sum" and "none"; "sum" and "mean" of one unit weight
    named, want = _named(func, conventions=True), ("grad.nll_loss_backward", {"reduction": reduction, "ignore_index": ignore})
    if weighted or ignore < 0:
        assert named == want
    else:  # opinfo abstains on some unweighted functions with an ignored class (batch 2, 4 classes)
        assert named in (None, want)


def test_nll_loss_backward_rejects_bad_shapes():
    with pytest.raises(tir.topi.OpError, match="output_grad"):
        tir.topi.lower("grad.nll_loss_backward", [((3,), "float32"), ((3, 4), "float32"), ((3,), "int64")],
                       reduction="sum")
    with pytest.raises(tir.topi.OpError, match="reduction"):
        tir.topi.lower("grad.nll_loss_backward", [((), "float32"), ((3, 4), "float32"), ((3,), "int64")],
                       reduction="max")


# ---------------------------------------------------------------- vision.multibox_transform_loc
def multibox_ref(cls, loc, anchor, clip, threshold, variances, keep_background, apply_softmax):
    f = np.float32
    vx, vy, vw, vh = (f(v) for v in variances)
    enc = loc.reshape(cls.shape[0], anchor.shape[1], 4)
    left, top, right, bottom = (anchor[0, :, i] for i in range(4))
    yc = enc[..., 1] * vy * (bottom - top) + (top + bottom) * f(0.5)
    xc = enc[..., 0] * vx * (right - left) + (left + right) * f(0.5)
    hh = f(0.5) * np.exp(enc[..., 3] * vh) * (bottom - top)
    hw = f(0.5) * np.exp(enc[..., 2] * vw) * (right - left)
    boxes = np.stack([yc - hh, xc - hw, yc + hh, xc + hw], -1)
    boxes = np.clip(boxes, 0, 1) if clip else boxes
    s = cls
    if apply_softmax:
        e = np.exp(cls - cls.max(1, keepdims=True))
        s = e / e.sum(1, keepdims=True)
    scores = s * (s >= f(threshold))
    if not keep_background:
        scores[:, 0] = 0
    return boxes.astype(f), scores.astype(f)


@SETTINGS
@given(clip=st.booleans(), threshold=st.sampled_from([0.0, 0.25, 0.4, -0.5]),
       variances=st.sampled_from([[0.1, 0.1, 0.2, 0.2], [1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 2.0, 0.25]]),
       keep=st.booleans(), soft=st.booleans(), b=st.integers(1, 2), c=st.integers(2, 3), n=st.integers(3, 5))
def test_multibox_transform_loc(clip, threshold, variances, keep, soft, b, c, n):
    attrs = dict(clip=clip, threshold=threshold, variances=variances, keep_background=keep, apply_softmax=soft)
    func = tir.topi.lower("vision.multibox_transform_loc",
                          [((b, c, n), "float32"), ((b, 4 * n), "float32"), ((1, n, 4), "float32")], **attrs)
    rng = np.random.default_rng(n)
    cls = rng.uniform(-2, 2, (b, c, n)).astype("float32")
    loc = rng.uniform(-1.5, 1.5, (b, 4 * n)).astype("float32")
    lo = rng.uniform(-0.5, 1, (1, n, 2))
    anchor = np.concatenate([lo, lo + rng.uniform(0.1, 0.8, (1, n, 2))], -1).astype("float32")
    got = _run(func, [cls, loc, anchor])
    for g, w in zip(got, multibox_ref(cls, loc, anchor, **attrs)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert _named(func) == ("vision.multibox_transform_loc", attrs)


# ---------------------------------------------------------------- vision.get_valid_counts
def valid_counts_ref(data, score_threshold, id_index, score_index):
    count = np.zeros(data.shape[0], np.int32)
    out = np.full(data.shape, -1, data.dtype)
    idx = np.full(data.shape[:2], -1, np.int32)
    for i in range(data.shape[0]):
        keep = data[i, :, score_index] > np.float32(score_threshold)
        if id_index >= 0:
            keep &= data[i, :, id_index] >= 0
        rows = np.flatnonzero(keep)
        count[i], out[i, :rows.size], idx[i, :rows.size] = rows.size, data[i, rows], rows
    return count, out, idx


@SETTINGS
@given(threshold=st.sampled_from([0.0, 0.3, 0.5]), columns=st.permutations(range(4)), b=st.integers(1, 2),
       n=st.integers(1, 5))
def test_get_valid_counts(threshold, columns, b, n):
    id_index, score_index = columns[:2]
    attrs = dict(score_threshold=threshold, id_index=id_index, score_index=score_index)
    func = tir.topi.lower("vision.get_valid_counts", [((b, n, 4), "float32")], **attrs)
    data = np.random.default_rng(n).uniform(-1, 1, (b, n, 4)).astype("float32")
    for got, want in zip(_run(func, [data]), valid_counts_ref(data, **attrs)):
        np.testing.assert_array_equal(got, want)
    if b * n > 1:  # one box cannot tell a threshold of 0 from the class test on it
        assert _named(func) == ("vision.get_valid_counts", attrs)


def test_get_valid_counts_without_class_test():
    func = tir.topi.lower("vision.get_valid_counts", [((2, 5, 6), "float32")], score_threshold=0.2, id_index=-1)
    data = np.random.default_rng(0).uniform(-1, 1, (2, 5, 6)).astype("float32")
    for got, want in zip(_run(func, [data]), valid_counts_ref(data, 0.2, -1, 1)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(tir.topi.OpError, match="score_index"):
        tir.topi.lower("vision.get_valid_counts", [((2, 5, 6), "float32")], score_index=6)
