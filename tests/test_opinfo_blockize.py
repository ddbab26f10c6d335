"""Blocks nested by TVM's blockize (fixtures printed by TVM 0.27) are merged back
(:mod:`opinfo.blockize`): same values, recognised as the unscheduled op."""
from __future__ import annotations

from hypothesis import given, strategies as st
import pytest
import tir
from tir.stmt import Block
from tir.verifier import verify

import opinfo
from opinfo.blockize import unblockize
from opinfo.normalize import normalize
from fixture_util import assert_same_values, fixture_func


def _nested(func) -> int:
    """How many blocks sit in another block's body (the root's aside)."""
    return sum(1 for b in func.blocks() for n in _blocks_below(b.body))


def _blocks_below(stmt) -> list:
    found = []
    tir.pre_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Block) else True)
    return found


CASES = [
    # name, op, attrs; the dialect and what the fixture has that blockize made
    ("max_pool2d", "nn.max_pool2d", {"pool_size": [3, 1], "strides": [2, 1], "padding": [0, 0, 0, 0],
                                      "layout": "NCHW"}),  # tirx; T.where, _init block, extent-1 reduce var
    ("conv2d", "nn.conv2d", {"strides": [1, 1], "dilation": [2, 2], "padding": [0, 0, 0, 1], "groups": 12,
                             "data_layout": "NHWC", "kernel_layout": "HWIO"}),  # tir; init, o * B + i
    ("conv2d_transpose", "nn.conv2d_transpose", {"padding": [1, 1, 1, 2], "strides": [1, 1],
                                                 "kernel_layout": "IOHW"}),  # pad guard written `o < 2`
    ("gelu", "nn.gelu", {}),  # tirx; split inside the nested loops
    ("selu", "nn.selu", {}),  # tir; six blocks, T.where of outer splits
    ("softmax", "nn.softmax", {"axis": 0}),  # tirx; reductions with init blocks, T.where
]


@pytest.mark.parametrize("name, op, attrs", CASES)
def test_blockize_undone(name, op, attrs):
    func = fixture_func(f"blockize_{name}")
    assert _nested(func) > 0
    flat = unblockize(func)
    verify(flat)
    assert _nested(flat) == 0
    assert len(list(flat.blocks())) < len(list(func.blocks()))
    assert_same_values(func, flat)  # (normalize's output may drop a T.where: not for running)
    assert normalize(func) is not None
    (got,) = opinfo.analyze(func).ops
    assert got.name == op
    j = got.to_json()["attrs"]
    assert {k: j[k] for k in attrs} == attrs


def test_symbolic_extent():
    """``v_i2_o * 3 + v_i2_i`` under a symbolic batch axis becomes one variable of extent 9."""
    func = fixture_func("blockize_sqrt_symbolic")
    (block,) = unblockize(func).blocks()
    assert [int(iv.dom.extent.value) for iv in block.iter_vars[1:]] == [6, 9]
    assert [op.name for op in opinfo.analyze(func).ops] == ["sqrt"]


def test_merge_is_idempotent_and_keeps_plain_functions():
    func = unblockize(fixture_func("blockize_softmax"))
    assert unblockize(func) is func
    plain = fixture_func("rfactor_sum")
    assert unblockize(plain) is plain


BEFORE = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((4, 6), "float32"), y: T.Buffer((4,), "float32")):
    for i, k_0 in T.grid(4, 3):
        with T.block("y_o"):
            v_i_o, v_k_o = T.axis.remap("SR", [i, k_0])
            T.reads(x[v_i_o, v_k_o * 2:v_k_o * 2 + 2])
            T.writes(y[v_i_o])
            with T.init():
                with T.block("y_init"):
                    T.reads()
                    T.writes(y[v_i_o])
                    y[v_i_o] = T.float32(0)
            for k_1 in range(2):
                with T.block("y"):
                    v_k_i = T.axis.reduce(2, k_1)
                    T.reads(y[v_i_o], x[v_i_o, v_k_o * 2 + v_k_i])
                    T.writes(y[v_i_o])
                    y[v_i_o] = y[v_i_o] + x[v_i_o, v_k_o * 2 + v_k_i]
"""

EXPECTED = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((4, 6), "float32"), y: T.Buffer((4,), "float32")):
    for i, k_0, k_1 in T.grid(4, 3, 2):
        with T.block("y"):
            v_i = T.axis.spatial(4, i)
            v_k = T.axis.reduce(6, k_0 * 2 + k_1)
            T.reads(y[v_i], x[v_i, v_k])
            T.writes(y[v_i])
            with T.init():
                y[v_i] = T.float32(0)
            y[v_i] = y[v_i] + x[v_i, v_k]
"""


def _one(text: str):
    return tir.parse(text)


def test_before_expected():
    tir.assert_structural_equal(unblockize(_one(BEFORE)), _one(EXPECTED))


def test_outer_variable_used_alone_stays_apart():
    """``v_k_o`` read on its own (not as ``v_k_o * 2 + v_k_i``): both variables stay, the
    values do not change."""
    func = _one(BEFORE.replace("y[v_i_o] + x[v_i_o, v_k_o * 2 + v_k_i]",
                               "y[v_i_o] + x[v_i_o, v_k_o * 2 + v_k_i] * T.Cast(\"float32\", v_k_o)"))
    (block,) = unblockize(func).blocks()
    assert [iv.var.name for iv in block.iter_vars] == ["v_i_o", "v_k_o", "v_k_i"]
    assert_same_values(func, unblockize(func))


def test_init_over_inner_spatial_variables_is_left():
    """An outer init that does not cover inner spatial variables is not blockize's."""
    func = _one(BEFORE.replace('v_k_i = T.axis.reduce(2, k_1)', 'v_k_i = T.axis.spatial(2, k_1)'))
    assert unblockize(func) is func


def test_inner_domain_on_outer_variables_is_left():
    """An adaptive pool's ``_l1`` block (inner domains depend on the outer variables) stays."""
    func = _one(BEFORE.replace("v_k_i = T.axis.reduce(2, k_1)", "v_k_i = T.axis.reduce((v_k_o, v_k_o + 2), k_1 + v_k_o)"))
    assert unblockize(func) is func


def _blockized_add(rows: int, cols: int, factor: int) -> str:
    """``y = x + 1`` over (rows, cols) as TVM's blockize leaves it after splitting ``cols``
    by ``factor`` and blockizing the inner loop (a T.where when it does not divide)."""
    outer = -(-cols // factor)
    where = f"T.where(v_j_o * {factor} + j_1 < {cols})" if cols % factor else ""
    return f"""
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer(({rows}, {cols}), "float32"), y: T.Buffer(({rows}, {cols}), "float32")):
    for i, j_0 in T.grid({rows}, {outer}):
        with T.block("y_o"):
            v_i_o, v_j_o = T.axis.remap("SS", [i, j_0])
            T.reads(x[v_i_o, v_j_o * {factor}:v_j_o * {factor} + {factor}])
            T.writes(y[v_i_o, v_j_o * {factor}:v_j_o * {factor} + {factor}])
            for j_1 in range({factor}):
                with T.block("y"):
                    v_j_i = T.axis.spatial({factor}, j_1)
                    {where}
                    T.reads(x[v_i_o, v_j_o * {factor} + v_j_i])
                    T.writes(y[v_i_o, v_j_o * {factor} + v_j_i])
                    y[v_i_o, v_j_o * {factor} + v_j_i] = x[v_i_o, v_j_o * {factor} + v_j_i] + T.float32(1)
"""


@given(rows=st.integers(1, 4), cols=st.integers(1, 12), factor=st.integers(1, 5))
def test_blockized_split_property(rows, cols, factor):
    """Any split factor, divisible or not: one block over (rows, cols), the same values,
    recognised as add."""
    func = _one(_blockized_add(rows, cols, factor))
    flat = unblockize(func)
    verify(flat)
    (block,) = flat.blocks()
    assert [int(iv.dom.extent.value) for iv in block.iter_vars] == [rows, cols]
    assert_same_values(func, flat)
    assert [op.name for op in opinfo.analyze(func).ops] == ["add"]
