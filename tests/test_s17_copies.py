"""Copies on real TVM 0.27 output (fixtures ``s17_blockize_*``, ``s17_symbolic_reshape_*``):
blockized ones (:mod:`opinfo.blockize`, :func:`opinfo.api._settle_copy`) and a symbolic
reshape defined for some sizes only (:mod:`opinfo.recognize.movement_reshape`):

- a reshape blockized over its innermost split: the store indexes ``o * 3 + i`` while TVM
  simplified the load to ``x[o // 5, o % 5, i]``; the pair becomes one variable whose
  digits the load reads, and the reshape is named (also with a non-divisible split);
- an expand_dims whose cache copy was blockized: the outer block's name (``<cache>_o``)
  is no compute tag of the copy op;
- ``(n, 3)`` into ``(6, n // 2)``, a reshape where the element counts agree (n even).
"""
from __future__ import annotations

from opinfo.blockize import unblockize

from tests.fixture_util import fixture_func, fixture_ops

DIGITS = "s17_blockize_reshape_digits"
PARTIAL = "s17_blockize_reshape_partial_tile"
CACHED = "s17_blockize_cached_expand_dims"

LOAD = "x_shared_local[v_ax0_o % T.int64(45) // T.int64(5), v_ax0_o % T.int64(5), v_ax0_i]"


def test_blockized_reshape_reading_digits_of_its_store_index():
    assert fixture_ops(DIGITS) == [("reshape", {"shape": (135,)})]
    merged = [b for b in unblockize(fixture_func(DIGITS)).blocks() if b.name == "T_reshape"]
    assert [int(iv.dom.extent.value) for iv in merged[0].iter_vars] == [135]


def test_blockized_reshape_over_a_non_divisible_split():
    assert fixture_ops(PARTIAL) == [("reshape", {"shape": (1, 81)})]


def test_blockized_copy_reversing_the_inner_axis_is_no_reshape():
    reversed_load = LOAD.replace("v_ax0_i]", "T.int64(2) - v_ax0_i]")
    assert all(name != "reshape" for name, _ in fixture_ops(DIGITS, "= " + LOAD, "= " + reversed_load))


def test_blockized_cache_copy_is_named_by_its_compute_tag():
    assert fixture_ops(CACHED) == [("expand_dims", {"axis": (2,)})]


def test_symbolic_reshape_defined_for_even_sizes_only():
    # (n, 3) into (6, n // 2): the element counts agree for an even n only (Relax's shape
    # check), and the copy is checked in row-major order at those values
    name = "s17_symbolic_reshape_even_only"
    assert fixture_ops(name) == [("reshape", {"shape": (6, "n // 2")})]
    # the last index read with the wrong radix: no reshape
    read = "(v_ax0 * (n // T.int64(2)) + v_ax1) % T.int64(3)]"
    assert fixture_ops(name, "= x[(v_ax0 * (n // T.int64(2)) + v_ax1) // T.int64(3) % n, " + read,
                       "= x[(v_ax0 * (n // T.int64(2)) + v_ax1) // T.int64(3) % n, "
                       + read.replace("% T.int64(3)]", "% T.int64(2)]")) == []


def test_symbolic_reshape_defined_for_multiples_of_5_only():
    # (n, 3, 6, 2) into (5, n * 36 // 5): the counts agree for n = 5, 10, 15, ...
    assert fixture_ops("s17_symbolic_reshape_multiple_of_5") == [("reshape", {"shape": (5, "n * 36 // 5")})]
