"""Decomposed reductions put back (:mod:`opinfo.init_order`), on real TVM 0.27 output
(fixtures ``s17_*``):

- an argmax (a tuple reduction: index and value stored under ``let``) whose init was split
  differently from its update: the order of the two is enumerated through the first of the
  update's stores;
- a softmax whose max was ``compute_at`` under a loop of its consumer the max does not
  depend on: the whole max runs again at each iteration, which a max (idempotent) does
  not notice, so the init is merged;
- the same schedule of a sum (std's mean): each run adds every point again, TVM's own
  wrong output, left alone (abstains);
- a layer norm whose decomposed sum runs over fused reduction loops split by 5 with a
  guard on those loops only: the enumeration shows each point added once.
"""
from __future__ import annotations

import numpy as np

import tir

from tests.fixture_util import fixture_func, fixture_ops

ARGMAX = "s17_decomposed_argmax_split_init"
SOFTMAX = "s17_softmax_max_repeated_under_consumer"
STD = "s17_std_sum_repeated_under_consumer"
LAYER_NORM = "s17_layer_norm_guarded_fused_reduction"

MAX_UPDATE = "T.max(T_softmax_maxelem[v_i0, v_i1], x[v_i0, v_i1, v_k])"


def test_tuple_reduction_with_a_resplit_init_is_merged():
    assert fixture_ops(ARGMAX) == [("argmax", {"axis": 2, "keepdims": True})]


def test_tuple_reduction_init_skipping_elements_abstains():
    # the init's innermost split loop runs 1 of 2: every other element is never set
    grid = "T.grid(T.int64(6), T.int64(1), T.int64(2), T.int64(2), T.int64({}))"
    assert fixture_ops(ARGMAX, grid.format(2), grid.format(1)) == []


def test_max_repeated_under_its_consumer_is_softmax():
    assert fixture_ops(SOFTMAX) == [("nn.softmax", {"axis": 2})]
    x = np.random.default_rng(0).normal(size=(8, 7, 3)).astype("float32")
    e = np.exp(x - x.max(axis=2, keepdims=True))
    np.testing.assert_allclose(tir.run(fixture_func(SOFTMAX), x), e / e.sum(axis=2, keepdims=True), rtol=1e-5)


def test_max_repeated_over_an_intermediate_abstains():
    # the repeated max reads the exponentials its own consumer is computing: each repetition
    # may see other values, which the maximum would keep
    assert fixture_ops(SOFTMAX, MAX_UPDATE, MAX_UPDATE.replace("x[", "T_softmax_exp[")) == []


def test_max_repeated_over_part_of_its_points_abstains():
    # each repetition covers two of the three reduction points
    assert fixture_ops(SOFTMAX, "for ax0 in range(T.int64(3)):", "for ax0 in range(T.int64(2)):") == []


def test_sum_repeated_under_its_consumer_is_not_merged():
    assert fixture_ops(STD) == []
    # the same repetition of a max in softmax's place is no longer idempotent once a sum
    summed = "T_softmax_maxelem[v_i0, v_i1] + x[v_i0, v_i1, v_k]"
    assert fixture_ops(SOFTMAX, MAX_UPDATE, summed) == []


def test_update_guarded_on_its_reduction_loops_is_merged():
    assert fixture_ops(LAYER_NORM) == [("nn.layer_norm", {
        "axes": (1, 2), "epsilon": 1e-05, "center": True, "scale": True})]
    # a guard letting the split's fifth step run adds points 4, 8, ... twice
    guard = "T.where(k1_k2_fused_1_1_0 * T.int64(5) + k1_k2_fused_1_1_1 < T.int64({}))"
    assert fixture_ops(LAYER_NORM, guard.format(4), guard.format(5)) == []
