"""Two index tuples of one function are the same only over the very same variables
(:func:`tir.structural.same_ir`); :func:`tir.structural.structural_equal` renames free
variables as binders (right for two functions, wrong inside one: ``C[j, i]`` would be the
element ``C[i, j]`` stores)."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from tir import dtype as dt
from tir.structural import same_ir, structural_equal

_TRANSPOSED_ACCUMULATOR = """
# from tvm.script import tirx as T

@T.prim_func(private=True, s_tir=True)
def f(x: T.Buffer((T.int64(3), T.int64(3), T.int64(4)), "float32"), C: T.Buffer((T.int64(3), T.int64(3)), "float32")):
    for i, j, k in T.grid(T.int64(3), T.int64(3), T.int64(4)):
        with T.sblock("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_j, v_i] + x[v_i, v_j, v_k]
"""


def test_same_ir_compares_the_very_variables():
    i, j = tir.Var("i", dt.int64), tir.Var("j", dt.int64)
    assert structural_equal(i, j)  # binders renamed: one function against another
    assert not same_ir(i, j) and not same_ir(i * 2 + j, j * 2 + i) and not same_ir((i, j), (j, i))
    assert same_ir(i * 2 + j, i * 2 + j) and same_ir(tir.const(3, "int64"), tir.const(3, "int64"))


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_an_update_reading_the_transposed_element_runs_in_order(engine):
    # not a reduction into C[i, j]: each step reads C[j, i] (zero before it is written), so
    # the interpreter may not sum x over k at once
    x = np.arange(36, dtype="float32").reshape(3, 3, 4)
    want = np.zeros((3, 3), dtype="float32")
    for i in range(3):
        for j in range(3):
            for k in range(4):
                if k == 0:
                    want[i, j] = 0
                want[i, j] = want[j, i] + x[i, j, k]
    np.testing.assert_array_equal(tir.run(tir.parse(_TRANSPOSED_ACCUMULATOR), x, engine=engine), want)
