"""tir.unblockize: blockize's outer blocks dissolved for the interpreter (one perfect nest),
checked against the scalar walk of the original function and numpy."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from tir import stmt as S
from tir.functor import post_order_visit
from tir.interp import interpret
from tir.unblockize import dissolve_outer_blocks

BLOCKIZED = """
@T.prim_func
def f(A: T.Buffer((10, 6), "float32"), B: T.Buffer((10, 6), "float32")):
    for i_o, j in T.grid(4, 6):
        with T.block("B_o"):
            vi_o = T.axis.spatial(4, i_o)
            vj = T.axis.spatial(6, j)
            T.where(i_o * 3 < 10)
            T.reads(A[vi_o * 3:vi_o * 3 + 3, vj])
            T.writes(B[vi_o * 3:vi_o * 3 + 3, vj])
            for i_i in range(3):
                with T.block("B"):
                    vi_i = T.axis.spatial(3, i_i)
                    T.where(vi_o * 3 + i_i < 10)
                    B[vi_o * 3 + vi_i, vj] = A[vi_o * 3 + vi_i, vj] * T.float32(2.0) + T.float32(1.0)
"""

BLOCKIZED_REDUCTION = """
@T.prim_func
def g(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i, k_o in T.grid(4, 2):
        with T.block("C_o"):
            vi = T.axis.spatial(4, i)
            vk_o = T.axis.reduce(2, k_o)
            with T.init():
                C[vi] = T.float32(0.0)
            for k_i in range(4):
                with T.block("C"):
                    vk_i = T.axis.reduce(4, k_i)
                    C[vi] = C[vi] + A[vi, vk_o * 4 + vk_i]
"""


def blocks(func) -> list:
    found = []
    post_order_visit(func.body, lambda n: found.append(n.block.name) if isinstance(n, S.BlockRealize) else None)
    return found


def test_outer_spatial_block_is_dissolved_into_one_nest():
    f = tir.parse(BLOCKIZED)
    flat = dissolve_outer_blocks(f)
    assert "B_o" in blocks(f) and "B_o" not in blocks(flat) and "B" in blocks(flat)


@pytest.mark.parametrize("text", [BLOCKIZED, BLOCKIZED_REDUCTION])
def test_interpreter_matches_the_scalar_walk_and_numpy(text):
    f = tir.parse(text)
    a = np.random.default_rng(0).standard_normal(tuple(int(d.value) for d in f.buffers[0].shape)).astype(np.float32)
    out_shape = tuple(int(d.value) for d in f.buffers[1].shape)
    fast, slow = np.full(out_shape, 9.0, np.float32), np.full(out_shape, 9.0, np.float32)
    interpret(f, a, fast)
    interpret(f, a, slow, vectorize=False)
    np.testing.assert_allclose(fast, slow, rtol=1e-6)
    want = a * 2 + 1 if text is BLOCKIZED else a.sum(axis=1)
    np.testing.assert_allclose(fast, want, rtol=1e-5)


def test_outer_block_with_a_reduction_variable_or_init_stays():
    f = tir.parse(BLOCKIZED_REDUCTION)
    assert {"C_o", "C"} <= set(blocks(dissolve_outer_blocks(f)))


def test_the_dissolved_nest_runs_as_one_grid(monkeypatch):
    import tir.interp_stmt as stmt

    f = tir.parse(BLOCKIZED)
    walked = []
    real = stmt._HANDLERS[S.BlockRealize]
    monkeypatch.setitem(stmt._HANDLERS, S.BlockRealize, lambda *a: walked.append(1) or real(*a))
    interpret(f, np.ones((10, 6), np.float32), np.zeros((10, 6), np.float32))
    assert not walked  # no block realized one iteration at a time
    interpret(f, np.ones((10, 6), np.float32), np.zeros((10, 6), np.float32), vectorize=False)
    assert len(walked) > 24  # the scalar walk realizes every block
