"""Reductions split by TVM's rfactor (fixtures printed by TVM 0.27) are merged back
(:mod:`opinfo.rfactor`): same values, recognised as the unscheduled op."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tir
from tir.verifier import verify

import opinfo
from opinfo.normalize import normalize
from opinfo.rfactor import merge_rfactor

FIXTURES = Path(__file__).parent / "fixtures"


def _func(name):
    mod = tir.parse((FIXTURES / f"rfactor_{name}.py").read_text())
    (_, func), = mod.prim_funcs()
    return func


@pytest.mark.parametrize("name, op, attrs", [
    ("sum", "sum", {"axis": [0, 1, 2], "keepdims": False}),  # partial block reduces too
    ("max", "max", {"axis": [0], "keepdims": True}),  # partial block is a copy
    ("conv2d", "nn.conv2d", {"strides": [1, 1], "padding": [0, 0, 0, 0], "groups": 2,
                             "data_layout": "NHWC", "kernel_layout": "HWIO"}),
])
def test_rfactor_merged(name, op, attrs):
    func = _func(name)
    merged = merge_rfactor(func)
    verify(merged)
    assert len(list(merged.blocks())) == len(list(func.blocks())) - 1
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:-1]]
    np.testing.assert_allclose(tir.run(merged, *args), tir.run(func, *args), rtol=1e-5, atol=1e-5)
    (got,) = opinfo.analyze(func).ops
    assert got.name == op
    j = got.to_json()["attrs"]
    assert {k: j[k] for k in attrs} == attrs


def test_different_combiners_stay():
    """A final max over partial sums is not one reduction: nothing is merged."""
    text = (FIXTURES / "rfactor_sum.py").read_text().replace(
        "x_red[()] = x_red[()] + x_red_rf[vk2]", "x_red[()] = T.max(x_red[()], x_red_rf[vk2])")
    (_, func), = tir.parse(text).prim_funcs()
    assert merge_rfactor(func) is func
    assert len(list(normalize(func).blocks())) == 2


def test_fused_producer_is_not_a_partial():
    """exp then sum fused by TVM has the copy form of a partial block; without rfactor's
    ``_rf`` name it is two ops."""
    text = (FIXTURES / "rfactor_max.py").read_text().replace('T.block("x_red_rf")', 'T.block("compute")').replace(
        'T.sblock("x_red_rf")', 'T.sblock("compute")')
    (_, func), = tir.parse(text).prim_funcs()
    assert merge_rfactor(func) is func
