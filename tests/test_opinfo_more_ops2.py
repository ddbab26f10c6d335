"""More Relax ops TVM 0.27 legalizes: nn.nll_loss, nn.cross_entropy_with_logits, hamming_window,
image.affine_grid and nn.attention_bias (run-based) recognised with their attributes; forms
the loops cannot name (a 0-d nll_loss "sum", a one-value window, a causal mask with S == Skv)
and edited lowerings left unnamed.

Fixtures (tests/fixtures/more2_*.py) were printed by TVM 0.27 (tools/tvm_oracle/gen_ops.py, and
the same BlockBuilder + LegalizeOps for the forms it does not sample: no weights, 1-D and 4-D
predictions, windows of one and two values, float64).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
import tir
import tir.topi as topi
from fixture_util import fixture_func


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _nll(reduction, ignore_index):
    return "nn.nll_loss", {"reduction": reduction, "ignore_index": ignore_index}


def _window(size, periodic, alpha=0.54, beta=0.46, dtype="float32"):
    return "hamming_window", {"dtype": dtype, "window_size": size, "periodic": periodic, "alpha": alpha, "beta": beta}


CE = ("nn.cross_entropy_with_logits", {})


# ---------------------------------------------------------------- TVM-printed fixtures
@pytest.mark.parametrize("name, want", [
    ("more2_nll_loss_1", _nll("mean", 1)),       # symbolic predictions batch, tirx
    ("more2_nll_loss_2", _nll("sum", -100)),
    ("more2_nll_loss_3", _nll("none", -100)),    # scheduled
    ("more2_nll_loss_4", _nll("mean", 2)),       # no weights: a T_full of ones
    ("more2_nll_loss_5", _nll("mean", -1)),      # (N, C, d1, d2) predictions
    ("more2_nll_loss_7", _nll("mean", -100)),    # 1-D predictions, 0-d target: E / W
    ("more2_cross_entropy_1", CE),               # 2-D: / 4.0
    ("more2_cross_entropy_2", CE),               # 1-D: no division; symbolic
    ("more2_cross_entropy_3", CE),               # scheduled
    ("more2_cross_entropy_4", CE),               # 3-D
    ("more2_hamming_window_1", _window(10, True, 0.5, 0.5)),  # 11 values sliced to 10
    ("more2_hamming_window_2", _window(6, False)),            # scheduled
    ("more2_hamming_window_3", _window(2, False)),            # the division by 1 folded away
    ("more2_hamming_window_5", _window(6, True, dtype="float64")),
])
def test_tvm_fixture_recognised(name, want):
    assert _ops(fixture_func(name)) == [want]


def test_earlier_hamming_fixture_now_named():
    assert _ops(fixture_func("more_hamming_window_1")) == [_window(8, False)]


@pytest.mark.parametrize("name", [
    "more2_nll_loss_6",        # 1-D predictions, "sum": TVM returns E itself, as for "none"
    "more2_hamming_window_4",  # one value: TVM's constant 1
])
def test_tvm_fixture_unnamed(name):
    assert _ops(fixture_func(name)) == []


def test_nll_loss_operands():
    (op,) = opinfo.analyze(fixture_func("more2_nll_loss_1")).ops
    assert [(o.role, o.buffer) for o in op.operands] == [("predictions", "x"), ("targets", "y1"), ("weights", "y2")]
    (op,) = opinfo.analyze(fixture_func("more2_nll_loss_4")).ops
    assert [o.role for o in op.operands] == ["predictions", "targets"]


# ---------------------------------------------------------------- edited fixtures
@pytest.mark.parametrize("name, old, new", [
    # the weight-sum's ignore_index differs from the loss's
    ("more2_nll_loss_1", "nll_loss_1[v_ax0] = T.Select(y1[v_ax0] != T.int64(1)",
     "nll_loss_1[v_ax0] = T.Select(y1[v_ax0] != T.int64(2)"),
    # the weight read at the batch index, not the target
    ("more2_nll_loss_2", "* y2[y1[v_ax0]]", "* y2[v_ax0]"),
    # the prediction read at a fixed class
    ("more2_nll_loss_3", "x[v_ax0, y1[v_ax0]]", "x[v_ax0, T.int64(0)]"),
    # the loss added, not negated
    ("more2_nll_loss_2", "(T.float32(0.0) - x[v_ax0, y1[v_ax0]])", "(T.float32(1.0) + x[v_ax0, y1[v_ax0]])"),
    # the sum over part of the targets
    ("more2_nll_loss_2", "v_k0 = T.axis.reduce(T.int64(3), k0)", "v_k0 = T.axis.reduce(T.int64(2), k0)"),
    ("more2_cross_entropy_1", "T.float32(4.0)", "T.float32(7.0)"),   # divided by the class count
    ("more2_cross_entropy_1", "T.float32(-1.0)", "T.float32(-2.0)"),
    ("more2_cross_entropy_1", "x[v_ax0, v_ax1] * y[v_ax0, v_ax1]", "x[v_ax0, v_ax1] * y[v_ax1, v_ax0]"),
    ("more2_hamming_window_1", "T.float32(10.0)", "T.float32(8.0)"),  # neither N - 1 nor N
    ("more2_hamming_window_1", "T.float32(6.2831853071795862)", "T.float32(3.1415926535897931)"),
    ("more2_hamming_window_1", "T.cos(", "T.sin("),
    ("more2_hamming_window_2", 'T.Cast("float32", v_ax0)', 'T.Cast("float32", v_ax0 + T.int64(1))'),
])
def test_edited_fixture_unnamed(name, old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new)
    assert _ops(fixture_func(name, edit)) == []


def test_periodic_window_with_symmetric_divisor_is_symmetric():
    """11 values over N - 1 = 9 divisions, the first 10 kept: exactly the symmetric window of 10."""
    func = fixture_func("more2_hamming_window_1", lambda t: t.replace("T.float32(10.0)", "T.float32(9.0)"))
    assert _ops(func) == [_window(10, False, 0.5, 0.5)]


# ---------------------------------------------------------------- round trips with tir.topi
def _nll_inputs(shape, with_weights=True):
    tshape = [shape[0]] + shape[2:] if len(shape) > 1 else []
    c = shape[1] if len(shape) > 1 else shape[0]
    return [(shape, "float32"), (tshape, "int64")] + ([([c], "float32")] if with_weights else [])


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       reduction=st.sampled_from(["mean", "sum", "none"]), ignore_index=st.integers(-100, 3))
def test_nll_loss_round_trip(shape, reduction, ignore_index):
    func = topi.lower("nn.nll_loss", _nll_inputs(shape), reduction=reduction, ignore_index=ignore_index)
    got = _ops(func)
    if len(shape) == 1 and reduction != "mean":
        assert got == []  # "sum" and "none" lower alike
    else:
        assert got == [_nll(reduction, ignore_index)]


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_cross_entropy_round_trip(shape):
    func = topi.lower("nn.cross_entropy_with_logits", [(shape, "float32"), (shape, "float32")])
    assert _ops(func) == [CE]


@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 16), periodic=st.booleans(),
       coef=st.sampled_from([(0.54, 0.46), (0.5, 0.5), (0.6, 0.25)]))
def test_hamming_window_round_trip_and_values(size, periodic, coef):
    alpha, beta = coef
    func = topi.lower("hamming_window", [], window_size=size, periodic=periodic, alpha=alpha, beta=beta)
    n = size + 1 if periodic else size
    want = np.ones(1) if size == 1 else alpha - beta * np.cos(2 * np.pi * np.arange(n) / (n - 1))
    np.testing.assert_allclose(tir.run(func), want[:size], rtol=1e-5, atol=1e-6)
    assert _ops(func) == ([] if size == 1 else [_window(size, periodic, alpha, beta)])


# ---------------------------------------------------------------- values vs numpy
def _nll_numpy(x, t, w, reduction, ignore_index):
    loss, weight = np.zeros(t.shape), np.zeros(t.shape)
    for i in itertools.product(*map(range, t.shape)):
        c = t[i]
        if c != ignore_index:
            loss[i] = -x[(i[0], c) + i[1:]] * w[c]
            weight[i] = w[c]
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / weight.sum()}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_lowering_matches_numpy(reduction):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 2)).astype("float32")
    t, w = rng.integers(0, 4, (3, 2)), rng.uniform(0.5, 2, 4).astype("float32")
    func = topi.lower("nn.nll_loss", _nll_inputs([3, 4, 2]), reduction=reduction, ignore_index=1)
    np.testing.assert_allclose(tir.run(func, x, t, w), _nll_numpy(x, t, w, reduction, 1), rtol=1e-5)


def test_nll_loss_fixture_matches_numpy():
    func = fixture_func("more2_nll_loss_5")  # TVM's (2, 4, 3, 2) predictions, mean, ignore_index -1
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3, 2)).astype("float32")
    t, w = rng.integers(0, 4, (2, 3, 2)), rng.uniform(0.5, 2, 4).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, t, w), _nll_numpy(x, t, w, "mean", -1), rtol=1e-5)


@pytest.mark.parametrize("shape", [[5], [4, 3], [2, 3, 2]])
def test_cross_entropy_lowering_matches_numpy(shape):
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal(shape).astype("float32") for _ in range(2))
    func = topi.lower("nn.cross_entropy_with_logits", [(shape, "float32"), (shape, "float32")])
    want = -(x * y).sum() / (shape[0] if len(shape) > 1 else 1)
    np.testing.assert_allclose(tir.run(func, x, y), want, rtol=1e-5)


def test_hamming_fixture_matches_numpy():
    func = fixture_func("more2_hamming_window_1")
    want = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(11) / 10)
    np.testing.assert_allclose(tir.run(func), want[:10], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- image.affine_grid
def _grid(size, align_corners):
    return "image.affine_grid", {"size": tuple(size), "align_corners": align_corners}


@pytest.mark.parametrize("name, want", [
    ("more2_affine_grid_1", _grid([5, 3], False)),  # symbolic batch, tirx
    ("more2_affine_grid_2", _grid([2, 4], True)),   # scheduled
    ("more2_affine_grid_3", _grid([6, 2], False)),  # step 2/2 = 1 folded away
    ("more2_affine_grid_4", _grid([3, 4, 2], False)),  # 3-D
    ("more2_affine_grid_5", _grid([3, 2, 5], True)),
])
def test_tvm_affine_grid_recognised(name, want):
    assert _ops(fixture_func(name)) == [want]


AG = 'x[v_n, v_dim, T.int64(1)] * (T.float32(-0.80000000000000004) + T.Cast("float32", v_i0) * T.float32(0.40000000000000002))'


@pytest.mark.parametrize("old, new", [
    ("x[v_n, v_dim, T.int64(2)] +", "x[v_n, v_dim, T.int64(1)] +"),           # a column read twice
    ('T.Cast("float32", v_i0) * T.float32(0.4', 'T.Cast("float32", v_i1) * T.float32(0.4'),  # one axis twice
    (AG, AG.replace("T.int64(1)", "T.int64(0)")),                                    # columns swapped
    (AG, 'x[v_n, v_dim, T.int64(1)] * (T.float32(-1.0) + T.Cast("float32", v_i0) * T.float32(0.49999997500000001))'),
    ("T.float32(0.66666666666666663)", "T.float32(0.5)"),                      # a step of neither form
])
def test_edited_affine_grid_unnamed(old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new)
    assert _ops(fixture_func("more2_affine_grid_1", edit)) == []


def _affine_grid_numpy(theta, size, align_corners):
    k = len(size)
    axes = [np.linspace(-1, 1, s) if align_corners else (2 * np.arange(s) + 1) / s - 1 for s in size]
    mesh = np.meshgrid(*axes, indexing="ij")
    out = np.zeros((theta.shape[0], k) + tuple(size))
    for n, d in itertools.product(range(theta.shape[0]), range(k)):
        out[n, d] = theta[n, d, k] + sum(theta[n, d, k - 1 - r] * mesh[r] for r in range(k))
    return out


@settings(max_examples=25, deadline=None)
@given(size=st.lists(st.integers(2, 6), min_size=2, max_size=3), align_corners=st.booleans(),
       batch=st.integers(1, 2))
def test_affine_grid_round_trip_and_values(size, align_corners, batch):
    k = len(size)
    func = topi.lower("image.affine_grid", [([batch, k, k + 1], "float32")], size=size, align_corners=align_corners)
    assert _ops(func) == [_grid(size, align_corners)]
    theta = np.random.default_rng(0).standard_normal((batch, k, k + 1)).astype("float32")
    np.testing.assert_allclose(tir.run(func, theta), _affine_grid_numpy(theta, size, align_corners), atol=1e-5)


def test_affine_grid_fixture_values():
    theta = np.random.default_rng(4).standard_normal((2, 3, 4)).astype("float32")
    got = tir.run(fixture_func("more2_affine_grid_4"), theta)
    np.testing.assert_allclose(got, _affine_grid_numpy(theta, [3, 4, 2], False), atol=1e-5)


# ---------------------------------------------------------------- nn.attention_bias (run-based)
def _attention_bias(scale, causal_mask):
    return "nn.attention_bias", {"scale": scale, "causal_mask": causal_mask, "window_size": None}


@pytest.mark.parametrize("name, want", [
    ("more2_attention_bias_1", _attention_bias(0.636, "BottomRight")),  # S 5, Skv 2, scheduled
    ("more2_attention_bias_2", _attention_bias(0.149, None)),
    ("more2_attention_bias_3", _attention_bias(None, None)),            # / sqrt(4)
])
def test_tvm_attention_bias_recognised(name, want):
    func = fixture_func(name)
    assert _ops(func) == [want]
    (op,) = opinfo.analyze(func).ops
    assert [o.role for o in op.operands] == ["query", "key", "value", "bias"]


BIAS_ADD = "T_reshape_2[v_ax0, v_ax1, v_ax2, v_ax3] + y3[v_ax0, v_ax1, v_ax2, v_ax3]"


@pytest.mark.parametrize("name, old, new", [
    ("more2_attention_bias_4", None, None),  # causal with S == Skv: TopLeft and BottomRight lower alike
    ("more2_attention_bias_1", BIAS_ADD, BIAS_ADD.replace("+", "-")),  # bias subtracted
    ("more2_attention_bias_3", BIAS_ADD, BIAS_ADD.replace("y3[v_ax0, v_ax1, v_ax2, v_ax3]",
                                                          "y3[v_ax0, v_ax1, v_ax3, v_ax2]")),  # bias transposed
    ("more2_attention_bias_3", "T.sqrt(T.float32(4.0))", "T.sqrt(T.float32(8.0))"),  # not sqrt(head_dim)
])
def test_attention_bias_unnamed(name, old, new):
    def edit(text):
        if old is None:
            return text
        assert old in text
        return text.replace(old, new)
    assert _ops(fixture_func(name, edit)) == []

