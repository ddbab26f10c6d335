"""Schedules on real TVM 0.27 output (fixtures ``s17_*``):

- the gate on functions whose block loops moved out (:func:`opinfo.api.analyze`): after
  ``blockize`` (or ``read_at``) a function's blocks are checked again once merged, with
  ``pad_einsum`` undone first as for the function itself: a layer norm whose mean was
  blockized and bound to threads and whose variance sum was padded by ``pad_einsum`` and
  its loop partitioned (the padded reduction runs only the unpadded part);
- attention whose scaling ``compute_inline`` moved into the causal mask's Select
  (:mod:`opinfo.attention`).
"""
from __future__ import annotations

from tests.fixture_util import fixture_ops

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
