"""grad.max_pool2d_backward / grad.avg_pool2d_backward (opinfo/recognize/pool_grad.py) on
TVM-printed fixtures, and the numpy references against finite-difference gradients."""
import numpy as np
from hypothesis import given, settings, strategies as st

import tir
from fixture_util import fixture_func
from opinfo.api import analyze
from opinfo.recognize.pool_grad import recognize_pool_grad
from opinfo.recognize.pool_ref import avg_grad_ref, max_grad_ref


def _attrs(op):
    return op.to_json()["attrs"]


def _expected(pool, strides, padding, layout, include=False):
    return {"pool_size": pool, "strides": strides, "dilation": [1, 1], "padding": padding, "ceil_mode": False,
            "count_include_pad": include, "layout": layout, "out_layout": layout}


def test_max_grad_scheduled_with_out_of_bounds_reads():
    """TVM's max-pool gradient reads argmax/output_grad past their end (guards bound only from
    below); split/reorder schedule; the padded extent (1 + 8 + 1) and the stride 2 leave a
    single reading."""
    op = recognize_pool_grad(fixture_func("pool_grad_max_sched"))
    assert op.name == "grad.max_pool2d_backward" and not op.assumed
    assert _attrs(op) == _expected([2, 3], [2, 2], [0, 1, 0, 1], "NHWC")
    assert [(o.role, o.buffer, o.param) for o in op.operands] == [("output_grad", "x", 0), ("data", "y", 1)]
    assert op.output.buffer == "T_pool_grad"


def test_max_grad_fused_cached_compute_at():
    info = analyze(fixture_func("pool_grad_max_fused"))
    assert [o.name for o in info.ops] == ["grad.max_pool2d_backward"]
    assert _attrs(info.ops[0]) == _expected([3, 2], [2, 2], [0, 1, 0, 1], "NHWC")


def test_avg_grad_include_pad_from_the_constant_divisor():
    op = recognize_pool_grad(fixture_func("pool_grad_avg_include_pad"))
    assert op.name == "grad.avg_pool2d_backward" and not op.assumed
    assert _attrs(op) == _expected([3, 2], [2, 1], [0, 1, 0, 1], "NHWC", include=True)


def test_last_maximum_is_not_max_pool_grad():
    """An argmax keeping the last of equal maxima computes another function: the run on
    data with ties rejects it."""
    tied = "maxpool_grad_argmax_v0[v_ax0, v_ax1, v_ax2, v_ax3] < v_ax0"
    func = fixture_func("pool_grad_max_sched", lambda t: t.replace(tied, tied.replace(" < ", " > ")))
    assert recognize_pool_grad(func) is None


def test_wrong_divisor_is_rejected():
    func = fixture_func("pool_grad_avg_include_pad", lambda t: t.replace("T.float32(6.0)", "T.float32(5.0)"))
    assert recognize_pool_grad(func) is None


def test_forward_pools_are_not_gradients():
    for op in ("nn.max_pool2d", "nn.avg_pool2d"):
        func = tir.topi.lower(op, [((1, 3, 8, 8), "float32")], pool_size=(2, 2), strides=(2, 2))
        assert recognize_pool_grad(func) is None
        assert [o.name for o in analyze(func).ops] == [op]


def _max_pool(x, k, s, pad):
    """Forward max pool of the last two axes (padding with -inf), output extents by floor."""
    h, w = x.shape[-2:]
    p = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(pad[0], k[0]), (pad[1], k[1])], constant_values=-np.inf)
    oh, ow = (h + pad[0] - k[0]) // s[0] + 1, (w + pad[1] - k[1]) // s[1] + 1
    return np.stack([np.stack([p[..., i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].max(axis=(-2, -1))
                               for j in range(ow)], -1) for i in range(oh)], -2)


def _avg_pool(x, k, s, pad, include):
    h, w = x.shape[-2:]
    p = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(pad[0], k[0]), (pad[1], k[1])])
    ones = np.pad(np.ones((h, w)), [(pad[0], k[0]), (pad[1], k[1])])
    oh, ow = (h + pad[0] - k[0]) // s[0] + 1, (w + pad[1] - k[1]) // s[1] + 1
    out = np.empty(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = (slice(i * s[0], i * s[0] + k[0]), slice(j * s[1], j * s[1] + k[1]))
            count = k[0] * k[1] if include else max(ones[win].sum(), 1)
            out[..., i, j] = p[(Ellipsis,) + win].sum(axis=(-2, -1)) / count
    return out


_pools = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).flatmap(
    lambda ks: st.tuples(st.just(ks[:2]), st.just(ks[2:]), st.tuples(st.integers(0, ks[0] - 1), st.integers(0, ks[1] - 1)),
                         st.integers(4, 7), st.integers(4, 7), st.integers(0, 10_000)))


@settings(max_examples=40, deadline=None)
@given(_pools)
def test_references_are_the_gradients_of_the_pools(case):
    """The references are d(sum(g * pool(x))) / dx: exact for max pooling with distinct
    values (moving the maximum by a little moves only its window's output), linear for
    the average."""
    k, s, pad, h, w, seed = case
    rng = np.random.default_rng(seed)
    x = rng.permutation(2 * h * w).reshape(2, h, w).astype(np.float64)  # distinct values
    g = rng.standard_normal(_max_pool(x, k, s, pad).shape)
    grad = max_grad_ref(g, x, k, s, pad)
    eps = 0.25  # below half the gap between distinct integers: no window changes its maximum
    for idx in np.ndindex(x.shape):
        bumped = x.copy()
        bumped[idx] += eps
        np.testing.assert_allclose((g * (_max_pool(bumped, k, s, pad) - _max_pool(x, k, s, pad))).sum() / eps,
                                   grad[idx], atol=1e-9)
    for include in (False, True):
        grad = avg_grad_ref(g, (h, w), k, s, pad, include)
        for idx in np.ndindex(x.shape):
            unit = np.zeros_like(x)
            unit[idx] = 1.0
            np.testing.assert_allclose((g * _avg_pool(unit, k, s, pad, include)).sum(), grad[idx], atol=1e-9)


def test_first_maximum_takes_ties():
    x = np.array([[[3.0, 3.0, 0.0, 2.0]]])
    g = np.array([[[2.0, 5.0]]])  # windows [3, 3] (a tie) and [0, 2]
    assert max_grad_ref(g, x, (1, 2), (1, 2), (0, 0)).tolist() == [[[2.0, 0.0, 0.0, 5.0]]]
