"""Loops whose range uses an outer loop (real TVM 0.27 output, fixtures ``s18_*``).

``compute_at`` of a block under a loop whose region TVM cannot make rectangular leaves a
nest such as ``for ax1 in range((f * 2 % 3 + 1) // 3 + 7)``. The soundness gates enumerate
a block's loops to check it runs its domain (:mod:`opinfo.realize_check`), and the order of
reads and writes (:mod:`opinfo.intermediate_check`, :mod:`opinfo.init_order`); before,
such a range made them give up, which let a concat writing only the rows of its second
input be named. :func:`opinfo.probe.nest_points` enumerates these nests one loop at a
time, in the order they run.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from opinfo.intermediate_check import stale_reads, uninitialised_reads
from opinfo.probe import nest_points
from opinfo.realize_check import misrealized
from opinfo.recognize.running import poisoned, run
from tir.dtype import dtype
from tir.expr import IntImm, Var
from tir.stmt import Evaluate, For, ForKind

from tests.fixture_util import fixture_func, fixture_ops

I64 = dtype("int64")


def _loop(var, extent, body=None):
    return For(var, IntImm(I64, 0), extent, ForKind.SERIAL, body or Evaluate(IntImm(dtype("int32"), 0)))


def test_nest_points_runs_a_triangle_in_loop_order():
    i, j = Var("i", I64), Var("j", I64)
    inner = _loop(j, i + IntImm(I64, 1))
    leaves, size = nest_points([_loop(i, IntImm(I64, 3), inner), inner], {}, 100)
    assert size == 6
    assert leaves[i].tolist() == [0, 1, 1, 2, 2, 2]
    assert leaves[j].tolist() == [0, 0, 1, 0, 1, 2]


def test_nest_points_refuses_past_its_limit_and_skips_empty_ranges():
    i, j = Var("i", I64), Var("j", I64)
    inner = _loop(j, i - IntImm(I64, 1))  # no iteration at i = 0 (extent -1) nor at i = 1
    leaves, size = nest_points([_loop(i, IntImm(I64, 4), inner), inner], {}, 100)
    assert (leaves[i].tolist(), leaves[j].tolist()) == ([2, 3, 3], [0, 0, 1])
    assert nest_points([_loop(i, IntImm(I64, 4), inner), inner], {}, 2) is None


def test_concat_computed_at_a_copy_that_misses_the_first_input_abstains():
    func = fixture_func("s18_concat_dependent_extent")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 9, 3, 3)).astype("float32"), rng.standard_normal((6, 9, 3, 3)).astype("float32")
    out = run(func, [x, y, poisoned((11, 9, 3, 3), "float32")])
    assert np.isnan(out[:5]).all() and np.array_equal(out[5:], y)  # x's rows are never written
    assert misrealized(func)
    assert fixture_ops("s18_concat_dependent_extent") == []


TRIANGLE = """
@T.prim_func
def f(x: T.Buffer((T.int64(6),), "float32"), compute: T.Buffer((T.int64(6),), "float32")):
    for a in range(T.int64(3)):
        for b in range(a + T.int64(1)):
            with T.block("compute"):
                v_i0 = T.axis.spatial(T.int64(6), a * (a + T.int64(1)) // T.int64(2) + b)
                T.reads(x[v_i0])
                T.writes(compute[v_i0])
                compute[v_i0] = T.max(x[v_i0], T.float32(0.0))
"""

TRIANGLE_SUM = """
@T.prim_func
def f(x: T.Buffer((T.int64(4), T.int64(4)), "float32"), x_red: T.Buffer((T.int64(4),), "float32")):
    for i in range(T.int64(4)):
        for k in range(EXTENT):
            with T.block("x_red"):
                v_i = T.axis.spatial(T.int64(4), i)
                v_k = T.axis.reduce(T.int64(4), k)
                T.reads(x[v_i, v_k])
                T.writes(x_red[v_i])
                with T.init():
                    x_red[v_i] = T.float32(0.0)
                x_red[v_i] = x_red[v_i] + x[v_i, v_k]
"""


def _ops(text):
    import opinfo

    func = tir.parse(text)
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_a_triangular_nest_over_the_whole_domain_is_named():
    assert _ops(TRIANGLE) == [("nn.relu", {})]


def test_a_triangular_nest_short_of_the_domain_abstains():
    assert _ops(TRIANGLE.replace("range(a + T.int64(1))", "range(a)")) == []


@pytest.mark.parametrize("extent, named", [("i * T.int64(0) + T.int64(4)", True), ("i + T.int64(1)", False),
                                           ("T.int64(4) - i", False)])
def test_a_reduction_loop_whose_range_uses_the_spatial_loop(extent, named):
    ops = _ops(TRIANGLE_SUM.replace("EXTENT", extent))
    assert ops == ([("sum", {"axis": (1,), "keepdims": False})] if named else [])


def test_a_block_domain_reading_a_loop_is_ill_formed():
    text = TRIANGLE_SUM.replace("EXTENT", "i + T.int64(1)").replace(
        'v_i = T.axis.spatial(T.int64(4), i)\n                v_k = T.axis.reduce(T.int64(4), k)',
        'v_i, v_k = T.axis.remap("SR", [i, k])')  # v_k's domain becomes [0, i + 1)
    func = tir.parse(text)
    assert misrealized(func)
    assert _ops(text) == []


def test_a_copy_read_before_this_iteration_fills_it_is_stale_once_built():
    # flatten under cache_read + compute_at: the outer loop's first iteration copies the even
    # columns of x_shared and the reshape under a range (max(a, 6n + a) + 1 - min(a, 6n + a))
    # stores every element, the odd ones from storage not yet written; the second copies the
    # odd columns and stores every element again but the first. As written that is the
    # reshape; TVM allocates x_shared within one iteration of the outer loop, and its build
    # reads garbage: named, with the warning
    func = fixture_func("s18_flatten_dependent_extent")
    assert not uninitialised_reads(func)
    assert stale_reads(func) == (("x_shared", ("ax1_1_1_1_1", "ax1_1_0")),)
    (name, attrs), = fixture_ops("s18_flatten_dependent_extent")
    assert name == "reshape" and [str(d) for d in attrs["shape"]] == ["n * 6"]
    x = np.random.default_rng(2).normal(size=(5, 6)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), x.reshape(-1))


@st.composite
def _nests(draw):
    """Up to three loops, each ranging over ``[lo, lo + ext)`` where ``lo`` and ``ext`` are
    small affine forms of the loops around it."""
    depth = draw(st.integers(1, 3))
    forms = []
    for k in range(depth):
        lo = (draw(st.integers(-2, 2)), [draw(st.integers(-1, 1)) for _ in range(k)])
        ext = (draw(st.integers(-1, 4)), [draw(st.integers(-2, 2)) for _ in range(k)])
        forms.append((lo, ext))
    return forms


def _value(form, outer):
    c, coefs = form
    return c + sum(a * v for a, v in zip(coefs, outer))


def _expr(form, loop_vars):
    c, coefs = form
    e = IntImm(I64, c)
    for a, v in zip(coefs, loop_vars):
        e = e + IntImm(I64, a) * v
    return e


@settings(max_examples=80, deadline=None)
@given(_nests())
def test_nest_points_matches_running_the_loops(forms):
    loop_vars = [Var(f"l{k}", I64) for k in range(len(forms))]
    loops = [For(v, _expr(lo, loop_vars[:k]), _expr(ext, loop_vars[:k]), ForKind.SERIAL, Evaluate(IntImm(dtype("int32"), 0)))
             for k, (v, (lo, ext)) in enumerate(zip(loop_vars, forms))]
    want = []

    def walk(k, outer):
        if k == len(forms):
            want.append(tuple(outer))
            return
        lo, ext = forms[k]
        start = _value(lo, outer)
        for x in range(start, start + max(_value(ext, outer), 0)):
            walk(k + 1, outer + [x])
    walk(0, [])
    leaves, size = nest_points(loops, {}, 10_000)
    got = list(zip(*[leaves[v].astype(int).tolist() for v in loop_vars])) if size else []
    assert size == len(want) and got == want
