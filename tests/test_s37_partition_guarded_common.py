"""``loop_partition`` under a split whose ``T.where`` TVM 0.27 puts on the ``_common`` block.

Partitioning the inner loop of ``permute_dims`` (symbolic batch) leaves the outer split's
predicate, ``ax0_0 * 2 + ax0_1 < 7``, on the scope block that holds the copies, and the
second copy's binding rewritten around its range's start: ``(ax2_01 - 2) * 2 + ax2_1 + 4``
where the first has ``ax2_00 * 2 + ax2_1``. The copies are the same nest: bindings compare
as affine forms once the copies' variables are matched, and the scope's predicate goes to
the blocks it held when the scope is removed.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.coverage import block_realizes
from opinfo.loop_partition import merge_partitions
from opinfo.probe import collect_vars
from tests.fixture_util import fixture_func, replaced
from tir.interp import interpret

NAME = "s37_transpose_partition_guarded_common"


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _names(func) -> list:
    return [b.name for b in func.blocks()]


def test_guarded_partitions_are_merged_and_read():
    func = fixture_func(NAME)
    merged = merge_partitions(func)
    names = _names(merged)
    assert not any(n.endswith(("_common", "_partition")) for n in names)
    # the scope's predicate now guards the merged block
    (guarded,) = [r for r, _ in block_realizes(merged.body) if r.block.name == "T_transpose"]
    found: set = set()
    collect_vars(guarded.predicate, found)
    assert "ax0_0" in {v.name for v in found}
    assert _ops(func) == [("permute_dims", {"axes": (1, 0, 2)})]


def test_fixture_computes_a_transpose():
    func = fixture_func(NAME)
    x = np.random.default_rng(3).standard_normal((3, 7, 7)).astype("float32")
    out = np.zeros((7, 3, 7), "float32")
    interpret(func, x, out)
    np.testing.assert_array_equal(out, x.transpose(1, 0, 2))
    merged = np.zeros_like(out)
    interpret(merge_partitions(func), x, merged)
    np.testing.assert_array_equal(merged, out)


def test_copies_whose_bindings_differ_are_not_merged():
    # the second copy shifted by one column: not the first copy's nest over its range
    text = replaced(NAME, "(ax2_01 - T.int64(2)) * T.int64(2) + ax2_1 + T.int64(4))",
                    "(ax2_01 - T.int64(2)) * T.int64(2) + ax2_1 + T.int64(3))")
    (_, func), = tir.parse(text).prim_funcs()
    assert any(n.endswith("_partition") for n in _names(merge_partitions(func)))
    assert _ops(func) == []


def test_scope_predicate_is_kept():
    # a scope predicate stopping a row short leaves row 6 of the intermediate unwritten,
    # which the copy to the output reads: never named
    text = replaced(NAME, "T.where(ax0_0 * T.int64(2) + ax0_1 < T.int64(7))", "T.where(ax0_0 * T.int64(2) + ax0_1 < T.int64(6))")
    (_, func), = tir.parse(text).prim_funcs()
    assert _ops(func) == []
