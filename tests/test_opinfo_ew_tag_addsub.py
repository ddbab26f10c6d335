"""add and subtract of a scalar constant read through the block's compute tag: TVM folds
``add(x, R.const(-1))`` (an ONNX Gather at index -1) to ``x - 1`` in a ``T_add`` block."""
from __future__ import annotations

import pytest

import opinfo
import tir

TEXT = """
@T.prim_func
def f(x: T.Buffer((T.int64(3), T.int64(4)), "int64"), out: T.Buffer((T.int64(3), T.int64(4)), "int64")):
    for i0, i1 in T.grid(T.int64(3), T.int64(4)):
        with T.block("{tag}"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            out[v0, v1] = {value}
"""


def _ops(tag, value):
    func = tir.parse(TEXT.format(tag=tag, value=value))
    return [(op.name, tuple(o.role for o in op.operands)) for op in opinfo.analyze(func).ops]


@pytest.mark.parametrize("tag, value, want", [
    ("T_add", "x[v0, v1] - T.int64(1)", [("add", ("lhs",))]),
    ("T_add", "x[v0, v1] + T.int64(1)", [("add", ("lhs",))]),
    ("T_subtract", "x[v0, v1] + T.int64(1)", [("subtract", ("lhs",))]),
    ("T_subtract", "x[v0, v1] - T.int64(1)", [("subtract", ("lhs",))]),
    ("T_subtract", "T.int64(1) - x[v0, v1]", [("subtract", ("rhs",))]),
    ("T_add", "T.int64(1) - x[v0, v1]", []),  # not an add of anything with x
    ("T_multiply", "x[v0, v1] - T.int64(1)", []),
])
def test_add_and_subtract_of_a_constant_follow_the_tag(tag, value, want):
    assert _ops(tag, value) == want
