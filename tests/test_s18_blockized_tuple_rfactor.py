"""A tuple reduction (group_norm's sum and sum of squares) through ``rfactor`` and then
``blockize`` of its partial block (real TVM 0.27 output, fixture
``s18_group_norm_rfactor_blockized``): the outer block ``x_red_temp_rf_o`` keeps the init
of both accumulators in a looped ``x_red_temp_rf_init`` block, which
:func:`opinfo.blockize.unblockize` now merges back store for store, as it did for one
accumulator."""
from __future__ import annotations

from opinfo.blockize import unblockize

from tests.fixture_util import fixture_func, fixture_ops

NAME = "s18_group_norm_rfactor_blockized"
INIT_V1 = "x_red_temp_v1_rf[vk4_i_init, v_ax0_o, v_ax1_o] = T.float32(0.0)"


def test_blockized_partial_block_of_a_tuple_reduction_is_merged():
    names = [b.name for b in unblockize(fixture_func(NAME)).blocks()]
    assert "x_red_temp_rf_o" not in names and "x_red_temp_rf_init" not in names


def test_group_norm_is_named():
    assert fixture_ops(NAME) == [("nn.group_norm", {"num_groups": 3, "channel_axis": 3, "axes": (1, 2),
                                                    "epsilon": 1e-05, "center": True, "scale": True})]


def test_an_accumulator_initialised_to_another_value_is_not_group_norm():
    assert fixture_ops(NAME, INIT_V1, INIT_V1.replace("T.float32(0.0)", "T.float32(1.0)")) == []


def test_an_init_missing_one_accumulator_stays_blockized():
    # one store in the init against two in the update: not the init of this reduction
    func = fixture_func(NAME, lambda text: text.replace(INIT_V1, "T.evaluate(0)"))
    assert "x_red_temp_rf_o" in [b.name for b in unblockize(func).blocks()]
    assert fixture_ops(NAME, INIT_V1, "T.evaluate(0)") == []
