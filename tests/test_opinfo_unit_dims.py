"""Dimensions of extent 1, where TVM's simplifier folds what the op wrote.

* A copy block carrying an arithmetic op's compute tag is that op with its constant folded:
  ``mean`` over axes of extent 1 lowers to the sum and a *copy* in a block named
  ``T_divide`` (``x / 1``). Reading through the copy named it ``sum`` (a confident wrong
  answer); the copy is an op of TVM's, not a cache copy, and the pair is ``mean``.
* ``tile`` reads a data axis of extent 1 at 0 (``v % 1`` folded).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import tir
from opinfo import analyze


def _folded(func, op: str = "/") -> "tir.PrimFunc":
    """``func`` as TVM prints it once the division by 1.0 is folded (a plain copy)."""
    text = func.script()
    assert f" {op} T.float32(1.0)" in text
    return tir.parse(text.replace(f" {op} T.float32(1.0)", ""))


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in analyze(func).ops]


@pytest.mark.parametrize("shape, axis, keepdims", [
    ((4, 1, 1), [1], True),
    ((2, 1, 6, 1), [1, 3], True),
    ((1, 5), [0], False),
    ((3, 1), [1], False),
])
def test_mean_over_unit_axes_is_mean(shape, axis, keepdims):
    func = tir.topi.lower("mean", [(shape, "float32")], axis=axis, keepdims=keepdims)
    assert _ops(func) == [("mean", {"axis": tuple(axis), "keepdims": keepdims})]
    assert _ops(_folded(func)) == [("mean", {"axis": tuple(axis), "keepdims": keepdims})]


def test_sum_over_unit_axes_stays_sum():
    func = tir.topi.lower("sum", [((4, 1, 3), "float32")], axis=[1], keepdims=False)
    assert _ops(func) == [("sum", {"axis": (1,), "keepdims": False})]


def test_folded_copy_of_another_op_abstains():
    """The same loops under a ``T_multiply`` tag: no Relax op lowers to them alone."""
    func = tir.topi.lower("mean", [((4, 1, 1), "float32")], axis=[1], keepdims=True)
    text = _folded(func).script().replace('"T_divide"', '"T_multiply"')
    assert _ops(tir.parse(text)) == []


def test_divide_copy_after_a_real_reduction_abstains():
    """A sum over 5 elements then a ``T_divide`` copy is not a mean (that divides by 5)."""
    func = tir.topi.lower("mean", [((4, 5), "float32")], axis=[1], keepdims=False)
    text = func.script()
    assert " / T.float32(5.0)" in text
    assert _ops(tir.parse(text.replace(" / T.float32(5.0)", ""))) == []


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=1, max_size=3).flatmap(
    lambda shape: st.tuples(st.just(shape), st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))))
def test_tile_with_unit_axes_round_trips(case):
    shape, reps = case
    func = tir.topi.lower("tile", [(tuple(shape), "float32")], repeats=reps)
    got = _ops(func)
    if all(d == 1 for d in shape):
        assert got in ([], [("tile", {"repeats": tuple(reps)})])  # a broadcast_to reads the same
    else:
        assert got == [("tile", {"repeats": tuple(reps)})]


def test_tile_reads_a_unit_axis_at_zero():
    func = tir.topi.lower("tile", [((5, 1, 8), "float32")], repeats=[3, 2, 3])
    assert "T.int64(0)" in func.script()
    assert _ops(func) == [("tile", {"repeats": (3, 2, 3)})]


@pytest.mark.parametrize("op", ["nn.softmax", "nn.log_softmax"])
@pytest.mark.parametrize("shape, axis", [((1, 5, 4), 0), ((3, 4, 1), 2), ((2, 1, 3), 1), ((1,), 0), ((1, 1, 6), 1)])
def test_softmax_over_a_unit_axis(op, shape, axis):
    """1 (or 0) everywhere: the axis is read from where the reductions index the data."""
    func = tir.topi.lower(op, [(shape, "float32")], axis=axis)
    assert _ops(func) == [(op, {"axis": axis})]


def test_softmax_over_a_unit_axis_with_another_op_abstains():
    """A select on the output index after the normalisation: not softmax's values."""
    func = tir.topi.lower("nn.softmax", [((2, 1, 3), "float32")], axis=1)
    text = func.script()
    assert "T_softmax_expsum[" in text
    mutated = text.replace("T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp",
                           "T_softmax_norm[v_i0, v_i1, v_i2] = T.float32(2.0) * T_softmax_exp")
    assert mutated != text
    assert _ops(tir.parse(mutated)) == []


# ------------------------------------------------------------- sum or collapse_sum_to
@pytest.mark.parametrize("shape, axis, keepdims, named", [
    ((4, 5, 3), [1], True, False),      # keepdims: collapse_sum_to(x, (4, 1, 3)) too
    ((4, 5, 3), [0], False, False),     # leading axes: collapse_sum_to(x, (5, 3)) too
    ((8, 4), [0, 1], False, False),     # everything: collapse_sum_to(x, ()) too
    ((4, 5, 3), [1], False, True),      # a middle axis dropped: no collapse gives (4, 3)
    ((4, 5, 3), [0, 2], False, True),
])
def test_sum_that_collapse_sum_to_explains_is_a_convention(shape, axis, keepdims, named):
    """collapse_sum_to lowers to the very loops (and compute tag) of such a sum: on its own
    opinfo abstains; inside a network (or with conventions=True) it names ``sum`` and says
    the name was assumed."""
    func = tir.topi.lower("sum", [(shape, "float32")], axis=axis, keepdims=keepdims)
    want = [("sum", {"axis": tuple(axis), "keepdims": keepdims})]
    assert _ops(func) == (want if named else [])
    (op,) = analyze(func, conventions=True).ops
    assert (op.name, dict(op.attrs)) == want[0]
    assert op.assumed == (() if named else ("op",))
