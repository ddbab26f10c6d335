"""Blocks moved under other blocks' loops by TVM's compute_at (fixtures printed by TVM 0.27)
get loops of their own (:mod:`opinfo.distribute`): same values, recognised as unscheduled."""
from __future__ import annotations

import pytest
import tir
from tir.stmt import For, IterKind
from tir.verifier import verify

import opinfo
from opinfo.distribute import distribute
from fixture_util import assert_same_values, fixture_func


def _nests(func) -> list:
    body = func.root_block.body
    return list(body.seq) if hasattr(body, "seq") else [body]


def _loops_over_domains(func) -> bool:
    """Every block is bound one to one to loops over its iteration domain."""
    found = []

    def visit(n, loops=()):
        if isinstance(n, For):
            return visit(n.body, loops + (n,))
        if hasattr(n, "seq"):
            return [visit(s, loops) for s in n.seq]
        if hasattr(n, "block"):
            found.append(list(n.iter_values) == [lp.loop_var for lp in loops])
        return None

    visit(func.root_block.body)
    return bool(found) and all(found)


@pytest.mark.parametrize("name, op, attrs", [
    ("nn_conv1d", "nn.conv1d", {"strides": [1], "padding": [0, 2], "dilation": [2], "groups": 12,
                                "data_layout": "NWC", "kernel_layout": "WIO"}),
    ("nn_conv2d_transpose", "nn.conv2d_transpose",
     {"strides": [1, 2], "padding": [1, 0, 1, 0], "output_padding": [0, 0], "dilation": [1, 1], "groups": 2,
      "data_layout": "NCHW", "kernel_layout": "IOHW"}),
])
def test_compute_at_recognised(name, op, attrs):
    func = fixture_func(f"compute_at_{name}")
    flat = distribute(func)
    verify(flat)
    assert len(_nests(flat)) > len(_nests(func))
    assert_same_values(func, flat, tol=1e-6)
    (got,) = opinfo.analyze(func).ops
    assert got.name == op
    assert {k: got.to_json()["attrs"][k] for k in attrs} == attrs


def test_redundant_pad_block_gets_its_own_loops():
    """A pad block computed at a pool's window loops (alone in its nest, recomputing
    overlapping rows) is run once per element afterwards."""
    func = fixture_func("compute_at_nn_avg_pool2d")
    flat = distribute(func)
    verify(flat)
    assert _loops_over_domains(flat)
    assert_same_values(func, flat, tol=1e-6)


PARTIAL = '''
@T.prim_func(private=True)
def f(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), y: T.Buffer((T.int64(4), T.int64(3)), "float32")):
    s = T.alloc_buffer((T.int64(4),))
    for i, k in T.grid(T.int64(4), T.int64(3)):
        with T.block("s"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                s[v_i] = T.float32(0.0)
            s[v_i] = s[v_i] + x[v_i, v_k]
        with T.block("y"):
            v_i, v_k = T.axis.remap("SS", [i, k])
            y[v_i, v_k] = s[v_i]
'''


def test_block_reading_partial_reduction_stays():
    """A running sum: the block under the reduction loop reads partial results, so moving it
    after the reduction would change its values; it stays."""
    func = tir.parse(PARTIAL)
    assert distribute(func) is func
    assert [iv.kind for iv in next(iter(func.blocks())).iter_vars] == [IterKind.SPATIAL, IterKind.REDUCE]
