"""Reductions split by TVM's rfactor (fixtures printed by TVM 0.27) are merged back
(:mod:`opinfo.rfactor`): same values, recognised as the unscheduled op."""
from __future__ import annotations

import pytest
from tir.verifier import verify

import opinfo
from opinfo.normalize import normalize
from opinfo.rfactor import merge_rfactor
from fixture_util import assert_same_values, fixture_func


@pytest.mark.parametrize("name, op, attrs", [
    ("sum", "sum", {"axis": [0, 1, 2], "keepdims": False}),  # partial block reduces too
    ("max", "max", {"axis": [0], "keepdims": True}),  # partial block is a copy
    ("conv2d", "nn.conv2d", {"strides": [1, 1], "padding": [0, 0, 0, 0], "groups": 2,
                             "data_layout": "NHWC", "kernel_layout": "HWIO"}),
    # several accumulators (opinfo.rfactor_tuple): argmax's partial block stores the element
    # pair (index, value), nothing left to reduce; group_norm's sum and sum of squares go
    # through T.let and its partial block reduces too
    ("argmax", "argmax", {"axis": 0, "keepdims": True}),
    ("group_norm", "nn.group_norm", {"num_groups": 2, "channel_axis": 1, "axes": [2, 3], "epsilon": 1e-05}),
])
def test_rfactor_merged(name, op, attrs):
    func = fixture_func(f"rfactor_{name}")
    merged = merge_rfactor(func)
    verify(merged)
    assert len(list(merged.blocks())) == len(list(func.blocks())) - 1
    assert_same_values(func, merged)
    (got,) = opinfo.analyze(func, conventions=True).ops  # a full sum: collapse_sum_to's loops too
    assert got.name == op
    j = got.to_json()["attrs"]
    assert {k: j[k] for k in attrs} == attrs


def test_different_combiners_stay():
    """A final max over partial sums is not one reduction: nothing is merged."""
    func = fixture_func("rfactor_sum", lambda text: text.replace(
        "x_red[()] = x_red[()] + x_red_rf[vk2]", "x_red[()] = T.max(x_red[()], x_red_rf[vk2])"))
    assert merge_rfactor(func) is func
    assert len(list(normalize(func).blocks())) == 2


def test_fused_producer_is_not_a_partial():
    """exp then sum fused by TVM has the copy form of a partial block; without rfactor's
    ``_rf`` name it is two ops."""
    func = fixture_func("rfactor_max", lambda text: text.replace('T.sblock("x_red_rf")', 'T.sblock("compute")'))
    assert merge_rfactor(func) is func



def test_several_accumulators_other_combiner_stays():
    """A final block whose combiner differs from the partial block's (max over partial
    sums of squares) is not one reduction: nothing is merged."""
    func = fixture_func("rfactor_group_norm", lambda text: text.replace(
        "x_red_temp_v1[v_ax0, v_ax1] + x_red_temp_v1_rf[vax1, v_ax0, v_ax1]",
        "T.max(x_red_temp_v1[v_ax0, v_ax1], x_red_temp_v1_rf[vax1, v_ax0, v_ax1])"))
    assert merge_rfactor(func) is func


def test_several_accumulators_swapped_outputs_stay():
    """The final block pairing the outputs with the partial buffers the other way round
    from the partial block's own updates is not the same combiner."""
    func = fixture_func("rfactor_group_norm", lambda text: text.replace(
        "x_red_temp_v0[v_ax0, v_ax1] + x_red_temp_v0_rf[vax1, v_ax0, v_ax1]",
        "x_red_temp_v0[v_ax0, v_ax1] + x_red_temp_v1_rf[vax1, v_ax0, v_ax1]"))
    assert merge_rfactor(func) is func


def test_flat_argmin_with_the_partial_axis_first():
    """argmin(axis=None) rfactored over the inner axis: the merged block lists the reduction
    variables (inner, outer); the recorded index k0 * 7 + k1 still names the row-major order."""
    (got,) = opinfo.analyze(fixture_func("rfactor_argmin_flat")).ops
    assert (got.name, got.to_json()["attrs"]) == ("argmin", {"axis": None, "keepdims": True})
