"""A reduction read where its decomposed init is the last store: the update added no point
(:func:`opinfo.intermediate_check._empty_inits`). A fuzzer mutant of a TVM-scheduled
multibox_transform_loc (softmax inside) had its max's update binding changed so that rows 4..6
were never updated: the init (the max's identity) was read as the row's max, exp overflowed, and
the function was still named. Such a read is refused now, unless the reader is the reduction
itself or one that combines the partial as the reduction does (dlight's rfactor over threads:
a thread no point reached holds the identity, and summing it changes nothing)."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from opinfo.api import analyze
from opinfo.intermediate_check import uninitialised_reads

SUM_ROWS = '''# from tvm.script import tir as T
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(7), T.int64(3)), "float32"), out: T.Buffer((T.int64(7),), "float32")):
    T.func_attr({"tir.noalias": True})
    m = T.alloc_buffer((T.int64(7),))
    for i in range(T.int64(7)):
        with T.block("m_init"):
            vi = T.axis.spatial(T.int64(7), i)
            m[vi] = T.float32(0.0)
    for a, b, k in T.grid(T.int64(4), T.int64(2), T.int64(3)):
        with T.block("m_update"):
            vi = T.axis.spatial(T.int64(7), BINDING)
            vk = T.axis.reduce(T.int64(3), k)
            T.where(a * T.int64(2) + b < T.int64(7))
            m[vi] = m[vi] + x[vi, vk]
    for i in range(T.int64(7)):
        with T.block("out"):
            vi = T.axis.spatial(T.int64(7), i)
            out[vi] = T.exp(m[vi])
'''


def _func(binding: str):
    return tir.parse(SUM_ROWS.replace("BINDING", binding))


def test_whole_update_is_a_sum():
    f = _func("a * T.int64(2) + b")
    x = np.random.default_rng(0).normal(size=(7, 3)).astype("float32")
    np.testing.assert_allclose(tir.run(f, x), np.exp(x.sum(axis=1)), rtol=1e-5)
    assert not uninitialised_reads(f)
    assert analyze(f).refused is None


@pytest.mark.parametrize("binding", ["a // T.int64(2) * T.int64(2) + b", "b"])
def test_rows_the_update_skips_are_refused(binding):
    # the update reaches rows 0..3 (or 0..1) only; the others keep the init as their sum
    f = _func(binding)
    x = np.random.default_rng(1).normal(size=(7, 3)).astype("float32")
    assert not np.allclose(tir.run(f, x), np.exp(x.sum(axis=1)))
    assert uninitialised_reads(f)
    info = analyze(f)
    assert info.ops == () and "before it adds any point" in info.refused
