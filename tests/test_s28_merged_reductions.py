"""TVM 0.27 schedules (``merge``, ``reindex_cache_read``/``_write``) that break what the
function computes, from a generated corpus (seed 2802): opinfo must stay silent.

* ``merge`` of the outer loops of a 1-D log_softmax's blocks puts the max, the exp-sum and
  the output under one ``for i in range(n)``: element i reads the running max of
  ``x[:i + 1]`` and a running sum whose terms were taken against the max of their own
  step -- a prefix computation, no log_softmax (:func:`.intermediate_check._partial_reads`:
  a load of a reduction's partial result). Small, the re-lowering check refuted it already;
  at 5,000 elements that check runs out of steps, and opinfo used to name nn.log_softmax.
* ``reindex_cache_write`` with a permuted index map of layer_norm's sum: the init stores
  ``x_sum_shared[v_ax1, v_ax0]``, the update accumulates into ``[v_ax0, v_ax1]`` of a
  (5, n) buffer -- outside it unless n == 5, into never-reset elements at n == 5.
* ``reindex_cache_read`` with a permuted index map of attention's keys, under a split
  loop (6 steps for 5 keys) whose guard TVM does not copy: the copy writes
  ``y1_shared[:, 5, :, :]`` (extent 5), which in flat memory overwrites other keys.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import opinfo
import tir
from opinfo.intermediate_check import uninitialised_reads
from tests.fixture_util import fixture_func
from tir.interp import InterpError

MERGED = "s28_merged_log_softmax_running_max"
LAYER_NORM = "s28_layer_norm_permuted_cache_write_init"
ATTENTION = "s28_attention_permuted_cache_read_unguarded"
UNINITIALISED = "storage is read before anything writes it (or while a reduction still accumulates into it, or before it adds any point)"


def _log_softmax(x):
    m = x.max()
    return x - m - np.log(np.exp(x - m).sum())


def _own_loop(*blocks):
    """The blocks of the merged loop put in loops of their own (what TVM builds unmerged)."""
    def edit(text):
        for b in blocks:
            old = f'            with T.sblock("{b}"):'
            assert text.count(old) == 1
            text = text.replace(old, f"        for i0_m_m_m in range(n):\n{old}")
        return text
    return edit


def _static(size: int):
    """The symbolic extent ``n`` made the constant ``size``."""
    return lambda text: re.sub(r"^n = .*$", "", re.sub(r"\bn\b(?!\s*=)", f"T.int64({size})", text), flags=re.M)


def test_merged_log_softmax_computes_a_running_one():
    x = np.random.default_rng(0).normal(size=9).astype("float32") * 3
    got = tir.run(fixture_func(MERGED), x)
    m = np.maximum.accumulate(x)
    np.testing.assert_allclose(got, x - m - np.log(np.cumsum(np.exp(x - m))), rtol=1e-5, atol=1e-5)
    assert np.abs(got - _log_softmax(x)).max() > 0.1


@pytest.mark.parametrize("edit", [None, _static(5000)], ids=["symbolic", "static-5000"])
def test_merged_log_softmax_abstains(edit):
    func = fixture_func(MERGED) if edit is None else fixture_func(MERGED, edit)
    assert uninitialised_reads(func)
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == UNINITIALISED


def test_reductions_in_loops_of_their_own_are_log_softmax():
    func = fixture_func(MERGED, _own_loop("compute", "compute_1"))
    assert not uninitialised_reads(func)
    assert [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops] == [("nn.log_softmax", {"axis": 0})]
    x = np.random.default_rng(1).normal(size=9).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), _log_softmax(x), rtol=1e-5, atol=1e-5)
    big = fixture_func(MERGED, lambda t: _static(5000)(_own_loop("compute", "compute_1")(t)))
    assert not uninitialised_reads(big)


def test_sum_still_running_under_the_output_loop_abstains():
    # the output in a loop of its own, the exp-sum still reads the running max
    func = fixture_func(MERGED, _own_loop("compute_1"))
    assert uninitialised_reads(func) and opinfo.analyze(func).ops == ()


def test_permuted_cache_write_of_a_sum_abstains():
    rng = np.random.default_rng(0)
    x, g, b = rng.normal(size=(5, 5, 5, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    x, g, b = (a.astype("float32") for a in (x, g, b))
    m = x.mean(axis=(2, 3), keepdims=True)
    want = (x - m) / np.sqrt(((x - m) ** 2).mean(axis=(2, 3), keepdims=True) + 1e-3) * g + b
    assert np.abs(tir.run(fixture_func(LAYER_NORM), x, g, b) - want).max() > 0.1  # n == 5: in bounds, wrong
    with pytest.raises(InterpError, match="out of bounds"):
        tir.run(fixture_func(LAYER_NORM), x[:3], g, b)
    assert opinfo.analyze(fixture_func(LAYER_NORM)).ops == ()


def test_unguarded_permuted_cache_read_abstains():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=s).astype("float32") for s in ((2, 3, 2, 4), (2, 5, 2, 4), (2, 5, 2, 4)))
    with pytest.raises(InterpError, match="y1_shared"):
        tir.run(fixture_func(ATTENTION), q, k, v)
    assert opinfo.analyze(fixture_func(ATTENTION)).ops == ()
