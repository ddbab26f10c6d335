"""Schedules met on fresh TVM corpora (fixtures ``s13_*`` copied from real TVM output):

- a symbolic axis split, its parts reordered, fused and bound to threads: the predicates
  bound digits ``f % ((n + 1) // 2)`` and ``f // ((n + 1) // 2)`` of the fused index, which
  no rule reads; their exact coverage is enumerated at enough values of ``n``
  (:func:`opinfo.predicate_enum._covers_at_sizes`);
- rfactor then reindex leaves an identity copy (block ``x_red.rf_reindex``) before the
  reduction: no op of the graph, and no copy tag names one, so the function is not read as
  ``[broadcast_to, max]``; since session 65 the shared and local caches around it are
  written through (:mod:`opinfo.copies_in_place`, confirmed by running) and the rfactor's
  copy read as what it is, leaving the one max over axis 0 the loops compute.
"""
from __future__ import annotations

import opinfo
import tir

from tests.fixture_util import FIXTURES, fixture_func, fixture_ops


_ops = fixture_ops


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
    assert _ops("s13_rfactor_reindex_max") == [("max", {"axis": (0,), "keepdims": False})]


def test_copy_blocks_of_caches_renamed_by_scope_do_not_hide_the_tag():
    # cache_read's block ``x_shared`` writes ``x_shared_local`` (its scope set to local
    # afterwards); the reindex of a cache_write copies ``T_reshape_local_reindex_shared`` in
    # block ``T_reshape_local_reindex``: neither is the op's tag, T_reshape is
    assert _ops("s13_scoped_cache_reshape") == [("reshape", {"shape": (1, 50)})]
    assert _ops("s13_reindexed_cache_flatten") == [("reshape", {"shape": (315,)})]
    # a block of another name there leaves the tags undecided: abstain
    assert _ops("s13_scoped_cache_reshape", 'T.block("x_shared")', 'T.block("x_copy")') == []


# ``pad_einsum`` of reductions (TVM's s12_pad corpus): undone when the padding cannot change
# what the reduction computes, otherwise the function abstains.

def test_pad_einsum_of_a_reduction_padded_on_spatial_axes():
    # x (.., 5, 3) padded to (.., 5, 4), the output's unit axis to 2: cropped back
    assert _ops("s13_pad_einsum_max") == [("max", {"axis": (2,), "keepdims": True})]


def test_pad_einsum_of_a_sum_padded_with_zero_along_the_reduction():
    assert _ops("s13_pad_einsum_mean") == [("mean", {"axis": (0, 1, 2), "keepdims": False})]
    # padded with 1: the sum counts the pad
    assert _ops("s13_pad_einsum_mean", "x[v0, v1, v2], T.float32(0.0))", "x[v0, v1, v2], T.float32(1.0))") == []


def test_pad_einsum_of_a_product_padded_with_zero_is_not_restored():
    # TVM's own output multiplies by the zero pad: the function computes 0, not prod
    assert _ops("s13_pad_einsum_prod") == []


def test_pad_einsum_of_a_max_whose_split_stops_at_the_unpadded_extent():
    (name, attrs), = _ops("s13_pad_einsum_nn_softmax")
    assert name == "nn.softmax" and attrs == {"axis": 0}
    # the max's loop reaching the padded zero: its block is not restored (the max of x and
    # 0); softmax does not depend on the shift, so the function still is one
    from opinfo.pad_einsum import pad_einsum_left, unpad_einsum

    text = (FIXTURES / "s13_pad_einsum_nn_softmax.py").read_text()
    cut = "T.where(k_0 * T.int64(2) + k_1 < T.int64(7))"
    first = text.index(cut)
    text = text[:first] + "T.where(k_0 * T.int64(2) + k_1 < T.int64(8))" + text[first + len(cut):]
    (_, func), = tir.parse(text).prim_funcs()
    assert pad_einsum_left(unpad_einsum(func))
    assert not pad_einsum_left(unpad_einsum(fixture_func("s13_pad_einsum_nn_softmax")))


def test_pad_einsum_more_forms():
    # a pad producer shorter than its source on one axis (x_pad keeps 4 of x's 9 columns; its
    # ``v2 < 9`` always holds there), the first section of a split padded and cropped
    assert _ops("s13_pad_einsum_split") == [("split", {"axis": 2, "indices_or_sections": 3})]
    # scalar blocks whose unused spatial variable's domain was padded (vi over 4, bound to 0)
    assert _ops("s13_pad_einsum_std") == [("std", {"axis": (0,), "keepdims": False})]
    # a padded reduction axis its split predicate stops at the source's extent, in blocks
    # that are cropped too
    (name, attrs), = _ops("s13_pad_einsum_nn_log_softmax")
    assert name == "nn.log_softmax" and attrs == {"axis": 0}
    # the pad and crop blocks (x_pad, expand_dims_pad) do not hide the copy's compute tag
    assert _ops("s13_pad_einsum_expand_dims") == [("expand_dims", {"axis": (2,)})]


def test_pad_einsum_block_reading_its_crop_output_is_not_restored():
    # (fuzzer) the padded max accumulates from the cropped output instead of its own padded
    # buffer: restored, that read would become the accumulator and the mutant a max again
    assert _ops("s13_pad_einsum_max",
                "T.max(x_red_pad[v_ax0, v_ax1, v_ax2, v_ax3], x_pad",
                "T.max(x_red[v_ax0, v_ax1, v_ax2, v_ax3], x_pad") == []


def test_symbolic_ceil_division_as_a_size():
    # the fused index of loops over (n + 4) // 5 blocks bounded by that size times 30: the
    # bound restates the domain of the variable bound to its quotient (predicates._size_atom)
    (name, attrs), = _ops("s13_symsplit_group_norm")
    assert name == "nn.group_norm" and attrs["num_groups"] == 1
    # a bound one block short leaves rows out
    assert _ops("s13_symsplit_group_norm", "< (n + T.int64(4)) // T.int64(5) * T.int64(30))",
                "< (n + T.int64(4)) // T.int64(5) * T.int64(29))") == []


def test_compute_at_producer_computing_only_the_region_read():
    # the pad producer under the pool's outer loop runs 8 of its 9 rows and 7 of its 8
    # columns (what the pool reads): given a nest of its own it computes the rest too,
    # which nothing reads (distribute._reads_within)
    (name, attrs), = _ops("s13_compute_at_region_max_pool3d")
    assert name == "nn.max_pool3d" and attrs["pool_size"] == (2, 3, 1)
    # the pool reading one row further: row 8 of pad_temp is never computed
    text = (FIXTURES / "s13_compute_at_region_max_pool3d.py").read_text()
    text = text.replace("v_ax1 * T.int64(2) + v_rv0,", "v_ax1 * T.int64(2) + v_rv0 + T.int64(1),")
    (_, func), = tir.parse(text).prim_funcs()
    assert opinfo.analyze(func).ops == ()


def test_compute_at_region_with_a_symbolic_batch():
    # the same with a symbolic batch: what is read and computed is enumerated at a few
    # batch sizes in turn
    (name, attrs), = _ops("s13_compute_at_region_conv3d_dynamic")
    assert name == "nn.conv3d"
