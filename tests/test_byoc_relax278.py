"""tlc-pack/relax#278: offload a lowered conv2d through its recovered attributes.

The conv2d is lowered first (TVM's loop form, via tir.topi); BYOC then works from what
opinfo recovers (asymmetric padding, strides, dilation, groups, NCHW and NHWC) and must
give the interpreter's numbers. An op ONNX cannot express stays in TIR with the reason.
"""
import numpy as np
import pytest

import tir
from tir.topi.graph import GraphBuilder

pytest.importorskip("onnxruntime")

import byoc  # noqa: E402

CASES = [("NCHW", "OIHW", (1, 4, 11, 10), (6, 2, 3, 3)), ("NHWC", "HWIO", (1, 11, 10, 4), (3, 3, 2, 6))]


@pytest.mark.parametrize("layout,klayout,xshape,wshape", CASES)
def test_lowered_conv2d_offloaded_through_recovered_attributes(layout, klayout, xshape, wshape):
    g = GraphBuilder()
    x, w = g.input("x", xshape), g.input("w", wshape)
    attrs = {"strides": [2, 1], "padding": [1, 0, 2, 1], "dilation": [1, 2], "groups": 2}
    mod = g.build(g.conv2d(x, w, data_layout=layout, kernel_layout=klayout, **attrs))
    part = byoc.partition(mod, "onnxruntime")
    info = byoc.summary(part)
    [region] = info["regions"]
    [op] = region["ops"]
    assert op["op"] == "nn.conv2d"
    for k, v in attrs.items():
        assert op["attrs"][k] == v
    assert op["attrs"]["data_layout"] == layout and op["attrs"]["kernel_layout"] == klayout
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(xshape).astype("float32"), rng.standard_normal(wshape).astype("float32")]
    np.testing.assert_allclose(tir.run(part, *args), tir.run(mod, *args, engine="interp"), rtol=1e-4, atol=1e-4)


def test_op_the_backend_cannot_express_stays_in_tir_with_the_reason():
    g = GraphBuilder()
    x = g.input("x", (1, 2, 10, 10))
    y = g.avg_pool2d(g.relu(x), pool_size=[2, 2], strides=[2, 2], dilation=[2, 2])
    mod = g.build(y)
    part = byoc.partition(mod, "onnxruntime")
    info = byoc.summary(part)
    offloaded = [op["op"] for r in info["regions"] for op in r["ops"]]
    assert offloaded == ["nn.relu"]
    [kept] = info["kept"]
    assert kept["ops"] == ["nn.avg_pool2d"] and "dilat" in kept["reason"]
    args = [np.random.default_rng(1).standard_normal((1, 2, 10, 10)).astype("float32")]
    np.testing.assert_allclose(tir.run(part, *args), tir.run(mod, *args), rtol=1e-5, atol=1e-5)


try:
    from hypothesis import given, settings, strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    @settings(max_examples=8, deadline=None)
    @given(st.sampled_from(CASES), st.integers(1, 3), st.integers(1, 3), st.lists(st.integers(0, 2), min_size=4,
                                                                                  max_size=4),
           st.integers(1, 2), st.integers(1, 2))
    def test_random_conv_attributes_give_the_interpreter_numbers(case, sh, sw, padding, dh, dw):
        layout, klayout, xshape, wshape = case
        g = GraphBuilder()
        x, w = g.input("x", xshape), g.input("w", wshape)
        mod = g.build(g.conv2d(x, w, data_layout=layout, kernel_layout=klayout, strides=[sh, sw],
                               padding=padding, dilation=[dh, dw], groups=2))
        part = byoc.partition(mod, "onnxruntime")
        [region] = byoc.summary(part)["regions"]
        [op] = region["ops"]
        assert op["attrs"]["strides"] == [sh, sw] and op["attrs"]["dilation"] == [dh, dw]
        assert op["attrs"]["padding"] == padding and op["attrs"]["groups"] == 2
        rng = np.random.default_rng(0)
        args = [rng.standard_normal(xshape).astype("float32"), rng.standard_normal(wshape).astype("float32")]
        np.testing.assert_allclose(tir.run(part, *args), tir.run(mod, *args), rtol=1e-4, atol=1e-4)
