"""Schedules of TVM 0.27 that read storage before anything writes it: opinfo must stay silent.

Two random schedules from a generated corpus (seed 2802) on which
:func:`opinfo.intermediate_check.uninitialised_reads` refutes the function, rightly -- the
interpreter shows against numpy that TVM's scheduled function is not the op:

* ``merge`` of the outer loops of a conv1d_transpose's stages (data_dilate, data_pad,
  kernel_dilate, kernel, compute): iteration ``b`` of the merged loop writes only the
  kernel row ``o = b`` (and kernel_dilate rows ``2b, 2b + 1``), but the compute of batch
  ``b`` reads ``kernel[c % 2]`` for both rows and ``kernel`` reads every row of
  kernel_dilate. ``merge`` does not check the dataflow between the blocks it puts under one
  loop: half of the output is computed from storage not written yet (TVM's conv2d/3d
  transpose schedules of the same corpus break the same way).
* A cache stage (``x_shared``, a transposed reindex cache of ``x``) of an index_tensor that
  gathers ``x[T_broadcast_to[i], T_broadcast_to_1[i], :]``: it is placed before the blocks
  that copy the index tensors into ``T_broadcast_to`` / ``T_broadcast_to_1``, so each row is
  gathered with indices not written yet. Moved after them, the function is an index_tensor
  again, and opinfo names it.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo import api
from opinfo.intermediate_check import uninitialised_reads
from tests.fixture_util import fixture_func
from tir.interp import interpret

MERGED = "s28_merge_conv1d_transpose_unfilled_kernel"
EARLY = "s28_cache_index_tensor_reads_indices_early"
REFUSED = api.REFUSALS["uninitialised"]


def _conv1d_transpose(x, w, groups, stride, dilation, pad_lo, pad_hi):
    """Grouped conv1d_transpose, kernel layout IOW, in float64."""
    b, cin, n = x.shape
    ocpg, k = w.shape[1], w.shape[2]
    icpg = cin // groups
    size = (n - 1) * stride - pad_lo - pad_hi + dilation * (k - 1) + 1
    out = np.zeros((b, ocpg * groups, size))
    for g in range(groups):
        for ic in range(icpg):
            for oc in range(ocpg):
                for i in range(n):
                    for kk in range(k):
                        o = i * stride + kk * dilation - pad_lo
                        if 0 <= o < size:
                            out[:, g * ocpg + oc, o] += x[:, g * icpg + ic, i] * w[g * icpg + ic, oc, kk]
    return out


def test_merged_conv1d_transpose_reading_unwritten_kernel_rows_abstains():
    func = fixture_func(MERGED)
    assert uninitialised_reads(func)
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == REFUSED
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 8)).astype("float32")
    w = rng.normal(size=(4, 2, 2)).astype("float32")
    want = _conv1d_transpose(x, w, groups=2, stride=1, dilation=2, pad_lo=0, pad_hi=1)
    # storage starting as NaN: half of the output depends on it
    out = np.zeros((2, 4, 9), "float32")
    interpret(func, x, w, out, scratch_fill=np.nan)
    assert np.isnan(out).sum() == out.size // 2
    ok = ~np.isnan(out)
    np.testing.assert_allclose(out[ok], want[ok], rtol=1e-5, atol=1e-5)
    # storage starting as zeros (tir.run): a wrong answer, not a conv1d_transpose
    assert np.abs(tir.run(func, x, w) - want).max() > 0.1


def _move_cache_stage_before_consumer(text: str) -> str:
    cache = text.index('            for ax0_1, ax1 in T.grid(T.int64(2), T.int64(6)):\n'
                       '                with T.sblock("x_shared")')
    after = text.index('            for ax0_1 in range(T.int64(2)):\n'
                       '                with T.sblock("T_broadcast_to")')
    block, text = text[cache:after], text[:cache] + text[after:]
    consumer = text.index('            for ax0_1, ax1 in T.grid(T.int64(2), T.int64(6)):\n'
                          '                with T.sblock("advanced_index")')
    return text[:consumer] + block + text[consumer:]


def test_cache_stage_gathering_with_unwritten_indices_abstains():
    func = fixture_func(EARLY)
    assert uninitialised_reads(func)
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == REFUSED
    x = np.random.default_rng(1).normal(size=(3, 5, 6)).astype("float32")
    i0, i1 = np.array([2, 1, 0, 2]), np.array([4, 3, 1, 2])
    want = x[i0, i1]
    # every row is gathered at the indices the storage starts with, not at i0 / i1
    for fill in (0.0, 1.0):
        out = np.zeros((4, 6), "float32")
        interpret(func, x, i0, i1, out, scratch_fill=fill)
        np.testing.assert_array_equal(out, np.broadcast_to(x[int(fill), int(fill)], (4, 6)))
        assert np.abs(out - want).max() > 0.1


def test_cache_stage_after_the_index_copies_is_index_tensor():
    func = fixture_func(EARLY, _move_cache_stage_before_consumer)
    assert not uninitialised_reads(func)
    assert [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops] == [("index_tensor", {})]
    x = np.random.default_rng(1).normal(size=(3, 5, 6)).astype("float32")
    i0, i1 = np.array([2, 1, 0, 2]), np.array([4, 3, 1, 2])
    np.testing.assert_array_equal(tir.run(func, x, i0, i1), x[i0, i1])
