"""GraphBuilder: shared PrimFuncs with TVM-style names, build-time errors, the example network."""
import numpy as np
import pytest

import tir
from tir.relax import CallTIR
from tir.topi.examples import example_inputs, resnet_block_example
from tir.topi.graph import GraphBuilder


def _conv_chain():
    g = GraphBuilder()
    x = g.input("x", (1, 4, 6, 6))
    w = g.input("w", (4, 4, 3, 3))
    w2 = g.input("w2", (4, 4, 1, 1))
    y = g.relu(g.conv2d(x, w, padding=[1, 1, 1, 1]))
    y = g.relu(g.conv2d(y, w, padding=[1, 1, 1, 1]))
    y = g.conv2d(y, w2)
    return g, g.build(y)


def test_identical_primfuncs_are_shared_and_named_like_tvm():
    _, mod = _conv_chain()
    names = [n for n, _ in mod.prim_funcs()]
    assert names == ["conv2d", "conv2d1", "relu"]
    calls = [b.value.func.name for b in mod.main.bindings if isinstance(b.value, CallTIR)]
    assert calls == ["conv2d", "relu", "conv2d", "relu", "conv2d1"]


def test_shape_and_attribute_errors_name_op_and_argument():
    g = GraphBuilder()
    x = g.input("x", (1, 4, 6, 6))
    with pytest.raises(ValueError, match="nn.conv2d: kernel"):
        g.conv2d(x, g.input("w", (8, 3, 3, 3)))
    with pytest.raises(ValueError, match="nn.conv2d: groups"):
        g.conv2d(x, g.input("w3", (6, 2, 3, 3)), groups=3)
    with pytest.raises(ValueError, match="nn.softmax: axis"):
        g.softmax(x, axis=4)
    with pytest.raises(ValueError, match="add: shapes"):
        g.add(x, g.input("y", (1, 3, 6, 6)))
    with pytest.raises(AttributeError, match="no op"):
        g.conv9d(x)


def test_symbolic_batch_flows_through():
    n = tir.SizeVar("n", tir.dtype.int64)
    mod = resnet_block_example(batch=n)
    assert mod.main.params[0].type.shape[0] is n
    out = tir.run(mod, *example_inputs(mod, batch=2))
    assert out.shape == (2, 10)


def test_example_network_interp_and_c_agree():
    mod = resnet_block_example()
    arrays = example_inputs(mod)
    ref = tir.run(mod, *arrays)
    np.testing.assert_allclose(ref.sum(axis=-1), 1.0, rtol=1e-5)
    try:
        out_c = tir.run(mod, *arrays, engine="c")
    except (RuntimeError, OSError) as err:  # no C compiler on this machine
        pytest.skip(f"C engine unavailable: {err}")
    np.testing.assert_allclose(out_c, ref, rtol=1e-4, atol=1e-5)


def test_example_matches_numpy():
    mod = resnet_block_example()
    arrays = example_inputs(mod)
    data, sw, sb, aw, ab, bw, bb, fw, fb = arrays
    from tests.topi_reference import conv_nc, softmax

    def conv(x, w, b):
        return conv_nc(x, w, [1, 1], [1, 1], [1, 1], [1, 1], 1) + b

    stem = np.maximum(conv(data, sw, sb), 0)
    pooled = stem.reshape(1, 8, 4, 2, 4, 2).max(axis=(3, 5))
    branch = conv(np.maximum(conv(pooled, aw, ab), 0), bw, bb)
    res = np.maximum(branch + pooled, 0)
    logits = res.mean(axis=(2, 3)) @ fw + fb
    np.testing.assert_allclose(tir.run(mod, *arrays), softmax(logits, -1), rtol=1e-4, atol=1e-5)
