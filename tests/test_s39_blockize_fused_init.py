"""Session 39: ``blockize`` above a spatial loop fused with a reduction loop (TVM 0.27 fixture).

A softmax over axis 1 of a (2, 5, 4) tensor whose exp-sum loops ``i1`` (4) and ``k`` (5)
were fused into ``i1_k_fused`` (20) and then blockized under the batch loop: the outer
block ``T_softmax_expsum_o`` holds an init that is itself a loop of 20 iterations over a
block setting ``T_softmax_expsum[v_i0_o, i1_k_fused // 5]`` to 0 -- every element five
times. Stores of a constant set the same elements however often they run, so the init is
the inner block's init when its loops run every point of its domain and none outside it
(``blockize._runs_domain_only``); an init that leaves an element unset, or sets one past
the domain, stays as it is and the function is not named.
"""
from __future__ import annotations

import numpy as np

import tir
from opinfo import blockize
from tests.fixture_util import fixture_func, fixture_ops
from tir import topi

NAME = "s39_softmax_blockized_fused_init"
INIT_LOOP = "for i1_k_fused in range(T.int64(20)):\n                        with T.block(\"T_softmax_expsum_init\")"


def test_named_as_the_softmax():
    assert fixture_ops(NAME) == [("nn.softmax", {"axis": 1})]


def test_fixture_computes_the_softmax():
    rng = np.random.default_rng(39)
    x = rng.standard_normal((2, 5, 4)).astype("float32")
    plain = topi.lower("nn.softmax", [((2, 5, 4), "float32")], axis=1)
    np.testing.assert_allclose(tir.run(fixture_func(NAME), x), tir.run(plain, x), rtol=1e-5, atol=1e-6)


def test_init_leaving_an_element_unset_is_not_named():
    # 15 iterations set elements 0..2 only: element 3's sum starts from whatever was there
    assert fixture_ops(NAME, INIT_LOOP, INIT_LOOP.replace("T.int64(20)", "T.int64(15)")) == []


def test_init_setting_past_its_domain_is_not_named():
    # 25 iterations reach element 4 of a domain of 4
    text_old = "v_i1_i_init = T.axis.spatial(T.int64(4), i1_k_fused // T.int64(5))"
    assert fixture_ops(NAME, text_old, text_old.replace("// T.int64(5)", "// T.int64(4)")) == []


def test_init_storing_a_loaded_value_is_not_merged():
    old = "T_softmax_expsum[v_i0_o, v_i1_i_init] = T.float32(0.0)"
    assert fixture_ops(NAME, old, "T_softmax_expsum[v_i0_o, v_i1_i_init] = x[v_i0_o, 0, v_i1_i_init]") == []


def test_domain_check_enumerates_the_init_loops():
    func = fixture_func(NAME)
    outer = next(b for b in func.blocks() if b.name == "T_softmax_expsum_o")
    loops, realize = blockize.nest_of(outer.init)
    assert blockize._runs_domain_only(loops, realize)
    assert not blockize._one_loop_each(loops, realize)
