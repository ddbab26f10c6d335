"""dlight's GEMV rule over a reduction whose length is no multiple of the threads (TVM
0.27, target cuda): the first of its three stages guards the split's tail,
``rows(s) and r * 32 + t < K``, which drop_predicates rightly refuses. The guard is moved
into the sum as ``if_then_else(r * 32 + t < K, x * y, 0)``
(:func:`opinfo.rfactor_guarded.tails_as_identity`), the stages merge as a guardless GEMV's
do, and the merged reduction over ``[0, 128)`` becomes one over ``[0, K)``
(:func:`opinfo.rfactor_guarded.trim_guarded_reductions`). Fixtures: a (5, 100) by (100,)
product (K = 100 over 4 x 32), and a (4, 3) by (3,) one (K = 3 under one stripe of 32)."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from opinfo import analyze, verify_op
from opinfo.normalize import normalize
from opinfo.rfactor_guarded import tails_as_identity, trim_guarded_reductions

from tests.fixture_util import fixture_func, replaced

CASES = [("s49_gemv_tail", 100, ", T.int64(0)) < T.int64(100))"),
         ("s49_gemv_short_reduction", 3, ", T.int64(0)) < T.int64(3))")]


@pytest.mark.parametrize("name, k, guard", CASES)
def test_tail_guarded_gemv_named_and_confirmed(name, k, guard):
    func = fixture_func(name)
    (op,) = analyze(func).ops
    assert op.name == "matmul" and [o.buffer for o in op.operands] == [b.name for b in func.buffers[:2]]
    assert verify_op(func, op) is True


@pytest.mark.parametrize("name, k, guard", CASES)
def test_normalized_to_one_reduction_over_k(name, k, guard):
    func = fixture_func(name)
    norm = normalize(func)
    (block,) = [b for b in norm.blocks() if b.name != "root"]
    reduce = [iv for iv in block.iter_vars if iv.kind.name == "REDUCE"]
    assert len(reduce) == 1 and int(reduce[0].dom.extent.value) == k
    rng = np.random.default_rng(1)
    args = [rng.standard_normal([int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:2]]
    np.testing.assert_allclose(tir.run(norm, *args), tir.run(func, *args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, k, guard", CASES)
def test_a_term_left_out_of_the_tail_is_refused(name, k, guard):
    # the guard one short drops the last column of every row: no matmul
    func = tir.parse(replaced(name, guard, guard.replace(f"({k}))", f"({k - 1}))")))
    (_, func), = func.prim_funcs()
    assert all(op.name != "matmul" for op in analyze(func).ops)


def test_tails_as_identity_keeps_values():
    func = fixture_func("s49_gemv_tail")
    moved = tails_as_identity(func)
    assert moved is not func
    rng = np.random.default_rng(2)
    args = [rng.standard_normal([int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:2]]
    np.testing.assert_allclose(tir.run(moved, *args), tir.run(func, *args), rtol=1e-5, atol=1e-5)


GUARDED_SUM = """
@T.prim_func
def f(x: T.Buffer((4, 10), "float32"), out: T.Buffer((4,), "float32")):
    for i, r in T.grid(4, 12):
        with T.block("s"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                out[vi] = T.float32(0)
            out[vi] = out[vi] + T.if_then_else(vr < {n}, x[vi, vr], T.float32(0))
"""


def test_trim_guarded_reductions():
    func = tir.parse(GUARDED_SUM.format(n=10))
    trimmed = trim_guarded_reductions(func)
    (block,) = [b for b in trimmed.blocks() if b.name != "root"]
    assert int(block.iter_vars[1].dom.extent.value) == 10
    x = np.random.default_rng(3).standard_normal((4, 10)).astype("float32")
    np.testing.assert_allclose(tir.run(trimmed, x), x.sum(axis=1), rtol=1e-5)
    # a bound past the variable's extent would add terms: left alone
    past = tir.parse(GUARDED_SUM.format(n=13))
    assert trim_guarded_reductions(past) is past
    # nor a bound of 0: the init runs with the first point, which the cut domain would lose
    empty = tir.parse(GUARDED_SUM.format(n=0))
    assert trim_guarded_reductions(empty) is empty
