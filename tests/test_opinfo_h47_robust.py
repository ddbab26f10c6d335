"""Robustness fixes found on fresh TVM 0.27 corpora (seeds 9801-9804).

* ``rfactor`` whose partial block was then ``reindex``-ed writes a reindex buffer that a
  copy block hands to the final block: the copy is removed first, the rfactor pair is then
  merged (before, the partial copy stayed and was named an identity ``broadcast_to`` in
  front of the reduction: two ops for one).
* The interpreter analyses the text of a nest that is entered once per iteration of an
  outer loop (a blockized partial block under its outer block) only once.
"""
from __future__ import annotations

import numpy as np
import pytest

import tir
import tir.interp_nest as interp_nest
from tir.interp import interpret

import opinfo
from opinfo.normalize import normalize
from fixture_util import assert_same_values, fixture_func


@pytest.mark.parametrize("name, axis", [
    ("rfactor_reindex_max", [0]),  # (8,) -> (): the final block also writes a reindex copy
    ("rfactor_reindex_max_symbolic", [0]),  # (n, 6) -> (6,), partial block bound to threads
])
def test_rfactor_partial_through_reindex_copy(name, axis):
    func = fixture_func(name)
    (got,) = opinfo.analyze(func).ops
    assert got.name == "max"
    assert got.to_json()["attrs"] == {"axis": axis, "keepdims": False}
    merged = normalize(func)
    assert [b.name for b in merged.blocks() if b.name != "root"] == ["x_red"]


def test_rfactor_reindex_merge_keeps_values():
    func = fixture_func("rfactor_reindex_max")
    assert_same_values(func, normalize(func))


def test_fused_copy_into_reindexed_reduction_stays_two_ops():
    """Without rfactor's ``_rf`` name the copy in front of the reduction is an op of a fused
    kernel: the merge must not happen after the reindex copy is gone either."""
    func = fixture_func("rfactor_reindex_max", lambda t: t.replace('T.sblock("x_red_rf")', 'T.sblock("compute")'))
    assert len([b for b in normalize(func).blocks() if b.name != "root"]) == 2
    assert len(opinfo.analyze(func).ops) != 1


INNER_NESTS = """
@T.prim_func
def f(A: T.Buffer((T.int64(8), T.int64(4)), "float32"), C: T.Buffer((T.int64(8), T.int64(4)), "float32")):
    B = T.alloc_buffer((T.int64(8), T.int64(4)))
    for i in range(T.int64(8)):
        for j in range(T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
        for j in range(T.int64(4)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2.0)
"""


def test_inner_nest_text_analysed_once(monkeypatch):
    calls = []
    real = interp_nest.reads_only_own_elements
    monkeypatch.setattr(interp_nest, "reads_only_own_elements", lambda b: calls.append(b.name) or real(b))
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    c = np.zeros((8, 4), np.float32)
    interpret(tir.parse(INNER_NESTS), a, c)
    np.testing.assert_allclose(c, (a + 1) * 2)
    assert sorted(calls) == ["B", "C"]  # once per nest, not once per outer iteration (16)
