"""Schedules of TVM 0.27 that change what a softmax computes: opinfo must stay silent.

Three random schedules from a generated corpus (nn.softmax / nn.log_softmax) that opinfo
abstains on, each because the scheduled function is not the op any more -- the interpreter,
which follows TVM's semantics (an init runs when the block's reduction variables are at
their domain's minimum), shows it against numpy:

* ``loop_partition`` of the exp-sum's reduction loop at k = 4 (log_softmax over axis 0):
  TVM keeps the init in both copies and the second copy's domain starts at 4, so it resets
  the sum there -- the function sums k = 4..6 only (:func:`.realize_check._short_reduction`
  refutes the first copy; :func:`.loop_partition.merge_partitions` does not merge copies
  whose reduction domains differ under an init).
* ``pad_einsum`` + ``reverse_compute_at`` + ``loop_partition`` (softmax over axis 0): the
  exp-sum block writes column 12..15 of a (16, 8, 12) buffer (a write outside the buffer),
  and both partitioned reductions restart their max / sum at the cut.
* ``pad_einsum`` of the exp-sum of a symbolic log_softmax: the reduction runs over
  ``(n + 1) // 2 * 2`` elements of ``x`` padded with 0, and ``exp(0 - max)`` is no neutral
  element of the sum -- for odd ``n`` one extra term is added.
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from tests.fixture_util import fixture_func, fixture_ops
from tir.interp import InterpError

RESET = "s28_partitioned_expsum_resets_log_softmax"
OUT_OF_BOUNDS = "s28_pad_einsum_partitioned_softmax_out_of_bounds"
NON_NEUTRAL = "s28_pad_einsum_expsum_non_neutral_symbolic"


def _log_softmax(x, axis, lo=0):
    m = x.max(axis=axis, keepdims=True)
    kept = np.take(x, range(lo, x.shape[axis]), axis=axis)
    return x - m - np.log(np.exp(kept - m).sum(axis=axis, keepdims=True))


def test_partitioned_expsum_with_an_init_in_each_copy_abstains():
    info = opinfo.analyze(fixture_func(RESET))
    assert info.ops == () and info.refused == "a block's loops do not run the iteration domain it declares"
    x = np.random.default_rng(0).normal(size=(7, 8, 8, 9)).astype("float32")
    got = tir.run(fixture_func(RESET), x)
    # what TVM computes: the sum restarted at k = 4 ...
    np.testing.assert_allclose(got, _log_softmax(x, 0, lo=4), rtol=1e-5, atol=1e-5)
    assert np.abs(got - _log_softmax(x, 0)).max() > 0.1  # ... which is no log_softmax
    # without the second copy's init the copies are one sum again (opinfo may still abstain)
    block = 'with T.sblock("compute_ax11"):'
    fixed = fixture_func(RESET, lambda t: _drop_init_after(t, block))
    np.testing.assert_allclose(tir.run(fixed, x), _log_softmax(x, 0), rtol=1e-5, atol=1e-5)


def _drop_init_after(text: str, marker: str) -> str:
    i = text.index(marker)
    j = text.index("with T.init():", i)
    k = text.index("\n", text.index("\n", j) + 1)
    return text[:j] + "T.evaluate(0)" + text[k:]


def test_pad_einsum_softmax_writing_outside_a_buffer_abstains():
    info = opinfo.analyze(fixture_func(OUT_OF_BOUNDS))
    assert info.ops == () and info.refused == "an output is written only in part (or a block writes outside a buffer)"
    x = np.random.default_rng(0).normal(size=(7, 8, 8, 9)).astype("float32")
    with pytest.raises(InterpError, match="out of bounds"):
        tir.run(fixture_func(OUT_OF_BOUNDS), x)


@pytest.mark.parametrize("n", [3, 5])
def test_pad_einsum_of_a_non_neutral_symbolic_sum_abstains(n):
    assert fixture_ops(NON_NEUTRAL) == []
    x = np.random.default_rng(n).normal(size=(n,)).astype("float32")
    got = tir.run(fixture_func(NON_NEUTRAL), x)
    # one padded element adds exp(0 - max(x)) to the sum for odd n
    m = x.max()
    want = x - m - np.log(np.exp(x - m).sum() + np.exp(-m))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.abs(got - _log_softmax(x, 0)).max() > 1e-3
    # even n: the padding is never reached, and the result is a log_softmax
    x4 = np.random.default_rng(n).normal(size=(n + 1,)).astype("float32")
    np.testing.assert_allclose(tir.run(fixture_func(NON_NEUTRAL), x4), _log_softmax(x4, 0), rtol=1e-5, atol=1e-5)
