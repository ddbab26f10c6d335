"""TVM 0.27 schedules whose forms opinfo reads once it looks past an inlined block, and one
schedule that is no longer its op.

* repeat with axis None of data with a symbolic extent whose flattening block was inlined:
  ``T_repeat[v] = x[v // 2 // 24 % n, v // 2 % 24 // 8, v // 2 % 8]``. The repeat count is
  the ratio of the element counts (one integer for every ``n``); the map is checked at a few
  values of ``n`` as a symbolic reshape is.
* multibox_transform_loc with a softmax, threshold 0.0: the division of the softmax was
  inlined into the comparison (``0.0 <= exp[...] / expsum[...]``), so the compared value is
  no load; the threshold written is still read (not assumed).
* multibox_transform_loc whose cross-thread sum (``rfactor``) update runs under a loop that a
  ``T.where`` lets through twice: class 1 sees twice the sum, so its scores are halved.
  Abstaining is right.
"""
from __future__ import annotations

import numpy as np

import opinfo
from tests.fixture_util import fixture_func, fixture_ops
from tir.interp import interpret

REPEAT = "s29_repeat_flat_inlined_symbolic"
MBOX = "s29_multibox_threshold_inlined_division"
MBOX_BROKEN = "s29_multibox_expsum_accumulated_twice"


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_inlined_flat_repeat_symbolic_named():
    assert fixture_ops(REPEAT) == [("repeat", {"repeats": 2, "axis": None})]


def test_inlined_flat_repeat_symbolic_computes_repeat():
    func = fixture_func(REPEAT)
    for n in (1, 3):
        x = np.random.default_rng(n).uniform(-1, 1, (n, 3, 8)).astype("float32")
        out = np.zeros(n * 48, "float32")
        interpret(func, x, out)
        np.testing.assert_array_equal(out, np.repeat(x, 2))


def test_inlined_flat_repeat_symbolic_wrong_maps_not_named():
    # the last axis read without the repeat: not repeat(axis=None)
    assert fixture_ops(REPEAT, "v_ax0 // T.int64(2) % T.int64(8)]\n", "v_ax0 % T.int64(8)]\n") == []
    # the leading axis without its wrap: reads past the data for the last elements
    got = fixture_ops(REPEAT, "T_repeat[v_ax0] = x[v_ax0 // T.int64(2) // T.int64(24) % n,",
                      "T_repeat[v_ax0] = x[v_ax0 // T.int64(24) % n,")
    assert ("repeat", {"repeats": 2, "axis": None}) not in got


def test_multibox_threshold_compared_with_inlined_division():
    (name, attrs), = fixture_ops(MBOX)
    assert name == "vision.multibox_transform_loc"
    assert attrs["threshold"] == 0.0 and attrs["apply_softmax"] and attrs["keep_background"]
    assert not attrs["clip"]
    assert np.allclose(attrs["variances"], [0.1, 0.1, 0.2, 0.2])
    (op,) = opinfo.analyze(fixture_func(MBOX)).ops
    assert not op.assumed


def test_multibox_negative_threshold_read_from_inlined_comparison():
    (name, attrs), = fixture_ops(MBOX, "T.float32(0.0) <= T_softmax_exp", "T.float32(-0.5) <= T_softmax_exp")
    assert name == "vision.multibox_transform_loc" and attrs["threshold"] == -0.5


def test_multibox_sum_accumulated_twice_abstains():
    func = fixture_func(MBOX_BROKEN)
    rng = np.random.default_rng(0)
    cls = rng.uniform(-3, 3, (2, 2, 2)).astype("float32")
    cls[:, 1] += 3
    loc = rng.uniform(-1, 1, (2, 8)).astype("float32")
    lo = rng.uniform(0, 0.5, (1, 2, 2))
    anchor = np.concatenate([lo, lo + 0.3], -1).astype("float32")
    boxes, scores = np.zeros((2, 2, 4), "float32"), np.zeros((2, 2, 2), "float32")
    interpret(func, cls, loc, anchor, boxes, scores)
    e = np.exp(cls - cls.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(scores[:, 0], np.where(soft[:, 0] >= 0.25, soft[:, 0], 0), rtol=1e-5)
    assert not np.allclose(scores[:, 1], np.where(soft[:, 1] >= 0.25, soft[:, 1], 0), rtol=1e-3)
    assert _ops(func) == []
