"""Reads outside a buffer (:func:`opinfo.coverage.out_of_bounds_reads`).

A load that runs whatever the data and indexes past a buffer's axis reads no element of
it: TVM prints no such function for an op. The fuzzer made one from a strided slice (real
TVM 0.27 output, fixture ``s18_strided_slice_offset``): ``x[v + 3]`` turned ``x[v - 3]``
was named ``strided_slice(begin=-3)``, which in Relax counts from the end of the axis.
Guarded reads (a pad's ``if_then_else``) and copies of whole tiles stay allowed.
"""
from __future__ import annotations

import pytest

import opinfo
import tir
from opinfo.coverage import out_of_bounds_reads
from tir import topi

from tests.fixture_util import fixture_func, fixture_ops

SLICE = "s18_strided_slice_offset"
LOAD = "= x[v_ax0 + T.int64(3)]"


def test_the_slice_as_tvm_prints_it_is_named():
    assert not out_of_bounds_reads(fixture_func(SLICE))
    assert fixture_ops(SLICE) == [("strided_slice", {"axes": (0,), "begin": (3,), "end": (5,), "strides": (1,)})]


@pytest.mark.parametrize("index", ["v_ax0 - T.int64(3)", "v_ax0 + T.int64(7)", "v_ax0 * T.int64(9)"])
def test_a_read_outside_the_buffer_abstains(index):
    func = fixture_func(SLICE, lambda text: text.replace(LOAD, f"= x[{index}]"))
    assert out_of_bounds_reads(func)
    assert fixture_ops(SLICE, LOAD, f"= x[{index}]") == []


def test_the_last_element_is_still_inside():
    edited = "= x[v_ax0 + T.int64(6)]"  # reads x[6], x[7] of 8
    assert not out_of_bounds_reads(fixture_func(SLICE, lambda text: text.replace(LOAD, edited)))
    assert fixture_ops(SLICE, LOAD, edited) == [("strided_slice", {"axes": (0,), "begin": (6,), "end": (8,),
                                                                   "strides": (1,)})]


@pytest.mark.parametrize("op, attrs", [
    ("nn.pad", {"pad_width": [2, 1], "pad_mode": "constant", "pad_value": 0.5}),
    ("nn.conv1d", {"strides": [2], "padding": [2, 1], "dilation": [1], "groups": 1, "data_layout": "NCW",
                   "kernel_layout": "OIW"}),
])
def test_guarded_reads_before_the_buffer_are_allowed(op, attrs):
    inputs = [((5,), "float32")] if op == "nn.pad" else [((1, 2, 9), "float32"), ((3, 2, 3), "float32")]
    func = topi.lower(op, inputs, **attrs)
    assert not out_of_bounds_reads(func)
    assert [o.name for o in opinfo.analyze(func).ops] == [op]


def test_a_guard_under_select_is_a_guard_too():
    text = fixture_func(SLICE, lambda t: t.replace(
        LOAD, "= T.Select(T.int64(3) <= v_ax0, x[v_ax0 - T.int64(3)], T.float32(0.0))"))
    assert not out_of_bounds_reads(text)


def test_an_index_read_from_a_buffer_is_not_judged():
    # gather-like: the index is data, its range unknown
    func = tir.parse("""
@T.prim_func
def f(x: T.Buffer((T.int64(4),), "float32"), i: T.Buffer((T.int64(3),), "int64"), out: T.Buffer((T.int64(3),), "float32")):
    for a in range(T.int64(3)):
        with T.block("T_take"):
            v = T.axis.spatial(T.int64(3), a)
            out[v] = x[i[v]]
""")
    assert not out_of_bounds_reads(func)


def test_a_repeat_made_to_read_past_its_input_is_no_slice():
    # x (3,) repeated twice; the mutant x[v // 1] reads x[3..5]: it was named a strided
    # slice x[0:6] of the three-element axis
    load = "x[v_ax0 // T.int64(2)]"
    assert fixture_ops("s18_repeat") == [("repeat", {"repeats": 2, "axis": 0})]
    assert fixture_ops("s18_repeat", "= " + load, "= " + load.replace("2)", "1)")) == []
