"""Decomposed reduction inits met on fresh TVM corpora (fixtures ``s14_*`` copied from real
TVM output):

- ``decompose_reduction`` then ``reindex``: the init sets the reindex buffer and a copy
  moves it into the buffer the update accumulates in (:func:`opinfo.normalize.forward_fills`);
- the update's spatial loop split again after the init was made, and a cache copy plus the
  consumer computed at the same loops: the order of init and update is shown by enumerating
  both blocks' iterations (:func:`opinfo.init_order._enumerated_first`), then the nest is
  distributed;
- TVM's own output where the update reads a reindex buffer that nothing initialises (the
  init went to the output): no op, and no endless inlining of the self-reading stage.
"""
from __future__ import annotations

from opinfo.normalize import normalize

from tests.fixture_util import fixture_func, fixture_ops

STD_INIT_V2 = "% T.int64(2) * T.int64(4) + i2_1_init)"


_ops = fixture_ops


def test_init_copied_through_a_reindex_buffer():
    assert _ops("s14_reindex_init_max") == [("max", {"axis": (0,), "keepdims": True})]
    assert _ops("s14_reindex_init_layer_norm") == [
        ("nn.layer_norm", {"axes": (1,), "epsilon": 1e-06, "center": True, "scale": True})]


def test_init_copied_through_a_reindex_buffer_with_another_value_is_no_max():
    assert _ops("s14_reindex_init_max", "T.float32(-340282346638528859811704183484516925440.0)",
                "T.float32(0.0)") == []


def test_init_before_a_resplit_update_is_merged():
    assert _ops("s14_split_init_std") == [("std", {"axis": (0,), "keepdims": True})]
    # the init's own loop permuted: still every element set once before its updates
    assert _ops("s14_split_init_std", STD_INIT_V2,
                "% T.int64(2) * T.int64(4) + (i2_1_init + T.int64(1)) % T.int64(4))") == [
        ("std", {"axis": (0,), "keepdims": True})]


def test_init_setting_an_element_twice_or_after_its_updates_abstains():
    # elements 0, 0, 2, 2 of each group of four: the others never set
    assert _ops("s14_split_init_std", STD_INIT_V2,
                "% T.int64(2) * T.int64(4) + i2_1_init // T.int64(2) * T.int64(2))") == []
    # each row's first half is set one iteration of the shared loop after its updates ran
    fused = "i1_i2_0_fused_0_i1_i2_0_fused_1_fused"
    old = f"T.int64(8), {fused} {STD_INIT_V2}"
    late = f"T.int64(8), ({fused} % T.int64(2) + T.int64(1)) % T.int64(2) * T.int64(4) + i2_1_init)"
    assert _ops("s14_split_init_std", old, late) == []
    # the init is not merged into the update (the accumulator is then read before it is set)
    func = fixture_func("s14_split_init_std", lambda text: text.replace(old, late))
    assert "T_multiply_red_init" in [b.name for b in normalize(func).blocks()]


def test_update_reading_an_uninitialised_reindex_buffer_abstains():
    assert _ops("s14_reindex_init_garbage_min") == []


# ---------------------------------------------------------------- symbolic loops bound to threads

SQRT_BOUND = "i0_1_i2_i0_0_0_i3_fused_1 < (n + T.int64(3)) // T.int64(4) * T.int64(28))"


def test_symbolic_ceiling_split_bound_to_threads():
    # a loop over 28 * ((n + 3) // 4) split by 32 threads: the two loops are one again before
    # the sizes are enumerated (32 is no period of the coverage)
    assert _ops("s14_symbind_ceil_sqrt") == [("sqrt", {})]
    # the fused index stopping one short leaves the last element out
    assert _ops("s14_symbind_ceil_sqrt", SQRT_BOUND,
                "i0_1_i2_i0_0_0_i3_fused_1 < (n + T.int64(3)) // T.int64(4) * T.int64(28) - T.int64(1))") == []


def test_symbolic_group_enumerated_apart_from_constant_loops():
    # the constant loops over the 504 flattened columns are no part of the symbolic group
    assert _ops("s14_symbind_flatten") == [("reshape", {"shape": ("n", 504)})]
    # the thread index f gives the row f % 2 * 3 + f // 2 of each group of four (those past 3
    # masked): f < 5 still reaches rows 0 to 3, f < 4 misses row 2
    assert _ops("s14_symbind_flatten", "fused_1 < T.int64(6))", "fused_1 < T.int64(5))") == [
        ("reshape", {"shape": ("n", 504)})]
    assert _ops("s14_symbind_flatten", "fused_1 < T.int64(6))", "fused_1 < T.int64(4))") == []


# ---------------------------------------------------------------- copies and pads from fresh networks

def test_squeeze_of_two_unit_axes_not_taken_for_a_packed_layout():
    # (1, 1, 4, 8, 8) could be NCHW8c holding one block of channels: that reading gives a
    # permute_dims, which the compute tag T_squeeze contradicts -- the physical reading stands
    assert _ops("s14_squeeze_unit_dims") == [("squeeze", {"axis": (1,)})]
    assert _ops("s14_squeeze_unit_dims", "= lv8[v_ax0, T.int64(0), v_ax1", "= lv8[T.int64(0), v_ax0, v_ax1") == [
        ("squeeze", {"axis": (0,)})]


def test_symbolic_reshape_moving_the_symbol_to_another_dimension():
    # (n, 6, 5, 4) into (6, n * 20): checked in row-major order at a few values of n
    assert _ops("s14_symbolic_reshape_moved") == [("reshape", {"shape": (6, "n * 20")})]
    rows = "(v_ax1 // T.int64(20) + v_ax0 * n) % T.int64(6), v_ax1 % T.int64(20) // T.int64(4), v_ax1 % T.int64(4)]\n"
    assert _ops("s14_symbolic_reshape_moved", "= x[(v_ax1 // T.int64(20) + v_ax0 * n) // T.int64(6) % n, " + rows,
                "= x[(v_ax1 // T.int64(20) + v_ax0 * n) // T.int64(6) % n, "
                + rows.replace("* n) % T.int64(6)", "* n + T.int64(1)) % T.int64(6)")) == []


def test_pad_computed_at_a_strided_pool_for_the_columns_it_reads():
    # compute_at left the pad block computing the even columns only (the pool's stride is 2,
    # its window 1 wide), then the pool moved on: no block reads an odd column
    assert _ops("s14_pad_at_strided_pool") == [("nn.avg_pool2d", {
        "pool_size": (2, 1), "strides": (1, 2), "dilation": (1, 1), "padding": (0, 0, 1, 0), "ceil_mode": False,
        "count_include_pad": False, "layout": "NHWC", "out_layout": "NHWC"})]
    # one column fewer: the last column the pool reads is never computed
    grid = "T.int64(1), T.int64(3), T.int64(3), T.int64(6), T.int64(2), T.int64(2), T.int64(1), T.int64(1)"
    assert _ops("s14_pad_at_strided_pool", grid, grid.replace("T.int64(6)", "T.int64(5)")) == []


def test_decomposed_update_adding_a_point_twice_is_not_merged_with_its_init():
    # init through a reindex copy, then the update: merged, the pool named
    assert _ops("s14_reindex_init_adaptive_pool") == [
        ("nn.adaptive_avg_pool1d", {"output_size": (2,), "layout": "NCW", "out_layout": "NCW"})]
    # the update's column binding cut to 0 (fuzzer mutant): column 0 summed twice, column 1
    # never -- the init alone says nothing of that, the enumerated timeline refutes it
    update = "v_ax2 = T.axis.spatial(T.int64(2), ax1_ax2_fused % T.int64(2))"
    assert _ops("s14_reindex_init_adaptive_pool", update, update.replace("% T.int64(2))", "% T.int64(1))")) == []


def test_split_update_adding_points_twice_after_its_predicate_is_dropped():
    assert _ops("s14_split_update_variance") == [("variance", {"axis": (0,), "keepdims": True})]
    # the inner loop of a split by 2 run over 3 (fuzzer mutant): k0 * 2 + k1 meets 2, 4, 6 twice;
    # the predicate k0 * 2 + k1 < 7 only restates the domain, so once it is dropped the
    # enumerated timeline (points outside the domain left out, as the predicate did) refutes
    # the merge of init and update
    grid = "for ax0_0, ax0_1 in T.grid(T.int64(4), T.int64(2)):"
    assert _ops("s14_split_update_variance", grid, grid.replace("T.int64(2)):", "T.int64(3)):")) == []
