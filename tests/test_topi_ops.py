"""tir.topi elementwise, binary, matmul, reduction, normalisation and data-movement ops:
lowered, interpreted, compared with numpy references."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir import topi
from tir.topi.graph import GraphBuilder
from tests import topi_reference as ref

SETTINGS = settings(max_examples=10, deadline=None)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)


def run(op, arrays, **attrs):
    func = topi.lower(op, [(a.shape, str(a.dtype)) for a in arrays], **attrs)
    return tir.run(func, *arrays)


def data(shape, seed=0, positive=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return np.abs(x) + 0.5 if positive else x


@SETTINGS
@given(st.sampled_from(sorted(ref.UNARY)), shapes)
def test_unary(op, shape):
    x = data(shape, positive=op in ("log", "sqrt", "rsqrt"))
    np.testing.assert_allclose(run(op, [x]), ref.UNARY[op](x), rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.sampled_from(sorted(ref.BINARY)), shapes, st.data())
def test_binary_broadcast(op, shape, draw):
    other = [draw.draw(st.sampled_from([e, 1])) for e in shape][draw.draw(st.integers(0, len(shape) - 1)):]
    x, y = data(shape, 1, op == "power"), data(other or [1], 2, op == "power")
    np.testing.assert_allclose(run(op, [x, y]), ref.BINARY[op](x, y), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,attrs,fn", [
    ("clip", dict(min=-0.5, max=0.5), lambda v: np.clip(v, -0.5, 0.5)),
    ("nn.relu6", dict(min=0.0, max=6.0), lambda v: np.clip(v, 0, 6)),
    ("nn.leakyrelu", dict(alpha=0.2), lambda v: np.where(v > 0, v, 0.2 * v)),
    ("nn.softplus", dict(beta=2.0, threshold=1.0), lambda v: np.where(2 * v > 1, v, np.log1p(np.exp(2 * v)) / 2)),
    ("astype", dict(dtype="int32"), lambda v: v.astype("int32")),
])
def test_unary_with_attrs(op, attrs, fn):
    x = data((3, 4)) * 3
    np.testing.assert_allclose(run(op, [x], **attrs), fn(x), rtol=1e-5, atol=1e-5)


def test_where():
    c = np.array([True, False, True])
    x, y = data((2, 3), 1), data((3,), 2)
    np.testing.assert_allclose(run("where", [c, x, y]), np.where(c, x, y))


@SETTINGS
@given(st.sampled_from([((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((2, 3, 4), (4, 2)),
                        ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,))]))
def test_matmul(shapes_):
    x, y = data(shapes_[0], 1), data(shapes_[1], 2)
    np.testing.assert_allclose(run("matmul", [x, y]), np.matmul(x, y), rtol=1e-4, atol=1e-4)


REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod, "variance": np.var}


@SETTINGS
@given(st.sampled_from(sorted(REDUCE)), shapes, st.data(), st.booleans())
def test_reductions(op, shape, draw, keepdims):
    axes = draw.draw(st.one_of(st.none(), st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                                                    max_size=len(shape), unique_by=lambda a: a % len(shape))))
    x = data(shape)
    expected = REDUCE[op](x, axis=None if axes is None else tuple(axes), keepdims=keepdims)
    np.testing.assert_allclose(run(op, [x], axis=axes, keepdims=keepdims), expected, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(st.sampled_from(["argmax", "argmin"]), shapes, st.data(), st.booleans())
def test_arg_reductions(op, shape, draw, keepdims):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.round(data(shape) * 2)  # ties: the first index wins, as in numpy
    expected = getattr(np, op)(x, axis=axis)
    expected = np.expand_dims(expected, axis) if keepdims else expected
    np.testing.assert_array_equal(run(op, [x], axis=axis, keepdims=keepdims), expected)


@SETTINGS
@given(shapes, st.data())
def test_softmax_and_log_softmax(shape, draw):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    x = data(shape)
    np.testing.assert_allclose(run("nn.softmax", [x], axis=axis), ref.softmax(x, axis), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run("nn.log_softmax", [x], axis=axis), np.log(ref.softmax(x, axis)),
                               rtol=1e-4, atol=1e-5)


def test_layer_rms_group_batch_norm():
    x = data((2, 4, 3, 3))
    g, b = data((3, 3), 1), data((3, 3), 2)
    mu = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(run("nn.layer_norm", [x, g, b], axes=[2, 3], epsilon=1e-5),
                               (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4, atol=1e-4)
    w = data((3,), 3)
    rms = np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(run("nn.rms_norm", [x, w], axes=[-1]), x / rms * w, rtol=1e-4, atol=1e-4)
    gc, bc = data((4,), 4), data((4,), 5)
    xg = x.reshape(2, 2, 2, 3, 3)
    mg, vg = xg.mean(axis=(2, 3, 4), keepdims=True), xg.var(axis=(2, 3, 4), keepdims=True)
    expected = ((xg - mg) / np.sqrt(vg + 1e-5)).reshape(x.shape) * gc[:, None, None] + bc[:, None, None]
    np.testing.assert_allclose(run("nn.group_norm", [x, gc, bc], num_groups=2, axes=[2, 3]), expected,
                               rtol=1e-3, atol=1e-4)
    mean, v = data((4,), 6), np.abs(data((4,), 7)) + 0.1
    g = GraphBuilder()
    params = [g.input(f"p{i}", a.shape) for i, a in enumerate((x, gc, bc, mean, v))]
    out = tir.run(g.build(g.item(g.batch_norm(*params, epsilon=1e-5), 0)), x, gc, bc, mean, v)
    c = (slice(None), None, None)
    np.testing.assert_allclose(out, (x - mean[c]) / np.sqrt(v[c] + 1e-5) * gc[c] + bc[c], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,shape,attrs,fn", [
    ("permute_dims", (2, 3, 4), dict(axes=[2, 0, 1]), lambda x: x.transpose(2, 0, 1)),
    ("permute_dims", (2, 3), dict(axes=None), lambda x: x.T),
    ("reshape", (2, 3, 4), dict(shape=[4, -1]), lambda x: x.reshape(4, -1)),
    ("reshape", (2, 6), dict(shape=[3, 2, 2]), lambda x: x.reshape(3, 2, 2)),
    ("expand_dims", (2, 3), dict(axis=[0, -1]), lambda x: x[None, :, :, None]),
    ("squeeze", (1, 3, 1), dict(axis=None), lambda x: x.reshape(3)),
    ("squeeze", (1, 3, 1), dict(axis=[2]), lambda x: x.reshape(1, 3)),
    ("strided_slice", (6, 5), dict(axes=[0, 1], begin=[1, 4], end=[6, 0], strides=[2, -2]), lambda x: x[1:6:2, 4:0:-2]),
    ("nn.pad", (2, 3), dict(pad_width=[1, 0, 2, 1], pad_value=1.5),
     lambda x: np.pad(x, [(1, 0), (2, 1)], constant_values=1.5)),
    ("broadcast_to", (1, 3, 1), dict(shape=[2, 3, 4]), lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("tile", (2, 3), dict(repeats=[2, 1, 3]), lambda x: np.tile(x, (2, 1, 3))),
    ("flip", (3, 4), dict(axis=-1), lambda x: x[:, ::-1]),
    ("image.resize2d", (1, 2, 3, 4), dict(size=[6, 8], method="nearest_neighbor", rounding_method="floor",
                                          coordinate_transformation_mode="asymmetric"),
     lambda x: x[:, :, np.arange(6) // 2][:, :, :, np.arange(8) // 2]),
    ("image.resize2d", (1, 1, 2, 2), dict(size=[3, 3], method="linear", coordinate_transformation_mode="align_corners"),
     lambda x: np.array([[[[x[0, 0, 0, 0], (x[0, 0, 0, 0] + x[0, 0, 0, 1]) / 2, x[0, 0, 0, 1]],
                           [(x[0, 0, 0, 0] + x[0, 0, 1, 0]) / 2, x[0, 0].mean(), (x[0, 0, 0, 1] + x[0, 0, 1, 1]) / 2],
                           [x[0, 0, 1, 0], (x[0, 0, 1, 0] + x[0, 0, 1, 1]) / 2, x[0, 0, 1, 1]]]]])),
    ("layout_transform", (1, 6, 2, 2), dict(src_layout="NCHW", dst_layout="NCHW3c"),
     lambda x: x.reshape(1, 2, 3, 2, 2).transpose(0, 1, 3, 4, 2)),
])
def test_data_movement(op, shape, attrs, fn):
    x = data(shape)
    np.testing.assert_allclose(run(op, [x], **attrs), fn(x), rtol=1e-5, atol=1e-6)


def test_concat_stack_take():
    a, b, c = data((2, 3), 1), data((1, 3), 2), data((2, 3), 3)
    np.testing.assert_allclose(run("concat", [a, b, c], axis=0), np.concatenate([a, b, c]))
    np.testing.assert_allclose(run("stack", [a, c], axis=1), np.stack([a, c], axis=1))
    idx = np.array([2, 0, 2], dtype="int64")
    np.testing.assert_allclose(run("take", [a, idx], axis=1), np.take(a, idx, axis=1))
    np.testing.assert_allclose(run("take", [a, idx + 3], axis=1, mode="wrap"), np.take(a, idx, axis=1))


def test_unknown_op_and_attribute():
    with pytest.raises(ValueError, match="accepted ops"):
        topi.lower("nn.conv4d", [((1,), "float32")])
    with pytest.raises(ValueError, match="accepted: axis, keepdims"):
        topi.lower("sum", [((1,), "float32")], axes=[0])


def test_symbolic_batch():
    n = tir.SizeVar("n", tir.dtype.int64)
    func = topi.lower("nn.softmax", [((n, 5), "float32")], axis=-1)
    assert func.buffers[0].shape[0] is n
    x = data((3, 5))
    np.testing.assert_allclose(tir.run(func, x), ref.softmax(x, -1), rtol=1e-5, atol=1e-6)
