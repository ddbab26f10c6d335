"""Session 66: reductions whose block a scheduler rebuilt from its loops, over an input with
an axis of extent 1. dlight drops every loop of extent 1 (a reduced one's variable with it)
and writes the unit axes of a ``keepdims`` output at 0; :func:`opinfo.unit_axes.restore_unit_vars`
gives them a variable back, and the input's element read at 0 gets the output's variable.
Whether the unit axis was reduced or kept is then open: ``max(x, axis=[0, 1])`` and
``axis=[1]`` over a ``(1, 6)`` tensor print the very same block. The reading marks ``axis``
assumed and unconventional: the function abstains alone and inside a network.
Plain and split loops keep a variable for every axis and decide it.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import opinfo
import tir.topi
from opinfo.network_conventions import in_network
from tests.fixture_util import fixture_func


@pytest.mark.parametrize("name, op, axis", [
    ("s66_dlight_max_unit_axis", "max", (1,)),        # TVM's truth: axis=[0, 1]
    ("s66_dlight_max_kept_unit_axis", "max", (1,)),   # TVM's truth: axis=[1]
    ("s66_dlight_mean_unit_axis", "mean", (0,)),      # TVM's truth: axis=[0, 1]
    ("s66_dlight_std_unit_axis", "std", (0,)),        # TVM's truth: axis=[0, 1]
])
def test_a_kept_unit_axis_of_a_rebuilt_reduction_is_left_open(name, op, axis):
    func = fixture_func(name)
    info = opinfo.analyze(func)
    assert not info.ops
    (reading,) = info.undecided
    assert reading.name == op and reading.attrs["axis"] == axis and reading.attrs["keepdims"] is True
    assert "axis" in reading.assumed and "axis" in reading.unconventional
    assert in_network((reading,)) == ()  # no importer's convention settles it either


def test_the_two_dlight_prints_are_the_same_block():
    # reduced or kept, the unit axis leaves the same loops: nothing could tell them apart
    import tir
    a, b = (tir.to_script(fixture_func(n)) for n in ("s66_dlight_max_unit_axis", "s66_dlight_max_kept_unit_axis"))
    assert a == b


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(["max", "min", "sum", "mean", "prod", "variance"]),
       shape=st.lists(st.sampled_from([1, 2, 3]), min_size=2, max_size=3).filter(lambda s: 1 in s),
       data=st.data())
def test_plain_loops_decide_unit_axes(op, shape, data):
    # TVM's legalized loops give every axis a variable: reduced unit axes are read
    axis = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    func = tir.topi.lower(op, [(tuple(shape), "float32")], axis=axis, keepdims=True)
    info = opinfo.analyze(func)
    ops = info.ops or info.undecided  # sum over axes making ones: collapse_sum_to's loops too
    assert [o.name for o in ops] == [op]
    assert list(ops[0].attrs["axis"]) == axis and "axis" not in ops[0].assumed


def test_a_packed_max_pool_over_the_whole_input_is_no_max_reduction():
    # transform_layout folded the unit output variables out of the window's index
    # (x[n, 0, rv0, rv1, c]): the loops are a max over H and W, the compute tag says pool
    func = fixture_func("s66_packed_global_max_pool")
    assert "pool_max" in [b.name for b in func.blocks()]
    info = opinfo.analyze(func)
    assert not info.ops and not any(op.name == "max" for op in info.undecided)
