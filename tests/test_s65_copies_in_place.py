"""Session 65: cache copies read through inside their readers' loops
(:mod:`opinfo.copies_in_place`), and the interpreter's ``drop_strays`` mode they are checked with.

``read_at``/``write_at`` under a ``blockIdx`` binding of a fused loop whose factor does not
divide it copy, in each thread block, the rows its elements fall in; the last block's range
runs past the end of the caches. The fixture is written by hand after that form (TVM 0.27's
``read_at`` + ``write_at`` + ``bind``: every binary elementwise op of a generated corpus).
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.api import WARNINGS
from opinfo.copies_in_place import read_through_in_place
from tir.builder import Builder
from tir.interp import InterpError, interpret
from tests.fixture_util import fixture_func, replaced

CACHES = "s65_overrun_caches"


def test_overrunning_caches_read_through_name_the_op():
    func = fixture_func(CACHES)
    info = opinfo.analyze(func)
    assert [(op.name, op.operands[0].buffer, op.output.buffer) for op in info.ops] == [("exp", "x", "y")]
    assert WARNINGS["copies_in_place"] in info.warnings


def test_rewritten_function_has_no_caches_and_computes_the_same():
    func = fixture_func(CACHES)
    rewritten = read_through_in_place(func)
    assert rewritten is not None
    names = {b.name for b in rewritten.blocks()}
    assert "x_local" not in names and "y_shared" not in names
    x = np.random.default_rng(1).standard_normal((5, 9)).astype("float32")
    y = np.zeros_like(x)
    interpret(rewritten, x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_a_read_of_a_row_no_copy_stored_yet_is_not_read_through():
    # each element reads two rows on: the last block writing row 0 (the second) has copied
    # rows 0 and 1 only, so the function as written reads junk there; reading through would
    # invent the values
    text = replaced(CACHES, "T.exp(x_local[v_i0, v_i1])", "T.exp(x_local[(v_i0 + T.int64(2)) % T.int64(5), v_i1])")
    (_, func), = tir.parse(text).prim_funcs()
    assert read_through_in_place(func) is None
    assert opinfo.analyze(func).ops == ()


def test_a_row_copied_by_an_earlier_block_is_read_through():
    # one row on: every row an element reads was copied, by this block or an earlier one,
    # before the element's last write; the copy holds the source's value, so reading
    # through computes the same (an op the recognizers do not name, but the same values)
    text = replaced(CACHES, "T.exp(x_local[v_i0, v_i1])", "T.exp(x_local[(v_i0 + T.int64(1)) % T.int64(5), v_i1])")
    (_, func), = tir.parse(text).prim_funcs()
    rewritten = read_through_in_place(func)
    assert rewritten is not None
    x = np.random.default_rng(2).standard_normal((5, 9)).astype("float32")
    y = np.zeros_like(x)
    interpret(rewritten, x, y)
    np.testing.assert_allclose(y, np.exp(np.roll(x, -1, axis=0)), rtol=1e-6)


def test_a_source_changed_between_copy_and_read_is_not_read_through():
    # each block adds 1 to the source after copying it: the copy holds the older value
    text = replaced(CACHES, "            for r, c in T.grid((b * T.int64(8) % T.int64(9) + T.int64(7)) // T.int64(9) + T.int64(1), T.int64(9)):\n"
                            "                with T.sblock(\"compute\"):",
                    "            for r, c in T.grid(T.int64(5), T.int64(9)):\n"
                    "                with T.sblock(\"bump\"):\n"
                    "                    v_a, v_b = T.axis.remap(\"SS\", [r, c])\n"
                    "                    x[v_a, v_b] = x[v_a, v_b] + T.float32(1)\n"
                    "            for r, c in T.grid((b * T.int64(8) % T.int64(9) + T.int64(7)) // T.int64(9) + T.int64(1), T.int64(9)):\n"
                    "                with T.sblock(\"compute\"):")
    (_, func), = tir.parse(text).prim_funcs()
    assert read_through_in_place(func) is None


def test_a_function_without_caches_is_left_alone():
    b = Builder()
    a = b.placeholder((4, 3), "float32", "A")
    out = b.compute("B", (4, 3), lambda i, j: tir.max_(a[i, j], tir.const(0.0)))
    assert read_through_in_place(b.build([a], [out])) is None


STRAYS = """
@T.prim_func
def strays(x: T.Buffer((2, 3), "float32"), y: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("s"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = x[vi, vj % 3] * T.float32(2)
"""


def _strays(drop: bool):
    """Run a function storing past an inner axis (onto the next row) and past the end."""
    func = tir.parse(STRAYS)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = np.full((2, 3), -1.0, dtype="float32")
    interpret(func, x, y, drop_strays=drop)
    return y


def test_interpreter_drop_strays_places_stores_by_layout():
    with pytest.raises(InterpError, match="out of bounds"):
        _strays(False)
    # y[0, 3] lands on y[1, 0] and is overwritten by y[1, 0] in loop order; y[1, 3] is past
    # the storage and dropped
    np.testing.assert_array_equal(_strays(True), np.arange(6, dtype="float32").reshape(2, 3) * 2)



def test_an_in_place_cache_of_a_reduction_is_undone():
    # cache_inplace of a decomposed max: copied out, updated and copied back at each step
    func = fixture_func("s65_inplace_cache_max")
    info = opinfo.analyze(func)
    assert [(op.name, dict(op.attrs)) for op in info.ops] == [("max", {"axis": (0,), "keepdims": False})]
    assert WARNINGS["copies_in_place"] in info.warnings
    assert "x_red_shared" not in {b.name for b in read_through_in_place(func).blocks()}


def test_an_in_place_cache_written_back_before_its_update_is_kept():
    # the copy back runs before the update, which the next copy in overwrites: the output
    # keeps its init; reading through would compute the max
    text = replaced("s65_inplace_cache_max")
    update = text[text.index('            with T.block("x_red_update"):'):text.rindex('            with T.block("x_red_shared"):')]
    text = text.replace(update, "", 1)
    text = text.rstrip("\n") + "\n" + update
    (_, func), = tir.parse(text).prim_funcs()
    x = np.random.default_rng(3).standard_normal(5).astype("float32")
    out = np.zeros((), "float32")
    interpret(func, x, out)
    assert out < -1e38
    assert read_through_in_place(func) is None
    assert opinfo.analyze(func).ops == ()


LOOPS_IN_BLOCK = """
@T.prim_func
def copy_over(x: T.Buffer((3, 4), "float32"), y: T.Buffer((3, 4), "float32")):
    with T.block("c"):
        for i, j in T.grid(ROWS, COLS):
            y[i, j] = x[i, j % 4] * T.float32(2)
"""


@pytest.mark.parametrize("rows, cols", [(5, 4), (3, 6), (4, 5)])
def test_drop_strays_runs_loops_in_a_block_as_lanes_like_the_walk(rows, cols):
    # rows past the end are dropped, columns past it land on the next row (then the lanes
    # meet: the walk decides); run as a grid of lanes or walked, the same stores win
    func = tir.parse(LOOPS_IN_BLOCK.replace("ROWS", str(rows)).replace("COLS", str(cols)))
    x = np.arange(12, dtype="float32").reshape(3, 4)
    outs = []
    for vectorize in (True, False):
        y = np.full((3, 4), -1.0, dtype="float32")
        interpret(func, x, y, vectorize=vectorize, drop_strays=True)
        outs.append(y)
    np.testing.assert_array_equal(outs[0], outs[1])
    if cols == 4:
        np.testing.assert_array_equal(outs[0], x * 2)
