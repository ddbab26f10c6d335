"""Where the engines follow what TVM's build computes, found by running generated corpora
against TVM's numbers (tools/tvm_oracle/gen_numeric.py):

* loops whose extents come from the data (TVM's roi_align and roi_pool size each bin from its
  region): an extent of zero or below runs no iteration, on both engines, also when the
  reduction's value holds an ``if_then_else`` (evaluated over no lanes at all);
* a block repeated by a loop only its predicate reads (a schedule's leftover);
* a half-precision sum, whose every step rounds, is added in the order of its loops.
"""
from __future__ import annotations

import numpy as np
import pytest

import tir
from tir.execute import prim_runner

HEADER = "# from tvm.script import tirx as T\n\n"

BINS = HEADER + '''@T.prim_func
def f(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4,), "float32"), out: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.sblock("row"):
            vi = T.axis.spatial(4, i)
            for r in range(T.Cast("int64", T.ceil(y[vi]))):
                with T.sblock("sum"):
                    vr = T.axis.reduce(T.Cast("int64", T.ceil(y[vi])), r)
                    with T.init():
                        out[vi] = T.float32(0)
                    out[vi] = out[vi] + T.if_then_else(vr < 8, x[vi, T.min(vr, 7)], T.float32(0))
'''


@pytest.mark.parametrize("engine", ["interp", "c"])
@pytest.mark.parametrize("vectorize", [True, False])
def test_a_data_dependent_extent_of_zero_or_below_runs_no_iteration(engine, vectorize):
    if engine == "c" and not vectorize:
        pytest.skip("the C engine has one way to run")
    x = np.arange(32, dtype="float32").reshape(4, 8)
    y = np.array([2.5, 0.0, -2.0, 9.0], "float32")
    out = np.full(4, -7.0, "float32")
    func = tir.parse(BINS)
    if engine == "interp":
        tir.interpret(func, x, y, out, vectorize=vectorize)
    else:
        prim_runner(func, "c")(x, y, out)
    # rows 1 and 2 have no iteration: the init never runs and the output keeps its contents
    np.testing.assert_array_equal(out, [0 + 1 + 2, -7, -7, sum(range(24, 32))])


REPEATED = HEADER + '''@T.prim_func
def g(x: T.Buffer((6,), "bool"), out: T.Buffer((6, 1), "bool"), seen: T.Buffer((6,), "int32")):
    for ax0_1, ax1_1_1 in T.grid(2, 5):
        for ax0_0, ax1_0 in T.grid(3, 2):
            with T.sblock("T_reshape"):
                v_ax0 = T.axis.spatial(6, ax0_0 * 2 + ax0_1)
                v_ax1 = T.axis.spatial(1, 0)
                T.where(ax1_0 * 5 + ax1_1_1 < 6)
                out[v_ax0, v_ax1] = x[(v_ax0 + v_ax1) % 6]
        for ax0 in range(5):
            with T.sblock("seen"):
                v = T.axis.spatial(6, ax0_1 + ax0)
                seen[v] = seen[v] + T.Cast("int32", out[v, 0])
'''


@pytest.mark.parametrize("vectorize", [True, False])
def test_a_store_repeated_by_a_loop_only_its_predicate_reads(vectorize):
    """TVM's slice_scatter after a schedule: the reshape block sits under a loop (``ax1_0``)
    none of its bindings use but its predicate does, so the lane mask varies along an axis
    the store's index and value do not, and the store must broadcast with it (an internal
    broadcast error before)."""
    x = np.array([True, False, False, True, True, False])
    out, seen = np.zeros((6, 1), bool), np.zeros(6, "int32")
    tir.interpret(tir.parse(REPEATED), x, out, seen, vectorize=vectorize)
    np.testing.assert_array_equal(out[:, 0], x)
    want = np.zeros(6, "int32")  # walked: row v read after the rows of this ax0_1 are written
    done = np.zeros(6, bool)
    for a in range(2):
        for _ in range(5):
            done[a::2] = True
            for k in range(5):
                want[a + k] += int(done[a + k] and x[a + k])
    np.testing.assert_array_equal(seen, want)


def _sequential(x, axes, dtype):
    """numpy's reduction, step by step in the given order, rounding at every step."""
    moved = np.moveaxis(x, axes, list(range(x.ndim - len(axes), x.ndim)))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    acc = np.zeros(flat.shape[:-1], dtype)
    for j in range(flat.shape[-1]):
        acc = (acc + flat[..., j]).astype(dtype)
    return acc


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_a_float16_sum_adds_in_loop_order(engine):
    """A float16 sum rounds at every step, so its order decides the result: both engines add
    in the order of the reduction loops, as TVM's build does (a float16 variance of 1,728
    values differed by 0.025 when the interpreter summed pairwise)."""
    x = np.random.default_rng(2).standard_normal((3, 600)).astype("float16") * np.float16(4)
    func = tir.topi.lower("sum", [((3, 600), "float16")], axis=[1], keepdims=False)
    got = tir.run(func, x, engine=engine)
    np.testing.assert_array_equal(got, _sequential(x, [1], np.float16))
    assert not np.array_equal(got, x.sum(axis=1, dtype=np.float16))  # pairwise would differ here
