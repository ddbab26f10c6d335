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
    assert opinfo.verify_op(func, op) is True
    assert opinfo.verify_op(func, op, max_steps=10) is None
