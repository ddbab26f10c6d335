"""Session 39: a reduction nest too large to enumerate, judged group by group.

Fixture: a ``mean`` over all four axes of a (7, 6, 5, 5) tensor after ``pad_einsum`` (TVM
0.27): the reduction block runs 516,096 loop iterations, past what
:func:`opinfo.realize_check._refuted` enumerates. A mutant found by
``tools/fuzz_soundness.py`` binds ``v_k1 = k1_0 + k1_1`` (instead of ``k1_0 * 2 + k1_1``) over
loops of 3 and 2: rows 1 and 2 are added twice, rows 4 and 5 never, and the function was named
``mean``. The block's variables fall into independent groups (each reading loops no other
reads), so the points run are the product of each group's: a group whose spatial point never
reaches one of its reduction points refutes the whole (``_reduction_left_short``).
"""
from __future__ import annotations

import opinfo
import tir
from opinfo import realize_check
from opinfo.pad_einsum import unpad_einsum
from tests.fixture_util import fixture_func, fixture_ops, replaced

NAME = "s39_mean_pad_einsum_large_nest"
BINDING = "v_k1 = T.axis.reduce(T.int64(16), k1_0 * T.int64(2) + k1_1)"


def test_named_as_the_mean():
    assert fixture_ops(NAME) == [("mean", {"axis": (0, 1, 2, 3), "keepdims": True})]


def test_reduction_rows_left_out_is_not_named():
    assert fixture_ops(NAME, BINDING, BINDING.replace("k1_0 * T.int64(2)", "k1_0 * T.int64(1)")) == []


def test_reduction_rows_past_the_data_is_not_named():
    # k1_0 * 3 + k1_1 reaches row 7 of the 6 the data has (the pad's zeros: still a mean of
    # other rows), and leaves rows 2 and 5 out
    assert fixture_ops(NAME, BINDING, BINDING.replace("k1_0 * T.int64(2)", "k1_0 * T.int64(3)")) == []


def _block(func, name):
    from opinfo.coverage import block_realizes
    return next((r, loops) for r, loops in block_realizes(func.body) if r.block.name == name)


def test_groups_split_the_nest():
    realize, loops = _block(fixture_func(NAME), "x_red")
    groups = realize_check._groups(realize, loops)
    # each variable reads loops of its own: v_k1 its two, every other one loop
    assert sorted(len(g[2]) for g in groups) == [1] * 7 + [2]
    # as printed, the reduction's domain is the padded 16 rows, of which the loops run 6
    assert realize_check._reduction_left_short(realize, loops, {})
    # pad_einsum undone, the domain is the 6 rows of the data: each run once
    realize, loops = _block(unpad_einsum(fixture_func(NAME)), "x_red")
    assert not realize_check._reduction_left_short(realize, loops, {})


def test_left_short_found_in_the_group():
    func = fixture_func(NAME, lambda t: t.replace(BINDING, BINDING.replace("k1_0 * T.int64(2)", "k1_0 * T.int64(1)")))
    realize, loops = _block(unpad_einsum(func), "x_red")
    assert realize_check._reduction_left_short(realize, loops, {})


def test_reduction_rows_added_unevenly_is_not_named():
    # k1_0 + k1_1 over loops of 4 and 3 reaches rows 0..5, rows 2 and 3 three times, row 0
    # once: no sequence of whole runs from the init adds rows unevenly
    loops = ("T.grid(T.int64(16), T.int64(4), T.int64(2), T.int64(2), T.int64(7), T.int64(3), T.int64(2), "
             "T.int64(8), T.int64(6))")
    text = replaced(NAME, loops, loops.replace("T.int64(3), T.int64(2), T.int64(8)", "T.int64(4), T.int64(3), T.int64(8)"))
    text = text.replace(BINDING, "v_k1 = T.axis.reduce(T.int64(16), k1_0 + k1_1)")
    (_, func), = tir.parse(text).prim_funcs()
    assert opinfo.analyze(func).ops == ()
    realize, loops_ = _block(unpad_einsum(func), "x_red")
    assert realize_check._reduction_left_short(realize, loops_, {})
