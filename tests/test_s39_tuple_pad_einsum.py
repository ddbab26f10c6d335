"""Session 39: ``pad_einsum`` of a tuple reduction (a norm's sum and sum of squares).

TVM 0.27 legalizes ``instance_norm`` and ``group_norm`` with one block computing two sums
at once (``let v0 = A0[i] + x in let v1 = A1[i] + x * x in A0[i] = v0; A1[i] = v1``).
``pad_einsum`` pads that block's domain: the reduction axes read a copy of ``x`` padded
with 0 (every term then adds 0 there), and, when a spatial axis is padded too, each
accumulator gets a padded copy that a crop block copies back. ``unpad_einsum`` restores the
block over the unpadded domain when every term has a factor padded with 0 along each dropped
reduction axis (or the predicate stops it there) and every accumulator has its crop.

Fixtures: an ``instance_norm`` over a symbolic batch whose accumulators were padded (batch
to a multiple of 8, channels 4 -> 16) and whose reduction axis 5 -> 6; a ``group_norm`` whose
reduction axes alone were padded (2 -> 4 and 3 -> 16), the accumulators not.
"""
from __future__ import annotations

import numpy as np

import tir
from opinfo.pad_einsum import unpad_einsum
from tests.fixture_util import fixture_func, fixture_ops, replaced
from tir import topi

INSTANCE = "s39_instance_norm_pad_einsum"
GROUP = "s39_group_norm_pad_einsum"
INSTANCE_OP = ("nn.instance_norm", {"channel_axis": 1, "axes": (2, 3), "epsilon": 1e-05, "center": True, "scale": True})
GROUP_OP = ("nn.group_norm", {"num_groups": 2, "channel_axis": 1, "axes": (2, 3), "epsilon": 1e-06, "center": True,
                              "scale": True})


def _normalised(ops):
    return [(name, {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}) for name, attrs in ops]


def test_instance_norm_named():
    assert _normalised(fixture_ops(INSTANCE)) == [INSTANCE_OP]


def test_group_norm_named():
    assert _normalised(fixture_ops(GROUP)) == [GROUP_OP]


def test_pad_blocks_and_crops_go():
    names = [b.name for b in unpad_einsum(fixture_func(INSTANCE)).blocks()]
    assert names == ["x_red_temp", "T_instance_norm"]


def test_group_norm_fixture_computes_the_op():
    rng = np.random.default_rng(39)
    args = [rng.standard_normal(s).astype("float32") for s in [(2, 4, 7, 3), (4,), (4,)]]
    plain = topi.lower("nn.group_norm", [((2, 4, 7, 3), "float32"), ((4,), "float32"), ((4,), "float32")],
                       num_groups=2, channel_axis=1, axes=[2, 3], epsilon=1e-06)
    np.testing.assert_allclose(tir.run(fixture_func(GROUP), *args), tir.run(plain, *args), rtol=1e-4, atol=1e-5)


def test_pad_value_that_is_not_neutral_is_not_named():
    old = "T.if_then_else(v2 < T.int64(2) and v4 < T.int64(3), T_reshape_1[v0, v1, v2, v3, v4], T.float32(0.0))"
    assert fixture_ops(GROUP, old, old.replace("T.float32(0.0)", "T.float32(1.0)")) == []


def test_term_without_a_zero_factor_is_not_restored():
    # exp(0) = 1: the padded points add to the sum of squares
    old = ("x_red_temp_v1[v_ax0, v_ax1] + T_reshape_pad[v_ax0, v_ax1, v_k2, v_k3, v_k4] * "
           "T_reshape_pad[v_ax0, v_ax1, v_k2, v_k3, v_k4]")
    new = "x_red_temp_v1[v_ax0, v_ax1] + T.exp(T_reshape_pad[v_ax0, v_ax1, v_k2, v_k3, v_k4])"
    func = fixture_func(GROUP, lambda text: text.replace(old, new))
    assert "T_reshape_pad" in [b.name for b in unpad_einsum(func).blocks()]
    assert fixture_ops(GROUP, old, new) == []


def test_accumulator_without_its_crop_is_not_restored():
    # the second accumulator's crop reads the first's padded copy: no crop of its own
    text = replaced(INSTANCE, "T.reads(x_red_temp_v1_pad[v0, v1])\n                T.writes(x_red_temp_v1[v0, v1])\n"
                    "                x_red_temp_v1[v0, v1] = x_red_temp_v1_pad[v0, v1]",
                    "T.reads(x_red_temp_v0_pad[v0, v1])\n                T.writes(x_red_temp_v1[v0, v1])\n"
                    "                x_red_temp_v1[v0, v1] = x_red_temp_v0_pad[v0, v1]")
    (_, func), = tir.parse(text).prim_funcs()
    assert "x_red_temp.v1_pad" in [b.name for b in unpad_einsum(func).blocks()]
