"""``nn.instance_norm``: TVM's form (one (sum, sum of squares) reduction over the spatial
axes, then the normalised output scaled and shifted per channel) for several layouts and
channel axes; group_norm with one channel per group computes the same values but through
a reshape into groups, and keeps its own name."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from opinfo.api import analyze
from unknown_ops_nn import instance_norm as instance_norm_func

F32 = "float32"


def instance_norm(shape, channel_axis, eps=1e-5):
    """TVM's instance_norm PrimFunc (the bench's builder) and its normalised axes."""
    return instance_norm_func(shape, channel_axis, eps), [d for d in range(1, len(shape)) if d != channel_axis]


def reference(x, gamma, beta, channel_axis, axes, eps):
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = x.var(axis=tuple(axes), keepdims=True)
    bshape = [1] * x.ndim
    bshape[channel_axis] = -1
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(bshape) + beta.reshape(bshape)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=3, max_size=5), st.data(), st.sampled_from([1e-5, 1e-3]))
def test_instance_norm_round_trip(shape, data, eps):
    shape = tuple(shape)
    channel_axis = data.draw(st.sampled_from([1, len(shape) - 1]))
    func, axes = instance_norm(shape, channel_axis, eps)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(F32)
    g, be = (rng.standard_normal(shape[channel_axis]).astype(F32) for _ in range(2))
    np.testing.assert_allclose(tir.run(func, x, g, be), reference(x, g, be, channel_axis, axes, eps),
                               rtol=1e-3, atol=1e-3)
    ops = analyze(func).ops
    # a channel of extent 1, or spatial axes of one element, leave nothing to tell apart
    if not ops:
        return
    assert [o.name for o in ops] == ["nn.instance_norm"]
    attrs = ops[0].to_json()["attrs"]
    assert attrs["channel_axis"] == channel_axis and attrs["axes"] == axes
    assert attrs["epsilon"] == pytest.approx(eps)
    assert [o.role for o in ops[0].operands] == ["data", "gamma", "beta"]


@pytest.mark.parametrize("shape,channel_axis", [((2, 4, 3, 3), 1), ((2, 3, 3, 4), 3), ((1, 6, 5), 1)])
def test_instance_norm_is_named(shape, channel_axis):
    func, axes = instance_norm(shape, channel_axis)
    ops = analyze(func).ops
    assert [(o.name, o.to_json()["attrs"]["channel_axis"], o.to_json()["attrs"]["axes"]) for o in ops] == [
        ("nn.instance_norm", channel_axis, axes)]


@pytest.mark.parametrize("shape", [(2, 4, 3, 3), (1, 3, 5), (2, 6, 2, 2, 2)])
def test_group_norm_with_one_channel_per_group_stays_group_norm(shape):
    c = shape[1]
    func = tir.topi.lower("nn.group_norm", [(shape, F32), ((c,), F32), ((c,), F32)], num_groups=c, channel_axis=1,
                          axes=list(range(2, len(shape))), epsilon=1e-5)
    assert [o.name for o in analyze(func).ops] == ["nn.group_norm"]
