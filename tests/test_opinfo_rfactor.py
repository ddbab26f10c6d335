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
])
def test_rfactor_merged(name, op, attrs):
    func = fixture_func(f"rfactor_{name}")
    merged = merge_rfactor(func)
    verify(merged)
    assert len(list(merged.blocks())) == len(list(func.blocks())) - 1
    assert_same_values(func, merged)
    (got,) = opinfo.analyze(func).ops
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
