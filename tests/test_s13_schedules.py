"""Schedules met on fresh TVM corpora (fixtures ``s13_*`` copied from real TVM output):

- a symbolic axis split, its parts reordered, fused and bound to threads: the predicates
  bound digits ``f % ((n + 1) // 2)`` and ``f // ((n + 1) // 2)`` of the fused index, which
  no rule reads; their exact coverage is enumerated at enough values of ``n``
  (:func:`opinfo.predicate_enum._covers_at_sizes`);
- rfactor then reindex leaves an identity copy (block ``x_red.rf_reindex``) before the
  reduction: no op of the graph, and no copy tag names one, so the function abstains instead
  of reading ``[broadcast_to, max]``.
"""
from __future__ import annotations

import opinfo
import tir

from tests.fixture_util import FIXTURES


def _ops(name: str, old: str = "", new: str = "") -> list:
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (_, func), = tir.parse(text).prim_funcs()
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_symbolic_split_reordered_fused_and_bound():
    assert _ops("s13_symsplit_reorder_abs") == [("abs", {})]
    assert _ops("s13_symsplit_bound_cos") == [("cos", {})]


def test_symbolic_split_with_a_digit_cut_short_abstains():
    # the fused index stops one short of the two halves: the last row is never computed
    assert _ops("s13_symsplit_reorder_abs", "< (n + T.int64(1)) // T.int64(2) * T.int64(2))",
                "< (n + T.int64(1)) // T.int64(2) * T.int64(2) - T.int64(1))") == []
    # the last column left out
    assert _ops("s13_symsplit_bound_cos", "n)) < T.int64(5) and", "n)) < T.int64(4) and") == []
    # (``f < n * 5`` is redundant there: the other digits' bounds keep ``f // n`` below 2)
    assert _ops("s13_symsplit_bound_cos", "< n * T.int64(5))", "< n * T.int64(5) - T.int64(1))") == [("cos", {})]


def test_symbolic_split_with_a_digit_bound_dropped_recomputes_rows():
    # without ``f < 2 * half`` the fused index runs on past the two halves: some rows are
    # computed twice, each time to the same value -- still abs (a reduction adding a point
    # twice is refuted by opinfo.realize_check)
    assert _ops("s13_symsplit_reorder_abs",
                " and i0_1_i0_0_fused_0 * T.int64(8) + i0_1_i0_0_fused_1 < (n + T.int64(1)) // T.int64(2) * T.int64(2))",
                ")") == [("abs", {})]


def test_rfactor_reindex_identity_copy_is_no_op():
    assert _ops("s13_rfactor_reindex_max") == []
