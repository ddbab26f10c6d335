"""The ONNX builder, from hand-made OpInfo lists, against numpy references."""
import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from tir.dtype import float32  # noqa: E402
from tir.relax import TensorType  # noqa: E402

from byoc.onnx_build import build_model  # noqa: E402
from byoc.onnx_ops import check  # noqa: E402
from byoc.region import OpStep, Region, Unsupported  # noqa: E402
from opinfo.info import OpInfo  # noqa: E402

from topi_reference import conv_nc, from_nc, pool_nc, softmax  # noqa: E402


def _region(steps, inputs: dict, out: str, out_shape):
    """A region over named inputs ``{name: array}`` with one output."""
    types = {n: TensorType(a.shape, float32) for n, a in inputs.items()}
    types[out] = TensorType(tuple(out_shape), float32)
    shapes = {n: a.shape for n, a in inputs.items()}
    shapes[out] = tuple(out_shape)
    return Region("r", tuple(inputs), (out,), types, shapes, {}, {}, (), tuple(steps))


def _run(region, inputs: dict):
    model = build_model(region)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


CONV_CASES = [
    ("NCHW", "OIHW", [2, 1], [1, 0, 2, 1], [1, 2], 2),
    ("NHWC", "HWIO", [1, 2], [0, 2, 1, 0], [2, 1], 1),
    ("NHWC", "OHWI", [2, 2], [1, 1, 0, 0], [1, 1], 4),
]


@pytest.mark.parametrize("layout,klayout,strides,padding,dilation,groups", CONV_CASES)
def test_conv2d_any_plain_layout(layout, klayout, strides, padding, dilation, groups):
    rng = np.random.default_rng(0)
    x_nc = rng.standard_normal((1, 8, 9, 10)).astype("float32")
    w_oi = rng.standard_normal((8, 8 // groups, 3, 2)).astype("float32")
    x = from_nc(x_nc, layout)
    w = np.transpose(w_oi, ["OIHW".index(c) for c in klayout])
    ref = conv_nc(x_nc, w_oi, strides, padding[:2], padding[2:], dilation, groups)
    ref = from_nc(ref, layout)
    op = OpInfo("nn.conv2d", {"strides": strides, "padding": padding, "dilation": dilation, "groups": groups,
                              "data_layout": layout, "kernel_layout": klayout, "out_layout": layout})
    region = _region([OpStep(op, ("x", "w"), "y")], {"x": x, "w": w}, "y", ref.shape)
    np.testing.assert_allclose(_run(region, {"x": x, "w": w}), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pools_with_ceil_mode_and_padding(kind):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 9, 8)).astype("float32")
    attrs = {"pool_size": [3, 2], "strides": [2, 2], "padding": [1, 0, 1, 1], "dilation": [1, 1],
             "ceil_mode": False, "count_include_pad": True, "layout": "NCHW", "out_layout": "NCHW"}
    ref = pool_nc(x, kind, [3, 2], [2, 2], [1, 1], [1, 0], [1, 1], False, True)
    op = OpInfo(f"nn.{kind}_pool2d", attrs)
    region = _region([OpStep(op, ("x",), "y")], {"x": x}, "y", ref.shape)
    np.testing.assert_allclose(_run(region, {"x": x}), ref, rtol=1e-5, atol=1e-5)


def test_chain_batch_norm_relu_softmax_reshape():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 4)).astype("float32")
    g, b, m = (rng.standard_normal(3).astype("float32") for _ in range(3))
    v = rng.uniform(0.5, 1.5, 3).astype("float32")
    steps = [
        OpStep(OpInfo("nn.batch_norm", {"axis": 1, "epsilon": 1e-5}), ("x", "g", "b", "m", "v"), "bn"),
        OpStep(OpInfo("nn.relu"), ("bn",), "r"),
        OpStep(OpInfo("reshape", {"shape": [2, 48]}), ("r",), "f"),
        OpStep(OpInfo("nn.softmax", {"axis": -1}), ("f",), "y"),
    ]
    inputs = {"x": x, "g": g, "b": b, "m": m, "v": v}
    region = _region(steps, inputs, "y", (2, 48))
    region.shapes.update({"bn": x.shape, "r": x.shape, "f": (2, 48)})
    bn = (x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5) * g[:, None, None] + b[:, None, None]
    ref = softmax(np.maximum(bn, 0).reshape(2, 48), -1)
    np.testing.assert_allclose(_run(region, inputs), ref, rtol=1e-5, atol=1e-6)


def test_checks_name_the_reason():
    assert check(OpInfo("nn.conv2d", {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i4o"})) is not None
    assert "no ONNX converter" in check(OpInfo("image.resize2d"))
    assert check(OpInfo("nn.batch_norm", {"training": True})) is not None
    assert check(OpInfo("nn.conv2d", {"data_layout": "NHWC", "kernel_layout": "HWIO"})) is None


def test_unexpressible_attribute_raises_unsupported():
    x = np.zeros((1, 2, 5, 5), "float32")
    op = OpInfo("nn.avg_pool2d", {"pool_size": [2, 2], "dilation": [2, 2], "layout": "NCHW"})
    region = _region([OpStep(op, ("x",), "y")], {"x": x}, "y", (1, 2, 3, 3))
    with pytest.raises(Unsupported, match="dilated"):
        build_model(region)


@pytest.mark.parametrize("kind,size", [("max", 8), ("max", 9), ("avg", 8), ("avg", 9)])
def test_ceil_mode_is_offloaded_only_when_onnx_agrees(kind, size):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, size, size)).astype("float32")
    attrs = {"pool_size": [3, 3], "strides": [2, 2], "padding": [0, 0, 0, 0], "dilation": [1, 1],
             "ceil_mode": True, "count_include_pad": False, "layout": "NCHW", "out_layout": "NCHW"}
    ref = pool_nc(x, kind, [3, 3], [2, 2], [1, 1], [0, 0], [0, 0], True, False)
    region = _region([OpStep(OpInfo(f"nn.{kind}_pool2d", attrs), ("x",), "y")], {"x": x}, "y", ref.shape)
    try:
        got = _run(region, {"x": x})
    except Unsupported:
        assert kind == "avg"  # a partial window counted differently: refused, never wrong
        return
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
