"""A split that does not divide its axis, fused and then ``loop_partition``-ed (TVM 0.27).

Every copy of the nest keeps the split's ``T.where`` while TVM gives each copy's block
variable the range of the copy's loop: the last copy of a ``dequantize`` over an axis of 7
declares ``range(1, 8)`` (it writes ``dequantized[0:2, 1:8]``), and a ``gather_elements``
copy over ``range(5, 6)`` of an axis of 5 never runs at all. The predicate, not the
declared domain, bounds what the copies write: the merged domain is capped at the values
the binding takes where the predicate holds (:func:`opinfo.loop_partition._capped`), and
the out-of-bounds test reads the same narrowed ranges
(:func:`opinfo.coverage.predicate_spans`). A predicate that leaves an element out still
abstains.
"""
from __future__ import annotations

import opinfo
import tir
from opinfo.coverage import block_realizes, out_of_bounds_writes, predicate_spans
from opinfo.loop_partition import merge_partitions
from tests.fixture_util import FIXTURES

DEQUANTIZE = "s28_dequantize_partition_where"
GATHER = "s28_gather_partition_where"


def _func(name: str, old: str = "", new: str = ""):
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        assert old in text
        text = text.replace(old, new)  # every copy of the nest alike
    (func,) = [f for _, f in tir.parse(text).prim_funcs()]
    return func


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_partitioned_split_with_its_predicate_is_read():
    assert _ops(_func(DEQUANTIZE)) == [("dequantize", {"axis": 0, "out_dtype": "float32"})]
    assert _ops(_func(GATHER)) == [("gather_elements", {"axis": 1})]


def test_merged_domain_is_capped_by_the_predicate():
    merged = merge_partitions(_func(DEQUANTIZE))
    (block,) = [b for b in merged.blocks() if b.iter_vars]
    assert [int(iv.dom.extent.value) for iv in block.iter_vars] == [2, 7]
    merged = merge_partitions(_func(GATHER))
    (block,) = [b for b in merged.blocks() if b.iter_vars]
    assert [int(iv.dom.extent.value) for iv in block.iter_vars] == [5, 1]


def test_predicate_spans_of_the_copies():
    func = _func(GATHER)
    spans = [predicate_spans(r, loops) for r, loops in block_realizes(func.body) if r.block.iter_vars]
    assert spans[1] is None  # range(5, 6) under ``< 5``: the copy never runs
    assert not out_of_bounds_writes(func)
    func = _func(DEQUANTIZE)
    spans = [predicate_spans(r, loops) for r, loops in block_realizes(func.body) if r.block.iter_vars]
    assert [tuple(s.values()) for s in spans] == [((0, 0),), ((1, 6),)]  # v_i0 binds an outer loop
    assert not out_of_bounds_writes(func)


def test_a_predicate_that_drops_an_element_still_abstains():
    # the cut at 6 of 7 leaves column 6 unwritten; row 4 of 5 likewise
    assert _ops(_func(DEQUANTIZE, "% T.int64(2) < T.int64(7))", "% T.int64(2) < T.int64(6))")) == []
    assert _ops(_func(GATHER, "% T.int64(2) < T.int64(5))", "% T.int64(2) < T.int64(4))")) == []


def test_a_copy_running_past_the_axis_without_a_predicate_is_read_with_a_warning():
    # without the predicate the last copy writes column 7 of 7: flattened, row i + 1's
    # first element, which the next row rewrites (the last row's lands past the storage);
    # read restricted to the elements inside (opinfo.row_strays)
    info = opinfo.analyze(_func(DEQUANTIZE, "T.where(i1_0_i1_1_fused1 // T.int64(2) * T.int64(2) + "
                                            "i1_0_i1_1_fused1 % T.int64(2) < T.int64(7))", ""))
    assert [op.name for op in info.ops] == ["dequantize"] and info.warnings
