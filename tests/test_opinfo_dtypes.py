"""Ops on float16 and integer data, in the forms TVM 0.27 prints (tests/fixtures/dtype_*):
erf without a float16 form computed in float32 between cast blocks, gelu rounding its erf
back to float16, rms_norm and batch_norm computed in float32 and cast back, a float16
convolution accumulated in float32, a float16 min reduction initialised at -65504, a float16
resize computed in float32 between casts, a float16 group_norm whose result near zero is a sum
of rounded terms, and argmax/argmin on integer data."""
import pytest

from opinfo.api import analyze
from opinfo.ew_tree import _identify_narrow
import tir
from tir.expr import BufferLoad, Call, Cast, FloatImm, Mul
from tir.functor import post_order_visit
from tir.buffer import decl_buffer
from tir.dtype import dtype
from fixture_util import FIXTURES, fixture_func

CASES = {
    "dtype_erf": ("erf", {}),
    "dtype_nn_gelu": ("nn.gelu", {}),
    "dtype_nn_rms_norm": ("nn.rms_norm", {"axes": [1, 2], "epsilon": 1e-05}),
    "dtype_nn_batch_norm": ("nn.batch_norm", {"axis": 1, "epsilon": 1e-05, "center": True, "scale": True}),
    "dtype_nn_conv2d": ("nn.conv2d", {"strides": [1, 1], "padding": [1, 1, 1, 1], "dilation": [1, 1], "groups": 1,
                                      "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"}),
    "dtype_min": ("min", {"axis": [0], "keepdims": False}),
    # float16 divisor kept as a product of constants: sum / (float16(8) * float16(2))
    "dtype_nn_adaptive_avg_pool2d": ("nn.adaptive_avg_pool2d",
                                     {"output_size": [1, 1], "layout": "NCHW", "out_layout": "NCHW"}),
    # float16 data read as float32, scaled in float32, the result cast back; a symbolic batch
    "dtype_image_resize2d_nearest": ("image.resize2d", {
        "size": [3, 9], "layout": "NHWC", "method": "nearest_neighbor",
        "coordinate_transformation_mode": "asymmetric", "rounding_method": "round_prefer_ceil"}),
    # integer data: index and value accumulators both integers, told apart by what they read
    "dtype_argmax_int32": ("argmax", {"axis": 2, "keepdims": True}),
    "dtype_argmin_int8": ("argmin", {"axis": 0, "keepdims": True}),
    # float16 norm * gamma + beta near zero: off by float16 steps of its terms' magnitude
    "dtype_nn_group_norm_symbolic": ("nn.group_norm", {"num_groups": 4, "channel_axis": 1, "axes": [2, 3],
                                                       "epsilon": 1e-05, "center": True, "scale": True}),
    "dtype_image_resize2d_cubic": ("image.resize2d", {
        "size": [5, 12], "layout": "NHWC", "method": "cubic", "coordinate_transformation_mode": "half_pixel",
        "rounding_method": "round", "cubic_alpha": -0.75, "cubic_exclude": 0}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_forms_name_one_op(name):
    op, attrs = CASES[name]
    info = analyze(fixture_func(name))
    assert [(o.name, o.to_json()["attrs"]) for o in info.ops] == [(op, attrs)]


def test_float16_gelu_is_not_cut_into_its_arithmetic():
    # the whole tree is gelu up to float16 rounding; named piece by piece it would be five
    # ops (multiply; erf; multiply; add; multiply): a confident wrong answer
    info = analyze(fixture_func("dtype_nn_gelu"))
    assert len(info.ops) == 1


def _half_tree(fn_name):
    f16, f32 = dtype("float16"), dtype("float32")
    x = decl_buffer((4,), "float16", "x")
    load = BufferLoad(x, (x.shape[0] * 0,))
    inner = Call(f32, fn_name, (Cast(f32, load),))
    return Mul(load, Cast(f16, inner)), load


def test_narrow_identification_needs_exactly_one_fit():
    # x * float16(tanh(x)) is no unary op of the table within float16 rounding
    expr, leaf = _half_tree("tanh")
    assert _identify_narrow(expr, [leaf]) is None


def test_float16_resize_lowers_in_float32_between_casts():
    # topi reads every pixel .astype("float"): the candidates re-lowered to choose among
    # equivalent roundings must carry TVM's float32 constants, not float16 ones
    func = tir.topi.lower("image.resize2d", [((1, 6, 5, 3), "float16")], size=[3, 9], layout="NHWC",
                          method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
                          rounding_method="round_prefer_ceil")
    value = func.body.block.body.body.body.body.body.block.body.value
    assert isinstance(value, Cast) and value.dtype == dtype("float16")
    assert isinstance(value.value, Cast) and value.value.dtype == dtype("float32")
    floats = []
    post_order_visit(value, lambda n: floats.append(n.dtype) if isinstance(n, FloatImm) else None)
    assert floats and set(floats) == {dtype("float32")}


def test_float16_group_norm_tolerance_still_tells_beta_from_its_negation():
    # the absolute float16 tolerance (one step at the largest magnitude) must not let
    # norm * gamma - beta pass as group_norm with center
    negated = lambda text: text.replace("T_reshape_2[v_ax1, v_ax2] + T_reshape_3", "T_reshape_2[v_ax1, v_ax2] - T_reshape_3")
    assert analyze(fixture_func("dtype_nn_group_norm_symbolic", negated)).ops == ()


_INT8_INDEX_UPDATE = "x_red_temp_v0[v_ax0, v_ax1, v_ax2] < v_k0, x_red_temp_v0[v_ax0, v_ax1, v_ax2], v_k0)"


@pytest.mark.parametrize("edit", [
    # an init the data can beat (int8 127 is the only unbeatable one for argmin)
    lambda t: t.replace("T.int8(127)", "T.int8(126)"),
    # the index accumulator takes a data value, not the reduction index
    lambda t: t.replace(_INT8_INDEX_UPDATE, _INT8_INDEX_UPDATE.replace(
        ", v_k0)", ", T.Cast(\"int64\", x[v_k0, v_ax1, v_ax2]))")),
], ids=["beatable-init", "index-reads-data"])
def test_integer_argmin_edited_is_not_named(edit):
    assert edit((FIXTURES / "dtype_argmin_int8.py").read_text()) != (FIXTURES / "dtype_argmin_int8.py").read_text()
    assert analyze(fixture_func("dtype_argmin_int8", edit)).ops == ()
