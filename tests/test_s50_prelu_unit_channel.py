"""nn.prelu with one channel: TVM broadcasts the one-element slope through an intermediate
(``slope_broadcasted[c] = y[0]``) read at the channel's output variable; inlined, ``y[0]``
shows no axis, the intermediate's index does. Fixture: TVM 0.27, prelu of an (n, 1, 4)
tensor, axis 1."""
from __future__ import annotations

from opinfo import analyze

from tests.fixture_util import fixture_func, replaced

import tir

READ = "x[v_i0, v_i1, v_i2] * slope_broadcasted[v_i1]"


def test_one_channel_prelu_named_with_its_axis():
    func = fixture_func("s50_prelu_unit_channel")
    (op,) = analyze(func).ops
    assert (op.name, dict(op.attrs)) == ("nn.prelu", {"axis": 1})
    assert [o.buffer for o in op.operands] == ["x", "y"]


def test_slope_read_on_an_axis_of_another_extent_is_not_prelu():
    # the one-element intermediate read along the last axis (extent 4): no prelu takes it
    (_, func), = tir.parse(replaced("s50_prelu_unit_channel", READ,
                                    READ.replace("slope_broadcasted[v_i1]", "slope_broadcasted[v_i2]"))).prim_funcs()
    assert analyze(func).ops == ()
