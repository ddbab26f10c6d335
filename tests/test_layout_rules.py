"""Per-op layout rules: attributes under new layouts, and refusals."""
import pytest

from layout.rules import Decision, OpContext, Refusal, apply_rule
from layout.tensor_layout import TensorLayout
from opinfo.info import OpInfo, Operand

NHWC = TensorLayout("NCHW", "NHWC")
NCHW4C = TensorLayout("NCHW", "NCHW4c")


def _ctx(name, attrs, inputs, in_shapes, out_shape, target=None):
    ops = tuple(Operand("data" if k == 0 else f"in{k}", f"b{k}", k) for k in range(len(inputs)))
    op = OpInfo(name, attrs, ops, Operand("output", "out", len(inputs)))
    return OpContext(op, tuple(inputs), tuple(in_shapes), tuple(out_shape), target)


def test_conv_target_converts_data_kernel_and_output():
    ctx = _ctx("nn.conv2d", {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"},
               [None, None], [(1, 8, 6, 6), (16, 8, 3, 3)], (1, 16, 6, 6), ("NHWC", "OHWI"))
    d = apply_rule(ctx)
    assert isinstance(d, Decision)
    assert str(d.inputs[0].physical) == "NHWC" and str(d.inputs[1].physical) == "OHWI"
    assert d.attrs["data_layout"] == "NHWC" and d.attrs["kernel_layout"] == "OHWI"
    assert str(d.output.physical) == "NHWC"


def test_conv_not_a_target_refuses_a_converted_input():
    ctx = _ctx("nn.conv2d", {"data_layout": "NCHW", "kernel_layout": "OIHW"},
               [NHWC, None], [(1, 8, 6, 6), (16, 8, 3, 3)], (1, 16, 6, 6))
    assert isinstance(apply_rule(ctx), Refusal)


def test_conv_packed_target_needs_divisible_channels():
    ctx = _ctx("nn.conv2d", {"data_layout": "NCHW", "kernel_layout": "OIHW"},
               [None, None], [(1, 3, 6, 6), (16, 3, 3, 3)], (1, 16, 6, 6), ("NCHW4c", "OIHW4i4o"))
    d = apply_rule(ctx)
    assert isinstance(d, Refusal) and "divisible" in d.reason


def test_pool_follows_its_input():
    ctx = _ctx("nn.max_pool2d", {"layout": "NCHW", "out_layout": "NCHW"}, [NCHW4C], [(1, 8, 6, 6)], (1, 8, 3, 3))
    d = apply_rule(ctx)
    assert d.attrs["layout"] == "NCHW4c" and str(d.output.physical) == "NCHW4c"


def test_bias_of_broadcasting_add_is_transformed_too():
    ctx = _ctx("add", {}, [NHWC, None], [(1, 8, 6, 6), (1, 8, 1, 1)], (1, 8, 6, 6))
    d = apply_rule(ctx)
    assert str(d.inputs[1].physical) == "NHWC" and d.inputs[1].shape((1, 8, 1, 1)) == (1, 1, 1, 8)
    # a packed layout cannot hold a broadcast channel: that operand stays as it is
    ctx = _ctx("add", {}, [NCHW4C, None], [(1, 8, 6, 6), (1, 1, 6, 6)], (1, 8, 6, 6))
    assert apply_rule(ctx).inputs[1] is None


@pytest.mark.parametrize("keepdims,axis,out_shape,out", [
    (True, [1], (1, 1, 6, 6), "NHWC"),      # kept axes: the output stays NHWC
    (False, [1], (1, 6, 6), None),          # C gone: NHW is the original order again
    (False, [2, 3], (1, 8), None),
    (False, [2], (1, 8, 6), "NWC"),
])
def test_reduction_axes_and_output_layout(keepdims, axis, out_shape, out):
    d = apply_rule(_ctx("sum", {"axis": axis, "keepdims": keepdims}, [NHWC], [(1, 8, 6, 6)], out_shape))
    expected = tuple(sorted(NHWC.physical.index_of(NHWC.logical.primal[a]) for a in axis))
    assert tuple(d.attrs["axis"]) == expected
    assert (d.output is None) if out is None else str(d.output.physical) == out


def test_reduction_over_split_axis_with_keepdims_is_refused():
    d = apply_rule(_ctx("sum", {"axis": [1], "keepdims": True}, [NCHW4C], [(1, 8, 6, 6)], (1, 1, 6, 6)))
    assert isinstance(d, Refusal)


def test_softmax_concat_permute_pad_slice():
    assert apply_rule(_ctx("nn.softmax", {"axis": 1}, [NHWC], [(1, 8, 6, 6)], (1, 8, 6, 6))).attrs["axis"] == 3
    assert isinstance(apply_rule(_ctx("nn.softmax", {"axis": 1}, [NCHW4C], [(1, 8, 6, 6)], (1, 8, 6, 6))), Refusal)
    c = apply_rule(_ctx("concat", {"axis": 1}, [NHWC, None], [(1, 8, 6, 6), (1, 4, 6, 6)], (1, 12, 6, 6)))
    assert c.attrs["axis"] == 3 and c.inputs[1] == NHWC
    p = apply_rule(_ctx("permute_dims", {"axes": [0, 1, 3, 2]}, [NHWC], [(1, 8, 6, 6)], (1, 8, 6, 6)))
    assert tuple(p.attrs["axes"]) == (0, 1, 2, 3) and str(p.output.logical) == "NCWH"
    pad = apply_rule(_ctx("nn.pad", {"pad_width": [0, 0, 0, 0, 1, 2, 3, 4]}, [NHWC], [(1, 8, 6, 6)], (1, 8, 9, 13)))
    assert tuple(pad.attrs["pad_width"]) == (0, 0, 1, 2, 3, 4, 0, 0)
    s = apply_rule(_ctx("strided_slice", {"axes": [1], "begin": [0], "end": [4]}, [NHWC], [(1, 8, 6, 6)], (1, 4, 6, 6)))
    assert tuple(s.attrs["axes"]) == (3,)


def test_unknown_op_with_converted_input_is_refused():
    d = apply_rule(_ctx("reshape", {"shape": [8, 36]}, [NHWC], [(1, 8, 6, 6)], (8, 36)))
    assert isinstance(d, Refusal) and "reshape" in d.reason


def test_prelu_is_not_numpy_broadcasting():
    """prelu's alpha runs along ``axis``, not the trailing axes: with C == W the broadcast
    rule would accept it and leave ``axis`` stale, so the op is refused."""
    d = apply_rule(_ctx("nn.prelu", {"axis": 1}, [NHWC, None], [(1, 6, 6, 6), (6,)], (1, 6, 6, 6)))
    assert isinstance(d, Refusal) and "nn.prelu" in d.reason
