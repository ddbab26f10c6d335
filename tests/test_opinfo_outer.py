"""outer(x1, x2): out[i, j] = x1[i] * x2[j], as TVM 0.27 legalizes it."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir

OUTER = '''# from tvm.script import tir as T
n = TypeVar("n")
@T.prim_func(private=True)
def outer(x: T.Buffer((n,), "float32"), y: T.Buffer((T.int64(7),), "float32"), outer: T.Buffer((n, T.int64(7)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(n, T.int64(7)):
        with T.block("outer"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(x[v_i], y[v_j])
            T.writes(outer[v_i, v_j])
            outer[v_i, v_j] = x[v_i] * y[v_j]
'''


def _ops(text):
    return opinfo.analyze(tir.parse(text)).ops


def test_outer_with_a_symbolic_length():
    (op,) = _ops(OUTER)
    assert op.name == "outer" and dict(op.attrs) == {}
    assert [(o.role, o.buffer, o.param) for o in op.operands] == [("lhs", "x", 0), ("rhs", "y", 1)]


def test_outer_written_the_other_way_round_and_run():
    text = OUTER.replace("x[v_i] * y[v_j]", "y[v_j] * x[v_i]")
    (op,) = _ops(text)
    assert [o.buffer for o in op.operands] == ["x", "y"]
    x, y = np.arange(3, dtype="float32"), np.arange(7, dtype="float32")
    np.testing.assert_array_equal(tir.run(tir.parse(text), x, y), np.outer(x, y))


@pytest.mark.parametrize("body", ["x[v_i] * y[v_i]", "x[v_j] * y[v_j]", "x[v_i] + y[v_j]"])
def test_not_outer(body):
    text = OUTER.replace("(n,), \"float32\"), y", "(T.int64(7),), \"float32\"), y").replace(
        "(n, T.int64(7))", "(T.int64(7), T.int64(7))").replace("T.grid(n,", "T.grid(T.int64(7),")
    text = text.replace("x[v_i] * y[v_j]", body)
    assert all(op.name != "outer" for op in _ops(text))
