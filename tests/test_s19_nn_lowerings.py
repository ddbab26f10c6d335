"""The lowerings of tir/topi/nn_extra.py: opinfo names each one back with the attributes it
was built from (round trip), and the interpreter computes what numpy does."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
import tir.topi
from opinfo.attention import reference as attention_ref
from opinfo.grid_sample import grid_sample_ref
from opinfo.roi import roi_align_ref, roi_pool_ref
from tir.interp import interpret
from tir.topi import OpError

FEW = settings(max_examples=10, deadline=None)
RARE = settings(max_examples=3, deadline=None)
F32 = "float32"


def _run(func, *inputs, outputs=1):
    """Outputs of ``func`` on ``inputs`` (its last ``outputs`` parameters start as zeros)."""
    shapes = [tuple(int(e.value) for e in func.buffer_map[p].shape) for p in func.params[len(inputs):]]
    dtypes = [str(func.buffer_map[p].dtype) for p in func.params[len(inputs):]]
    outs = [np.zeros(s, d) for s, d in zip(shapes, dtypes)]
    interpret(func, *[np.array(a) for a in inputs], *outs)
    return outs if outputs > 1 else outs[0]


def _named(func, op: str, attrs: dict):
    (got,) = opinfo.analyze(func).ops
    assert got.name == op
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in dict(got.attrs).items()} == attrs


def _normal(rng, shape):
    return (rng.standard_normal(shape) * 3).astype(np.float32)


# ---------------------------------------------------------------- nn.prelu
@FEW
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_prelu(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    func = tir.topi.lower("nn.prelu", [(shape, F32), ((shape[axis],), F32)], axis=axis)
    _named(func, "nn.prelu", {"axis": axis})
    rng = np.random.default_rng(0)
    x, a = _normal(rng, shape), _normal(rng, (shape[axis],))
    slope = a.reshape([-1 if d == axis else 1 for d in range(len(shape))])
    np.testing.assert_allclose(_run(func, x, a), np.where(x > 0, x, x * slope), rtol=1e-6)


def test_prelu_rejects_a_wrong_slope_count():
    with pytest.raises(OpError):
        tir.topi.lower("nn.prelu", [((2, 3), F32), ((4,), F32)], axis=1)


# ---------------------------------------------------------------- adaptive average pooling
def _adaptive_ref(x, spatial, out_size):
    out = x
    for ax, o in zip(spatial, out_size):
        size = out.shape[ax]
        cells = [np.take(out, range(j * size // o, -(-(j + 1) * size // o)), axis=ax).mean(axis=ax, keepdims=True)
                 for j in range(o)]
        out = np.concatenate(cells, axis=ax)
    return out


LAYOUTS = {1: ("NCW", "NWC"), 3: ("NCDHW", "NDHWC")}


@FEW
@given(st.sampled_from([1, 3]), st.data())
def test_adaptive_avg_pool_even_round_trip(nd, data):
    """Windows of one length: opinfo names the op (uneven windows are lowered as a masked
    reduction over the longest window, which opinfo's run-based recognizer does not take)."""
    layout = data.draw(st.sampled_from(LAYOUTS[nd]))
    out_size = data.draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
    ks = data.draw(st.lists(st.integers(2, 3), min_size=nd, max_size=nd))  # a window of 1 everywhere copies
    sizes = iter([o * k for o, k in zip(out_size, ks)])
    shape = [next(sizes) if ch in "DHW" else 2 for ch in layout]
    attrs = {"output_size": out_size, "layout": layout, "out_layout": layout}
    func = tir.topi.lower(f"nn.adaptive_avg_pool{nd}d", [(shape, F32)], **attrs)
    _named(func, f"nn.adaptive_avg_pool{nd}d", attrs)


@FEW
@given(st.sampled_from([1, 3]), st.data())
def test_adaptive_avg_pool_numbers(nd, data):
    layout = data.draw(st.sampled_from(LAYOUTS[nd]))
    shape = [data.draw(st.integers(1, 7)) if ch in "DHW" else 2 for ch in layout]
    spatial = [d for d, ch in enumerate(layout) if ch in "DHW"]
    out_size = [data.draw(st.integers(1, shape[d])) for d in spatial]
    func = tir.topi.lower(f"nn.adaptive_avg_pool{nd}d", [(shape, F32)], output_size=out_size, layout=layout)
    x = _normal(np.random.default_rng(1), shape)
    np.testing.assert_allclose(_run(func, x), _adaptive_ref(x, spatial, out_size), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- nn.attention(_bias)
@FEW
@given(st.integers(1, 2), st.integers(2, 4), st.integers(2, 4), st.integers(1, 2), st.sampled_from([4, 8]),
       st.sampled_from([None, 0.5]), st.sampled_from([None, "TopLeft", "BottomRight"]), st.booleans())
def test_attention(batch, seq, seq_kv, heads, dim, scale, causal, with_bias):
    if causal is not None and seq == seq_kv:
        seq_kv += 1  # equal lengths make the two masks the same: opinfo abstains
    shapes = [(batch, seq, heads, dim), (batch, seq_kv, heads, dim), (batch, seq_kv, heads, 3)]
    shapes += [(batch, heads, seq, seq_kv)] if with_bias else []
    op = "nn.attention_bias" if with_bias else "nn.attention"
    attrs = {"scale": scale, "causal_mask": causal, "window_size": None}
    func = tir.topi.lower(op, [(s, F32) for s in shapes], **attrs)
    _named(func, op, attrs)
    rng = np.random.default_rng(2)
    ins = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = attention_ref(*ins[:3], dim ** -0.5 if scale is None else scale, causal,
                         bias=ins[3] if with_bias else None)
    np.testing.assert_allclose(_run(func, *ins), want, rtol=1e-4, atol=1e-5)


def test_attention_rejects_a_window():
    shapes = [((1, 2, 1, 4), F32)] * 3
    with pytest.raises(OpError):
        tir.topi.lower("nn.attention", shapes, window_size=2)


# ---------------------------------------------------------------- median
@FEW
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.booleans(), st.data())
def test_median(shape, keepdims, data):
    axis = data.draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)))
    attrs = {"axis": None if axis is None else [axis], "keepdims": keepdims}
    func = tir.topi.lower("median", [(shape, F32)], **attrs)
    x = np.random.default_rng(3).permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    if axis is None:
        got = _run(func, x)
        k = x.size
        want = np.sort(x.ravel())[(k - 1) // 2]
        assert got.shape == ((1,) if keepdims else ()) and np.all(got == want)
        return
    value, where = _run(func, x, outputs=2)
    order = np.argsort(x, axis=axis, kind="stable")
    pos = np.take(order, [(shape[axis] - 1) // 2], axis=axis)
    want = np.take_along_axis(x, pos, axis=axis)
    if not keepdims:
        want, pos = want.squeeze(axis), pos.squeeze(axis)
    np.testing.assert_array_equal(value, want)
    np.testing.assert_array_equal(where, pos)
    if not (keepdims and shape[axis] == 1):  # an axis of one kept copies the data: opinfo abstains
        _named(func, "median", attrs)


# ---------------------------------------------------------------- image.grid_sample
@RARE
@given(st.sampled_from(["nearest", "bilinear", "bicubic"]), st.sampled_from(["zeros", "border", "reflection"]),
       st.booleans())
def test_grid_sample_round_trip(method, padding, align):
    attrs = {"method": method, "layout": "NCHW", "padding_mode": padding, "align_corners": align}
    func = tir.topi.lower("image.grid_sample", [((1, 1, 4, 3), F32), ((1, 2, 2, 2), F32)], **attrs)
    _named(func, "image.grid_sample", attrs)


@pytest.mark.parametrize("method", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_numbers(method, padding, align):
    func = tir.topi.lower("image.grid_sample", [((2, 2, 5, 4), F32), ((2, 2, 3, 4), F32)], method=method,
                          padding_mode=padding, align_corners=align)
    rng = np.random.default_rng(4)
    data = rng.standard_normal((2, 2, 5, 4)).astype(np.float32)
    grid = rng.uniform(-2.5, 2.5, (2, 2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(_run(func, data, grid), grid_sample_ref(data, grid, method, padding, align),
                               rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- vision.roi_align / roi_pool
def _rois(rng, batch: int, count: int, size: int, scale: float):
    rois = np.zeros((count, 5), np.float32)
    rois[:, 0] = rng.integers(0, batch, count)
    rois[:, 1:3] = rng.uniform(-1.0, size / scale, (count, 2))
    rois[:, 3:5] = rois[:, 1:3] + rng.uniform(0.2, size / scale, (count, 2))
    return rois


@FEW
@given(st.lists(st.integers(1, 3), min_size=2, max_size=2), st.sampled_from([1.0, 0.5]),
       st.sampled_from([-1, 1, 2]), st.booleans(), st.sampled_from(["NCHW", "NHWC"]), st.sampled_from(["avg", "max"]))
def test_roi_align(pooled, scale, ratio, aligned, layout, mode):
    shape = (2, 2, 6, 6) if layout == "NCHW" else (2, 6, 6, 2)
    attrs = {"pooled_size": pooled, "spatial_scale": scale, "sample_ratio": ratio, "aligned": aligned,
             "layout": layout, "mode": mode}
    func = tir.topi.lower("vision.roi_align", [(shape, F32), ((3, 5), F32)], **attrs)
    rng = np.random.default_rng(5)
    data, rois = _normal(rng, shape), _rois(rng, 2, 3, 6, scale)
    nchw = data if layout == "NCHW" else data.transpose(0, 3, 1, 2)
    want = roi_align_ref(nchw, rois, pooled, scale, ratio, aligned, mode)
    want = want if layout == "NCHW" else want.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(_run(func, data, rois), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ratio,mode", [(2, "avg"), (-1, "max")])
def test_roi_align_round_trip(ratio, mode):
    attrs = {"pooled_size": [2, 1], "spatial_scale": 0.5, "sample_ratio": ratio, "aligned": False,
             "layout": "NCHW", "mode": mode}
    _named(tir.topi.lower("vision.roi_align", [((1, 2, 8, 8), F32), ((3, 5), F32)], **attrs), "vision.roi_align",
           attrs)


@FEW
@given(st.lists(st.integers(1, 3), min_size=2, max_size=2), st.sampled_from([1.0, 0.5]))
def test_roi_pool(pooled, scale):
    attrs = {"pooled_size": pooled, "spatial_scale": scale, "layout": "NCHW"}
    func = tir.topi.lower("vision.roi_pool", [((2, 2, 6, 6), F32), ((3, 5), F32)], **attrs)
    _named(func, "vision.roi_pool", attrs)
    rng = np.random.default_rng(6)
    data, rois = _normal(rng, (2, 2, 6, 6)), _rois(rng, 2, 3, 6, scale)
    np.testing.assert_allclose(_run(func, data, rois), roi_pool_ref(data, rois, pooled, scale), rtol=1e-6)
