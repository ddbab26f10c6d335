"""Copies past an end of an axis of their buffer judged by what happens next to each element
their strays land on (:func:`opinfo.coverage.strays_dead`), the one rule
(:func:`opinfo.coverage.strays_harmless`) by which the out-of-bounds gate lets a copy pass and
:func:`opinfo.block_loops.clip_copies` clips it:

- TVM 0.27's conv2d_transpose after ``cache_read`` + ``compute_at`` copies row 19 of a
  19-row cache (its producer's guard was not copied): flattened, that row is the next
  channel's row 0, which the copy writes again before the consumer reads it (the consumer's
  own guard never reads row 19): the strays are dead. Before, a same-index copy passed the
  gate without any condition on what else touched the buffers (its source is still being
  computed in the same statement);
- a copy run bottom row first whose stray lands on a row it already copied, read afterwards,
  is refused; so is one whose stray survives in an output."""
from __future__ import annotations

import pytest

import opinfo
import tir
from opinfo.coverage import out_of_bounds_writes, store_blocks, strays_dead
from opinfo.probe import shape_vars
from tests.fixture_util import fixture_func, replaced

TRANSPOSE = "cache_read_unguarded_copy_conv2d_transpose"

COPY = """
@T.prim_func(private=True)
def copy_then_read(P: T.Buffer((4, 4), "float32"), O: T.Buffer((4, 3), "float32")):
    S = T.alloc_buffer((4, 3))
    for i, j in T.grid(4, 4):
        with T.block("S"):
            vi = T.axis.spatial(4, ORDER)
            vj = T.axis.spatial(4, j)
            S[vi, vj] = P[vi, vj + 1]
    for i, j in T.grid(4, 3):
        with T.block("O"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = S[vi, vj]
"""
"""A shifted copy run one column past both buffers (``P[i, 4]`` past ``P``'s rows of 4 as
``S[i, 3]`` past ``S``'s rows of 3, as ``read_at`` copies whole tiles). Flattened, the stray
puts ``P[i + 1, 0]`` on ``S[i + 1, 0]``, whose value is ``P[i + 1, 1]``: run top row first
(ORDER ``i``), the copy writes that element again before anything reads it; run bottom row
first (``3 - i``), the stray overwrites a row already copied, and ``O`` reads it."""


def _func(text: str):
    parsed = tir.parse(text)
    if hasattr(parsed, "prim_funcs"):
        (_, parsed), = parsed.prim_funcs()
    return parsed


def _copy_store(func):
    (store,) = [b.realize.block.body for b in store_blocks(func).values() if b.realize.block.name == "S"]
    return store


def test_cache_rewritten_before_each_read_has_dead_strays():
    func = fixture_func(TRANSPOSE)
    shared = [b.realize.block.body for b in store_blocks(func).values()
              if b.realize.block.name == "data_dilate_shared"]
    assert strays_dead(func, shared[0], frozenset(shape_vars(func)))
    assert not out_of_bounds_writes(func)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv2d_transpose"


def test_consumer_reading_the_stray_row_refutes():
    # the consumer's guard widened to row 19: it reads what the stray left there
    guard = "v_h + v_dh < T.int64(19), data_dilate_shared"
    func = _func(replaced(TRANSPOSE, guard, guard.replace("19", "20")))
    shared = [b.realize.block.body for b in store_blocks(func).values()
              if b.realize.block.name == "data_dilate_shared"]
    assert not strays_dead(func, shared[0], frozenset(shape_vars(func)))


@pytest.mark.parametrize("order, dead", [("i", True), ("3 - i", False)])
def test_copy_order_decides(order, dead):
    func = _func(COPY.replace("ORDER", order))
    assert strays_dead(func, _copy_store(func), frozenset()) is dead
    assert out_of_bounds_writes(func) is not dead
    assert (opinfo.analyze(func).refused is None) is dead


def test_stray_left_in_an_output_refutes():
    # the copy writes the output itself: the last row's stray lands past the storage, the
    # others are written again -- except when the copy runs bottom row first
    text = """
@T.prim_func(private=True)
def copy_out(P: T.Buffer((4, 4), "float32"), S: T.Buffer((4, 3), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("S"):
            vi = T.axis.spatial(4, ORDER)
            vj = T.axis.spatial(4, j)
            S[vi, vj] = P[vi, vj + 1]
"""
    top = _func(text.replace("ORDER", "i"))
    bottom = _func(text.replace("ORDER", "3 - i"))
    assert strays_dead(top, _copy_store(top), frozenset())
    assert not strays_dead(bottom, _copy_store(bottom), frozenset())


VIEW = """
@T.prim_func(private=True)
def copy_read_through_view(P: T.Buffer((4, 4), "float32"), O: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4, 3))
    for i in range(4):
        for j in range(4):
            with T.block("S"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(4, j)
                S[vi, vj] = P[vi, vj + 1]
        with T.block("O"):
            vi = T.axis.spatial(4, i)
            V = T.decl_buffer((12,), data=S.data)
            O[vi] = READ
"""
"""Row ``i``'s stray lands on ``S[i + 1, 0]``, read right after the row, before the next row's
copy stores it: directly, or through a flat view of ``S``'s storage."""


@pytest.mark.parametrize("read", ["S[(vi + 1) % 4, 0]", "V[(vi * 3 + 3) % 12]"])
def test_a_read_of_the_stray_element_refutes_even_through_a_view(read):
    func = _func(VIEW.replace("READ", read))
    assert not strays_dead(func, _copy_store(func), frozenset())
