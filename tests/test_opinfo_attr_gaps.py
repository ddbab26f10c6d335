"""Attribute values the first generator never drew (session 8 audit): take's clip / wrap
modes and axis=None, integer divide, clip bounds beyond the ordinary samples, leakyrelu with
alpha 0, vector . vector matmul, a layer/rms norm epsilon of 1e-12. Built with ``tir.topi``
or parsed from the forms TVM 0.27 prints."""
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir.topi import lower
from opinfo.api import analyze

F = "float32"


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _parse(text):
    got = tir.parse(text)
    return got if not hasattr(got, "prim_funcs") else got.prim_funcs()[0][1]


TAKE = '''
from tvm.script import tir as T

@T.prim_func
def take(x: T.Buffer((T.int64({n}), T.int64(4)), "float32"), y: T.Buffer((T.int64(3),), "int32"),
         T_take: T.Buffer(({out}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for ax0, ax1 in T.grid({grid}):
        with T.block("T_take"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_take[v_ax0, v_ax1] = x[{index}]
'''


def _take(index, axis=0, n=6):
    out = "T.int64(3), T.int64(4)" if axis == 0 else f"T.int64({n}), T.int64(3)"
    grid = "T.int64(3), T.int64(4)" if axis == 0 else f"T.int64({n}), T.int64(3)"
    return _parse(TAKE.format(n=n, out=out, grid=grid, index=index))


def test_take_clip_as_tvm_prints_it():
    idx = 'T.min(T.max(T.int64(0), T.Cast("int64", y[v_ax0])), T.int64(5)), v_ax1'
    assert _ops(_take(idx)) == [("take", {"axis": 0, "mode": "clip"})]


def test_take_wrap_as_tvm_prints_it():
    y = 'T.Cast("int64", y[v_ax1])'
    idx = f"v_ax0, T.truncmod(T.truncmod({y}, T.int64(4)) + T.int64(4), T.int64(4))"
    assert _ops(_take(idx, axis=1, n=5)) == [("take", {"axis": 1, "mode": "wrap"})]


def test_take_clip_bound_must_be_the_last_index():
    # min(max(0, y), 4) on an axis of extent 6 is not take's clip
    idx = 'T.min(T.max(T.int64(0), T.Cast("int64", y[v_ax0])), T.int64(4)), v_ax1'
    assert _ops(_take(idx)) == []


@given(rank=st.integers(2, 3), axis=st.integers(0, 2), mode=st.sampled_from(["clip", "fast"]))
@settings(max_examples=12, deadline=None)
def test_take_modes_built_with_topi(rank, axis, mode):
    axis = axis % rank
    shape = [5, 4, 3][:rank]
    got = _ops(lower("take", [(shape, F), ([2, 3], "int64")], axis=axis, mode=mode))
    want = {"axis": axis, "mode": "clip"} if mode == "clip" else {"axis": axis}
    assert got == [("take", want)]


ONE_D_TAKE = '''
from tvm.script import tir as T

@T.prim_func
def take(x: T.Buffer((T.int64(6),), "float32"), y: T.Buffer((T.int64(3),), "int32"),
         T_take: T.Buffer((T.int64(3),), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for ax0 in range(T.int64(3)):
        with T.block("T_take"):
            v_ax0 = T.axis.spatial(T.int64(3), ax0)
            T_take[v_ax0] = x[{index}]
'''


def test_take_axis_none_reads_a_floormod_index():
    # take(x, y) without an axis on 1-D data: TVM's "fast" mode wraps with floormod
    func = _parse(ONE_D_TAKE.format(index='T.Cast("int64", y[v_ax0]) % T.int64(6)'))
    assert _ops(func) == [("take", {"axis": None})]


def test_one_d_take_clip_abstains():
    # axis=None and axis=0 print the same clip index on 1-D data: the axis is not observable
    func = _parse(ONE_D_TAKE.format(index='T.min(T.max(T.int64(0), T.Cast("int64", y[v_ax0])), T.int64(5))'))
    assert _ops(func) == []


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_integer_divide_truncates(dt):
    func = lower("divide", [([2, 5], dt), ([2, 5], dt)])
    assert _ops(func) == [("divide", {})]
    assert _ops(lower("floor_divide", [([2, 5], dt), ([2, 5], dt)])) == [("floor_divide", {})]


@pytest.mark.parametrize("hi", [100.0, 1e4, 1e5])
def test_clip_with_a_wide_upper_bound_is_not_relu(hi):
    assert _ops(lower("clip", [([3, 4], F)], min=0.0, max=hi)) == [("clip", {"min": 0.0, "max": hi})]


def test_relu_still_relu():
    assert _ops(lower("nn.relu", [([3, 4], F)])) == [("nn.relu", {})]


LEAKY0 = '''
from tvm.script import tir as T

@T.prim_func
def leaky_relu(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), compute: T.Buffer((T.int64(4), T.int64(3)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1 in T.grid(T.int64(4), T.int64(3)):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            compute[v_i0, v_i1] = T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))
'''


def test_leakyrelu_alpha_zero_is_not_named_relu():
    # TVM folds x * 0 of leakyrelu(alpha=0): the select computes relu but is not relu's max
    # form; the select itself is leakyrelu's (tests/test_opinfo_h47_robust.py)
    assert _ops(_parse(LEAKY0)) == [("nn.leakyrelu", {"alpha": 0.0})]


@pytest.mark.parametrize("k", [1, 6])
def test_vector_dot_vector_matmul(k):
    assert _ops(lower("matmul", [([k], F), ([k], F)])) == [("matmul", {})]


@pytest.mark.parametrize("eps", [1e-12, 1e-5, 0.1])
def test_layer_norm_tiny_epsilon(eps):
    func = lower("nn.layer_norm", [([5, 9], F), ([9], F), ([9], F)], axes=[1], epsilon=eps)
    assert _ops(func) == [("nn.layer_norm", {"axes": [1], "epsilon": eps, "center": True, "scale": True})]


def test_rms_norm_tiny_epsilon():
    func = lower("nn.rms_norm", [([4, 6], F), ([6], F)], axes=[1], epsilon=1e-12)
    assert _ops(func) == [("nn.rms_norm", {"axes": [1], "epsilon": 1e-12})]


EMPTY_SLICE = '''
from tvm.script import tir as T

@T.prim_func
def strided_slice(x: T.Buffer((T.int64(5),), "float32"), T_strided_slice_with_axes: T.Buffer((T.int64({n}),), "float32")):
    T.func_attr({"tir.noalias": True})
    for ax0 in range(T.int64({n})):
        with T.block("T_strided_slice_with_axes"):
            v_ax0 = T.axis.spatial(T.int64({n}), ax0)
            T_strided_slice_with_axes[v_ax0] = x[v_ax0 + T.int64(4)]
'''


def test_empty_strided_slice_abstains():
    # begin 4 with end -1 (or 4, or 0) on extent 5: no element, the end is not observable
    assert _ops(_parse(EMPTY_SLICE.replace("{n}", "0"))) == []
    assert _ops(_parse(EMPTY_SLICE.replace("{n}", "1"))) == [
        ("strided_slice", {"axes": [0], "begin": [4], "end": [5], "strides": [1]})]


@pytest.mark.parametrize("name,method,size,layout", [
    ("attr_gap_resize2d_pytorch_linear", "linear", [1, 5], "NCHW"),
    ("attr_gap_resize2d_pytorch_cubic", "cubic", [1, 5], "NCHW"),
    ("attr_gap_resize2d_pytorch_nearest", "nearest_neighbor", [9, 1], "NHWC")])
def test_pytorch_half_pixel_with_a_unit_output_axis(name, method, size, layout):
    # TVM 0.27's output: the unit axis reads index 0 at every tap, so linear keeps 2 loads and
    # cubic 4 (TVM merges the equal ones); half_pixel would read between rows there
    from fixture_util import FIXTURES
    (op, attrs), = _ops(_parse((FIXTURES / f"{name}.py").read_text()))
    assert op == "image.resize2d"
    assert (attrs["method"], attrs["size"], attrs["layout"], attrs["coordinate_transformation_mode"]) == (
        method, size, layout, "pytorch_half_pixel")
