"""Session 39: an answer too large to run is still checked against the output's shape.

Fixture: ShuffleNet's depthwise ``conv2d`` (TVM 0.27 via the ONNX frontend; 136 channels,
28 x 28, stride 2, padding 1): its buffers hold more than ``analyze`` runs for its own check
(:func:`opinfo.verify.cheap_binding`). A fuzzer mutant reading rows ``v_yy * 1 + v_ry`` was
named with strides ``(1, 2)`` -- which makes 28 output rows where the function has 14. Nothing
need run to see that: the op built afresh from the answer has an output of another shape
(:func:`opinfo.verify.shapes_refute`).
"""
from __future__ import annotations

import opinfo
from opinfo import verify
from tests.fixture_util import fixture_func, fixture_ops, replaced

import tir

NAME = "s39_depthwise_conv2d_large"
LOAD = "pad_temp[v_nn, v_ff + v_rc, v_yy * T.int64(2) + v_ry, v_xx * T.int64(2) + v_rx] * gpu"
CONV = ("nn.conv2d", {"strides": (2, 2), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 136,
                      "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"})


def test_too_large_to_run_in_analyze():
    assert verify.cheap_binding(fixture_func(NAME)) is None


def test_named_as_the_depthwise_conv2d():
    assert fixture_ops(NAME) == [CONV]


def test_stride_the_output_rows_deny_is_refused():
    (_, func), = tir.parse(replaced(NAME, LOAD, LOAD.replace("v_yy * T.int64(2)", "v_yy * T.int64(1)"))).prim_funcs()
    info = opinfo.analyze(func)
    assert info.ops == () and "other shapes" in info.refused


def test_shapes_refute_compares_the_fresh_op():
    func = fixture_func(NAME)
    (op,) = opinfo.analyze(func).ops
    assert not verify.shapes_refute(func, op)
    import attrs
    from tir.node import Map
    wrong = attrs.evolve(op, attrs=Map({**dict(op.attrs), "strides": (1, 2)}))
    assert verify.shapes_refute(func, wrong)


# shape_to_tensor (TVM 0.27, from an ONNX graph's Shape): its values are the shape's
# extents, which the answer does not list -- but an extent is never negative
SHAPE = "s39_shape_to_tensor"


def test_shape_to_tensor_named():
    assert fixture_ops(SHAPE) == [("shape_to_tensor", {})]


def test_negative_extent_is_not_a_shape():
    assert fixture_ops(SHAPE, "T.int64(10), T.if_then_else", "T.int64(-10), T.if_then_else") == []


# A fused kernel (TVM 0.27 FuseOps + FuseTIR): conv2d (strides 2, dilation (2, 1)), clip,
# subtract. Its answer is several ops, which analyze never ran against the function: a mutant
# reading rows ``v_yy * 1`` was named with strides (1, 2) although the convolution's
# intermediate output has the rows a stride of 2 makes. Each op is now built afresh at the
# shapes of the buffers it reads and compared with the one it writes.
FUSED = "s39_fused_conv2d_clip_subtract"


def _fused_ops(old="", new=""):
    mod = tir.parse(replaced(FUSED, old, new))
    return [[op.name for op in info.ops] for info in opinfo.analyze_module(mod).values()]


def test_fused_kernel_named():
    assert _fused_ops() == [["nn.conv2d", "clip", "subtract"]]


def test_fused_stride_the_intermediate_denies_is_refused():
    old = "v_yy * T.int64(2) + v_ry * T.int64(2), v_xx * T.int64(2) + v_rx] * x1"
    assert _fused_ops(old, old.replace("v_yy * T.int64(2)", "v_yy * T.int64(1)")) == [[]]
