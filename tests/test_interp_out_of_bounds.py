"""Out-of-bounds loads in the interpreter.

TVM's slice_scatter takes its source at indices clamped to the destination's extent, past the
source's end where the slice does not reach, and discards those lanes with a select. The
interpreter lets such a load poison its lanes: a poisoned value may be stored in scratch
storage and dropped later, and is an error only when it reaches a parameter or is read where
nothing tracks it. ``T.Select`` reads only its chosen side, as the C engine's ``?:`` does.
"""
from __future__ import annotations

import numpy as np
import pytest

import tir
from tir.interp import interpret
from tir.interp_data import InterpError

from fixture_util import fixture_func

HEADER = "# from tvm.script import tirx as T\n\n"


def _slice(x, src, axis_slice):
    want = x.copy()
    want[axis_slice] = src
    return want


@pytest.mark.parametrize("name, xs, ys, where", [
    ("more_slice_scatter_1", (7, 6, 5), (7, 1, 5), np.s_[:, 4:5, :]),
    ("more_slice_scatter_2", (9, 7, 8), (9, 2, 8), np.s_[:, 1:3, :]),
    ("more_slice_scatter_3", (8, 10), (8, 1), np.s_[:, 8:9:2]),
])
@pytest.mark.parametrize("engine", ["interp", "c"])
def test_tvm_slice_scatter_runs_though_it_reads_its_source_out_of_bounds(name, xs, ys, where, engine):
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, xs).astype("float32"), rng.uniform(-1, 1, ys).astype("float32")
    out = tir.run(fixture_func(name), x, y, engine=engine)
    np.testing.assert_array_equal(out, _slice(x, y, where))


GATHER = HEADER + '''@T.prim_func
def gather(y: T.Buffer((2, 3), "float32"), idx: T.Buffer((4,), "int64"), keep: T.Buffer((4,), "bool"), out: T.Buffer((2, 4), "float32")):
    taken = T.alloc_buffer((2, 4), "float32")
    for i, j in T.grid(2, 4):
        with T.sblock("take"):
            vi, vj = T.axis.remap("SS", [i, j])
            taken[vi, vj] = y[vi, idx[vj]]
    for i, j in T.grid(2, 4):
        with T.sblock("where"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = T.Select(keep[vj], taken[vi, vj], T.float32(-1))
'''


def _gather_args(keep):
    y = np.arange(6, dtype="float32").reshape(2, 3)
    return y, np.array([0, 2, 3, 1], "int64"), np.array(keep), np.zeros((2, 4), "float32")


@pytest.mark.parametrize("vectorize", [True, False])
def test_discarded_out_of_bounds_lanes_are_not_an_error(vectorize):
    y, idx, keep, out = _gather_args([True, True, False, True])
    interpret(tir.parse(GATHER), y, idx, keep, out, vectorize=vectorize)
    np.testing.assert_array_equal(out, [[0, 2, -1, 1], [3, 5, -1, 4]])


@pytest.mark.parametrize("vectorize", [True, False])
def test_used_out_of_bounds_lanes_name_the_load(vectorize):
    """The data-dependent index ``y[vi, idx[vj]]`` varies along other axes than the bad lane
    mask: the message names the whole index, where a broadcast error once escaped."""
    y, idx, keep, out = _gather_args([True, True, True, True])
    with pytest.raises(InterpError) as err:
        interpret(tir.parse(GATHER), y, idx, keep, out, vectorize=vectorize)
    text = str(err.value)
    assert "stores into 'out'" in text and "index (0, 3) is out of bounds for buffer 'y'" in text
    assert "'take'" in text


def test_an_out_of_bounds_index_into_a_parameter_names_the_index():
    text = GATHER.replace("taken[vi, vj] = y[vi, idx[vj]]", "taken[vi, vj] = T.float32(0)\n            y[vi, idx[vj]] = T.float32(1)")
    y, idx, keep, out = _gather_args([True, True, False, True])
    with pytest.raises(InterpError, match=r"index \(0, 3\) is out of bounds for buffer 'y'"):
        interpret(tir.parse(text), y, idx, keep, out)


REDUCE = HEADER + '''@T.prim_func
def f(y: T.Buffer((3,), "float32"), out: T.Buffer((1,), "float32")):
    t = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.sblock("shift"):
            vi = T.axis.spatial(4, i)
            t[vi] = y[vi]
    for k in range(4):
        with T.sblock("sum"):
            vk = T.axis.reduce(4, k)
            with T.init():
                out[0] = T.float32(0)
            out[0] = out[0] + t[vk]
'''


@pytest.mark.parametrize("vectorize", [True, False])
def test_a_poisoned_element_read_by_a_reduction_is_an_error(vectorize):
    with pytest.raises(InterpError, match=r"out.of.bounds.*index \(3,\) is out of bounds for buffer 'y'"):
        interpret(tir.parse(REDUCE), np.ones(3, "float32"), np.zeros(1, "float32"), vectorize=vectorize)


@pytest.mark.parametrize("vectorize", [True, False])
def test_overwriting_a_poisoned_element_clears_it(vectorize):
    text = REDUCE.replace('''    for k in range(4):''', '''    for i in range(1):
        with T.sblock("fix"):
            vi = T.axis.spatial(1, i)
            t[3] = T.float32(10)
    for k in range(4):''')
    out = np.zeros(1, "float32")
    interpret(tir.parse(text), np.ones(3, "float32"), out, vectorize=vectorize)
    assert out[0] == 13


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_select_reads_only_its_chosen_side(engine):
    text = HEADER + '''@T.prim_func
def f(a: T.Buffer((4,), "int32"), b: T.Buffer((4,), "int32"), out: T.Buffer((4,), "int32")):
    for i in range(4):
        with T.sblock("div"):
            vi = T.axis.spatial(4, i)
            out[vi] = T.Select(b[vi] != 0, a[vi] // b[vi], -1)
'''
    a, b = np.array([7, 8, 9, 10], "int32"), np.array([2, 0, 3, 0], "int32")
    np.testing.assert_array_equal(tir.run(tir.parse(text), a, b, engine=engine), [3, -1, 3, -1])
