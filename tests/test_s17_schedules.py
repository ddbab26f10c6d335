"""Schedules on real TVM 0.27 output (fixtures ``s17_*``):

- the gate on functions whose block loops moved out (:func:`opinfo.api.analyze`): after
  ``blockize`` (or ``read_at``) a function's blocks are checked again once merged, with
  ``pad_einsum`` undone first as for the function itself: a layer norm whose mean was
  blockized and bound to threads and whose variance sum was padded by ``pad_einsum`` and
  its loop partitioned (the padded reduction runs only the unpadded part);
- attention whose scaling ``compute_inline`` moved into the causal mask's Select
  (:mod:`opinfo.attention`);
- a ``pad_einsum`` of an argmax with a symbolic batch: the reduction's box is read at a
  few batch sizes (:mod:`opinfo.realized_domain`), the pad blocks named after the tuple
  reduction's dotted buffer names (:func:`opinfo.pad_einsum.undup`);
- ``loop_partition`` of a reduction axis whose copies each keep the init: not merged back
  (:mod:`opinfo.loop_partition`), the function sums less than the op;
- ``decompose_padding`` whose fill and interior copy were then reindexed: merged once the
  reindex copies are read through (:func:`opinfo.normalize.normalize`).
"""
from __future__ import annotations

import numpy as np

import tir

from tests.fixture_util import fixture_func, fixture_ops

NAME = "s17_layer_norm_pad_einsum_blockized"


def test_padded_reduction_beside_a_blockized_block_is_named():
    assert fixture_ops(NAME) == [("nn.layer_norm", {
        "axes": (1,), "epsilon": 1e-06, "center": True, "scale": True})]


def test_blockized_block_left_short_abstains():
    # the threads of the blockized mean cover two of its three tiles: rows 6 to 8 unset
    guard = "T.where(ax0_0_0 * T.int64(4) + ax0_0_1 < T.int64({}))"
    assert fixture_ops(NAME, guard.format(3), guard.format(2)) == []


# ---------------------------------------------------------------- attention with an inlined scaling

ATTENTION = "s17_attention_inlined_scale"
SCALED = "T_batch_matmul_NT[v_i0, v_i1, v_i2] * T.float32(0.66200000000000003)"


def test_attention_whose_scaling_was_inlined_into_the_mask():
    # compute_inline put `scores * 0.662` inside the causal mask's Select: still read
    assert fixture_ops(ATTENTION) == [("nn.attention", {
        "scale": 0.662, "causal_mask": "BottomRight", "window_size": None})]
    # a second, different scaling: which one is the op's is not read
    assert fixture_ops(ATTENTION, SCALED, SCALED.replace("]", "] * T.float32(0.5)", 1)) == []


# ---------------------------------------------------------------- pad_einsum of a symbolic argmax

ARGMAX = "s17_pad_einsum_argmax_symbolic"
STOP = "T.where((k1_0_0 * T.int64(4) + k1_0_1) * T.int64(2) + k1_1 < T.int64({})"


def test_padded_argmax_stopping_at_the_unpadded_extent():
    # pad_einsum padded the reduction 5 -> 16 with 0.0 and the spatial axis to an even
    # extent (the pad block named x_red_temp.v0_pad for the buffer x_red_temp_v0); the split
    # reduction stops at 5 for every batch size, so the argmax runs over [0, 5)
    assert fixture_ops(ARGMAX) == [("argmax", {"axis": 1, "keepdims": False})]
    # stopping at 6 reads a padded 0.0, which an all-negative row would pick
    assert fixture_ops(ARGMAX, STOP.format(5), STOP.format(6)) == []


# ---------------------------------------------------------------- loop_partition of a reduction

RESET = "s17_partitioned_reduction_resets"


def test_partitioned_reduction_axis_with_an_init_in_each_copy_abstains():
    # loop_partition cut the reduction loop k1 into [0, 1) and [1, 5) and TVM 0.27 left the
    # init in both copies: the second resets the sum at k1 = 1 (x[0, 0, :] is lost, TVM's
    # own build computes the same), so the copies are not one reduction
    assert fixture_ops(RESET) == []
    x = np.random.default_rng(0).normal(size=(3, 5, 7)).astype("float32")
    lost = x.sum(axis=(0, 1)) - x[0, 0]
    np.testing.assert_allclose(tir.run(fixture_func(RESET), x), lost, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- decompose_padding, then reindex

PADDING = "s17_decompose_padding_reindexed"
INTERIOR = "pad_temp[v0, v1 + T.int64(2), v2, v3] = pad_temp_reindex_local_1[v0, v1, v2, v3]"


def test_decomposed_pad_whose_copies_were_reindexed():
    # the constant fill and the interior copy each went through a reindex cache: once the
    # caches are read through, the pair is one pad block again
    assert fixture_ops(PADDING) == [("nn.conv2d", {
        "strides": (1, 1), "padding": (2, 0, 1, 0), "dilation": (1, 1), "groups": 1,
        "data_layout": "NHWC", "kernel_layout": "OHWI", "out_layout": "NHWC"})]
    # the interior copied one row lower: a pad of 3 rows before, none after
    assert fixture_ops(PADDING, INTERIOR, INTERIOR.replace("v1 + T.int64(2)", "v1 + T.int64(3)"))[0][1][
        "padding"] == (3, 0, 0, 0)
    # the copy into the padded buffer leaving x's last row out: no pad of x
    grid = "for ax0, ax1, ax2, ax3 in T.grid(T.int64(2), T.int64(9), T.int64(9), T.int64(1)):"
    assert fixture_ops(PADDING, grid, grid.replace("T.int64(9), T.int64(9)", "T.int64(8), T.int64(9)")) == []
