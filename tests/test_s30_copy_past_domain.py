"""Element copies whose bindings run past their declared domain: ``reindex_cache_read`` gives
its copy block the consumer's split loops (7 split as 2 x 5, the 5 split again as 3 x 2) but
keeps only the inner split's ``T.where``, so the copy binds ``v_i2`` up to 9 over a domain
(and a buffer axis) of 7. The iterations past the axis copy an element outside both buffers
and change neither, so the copy is clipped to the elements inside
(:func:`opinfo.block_loops.clip_copies`, the values the bindings take enumerated) and the
function reads as the gelu it computes. A copy that leaves out elements its consumer reads,
or a block past the end that is not a copy, is not read."""
from __future__ import annotations

import numpy as np

import tir
from tests.fixture_util import fixture_func, fixture_ops
from opinfo.normalize import normalize

GELU = "s30_gelu_copy_past_domain"
COPY_LOOPS = "T.grid(T.int64(3), T.int64(2), T.int64(2), T.int64(3), T.int64(2), T.int64(3), T.int64(2))"
COPY = "T_multiply_local[v_i2, v_i0, v_i1] = T_multiply_1[v_i0, v_i1, v_i2]"


def test_copy_past_its_domain_is_clipped():
    assert fixture_ops(GELU) == [("nn.gelu", {})]


def test_clipped_function_computes_gelu():
    func = normalize(fixture_func(GELU))
    assert func is not None
    x = np.random.default_rng(0).standard_normal((9, 4, 7)).astype("float32")
    from math import erf
    want = x * 0.5 * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    np.testing.assert_allclose(tir.run(func, x), want, rtol=1e-5, atol=1e-5)


def test_copy_leaving_out_read_elements_is_not_read():
    # the copy's outer tile loop cut to one tile: columns 5 and 6 are never copied
    assert fixture_ops(GELU, COPY_LOOPS, COPY_LOOPS.replace("T.int64(3), T.int64(2), T.int64(2)",
                                                             "T.int64(3), T.int64(1), T.int64(2)", 1)) == []


def test_block_past_the_end_that_is_not_a_copy_is_not_read():
    assert fixture_ops(GELU, COPY, COPY.replace("v_i2]", "v_i2] + T.float32(1)")) == []


GELU_TANH = "s30_gelu_tanh_copy_past_inner_axis"


def test_transposing_copy_past_an_inner_axis_is_not_read():
    # the cache T_multiply_shared[v1, v2, v0] (4, 7, 9) is written with v2 past 7: flattened,
    # [v1, 7 + k, v0] is [v1 + 1, k, v0], which gets the source's [v0, v1, 7 + k] -- another
    # element's value (run as TVM's code runs it, the function is not gelu_tanh)
    assert fixture_ops(GELU_TANH) == []


def test_flat_harmless_stores():
    from tir.buffer import Buffer
    from tir.expr import BufferLoad, Var
    from tir.stmt import BufferStore
    from opinfo.coverage import _past_storage_rows, _same_flat_copy

    i, j = Var("i"), Var("j")
    s = Buffer("S", (4, 7))
    same = Buffer("P", (9, 7))
    wide = Buffer("Q", (4, 8))
    square = Buffer("R", (7, 4))
    # past the outermost axis alone: past all of S's storage, whatever is read
    assert _past_storage_rows(BufferStore(s, BufferLoad(square, (j, i)), (i, j)), [0])
    assert not _past_storage_rows(BufferStore(s, BufferLoad(square, (j, i)), (i, j)), [1])
    # past the inner axis, read at the same indices from rows of S's width: the element
    # of P the copy puts there (harmless when P holds still and nothing else writes S)
    assert _same_flat_copy(BufferStore(s, BufferLoad(same, (i, j)), (i, j)))
    # rows of another width, or a transposed read: another element's value lands there
    assert not _same_flat_copy(BufferStore(s, BufferLoad(wide, (i, j)), (i, j)))
    assert not _same_flat_copy(BufferStore(s, BufferLoad(square, (j, i)), (i, j)))


ABS = "s30_abs_copy_back_shares_batch_loop"
DIVIDE = "s30_divide_cache_stray_overwrites"


def test_copy_back_whose_strays_are_copied_again_later_is_read():
    # compute[v0, 5, v2] = compute_local[5, v0, v2] (the axis has 5): flattened it is
    # compute[v0 + 1, 0, v2], stored again by the copy at v0 + 1 (the batch loop it shares
    # with the op's block, which never touches ``compute``); the last row lands past storage
    assert fixture_ops(ABS) == [("abs", {})]


def test_cache_whose_stray_overwrites_an_element_already_copied_is_not_read():
    # x_local[v1, 5, v2] (an axis of 5) is x_local[v1 + 1, 0, v2], copied earlier (v0 = 0
    # runs first): TVM's code leaves garbage there, which the divide then reads
    assert fixture_ops(DIVIDE) == []
    # the op's own split tail guarded in the cache copy too: nothing strays, read
    assert fixture_ops(DIVIDE, 'T.reads(x[v_ax0, v_ax1, v_ax2])\n                T.writes(x_local',
                       'T.where(ax0_0 * T.int64(2) + ax0_1 < T.int64(5))\n                '
                       'T.reads(x[v_ax0, v_ax1, v_ax2])\n                T.writes(x_local') == [("divide", {})]
