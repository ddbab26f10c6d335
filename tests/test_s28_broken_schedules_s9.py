"""Random TVM 0.27 schedules (merge, fuse_reduction_epilogue, reindex_cache, cache_inplace)
of a generated corpus that opinfo abstains on: each function is no longer the op (the
interpreter, against numpy, shows wrong numbers or an access outside a buffer), and each
one repaired by hand -- the schedule done right -- is named again, so the abstention comes
from the schedule, not from loops opinfo cannot read.

* ``fuse_reduction_epilogue`` of roi_pool: the epilogue ``empty ? 0 : acc`` fused into the
  max reduction rewrote its init from -inf to the epilogue at 0, so every bin is
  ``max(0, max(region))``.
* scatter_nd: the cache block that writes the transposed indices runs after the
  (opaque, ``T.reads()``-less) scatter block that reads them.
* ``merge`` of sibling loops split by 2 over an axis of 7 (adaptive_avg_pool1d) or 5
  (multibox_transform_loc, symbolic batch): the merged copy blocks have no ``T.where``
  and copy index 7 (5) of their buffers. The interpreter refuses that; as TVM's code runs
  (row-major, loops in order) each such store lands past the storage or on an element
  rewritten later, so these two are read restricted to the elements inside
  (:mod:`opinfo.row_strays`, with a warning).
* ``reindex_cache_write`` with a permuted map (symbolic avg_pool2d): the init writes
  ``pool_sum_shared[v3, v0, v2, v1]`` and the update ``pool_sum_shared[v0, v1, v2, v3]``.

Two strided_slices with negative strides are read (the index map is ``2 - v`` and
``9 - 2 * v``) but not named by design: begin -1 and 2 of an axis of 3 (end 0 and -3) read the
same elements, and no convention picks one (:func:`opinfo.recognize.movement._slice_or_flip`).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import opinfo
from opinfo.roi import roi_pool_ref
from tests.fixture_util import fixture_func
from tir.interp import InterpError, interpret

ROI_POOL = "s28_roi_pool_epilogue_zero_init"
SCATTER_ND = "s28_scatter_nd_index_cached_after_use"
ADAPTIVE = "s28_adaptive_avg_pool1d_merged_copy_past_end"
AVG_POOL = "s28_avg_pool2d_permuted_init_symbolic"
MULTIBOX = "s28_multibox_merged_copy_past_end_symbolic"
SLICE = "s28_strided_slice_negative_stride"
SLICE_SYMBOLIC = "s28_strided_slice_negative_stride_past_end_symbolic"


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _call(func, *arrays):
    args = [np.array(a, copy=True) for a in arrays]
    interpret(func, *args)
    return args


def _with_where(extent: int):
    """A fixture edit adding ``T.where(a_0 * 2 + a_1 < extent)`` to every block bound to
    a split of ``extent`` by 2 that lacks it (what the merged copies miss)."""
    pattern = re.compile(rf"T\.axis\.spatial\(T\.int64\({extent}\), (\w+)_0 \* T\.int64\(2\) \+ (\w+)_1\)")

    def edit(text: str) -> str:
        lines, out = text.split("\n"), []
        for k, line in enumerate(lines):
            out.append(line)
            m = pattern.search(line)
            if m and "T.where" not in "\n".join(lines[k + 1:k + 3]):
                indent = line[:len(line) - len(line.lstrip())]
                out.append(f"{indent}T.where({m[1]}_0 * T.int64(2) + {m[2]}_1 < T.int64({extent}))")
        return "\n".join(out)
    return edit


def _init_to_minus_inf(text: str) -> str:
    i = text.index("with T.init():")
    j = text.index("\n", i)
    k = text.index("\n", j + 1)
    line = text[j + 1:k]
    return text[:j + 1] + line[:line.index("=") + 1] + ' T.float32("-inf")' + text[k:]


def _rois(rng, r):
    rois = np.zeros((r, 5), np.float32)
    rois[:, 1:3] = rng.uniform(-2, 8, (r, 2))
    rois[:, 3:5] = rois[:, 1:3] + rng.uniform(0.2, 8, (r, 2))
    return rois


def test_roi_pool_with_its_max_started_at_zero_abstains():
    func = fixture_func(ROI_POOL)
    assert _ops(func) == []
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(4):
        data, rois = rng.standard_normal((1, 2, 8, 8)).astype(np.float32), _rois(rng, 3)
        got = _call(func, data, rois, np.full((3, 2, 2, 2), np.nan, np.float32))[-1]
        want = roi_pool_ref(data, rois, (2, 2), 1.0)
        np.testing.assert_allclose(got, np.maximum(want, 0.0), rtol=1e-5, atol=1e-5)  # what TVM computes
        worst = max(worst, float(np.abs(got - want).max()))
    assert worst > 0.1  # ... which is no roi_pool
    fixed = fixture_func(ROI_POOL, _init_to_minus_inf)
    data, rois = rng.standard_normal((1, 2, 8, 8)).astype(np.float32), _rois(rng, 3)
    got = _call(fixed, data, rois, np.full((3, 2, 2, 2), np.nan, np.float32))[-1]
    np.testing.assert_allclose(got, roi_pool_ref(data, rois, (2, 2), 1.0), rtol=1e-5, atol=1e-5)
    assert _ops(fixed) == [("vision.roi_pool", {"pooled_size": (2, 2), "spatial_scale": 1.0, "layout": "NCHW"})]


def _cache_first(text: str) -> str:
    a = text.index('        with T.sblock("scatter_nd_generic"):')
    b = text.index('with T.sblock("T_transpose_local")')
    b = text.rindex("        for ", 0, b)
    c = text.index("\n\n    @R.function")
    return text[:a] + text[b:c] + "\n" + text[a:b].rstrip("\n") + text[c:]


def test_scatter_nd_reading_its_indices_before_they_are_cached_abstains():
    func = fixture_func(SCATTER_ND)
    assert _ops(func) == []
    rng = np.random.default_rng(0)
    x, upd = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((2, 4)).astype(np.float32)
    idx = np.array([[3], [5]], np.int64)
    want = x.copy()
    want[3] += upd[0]
    want[5] += upd[1]
    got = _call(func, x, idx, upd, np.full((6, 4), np.nan, np.float32))[-1]
    assert np.abs(got - want).max() > 0.1  # the updates land at the never-written index buffer's rows
    fixed = fixture_func(SCATTER_ND, _cache_first)
    np.testing.assert_allclose(_call(fixed, x, idx, upd, np.full((6, 4), np.nan, np.float32))[-1], want)
    assert _ops(fixed) == [("scatter_nd", {"reduction": "add"})]


def test_merged_copies_past_the_end_of_an_adaptive_pool_read_inside():
    # the copies' strays (index 7 of an axis of 7) land on the next batch's first row,
    # which that batch rewrites, or past the storage: read restricted to the elements
    # inside (opinfo.row_strays), with a warning
    func = fixture_func(ADAPTIVE)
    info = opinfo.analyze(func)
    assert [op.name for op in info.ops] == ["nn.adaptive_avg_pool1d"] and info.warnings
    x = np.random.default_rng(0).standard_normal((2, 7, 8)).astype(np.float32)
    with pytest.raises(InterpError, match="out of bounds"):
        _call(func, x, np.zeros((2, 7, 6), np.float32))
    fixed = fixture_func(ADAPTIVE, _with_where(7))
    want = np.stack([x[..., i * 8 // 6:-(-(i + 1) * 8 // 6)].mean(-1) for i in range(6)], -1)
    np.testing.assert_allclose(_call(fixed, x, np.zeros((2, 7, 6), np.float32))[-1], want, rtol=1e-5, atol=1e-6)
    assert _ops(fixed) == [("nn.adaptive_avg_pool1d", {"output_size": (6,), "layout": "NCW", "out_layout": "NCW"})]


@pytest.mark.parametrize("n", [1, 2])
def test_merged_copies_past_the_end_of_a_symbolic_multibox_read_inside(n):
    func = fixture_func(MULTIBOX)
    info = opinfo.analyze(func)
    assert [op.name for op in info.ops] == ["vision.multibox_transform_loc"] and info.warnings
    rng = np.random.default_rng(n)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((n, 2, 5), (2, 20), (1, 5, 4))]
    outs = [np.zeros((n, 5, 4), np.float32), np.zeros((n, 2, 5), np.float32)]
    with pytest.raises(InterpError, match="out of bounds"):
        _call(func, *args, *outs)
    fixed = fixture_func(MULTIBOX, _with_where(5))
    _call(fixed, *args, *outs)
    assert [name for name, _ in _ops(fixed)] == ["vision.multibox_transform_loc"]


def test_avg_pool2d_whose_init_and_update_index_its_cache_differently_abstains():
    func = fixture_func(AVG_POOL)
    assert _ops(func) == [] and not opinfo.analyze(func).undecided
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 12)).astype(np.float32)
    with pytest.raises(InterpError, match="out of bounds"):
        _call(func, x, np.zeros((2, 2, 3, 6), np.float32))


def test_negative_strides_are_read_but_not_named():
    func = fixture_func(SLICE)
    x = np.random.default_rng(0).standard_normal((3, 7)).astype(np.float32)
    np.testing.assert_array_equal(_call(func, x, np.zeros((2, 1), np.float32))[-1], x[2:0:-1, 3:4])
    np.testing.assert_array_equal(x[2:0:-1, 3:4], x[-1:-3:-1, 3:4])  # two spellings, one slice
    assert _ops(func) == []
    # the same loops with stride +1 (begin 1) are named
    assert _ops(fixture_func(SLICE, lambda t: t.replace("T.int64(2) - v_ax0", "v_ax0 + T.int64(1)"))) == [
        ("strided_slice", {"axes": (0, 1), "begin": (1, 3), "end": (3, 4), "strides": (1, 1)})]
    assert _ops(fixture_func(SLICE_SYMBOLIC)) == []
