"""``a and b`` / ``a or b`` read ``b`` only where ``a`` leaves the answer open, in the
interpreter as in the C engine (C's ``&&``, ``||``): TVM guards a load with such a
conjunction (its max-pool gradient: ``0 <= i and argmax[i] == k``)."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from tir.interp import InterpError

GUARDED = """
@T.prim_func
def f(x: T.Buffer((T.int64(6),), "float32"), out: T.Buffer((T.int64(6),), "float32")):
    for i in range(T.int64(6)):
        with T.block("b"):
            v = T.axis.remap("S", [i])
            out[v] = T.if_then_else({COND}, T.float32(1), T.float32(0))
"""


@pytest.mark.parametrize("cond, want", [
    ("T.int64(1) <= v and x[v - T.int64(1)] > T.float32(0)", lambda x: np.r_[0, x[:-1] > 0]),
    ("v < T.int64(1) or x[v - T.int64(1)] > T.float32(0)", lambda x: np.r_[1, x[:-1] > 0]),
    ("v + T.int64(1) < T.int64(6) and (T.int64(1) <= v and x[v - T.int64(1)] < x[v + T.int64(1)])",
     lambda x: np.r_[0, x[:-2] < x[2:], 0]),
])
@pytest.mark.parametrize("engine", ["interp", "c"])
def test_the_second_operand_is_read_only_where_it_decides(cond, want, engine):
    func = tir.parse(GUARDED.replace("{COND}", cond))
    x = np.random.default_rng(0).standard_normal(6).astype("float32")
    np.testing.assert_array_equal(tir.run(func, x, engine=engine), want(x).astype("float32"))


def test_an_unguarded_load_past_the_buffer_is_still_an_error():
    func = tir.parse(GUARDED.replace("{COND}", "x[v - T.int64(1)] > T.float32(0) and T.int64(1) <= v"))
    with pytest.raises(InterpError, match="out of bounds"):
        tir.run(func, np.zeros(6, "float32"))
