"""Element copies whose split loops run past a *symbolic* end of their buffers:
``reindex_cache_read``/``cache_write`` give the copy the consumer's loops over ``n * 14``
split by 4 and then 5 (or ``n * 2`` split by 20, 5 and 4) but keep only the inner split's
``T.where``, so the copy binds ``v_ax0`` up to ``n`` on a domain (and a buffer axis) of
``n``. The iterations past the axis copy an element outside both buffers and change
neither, so :func:`opinfo.block_loops.clip_copies` restricts the copy to its declared
domain (the binding enumerated with ``n`` at a few values shows it passing the end) and
the split predicates read as usual -- only when every store dropped lands outside the
buffer's whole allocation once flattened row-major, as TVM flattens it. std's
``T_subtract_local[vk1, v_ax0, ...]`` passes the end of axis 1 (``n``): TVM's code writes
``T_subtract_local[vk1 + 1, 0, ...]`` there, after the element was copied, and the function
computes garbage for the first batch rows (the C engine shows it); it is not read. A copy
that leaves elements out, or a block past the end that is not a copy, is not read either."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import fixture_func, fixture_ops
from opinfo.block_loops import clip_copies
from opinfo.normalize import normalize

FLATTEN = "s30c_flatten_copy_past_n"
STD = "s30c_std_copy_past_n"
FLATTEN_COPY = "T_reshape[v_ax0, v_ax1] = T_reshape_shared[v_ax0, v_ax1]"
FLATTEN_WHERE = "T.where(ax0_ax1_0_fused_1_1_0 * T.int64(2) + ax0_ax1_0_fused_1_1_1 < T.int64(5))"


def test_flatten_copy_past_n_reads_as_reshape():
    assert fixture_ops(FLATTEN) == [("reshape", {"shape": ("n", 42)})]


def test_std_copy_past_n_on_an_inner_axis_is_not_read():
    # the stray stores alias other elements of T_subtract_local: not clipped, not read
    assert fixture_ops(STD) == []
    func = fixture_func(STD)
    assert clip_copies(func) is func or all(
        a.block.name != "T_subtract_local" or a.predicate == b.predicate
        for a, b in zip(_realizes_of(func), _realizes_of(clip_copies(func))))


def _realizes_of(func):
    from opinfo.coverage import block_realizes
    return [r for r, _ in block_realizes(func.body)]


def test_clipped_flatten_computes_the_flatten():
    func = fixture_func(FLATTEN)
    assert normalize(func) is not None
    x = np.random.default_rng(0).standard_normal((3, 7, 6)).astype("float32")
    # the function as written, clipped, runs inside its buffers and flattens
    np.testing.assert_array_equal(tir.run(clip_copies(func), x), x.reshape(3, 42))


def test_copy_leaving_out_elements_is_not_read():
    # each tile of 4 copies 3 elements: every fourth element of the output is never written
    assert fixture_ops(FLATTEN, FLATTEN_WHERE, FLATTEN_WHERE.replace("T.int64(5)", "T.int64(3)")) == []


def test_block_past_the_end_that_is_not_a_copy_is_not_read():
    assert fixture_ops(FLATTEN, FLATTEN_COPY, FLATTEN_COPY + " + T.float32(1)") == []
