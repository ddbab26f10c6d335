"""Reductions whose ``T.where`` depends on a reduction loop (a reduction loop split by a factor
that does not divide it, or partitioned) run as one vectorised combine: each masked step
contributes the combine's identity, only lanes with a step that runs are stored, and the
init stays at the first step. Checked against the scalar walk (the reference semantics) and
numpy, including the case the combine must leave to the ordered walk (the first step masked,
the init later)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir.interp import interpret

OPS = {
    "sum": ("T.float32(0.0)", "C[vi] + A[vi, vk]", lambda a: a.sum(axis=1)),
    "prod": ("T.float32(1.0)", "C[vi] * A[vi, vk]", lambda a: a.prod(axis=1)),
    "max": ("T.float32(-3.4028234663852886e+38)", "T.max(C[vi], A[vi, vk])", lambda a: a.max(axis=1)),
    "min": ("T.float32(3.4028234663852886e+38)", "T.min(C[vi], A[vi, vk])", lambda a: a.min(axis=1)),
}


def split_reduction(op: str, rows: int, k: int, factor: int, shift: int = 0) -> str:
    """``C[i] = op_k A[i, k]`` with the reduction loop split by ``factor`` (``T.where`` masks
    the tail); ``shift`` > 0 starts the loop before the domain, so its first steps are masked
    and the init comes later."""
    outer = (k + shift + factor - 1) // factor
    init, update, _ = OPS[op]
    return f"""
@T.prim_func
def red(A: T.Buffer(({rows}, {k}), "float32"), C: T.Buffer(({rows},), "float32")):
    for i, ko, ki in T.grid({rows}, {outer}, {factor}):
        with T.block("C"):
            vi = T.axis.spatial({rows}, i)
            vk = T.axis.reduce({k}, ko * {factor} + ki - {shift})
            T.where({shift} <= ko * {factor} + ki and ko * {factor} + ki < {k + shift})
            with T.init():
                C[vi] = {init}
            C[vi] = {update}
"""


def run(text, a, rows, vectorize):
    out = np.full((rows,), 7.0, np.float32)
    interpret(tir.parse(text), a, out, vectorize=vectorize)
    return out


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), rows=st.integers(1, 4), k=st.integers(1, 11),
       factor=st.integers(1, 5), shift=st.sampled_from([0, 0, 1, 2]), seed=st.integers(0, 99))
def test_split_reduction_matches_scalar_walk_and_numpy(op, rows, k, factor, shift, seed):
    text = split_reduction(op, rows, k, factor, shift)
    a = np.random.default_rng(seed).uniform(0.5, 1.5, (rows, k)).astype(np.float32)
    fast, slow = run(text, a, rows, True), run(text, a, rows, False)
    np.testing.assert_allclose(fast, slow, rtol=1e-5)
    np.testing.assert_allclose(fast, OPS[op][2](a), rtol=1e-5)


NESTED = """
@T.prim_func
def nested(A: T.Buffer((3, 10), "float32"), C: T.Buffer((3,), "float32")):
    for i in range(3):
        with T.block("outer"):
            T.reads()
            T.writes()
            for ko, ki in T.grid(4, 3):
                with T.block("C"):
                    vi = T.axis.spatial(3, i)
                    vk = T.axis.reduce(10, ko * 3 + ki)
                    T.where(ko * 3 + ki < 10)
                    with T.init():
                        C[vi] = T.float32(-3.4028234663852886e+38)
                    C[vi] = T.max(C[vi], T.if_then_else(A[vi, vk] < T.float32(0.5), A[vi, vk], T.float32(-1.0)))
"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_reduction_under_an_outer_block_masks_the_out_of_range_steps(vectorize):
    # the masked steps would read A out of bounds: they must not be evaluated at all
    a = np.random.default_rng(3).uniform(0, 1, (3, 10)).astype(np.float32)
    out = np.zeros(3, np.float32)
    interpret(tir.parse(NESTED), a, out, vectorize=vectorize)
    np.testing.assert_array_equal(out, np.where(a < 0.5, a, -1.0).max(axis=1))


PARTIAL = """
@T.prim_func
def partial(A: T.Buffer((2, 6), "float32"), C: T.Buffer((2,), "float32")):
    for i, k in T.grid(2, 6):
        with T.block("C"):
            vi = T.axis.spatial(2, i)
            vk = T.axis.reduce(6, k)
            T.where(i * 6 + k < 9)
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_lanes_whose_steps_are_partly_masked_sum_only_their_running_steps(vectorize):
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    out = np.full(2, 5.0, np.float32)
    interpret(tir.parse(PARTIAL), a, out, vectorize=vectorize)
    assert out.tolist() == [a[0].sum(), a[1, :3].sum()]


def test_a_tail_masked_split_runs_as_one_combine_and_a_late_init_does_not(monkeypatch):
    import tir.interp_nest as nest

    walked = []
    real = nest._run_ordered
    monkeypatch.setattr(nest, "_run_ordered", lambda n, c: walked.append(1) or real(n, c))
    a = np.ones((2, 7), np.float32)
    assert run(split_reduction("sum", 2, 7, 3), a, 2, True).tolist() == [7, 7] and not walked
    # first steps masked, the init at a later one: left to the ordered walk, same numbers
    assert run(split_reduction("sum", 2, 7, 3, shift=2), a, 2, True).tolist() == [7, 7] and walked
