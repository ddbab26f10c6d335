"""What TVM's code stores is what a block's bindings take, whatever domain it declares.

TVM 0.27's ``cache_index`` may declare an index block's domain shorter than the values its
split loops bind (``v0 = T.axis.spatial(3, ax0 * 3 + ax1)`` over 3 x 3 iterations, storing
nine index values): the index blocks are read through before any loop is rebuilt from a
domain, and the out-of-bounds gate judges the values the bindings take. ``merge`` may drop
the ``T.where`` of a split copy, which then reads past its source's end what it stores past
its own: harmless to every element inside, read as before. A store the bindings carry past
the buffer, in its declared domain or not, is refused.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.coverage import binding_spans, out_of_bounds_writes, block_realizes
from tests.fixture_util import fixture_func, fixture_ops, replaced

CONCAT = "s28_cache_index_short_domain_concat"
CONV1D = "s28_cache_index_short_domain_conv1d"
SPLIT = "s28_merge_split_copy_past_end"


def _func(text: str):
    (_, func), = tir.parse(text).prim_funcs()
    return func


def test_index_block_binding_past_its_domain_is_read_through():
    func = fixture_func(CONCAT)
    spans = {r.block.name: binding_spans(r, loops) for r, loops in block_realizes(func.body)}
    assert list(spans["index_0"].values()) == [(0, 8)]  # declared domain: 3
    assert fixture_ops(CONCAT) == [("concat", {"axis": 0})]
    x, y = np.arange(3, dtype="float32"), np.arange(10, 16, dtype="float32")
    np.testing.assert_array_equal(tir.run(func, x, y), np.concatenate([x, y]))


def test_index_block_with_a_wider_domain_than_its_buffer_is_not_a_partial_write():
    # index_1: v1 declared over 3, bound to a unit loop, stores into an axis of 1
    assert not out_of_bounds_writes(fixture_func(CONV1D))
    assert fixture_ops(CONV1D) == [("nn.conv1d", {
        "strides": (1,), "padding": (2, 0), "dilation": (2,), "groups": 2, "data_layout": "NWC",
        "kernel_layout": "WIO", "out_layout": "NWC"})]


def test_bindings_past_the_buffer_are_refused_whatever_the_domain():
    # the index block's buffer cut to 6 elements: the domain (3) fits, the bindings (0..8) do not
    text = replaced(CONCAT, 'index_var_0 = T.alloc_buffer((T.int64(9),), "bool"',
                    'index_var_0 = T.alloc_buffer((T.int64(6),), "bool"')
    func = _func(text)
    assert out_of_bounds_writes(func)
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == "an output is written only in part (or a block writes outside a buffer)"


def test_copy_past_the_end_of_both_buffers_is_read():
    func = fixture_func(SPLIT)
    assert not out_of_bounds_writes(func)
    assert fixture_ops(SPLIT) == [("split", {"axis": 0, "indices_or_sections": 3})]


def test_a_computed_store_past_the_end_is_refused():
    # the same past-the-end store, but of a computed value, not a copy
    text = replaced(SPLIT, "x_shared[v_ax1, v_ax0] = x[(n + T.int64(2)) // T.int64(3) * T.int64(2) + v_ax0, v_ax1]",
                    "x_shared[v_ax1, v_ax0] = x[(n + T.int64(2)) // T.int64(3) * T.int64(2) + v_ax0, v_ax1] * T.float32(2)")
    assert out_of_bounds_writes(_func(text))


def test_a_shifted_copy_past_the_end_passes_only_when_its_source_ends_too():
    # x_local binds v_ax2 over 0..13 for a domain (and buffer axis) of 13, loading x (axis
    # of 10) at v_ax2 - 1: past x_local's end is past x's end too
    name = "s16_reindex_cache_avg_pool3d_split"
    assert not out_of_bounds_writes(fixture_func(name))
    # loading at v_ax2 - 4 instead, index 13 copies x[..., 9, ...]: data stored past the end
    old = "x_local[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = x[v_ax0, v_ax1, v_ax2 - T.int64(1), v_ax3 - T.int64(1), v_ax4]"
    new = "x_local[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = x[v_ax0, v_ax1, v_ax2 - T.int64(4), v_ax3 - T.int64(1), v_ax4]"
    assert out_of_bounds_writes(_func(replaced(name, old, new)))


def test_copy_op_tag_is_read_past_live_index_blocks():
    # index_0/index_1 (domains 2 x 2, bound over 4 x 6) feed the gather of a reshape: read
    # through, the block names left are the op's (the copy's compute tag is checked)
    name = "s28_cache_index_short_domain_reshape"
    assert fixture_ops(name) == [("reshape", {"shape": (1, 4, 6)})]
    x = np.random.default_rng(0).normal(size=(3, 4, 2)).astype("float32")
    np.testing.assert_array_equal(tir.run(fixture_func(name), x), x.reshape(1, 4, 6))

