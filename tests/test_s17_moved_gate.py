"""The gate on functions whose block loops moved out (:func:`opinfo.api.analyze`): after
``blockize`` (or ``read_at``) a function's blocks are checked again once merged, with
``pad_einsum`` undone first as for the function itself. Real TVM 0.27 output (fixture
``s17_layer_norm_pad_einsum_blockized``): a layer norm whose mean was blockized and bound to
threads and whose variance sum was padded by ``pad_einsum`` and its loop partitioned: the
padded reduction runs only the unpadded part, which is what it computes."""
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
