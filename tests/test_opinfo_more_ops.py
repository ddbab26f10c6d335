"""Relax ops beyond the sample corpus, as TVM 0.27 legalizes them: quantize, dequantize,
index_tensor, slice_scatter (step 1) recognised with their attributes; creation ops whose loops cannot name them
(ones/zeros/full vs their ``_like`` forms, eye vs eye_like) left unnamed.

Fixtures (tests/fixtures/more_*.py) were printed by TVM 0.27 (tools/tvm_oracle/gen_ops.py).
"""
from __future__ import annotations

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


# ---------------------------------------------------------------- TVM-printed fixtures
@pytest.mark.parametrize("name, want", [
    ("more_quantize_1", ("quantize", {"axis": 1, "out_dtype": "uint8"})),  # per channel, axis=-1 of 2-D
    ("more_quantize_2", ("quantize", {"axis": 0, "out_dtype": "uint8"})),  # 1-D, split and reordered loops
    ("more_dequantize_1", ("dequantize", {"axis": 2, "out_dtype": "float32"})),  # scheduled
    ("more_dequantize_2", ("dequantize", {"axis": 1, "out_dtype": "float32"})),
    ("more_index_tensor_1", ("index_tensor", {})),  # two index tensors through T_broadcast_to, symbolic n
    ("more_index_tensor_2", ("index_tensor", {})),  # a 2-D index tensor, scheduled
    ("more_index_tensor_3", ("index_tensor", {})),  # take(axis=0)'s loops, named by the advanced_index tag
    ("more_slice_scatter_1", ("slice_scatter", {"axis": 1, "start": 4, "end": 5, "step": 1})),
    ("more_slice_scatter_2", ("slice_scatter", {"axis": 1, "start": 1, "end": 3, "step": 1})),  # symbolic n
    # step 2: the written elements leave end 9 or 10 open, the mask's ``i < 9`` spells it
    ("more_slice_scatter_3", ("slice_scatter", {"axis": 1, "start": 8, "end": 9, "step": 2})),
])
def test_tvm_fixture_recognised(name, want):
    assert _ops(fixture_func(name)) == [want]


@pytest.mark.parametrize("name", [
    "more_quantize_3",     # one scale for a 3-D tensor: every axis lowers to these loops
    "more_dequantize_3",   # the same, 2-D, symbolic batch
    "more_ones_1",         # no input: ones, zeros_like... and full, full_like lower alike
    "more_full_1",
    "more_eye_1",          # eye or eye_like
])
def test_tvm_fixture_unnamed(name):
    assert _ops(fixture_func(name)) == []


def test_index_tensor_operands_and_values():
    func = fixture_func("more_index_tensor_3")
    (op,) = opinfo.analyze(func).ops
    assert [(o.role, o.buffer) for o in op.operands] == [("data", "x"), ("indices0", "lv")]
    x, idx = np.arange(30, dtype="float32").reshape(6, 5), np.array([4, 1])
    np.testing.assert_array_equal(tir.run(func, x, idx), x[idx])


def test_take_of_another_tag_stays_take():
    func = fixture_func("more_index_tensor_3", lambda t: t.replace('"advanced_index"', '"T_take"'))
    assert _ops(func) == [("take", {"axis": 0})]


# ---------------------------------------------------------------- round trips with tir.topi
def _quant_inputs(shape, axis, per_channel, dtype):
    n = shape[axis] if per_channel else 1
    return [(shape, dtype), ((n,), "float32"), ((n,), "int8")]


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data(),
       out_dtype=st.sampled_from(["int8", "uint8", "int16"]))
def test_quantize_round_trip(shape, data, out_dtype):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    func = topi.lower("quantize", _quant_inputs(shape, axis, True, "float32"), axis=axis, out_dtype=out_dtype)
    got = _ops(func)
    if shape[axis] == 1 and len(shape) > 1:
        assert got == []  # read at 0: the axis is not in the loops
    else:
        assert got == [("quantize", {"axis": axis % len(shape), "out_dtype": out_dtype})]


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(2, 5), min_size=1, max_size=4), data=st.data(), per_channel=st.booleans())
def test_dequantize_round_trip(shape, data, per_channel):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    func = topi.lower("dequantize", _quant_inputs(shape, axis, per_channel, "int8"), axis=axis)
    got = _ops(func)
    if not per_channel and len(shape) > 1:
        assert got == []
    else:
        assert got == [("dequantize", {"axis": axis % len(shape), "out_dtype": "float32"})]


def test_quantize_lowering_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, (3, 4)).astype("float32")
    scale = np.array([0.5, 0.25, 0.1, 1.0], dtype="float32")
    zp = np.array([0, 3, -5, 100], dtype="int8")
    func = topi.lower("quantize", [((3, 4), "float32"), ((4,), "float32"), ((4,), "int8")], axis=1)
    want = np.clip(np.round(x / scale) + zp, -128, 127).astype("int8")
    np.testing.assert_array_equal(tir.run(func, x, scale, zp), want)


def test_dequantize_lowering_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (4, 3)).astype("int8")
    scale, zp = np.array([0.5], dtype="float32"), np.array([7], dtype="int8")
    func = topi.lower("dequantize", [((4, 3), "int8"), ((1,), "float32"), ((1,), "int8")], axis=0)
    want = ((x.astype("int32") - 7) * 0.5).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, scale, zp), want)


def test_quantize_with_wrong_clip_bounds_is_not_named():
    func = topi.lower("quantize", [((4,), "float32"), ((4,), "float32"), ((4,), "int8")], axis=0)
    text = tir.to_script(func).replace("T.float32(127.0)", "T.float32(100.0)")
    assert _ops(tir.parse(text)) == []


def test_tvm_dequantize_fixture_runs():
    func = fixture_func("more_dequantize_2")
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (6, 7)).astype("int8")
    scale = rng.uniform(0.1, 1, 7).astype("float32")
    zp = rng.integers(-5, 5, 7).astype("int8")
    want = (x.astype("int32") - zp.astype("int32")).astype("float32") * scale
    np.testing.assert_allclose(tir.run(func, x, scale, zp), want, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(xshape=st.lists(st.integers(2, 5), min_size=1, max_size=4), data=st.data())
def test_index_tensor_round_trip_and_values(xshape, data):
    k = data.draw(st.integers(1, len(xshape)))
    ishape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    shapes = [[d if data.draw(st.booleans()) else 1 for d in ishape] for _ in range(k)]
    func = topi.lower("index_tensor", [(xshape, "float32")] + [(s, "int64") for s in shapes])
    assert _ops(func) == [("index_tensor", {})]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, xshape).astype("float32")
    idx = [rng.integers(0, xshape[d], s) for d, s in enumerate(shapes)]
    np.testing.assert_array_equal(tir.run(func, x, *idx), x[tuple(idx)])


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_slice_scatter_fixture_values(engine):
    func = fixture_func("more_slice_scatter_1")
    rng = np.random.default_rng(3)
    x, src = rng.uniform(-1, 1, (7, 6, 5)).astype("float32"), rng.uniform(-1, 1, (7, 1, 5)).astype("float32")
    want = x.copy()
    want[:, 4:5, :] = src
    np.testing.assert_array_equal(tir.run(func, x, src, engine=engine), want)


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("T_arange[v_ax0] < T.int64(5)", "T_arange[v_ax0] < T.int64(6)"),  # mask wider than src
    lambda t: t.replace("T_arange[v_ax0] - T.int64(4)", "T_arange[v_ax0] - T.int64(3)"),  # take offset off by one
])
def test_slice_scatter_inconsistent_is_not_named(edit):
    assert _ops(fixture_func("more_slice_scatter_1", edit)) == []
