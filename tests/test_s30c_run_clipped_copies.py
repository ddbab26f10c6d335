"""Ops recognised by running the function (``scatter_nd``, ``vision.multibox_transform_loc``,
``image.grid_sample``) after cache copies that run whole tiles past an end of their buffers:
the interpreter refuses an index out of range, so the function is run as its element copies
clipped to the elements inside (:func:`opinfo.block_loops.clip_copies`) -- which changes
nothing TVM's code computes only when every store dropped lands outside the buffer's whole
allocation, flattened row-major as TVM does (``y1_local[v_ax1, 0]`` binding rows 2 and 3 of
2, the leading axis: named), or the copy is ``S[i...] = P[i...]`` over buffers of one shape
alone in its loop nest (multibox's ``compute[v_i0, 4, v_i2] = compute_shared[v_i0, 4,
v_i2]`` stores ``compute_shared``'s element at the same flattened position, the one the copy
of ``[v_i0 + 1, 0, v_i2]`` stores: named), or each stray store lands where a later iteration
of the same lone copy stores inside the buffer (:func:`opinfo.coverage._strays_overwritten`):
grid_sample's transposing copy ``compute[v_n, 2, v_h, v_w] = compute_local[v_w, 2, v_n,
v_h]`` puts another element's value on an element the copy stores again afterwards, or past
the storage: clipped, run, named. Since session 31 a copy sharing its nest with a reader is
clipped too when each stray store repeats what the copy puts on that element and nothing else
in the nest writes its source. A copy that leaves out elements still abstains."""
from __future__ import annotations

import opinfo
from tests.fixture_util import fixture_func, fixture_ops
from opinfo.block_loops import clip_copies

MULTIBOX = "s30c_multibox_copy_past"
GRID = "s30c_grid_sample_copy_past"
SCATTER = "s30c_scatter_nd_copy_past"


def test_multibox_with_a_same_index_copy_past_an_inner_axis():
    assert fixture_ops(MULTIBOX) == [("vision.multibox_transform_loc", {
        "clip": True, "threshold": 0.25, "variances": (0.1, 0.1, 0.2, 0.2), "keep_background": False,
        "apply_softmax": False})]


def test_transposing_copy_whose_strays_are_copied_again_is_clipped():
    func = fixture_func(GRID)
    assert clip_copies(func) is not func
    assert fixture_ops(GRID) == [("image.grid_sample", {
        "method": "nearest", "layout": "NCHW", "padding_mode": "reflection", "align_corners": True})]


def _one_nest(text: str) -> str:
    """The two copy nests after ``compute`` (``compute_shared`` twice) under one loop."""
    a = text.index("        for i1_0_i1_1_fused_0, i1_0_i1_1_fused_1_0, i1_0_i1_1_fused_1_1, i2, i0 in")
    b = text.index("        for b in T.parallel(n):")
    body = "".join("    " + line for line in text[a:b].splitlines(keepends=True))
    return text[:a] + "        for u in range(T.int64(1)):\n" + body + text[b:]


def test_same_index_copy_sharing_its_nest_repeats_itself():
    # another block in its nest (a reader): each stray store puts on an element the value the
    # copy puts there (:func:`opinfo.coverage.strays_repeat_copy`, session 31), so the copy
    # is clipped and the function named as before the edit
    func = fixture_func(MULTIBOX, _one_nest)
    assert clip_copies(func) is not func
    assert fixture_ops(MULTIBOX) == [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_copy_whose_source_another_block_of_its_nest_writes_is_not_clipped():
    # the reader made a writer of the copy's source: the source may change between a stray
    # store and the store it repeats
    def edit(text):
        text = _one_nest(text)
        old = "compute_shared_1[v_b, v_c, v_n] = compute[v_b, v_c, v_n]"
        assert text.count(old) == 1
        return text.replace(old, "compute_shared[v_b, v_c, v_n] = compute[v_b, v_c, v_n]")

    func = fixture_func(MULTIBOX, edit)
    assert clip_copies(func) is func
    assert opinfo.analyze(func).ops == ()


def test_scatter_nd_with_index_copy_past_the_end():
    assert fixture_ops(SCATTER) == [("scatter_nd", {"reduction": "add"})]


def test_multibox_copy_leaving_out_rows_is_not_read():
    old = "T.where(i1_0_i1_1_fused_1_0 * T.int64(2) + i1_0_i1_1_fused_1_1 < T.int64(5))"
    assert fixture_ops(MULTIBOX, old, old.replace("T.int64(5)", "T.int64(3)")) == []


def test_scatter_nd_index_copy_leaving_out_an_index_is_not_read():
    old = ("for ax0_ax1_fused_1_0, ax0_ax1_fused_1_1_0, ax0_ax1_fused_1_1_1, ax0_ax1_fused_0 in "
           "T.grid(T.int64(1), T.int64(2), T.int64(2), T.int64(1))")
    assert fixture_ops(SCATTER, old, old.replace("T.int64(1), T.int64(2), T.int64(2)", "T.int64(1), T.int64(1), T.int64(1)")) == []


def test_scatter_nd_index_copy_that_is_not_a_copy_is_not_read():
    old = "y1_local[v_ax1, v_ax0] = y1[v_ax1, v_ax0]"
    assert fixture_ops(SCATTER, old, "y1_local[v_ax1, v_ax0] = y1[v_ax1, v_ax0] + T.int64(1)") == []
