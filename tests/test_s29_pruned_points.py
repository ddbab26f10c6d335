"""Block iterations enumerated under a predicate, pruned loop by loop
(:func:`opinfo.probe.pruned_points`): a symbolic loop split by large factors runs far more
iterations than its ``n``-guard keeps, too many to enumerate whole, so the order check of a
decomposed init (:mod:`opinfo.init_order`) could not run and the reduction was left
unmerged. Each conjunct is applied as soon as its loops are enumerated; the points kept
are exactly those of the whole enumeration."""
from __future__ import annotations

import numpy as np

from opinfo.coverage import block_realizes
from opinfo.probe import block_points, loops_points, pruned_points
from tests.fixture_util import fixture_func, fixture_ops

FIX = "s29_adaptive_avg_pool3d_big_split"


def test_adaptive_pool_with_large_symbolic_split_is_recognized():
    assert fixture_ops(FIX) == [("nn.adaptive_avg_pool3d", {
        "output_size": (1, 1, 1), "layout": "NDHWC", "out_layout": "NDHWC"})]


def _update():
    func = fixture_func(FIX)
    (realize, loops), = [(r, lp) for r, lp in block_realizes(func.body) if r.block.name == "adaptive_pool_sum_update"]
    (n,) = {v for buf in func.buffers for s in buf.shape for v in [s] if not hasattr(s, "value")}
    return realize, loops, n


def test_pruned_points_keep_what_the_whole_enumeration_keeps():
    realize, loops, n = _update()
    env = {n: 2}
    whole = block_points(realize, loops, env, 1 << 22)
    assert whole is not None and whole.count == 2 * 7 * 385
    pruned = pruned_points(loops, env, 1 << 16, realize.predicate)
    assert pruned is not None and pruned[1] < 1 << 16
    small = block_points(realize, loops, env, 1 << 16)
    assert small is not None and small.count == whole.count
    for iv in realize.block.iter_vars:
        np.testing.assert_array_equal(small.block_env[iv.var], whole.block_env[iv.var])


def test_pruning_respects_the_limit():
    realize, loops, n = _update()
    assert loops_points(loops, {n: 12}, 1 << 16) is None
    assert pruned_points(loops, {n: 12}, 100, realize.predicate) is None
