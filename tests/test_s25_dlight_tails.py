"""dlight's row reductions with a guarded tail (opinfo.rfactor_guarded) and reductions over
several axes that dlight fused into one variable (opinfo.reduce_fuse.split_fused_reductions).

The fixtures are TVM 0.27's dlight schedules (target cuda) of Relax ops: the split of the
reduction leaves a predicate ``r * F + k < N`` on rfactor's partial block, which drops points
of that block's own domain; merged with the final block, the reduction over ``[0, N)`` is whole.
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.normalize import forward_fills, merge_inits, normalize
from opinfo.rfactor_guarded import merge_guarded_rfactor
from tests.fixture_util import FIXTURES


def _funcs(name: str, old: str = "", new: str = "") -> dict:
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return dict(tir.parse(text).prim_funcs())


def _ops(func) -> list:
    return [(op.name, op.attrs) for op in opinfo.analyze(func).ops]


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _random(func, n: int = 7) -> list:
    rng = np.random.default_rng(5)
    arrays = []
    for buf in func.buffers[:-1]:
        shape = tuple(int(getattr(s, "value", n)) for s in buf.shape)
        arrays.append(rng.normal(size=shape).astype("float32"))
    return arrays


@pytest.mark.parametrize("name, func, want", [
    ("s25_dlight_sum_symbolic_tail", "sum", None),  # sum or collapse_sum_to: undecided
    ("s25_dlight_square_mean_tail", "mean", [("mean", {"axis": [1, 2], "keepdims": False})]),
    ("s25_dlight_rms_norm_symbolic", "rms_norm", [("nn.rms_norm", {"axes": [3], "epsilon": 1e-06})]),
    ("s25_dlight_variance_symbolic", "variance", [("variance", {"axis": [0], "keepdims": True})]),
])
def test_guarded_tails_are_read(name, func, want):
    f = _funcs(name)[func]
    info = opinfo.analyze(f)
    assert info.refused is None
    if want is None:
        assert info.ops == () and [op.name for op in info.undecided] == ["sum"]
    else:
        got = [(op.name, {k: _plain(op.attrs[k]) for k in w}) for op, (_, w) in zip(info.ops, want)]
        assert len(info.ops) == len(want) and got == want


@pytest.mark.parametrize("name, func", [
    ("s25_dlight_sum_symbolic_tail", "sum"), ("s25_dlight_square_mean_tail", "mean"),
    ("s25_dlight_rms_norm_symbolic", "rms_norm"),
])
def test_merged_function_computes_the_same(name, func):
    # the merged reduction keeps the guard (a split's tail) until drop_predicates reads it
    f = _funcs(name)[func]
    merged = merge_guarded_rfactor(merge_inits(forward_fills(f)))
    assert not [b for b in merged.blocks() if "_rf" in b.name]
    assert normalize(f) is not None
    args = _random(f)
    np.testing.assert_allclose(tir.run(merged, *args), tir.run(f, *args), rtol=1e-5, atol=1e-6)


def test_merge_keeps_the_guard_as_a_split_tail():
    f = _funcs("s25_dlight_square_mean_tail")["mean"]
    merged = merge_guarded_rfactor(merge_inits(f))
    names = sorted(b.name for b in merged.blocks() if b.iter_vars)
    assert names == ["T_divide", "lv_red"]  # the partial block and its init block are gone
    red = next(b for b in merged.blocks() if b.name == "lv_red")
    (iv,) = [iv for iv in red.iter_vars if iv.kind.name == "REDUCE"]
    assert iv.dom.extent.value == 18
    x, = _random(f)
    np.testing.assert_allclose(tir.run(merged, x), tir.run(f, x), rtol=1e-6)


@pytest.mark.parametrize("old, new", [
    # the partial block's guard with another coefficient: its points are not r * 16 + k
    ("T.where(ax1_ax2_fused_0 * T.int64(16) + ax1_ax2_fused_1 < T.int64(18))",
     "T.where(ax1_ax2_fused_0 * T.int64(8) + ax1_ax2_fused_1 < T.int64(18))"),
    # a guard leaving more than the last r's tail out: r runs 2, the guard keeps 15 < 16 + 1
    ("T.where(ax1_ax2_fused_0 * T.int64(16) + ax1_ax2_fused_1 < T.int64(18))",
     "T.where(ax1_ax2_fused_0 * T.int64(16) + ax1_ax2_fused_1 < T.int64(15))"),
])
def test_other_guards_are_not_merged(old, new):
    f = _funcs("s25_dlight_square_mean_tail", old, new)["mean"]
    assert merge_guarded_rfactor(merge_inits(f)) is merge_inits(f) or \
        merge_guarded_rfactor(merge_inits(f)) == merge_inits(f)
    assert not [op for op in opinfo.analyze(f).ops if op.name == "mean"]


def test_digits_that_do_not_tile_are_not_split():
    # c // 6 and c % 4 over 18: the digits overlap, no pair of axes is read
    f = _funcs("s25_dlight_square_mean_tail",
               "+ lv[v0, (vax1_ax2_fused_0 * T.int64(16) + vax1_ax2_fused_1) // T.int64(6), (vax1_ax2_fused_0 * T.int64(16) + vax1_ax2_fused_1) % T.int64(6)]",
               "+ lv[v0, (vax1_ax2_fused_0 * T.int64(16) + vax1_ax2_fused_1) // T.int64(6), (vax1_ax2_fused_0 * T.int64(16) + vax1_ax2_fused_1) % T.int64(4)]")["mean"]
    assert not [op for op in opinfo.analyze(f).ops if op.name == "mean"]


@pytest.mark.parametrize("name", ["s25_dlight_flip", "s25_dlight_flip_symbolic"])
def test_rebuilt_flip_is_named_by_its_tag(name):
    # dlight rebuilt the block from its loops: flip's n - 1 - v reads v * -1 + (n - 1), the
    # form of a reversing strided_slice; the compute tag T_reverse_sequence is flip's alone
    (func,) = _funcs(name).values()
    assert _ops(func) == [("flip", {"axis": 0})]
    renamed = _funcs(name, 'with T.sblock("T_reverse_sequence"):', 'with T.sblock("T_strided_slice_with_axes"):')
    (func,) = renamed.values()
    assert _ops(func) == []


def test_keepdims_unit_axis_is_no_reduced_axis():
    # dlight wrote the unit output axis of a keepdims reduction at 0 and kept its loop: the
    # block's unit variable reads nothing and is dropped, not counted as a reduced axis
    (func,) = _funcs("s25_dlight_nll_loss").values()
    assert _ops(func) == [("nn.nll_loss", {"reduction": "mean", "ignore_index": -100})]


def test_depthwise_conv_gets_its_unit_channel_back():
    # x[.., o, ..] * w[o, 0, ..]: the one input channel per group lost its variable
    (func,) = _funcs("s25_dlight_depthwise_conv2d").values()
    (name, attrs), = _ops(func)
    assert name == "nn.conv2d"
    assert {k: _plain(attrs[k]) for k in ("groups", "strides", "dilation", "padding", "kernel_layout")} == {
        "groups": 4, "strides": [1, 1], "dilation": [2, 1], "padding": [0, 0, 1, 1], "kernel_layout": "OIHW"}


def test_several_unit_weight_axes_read_at_zero_abstain():
    # a (3, 1, 1) kernel: its unit kernel axes and the unit channel all read at 0, which
    # weight axis is the input channel is not shown
    (func,) = _funcs("s25_dlight_depthwise_conv3d_unit_kernel").values()
    assert _ops(func) == []


def test_pool_whose_unit_window_lost_its_variable_is_no_packed_pool():
    # adaptive_avg_pool3d to (11, 1, 1) over a depth of 11: dlight drops the depth window's
    # unit variable, and the depth axis read as a channel block in the middle (NC11cHW) would
    # make it a 2-D pool -- a wrong name; no packed layout has its block before H and W
    (func,) = _funcs("s25_dlight_adaptive_pool3d_unit_depth").values()
    assert _ops(func) == []


def test_inlined_group_norm_with_one_channel_per_group_is_not_instance_norm():
    # group_norm(num_groups=2) over 2 channels computes instance_norm's values; dlight inlined
    # the grouping reshape that tells them apart, but its closing block keeps group_norm's
    # compute tag (T_reshape): instance_norm is not claimed
    (func,) = _funcs("s25_dlight_group_norm_one_per_group").values()
    assert _ops(func) == []


def test_rebuilt_pool_with_three_unpooled_axes_names_no_packed_layout():
    # NHWC adaptive_avg_pool2d to (6, 1) over H = 6: the identity H window lost its variable,
    # and N, H, C would read as a packed 1-D pool's N, C chunk and block (NCW7c)
    (func,) = _funcs("s25_dlight_adaptive_pool2d_unit_height").values()
    assert _ops(func) == []


@pytest.mark.parametrize("name", [
    "s25_dlight_fused_add_astype_astype",  # float32(float64(x + y)): two astype ops, no change
    "s25_dlight_fused_softmax_relu",  # max(softmax, 0) has softmax's values
    "s25_dlight_fused_layer_norm_astype_astype",
])
def test_ops_inlined_after_an_op_are_not_swallowed(name):
    # FuseTIR's kernel of op, then ops that change nothing on its values, with dlight's
    # schedule inlining them into the op's last block: named as the first op alone it would
    # lose the others (abstains: the op boundaries are gone)
    (func,) = _funcs(name).values()
    assert _ops(func) == []


def test_cast_blocks_before_an_op_that_reindexes_them_stay_ops_of_their_own():
    # FuseTIR's kernel of astype (float64), astype (float32), broadcast_to, exp: the broadcast
    # reads the second cast's buffer at its own indices; the two casts are that input's
    # producers, not part of broadcast_to's form
    (func,) = _funcs("s25_fused_astype_astype_broadcast_to_exp").values()
    assert [name for name, _ in _ops(func)] == ["astype", "astype", "broadcast_to", "exp"]
