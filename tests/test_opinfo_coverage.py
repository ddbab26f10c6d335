"""A block that writes only part of its output is no op: opinfo abstains
(:mod:`opinfo.coverage`), and still names the same loops when they cover the output."""
import pytest
from hypothesis import given, settings, strategies as st

from tir.parser import parse
from opinfo.api import analyze
from opinfo.coverage import partial_writes

_SLICE = """
@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range({rows}):
        with T.block("T_strided_slice"):
            vi = T.axis.spatial(4, i)
            y[vi] = x[vi + 2]
"""

_ADD = """
@T.prim_func
def f(x: T.Buffer((4, 6), "float32"), z: T.Buffer((4, 6), "float32"), y: T.Buffer((4, 6), "float32")):
    for i, j in T.grid({rows}, 6):
        with T.block("T_add"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = x[vi, vj] + z[vi, vj]
"""

_SUM = """
@T.prim_func
def f(x: T.Buffer((4, 6), "float32"), y: T.Buffer((4,), "float32")):
    for i, j in T.grid({rows}, 6):
        with T.block("x_red"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + x[vi, vj]
"""

# the block's domain is the whole axis, the loops bound to it reach only part of it
_SPLIT = """
@T.prim_func
def f(x: T.Buffer((4, 6), "float32"), y: T.Buffer((4, 6), "float32")):
    for i0, i1, j in T.grid({outer}, 2, 6):
        with T.block("compute"):
            vi = T.axis.spatial(4, i0 * 2 + i1)
            vj = T.axis.spatial(6, j)
            y[vi, vj] = T.max(x[vi, vj], T.float32(0))
"""


@pytest.mark.parametrize("text,op", [(_SLICE, "strided_slice"), (_ADD, "add"), (_SUM, "sum")])
def test_part_of_the_output_is_not_the_op(text, op):
    assert [o.name for o in analyze(parse(text.format(rows=4))).ops] == [op]
    part = parse(text.format(rows=3))
    assert partial_writes(part)
    info = analyze(part)
    assert info.ops == () and info.kind  # the kind is still given


def test_split_loops_reaching_part_of_the_domain():
    assert [o.name for o in analyze(parse(_SPLIT.format(outer=2))).ops] == ["nn.relu"]
    assert not partial_writes(parse(_SPLIT.format(outer=2)))
    assert partial_writes(parse(_SPLIT.format(outer=1)))
    assert analyze(parse(_SPLIT.format(outer=1))).ops == ()


def test_an_intermediate_written_in_part_is_allowed():
    # compute_at's pad block fills only the columns the pool reads (12 of 13)
    text = """
@T.prim_func
def f(x: T.Buffer((4, 10), "float32"), y: T.Buffer((4, 6), "float32")):
    pad = T.alloc_buffer((4, 13))
    for a, b0, b1, r in T.grid(4, 3, 2, 2):
        for c in range(1):
            with T.block("pad_temp"):
                va = T.axis.spatial(4, a)
                vb = T.axis.spatial(13, b0 * 4 + b1 * 2 + r + c)
                pad[va, vb] = T.if_then_else(1 <= vb and vb < 11, x[va, vb - 1], T.float32(-3.0e38))
        with T.block("pool_max"):
            va = T.axis.spatial(4, a)
            vb = T.axis.spatial(6, b0 * 2 + b1)
            vr = T.axis.reduce(2, r)
            with T.init():
                y[va, vb] = T.float32(-3.0e38)
            y[va, vb] = T.max(y[va, vb], pad[va, vb * 2 + vr])
"""
    assert not partial_writes(parse(text))


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), dr=st.integers(0, 2), dc=st.integers(0, 2))
def test_covering_the_output_is_required(rows, cols, dr, dc):
    text = f"""
@T.prim_func
def f(x: T.Buffer(({rows + dr}, {cols + dc}), "float32"), y: T.Buffer(({rows + dr}, {cols + dc}), "float32")):
    for i, j in T.grid({rows}, {cols}):
        with T.block("compute"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = T.exp(x[vi, vj])
"""
    func = parse(text)
    assert partial_writes(func) == (dr > 0 or dc > 0)
    assert [o.name for o in analyze(func).ops] == ([] if dr or dc else ["exp"])
