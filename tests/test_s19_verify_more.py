"""verify_op beyond one output and plain buffers: ops with several outputs, ops over packed
buffers (checked on the logical reading), symbolic functions checked at n = 1 when too large
at the usual binding, and the interpreter's step limit that keeps analyze's own check short."""
from __future__ import annotations

import attrs
import numpy as np
import pytest

import opinfo
import tir
from opinfo import verify
from opinfo.info import OpInfo, Operand
from tir import topi
from tir.interp import StepLimit, interpret

from tests.fixture_util import fixture_func


def test_batch_norm_checks_all_three_outputs():
    func = topi.lower("nn.batch_norm", [((2, 3, 4), "float32"), ((3,), "float32"), ((3,), "float32"),
                                        ((3,), "float32"), ((3,), "float32")], axis=1, epsilon=1e-3)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.batch_norm" and opinfo.verify_op(func, op) is True
    # another epsilon changes the first output only: still refuted
    assert opinfo.verify_op(func, attrs.evolve(op, attrs={**dict(op.attrs), "epsilon": 0.5})) is False


def test_split_outputs_after_the_first_must_be_the_ops_other_outputs():
    func = topi.lower("concat", [((2, 3), "float32"), ((2, 3), "float32")], axis=0)
    (op,) = opinfo.analyze(func).ops
    # one output: an op lowered with two outputs has no second parameter to compare against
    two = attrs.evolve(op, name="nn.batch_norm", attrs={})
    assert opinfo.verify_op(func, two) is None


def test_symbolic_function_too_large_at_five_is_checked_at_one():
    n = tir.SizeVar("n", tir.dtype.int64)
    func = topi.lower("nn.relu", [((n, 8, 30, 30), "float32")])
    assert verify.cheap_binding(func) == 1
    small = topi.lower("nn.relu", [((n, 4), "float32")])
    assert verify.cheap_binding(small) == verify.SYMBOLIC
    fixed = topi.lower("nn.relu", [((8, 8, 30, 30), "float32")])
    assert verify.cheap_binding(fixed) is None
    (op,) = opinfo.analyze(func).ops
    assert opinfo.verify_op(func, op, symbolic=1) is True
    assert opinfo.verify_op(func, attrs.evolve(op, name="nn.relu6"), symbolic=1) is False


ORDERED = """
@T.prim_func
def f(x: T.Buffer((T.int64(64), T.int64(64)), "float32"), out: T.Buffer((T.int64(64), T.int64(64)), "float32")):
    tmp = T.alloc_buffer((T.int64(64),))
    for i in range(T.int64(64)):
        for j in range(T.int64(64)):
            with T.block("a"):
                vi, vj = T.axis.remap("SS", [i, j])
                tmp[vj] = x[vi, vj]
        for j in range(T.int64(64)):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = T.max(tmp[vj], T.float32(0))
"""


def test_step_limit_stops_a_long_walk_and_verify_leaves_the_answer_unchecked():
    func = tir.parse(ORDERED)
    x = np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    out = np.zeros_like(x)
    interpret(func, x, out)
    assert np.allclose(out, np.maximum(x, 0))
    with pytest.raises(StepLimit, match="loop iterations"):
        interpret(func, x, np.zeros_like(x), max_steps=10)
    interpret(func, x, np.zeros_like(x), max_steps=64)  # the outer walk; the inner nests are vectorised
    op = OpInfo("nn.relu", {}, (Operand("data", "x", 0),), Operand("output", "out", 1))
    assert opinfo.verify_op(func, op, max_steps=10) is None
    assert opinfo.verify_op(func, op) is True
    # once confirmed in this process, it is not run again (analyze's check, then --verify)
    assert opinfo.verify_op(func, op, max_steps=10) is True


RESHAPE_ONE_N = """
@T.prim_func
def f(var_x: T.handle, y: T.Buffer((T.int64(12),), "float32")):
    n = T.int64()
    x = T.match_buffer(var_x, (n, T.int64(3)))
    for i in range(T.int64(12)):
        with T.block("T_reshape"):
            v = T.axis.remap("S", [i])
            y[v] = x[v // T.int64(3), v % T.int64(3)]
"""


def test_a_symbolic_extent_consistent_for_one_value_is_bound_to_it():
    # (n, 3) -> 12 elements holds at n = 4 only: the op cannot be built at 5
    func = tir.parse(RESHAPE_ONE_N)
    op = OpInfo("reshape", {"shape": (12,)}, (Operand("data", "x", 0),), Operand("output", "y", 1))
    assert opinfo.verify_op(func, op) is True
    assert opinfo.verify_op(func, attrs.evolve(op, name="flip", attrs={"axis": 0})) is None


def test_out_dtype_comes_from_the_output_buffer():
    func = topi.lower("matmul", [((3, 4), "float16"), ((4, 2), "float16")], out_dtype="float32")
    (op,) = opinfo.analyze(func).ops
    assert op.name == "matmul" and opinfo.verify_op(func, attrs.evolve(op, attrs={})) is True


def test_regions_out_of_range_on_signed_draws_are_retried_with_small_positive_ones():
    # TVM's roi_pool (real output) reads the batch a region's first column names: signed
    # random regions index past the batch, the check draws small positive ones instead (weak
    # on scales: regions within one pixel)
    from opinfo.verify import random_inputs

    func = fixture_func("s19_roi_pool_plain")
    with pytest.raises(tir.interp.InterpError):
        interpret(func, *random_inputs(func, np.random.default_rng(0)))
    (op,) = opinfo.analyze(func).ops
    assert op.name == "vision.roi_pool" and opinfo.verify_op(func, op) is True
