"""Intermediate buffers as written and as TVM's lowering allocates them
(:mod:`opinfo.intermediate_check`). Written, a buffer the root block allocates keeps its
values for the whole function; TVM's lowering allocates it at the lowest common ancestor of
its accesses, fresh at each iteration of the loops around all of them (but for a reduction's
accumulator, which lives across its reduction loops). A schedule whose consumer reads what
an earlier iteration of such a loop computed computes its op as written -- the answer --
and garbage once TVM builds it: TVM 0.27's own llvm build of the functions below returns
other numbers than the op (``nan`` where the element was computed in the previous
iteration), which the answer's warning says."""
from __future__ import annotations

import numpy as np

import tir
from opinfo.api import WARNINGS, analyze
from opinfo.intermediate_check import stale_reads, uninitialised_reads

from tests.fixture_util import fixture_func, fixture_ops

HEAD = '''# from tvm.script import tir as T
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(9),), "float32"), out: T.Buffer((T.int64(9),), "float32")):
    T.func_attr({"tir.noalias": True})
    sub = T.alloc_buffer((T.int64(9),))
    mul = T.alloc_buffer((T.int64(9),))
'''
MUL_OUT = '''        for k in range(T.int64(3)):
            with T.block("mul"):
                v = T.axis.spatial(T.int64(9), a * T.int64(4) + c + k)
                T.where(a * T.int64(4) + c + k < T.int64(9))
                mul[v] = sub[v] * T.float32(2.0)
    for i in range(T.int64(9)):
        with T.block("out"):
            v = T.axis.spatial(T.int64(9), i)
            out[v] = mul[v]
'''
# per iteration (c, a): sub computed at a * 4 + b * 2 + c, mul at a * 4 + c + k, k < 3: at
# c = 1, mul[a * 4 + 2] reads sub[a * 4 + 2], which the iteration c = 0 computed
ACROSS = HEAD + '''    for c, a in T.grid(T.int64(2), T.int64(3)):
        for b in range(T.int64(2)):
            with T.block("sub"):
                v = T.axis.spatial(T.int64(9), a * T.int64(4) + b * T.int64(2) + c)
                T.where(a * T.int64(4) + b * T.int64(2) + c < T.int64(9))
                sub[v] = x[v] - T.float32(1.0)
''' + MUL_OUT
# the same loops with sub computed whole before them: nothing read across iterations
WHOLE = HEAD + '''    for i in range(T.int64(9)):
        with T.block("sub"):
            v = T.axis.spatial(T.int64(9), i)
            sub[v] = x[v] - T.float32(1.0)
    for c, a in T.grid(T.int64(2), T.int64(3)):
''' + MUL_OUT
# a sum computed at the consumer's loop: its accumulator is accessed only inside loop i,
# and lives across the reduction loop k within each iteration
REDUCTION = '''# from tvm.script import tir as T
@T.prim_func(private=True)
def main(x: T.Buffer((T.int64(4), T.int64(5)), "float32"), out: T.Buffer((T.int64(4),), "float32")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer((T.int64(4),))
    for i in range(T.int64(4)):
        for k in range(T.int64(5)):
            with T.block("acc"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    acc[vi] = T.float32(0.0)
                acc[vi] = acc[vi] + x[vi, vk]
        with T.block("out"):
            vi = T.axis.spatial(T.int64(4), i)
            out[vi] = acc[vi] * T.float32(2.0)
'''


def _func(text):
    parsed = tir.parse(text)
    return parsed if not hasattr(parsed, "prim_funcs") else next(iter(dict(parsed.prim_funcs()).values()))


def test_element_computed_in_another_iteration_of_the_scope_is_stale_once_built():
    f = _func(ACROSS)
    # run as written, the buffer kept: every element right
    x = np.arange(9, dtype="float32")
    np.testing.assert_allclose(tir.run(f, x), (x - 1) * 2)
    assert not uninitialised_reads(f)
    assert stale_reads(f) == (("sub", ("c", "a")),)  # mul is read only where the same iteration wrote it
    info = analyze(f)
    assert [op.name for op in info.ops] == ["subtract", "multiply"]
    assert info.warnings == (WARNINGS["stale"].format(buffer="sub", loops="c, a"),)
    whole = _func(WHOLE)
    assert not uninitialised_reads(whole) and not stale_reads(whole)
    assert analyze(whole).warnings == ()


def test_accumulator_lives_across_its_reduction_loop():
    f = _func(REDUCTION)
    assert not uninitialised_reads(f) and not stale_reads(f)
    x = np.random.default_rng(0).normal(size=(4, 5)).astype("float32")
    np.testing.assert_allclose(tir.run(f, x), x.sum(axis=1) * 2, rtol=1e-5)


def test_scheduled_selu_reading_the_previous_iteration_is_named_with_a_warning():
    # compute_at under non-divisible splits: T_multiply reads T_subtract[4a + 2] at ax3_1 = 1,
    # computed at ax3_1 = 0; as written that is selu, TVM's build returns varying garbage there
    assert [name for name, _ in fixture_ops("s17_selu_reads_previous_iteration")] == ["nn.selu"]
    f = fixture_func("s17_selu_reads_previous_iteration")
    assert not uninitialised_reads(f) and stale_reads(f) == (("T_subtract", ("ax3_1", "ax2", "ax3_0_0")),)
    x = np.random.default_rng(1).normal(size=(3, 5, 3, 9)).astype("float32")  # n = 3
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(tir.run(f, x), scale * np.where(x > 0, x, alpha * (np.exp(x) - 1)),
                               rtol=1e-5, atol=1e-6)
