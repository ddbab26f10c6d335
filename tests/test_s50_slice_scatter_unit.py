"""slice_scatter over data with an axis of extent 1: TVM's reshape of the 1-D mask to the
data's rank keeps that axis's variable in its index (``T_logical_and[(v0 + v1 + v2) % 4]``
over ``(4, 1, 1)``), which the mask reading now evaluates at its one value 0. Fixture:
TVM 0.27, slice_scatter of a (3, 4, 1) source into a (4, 4, 1) tensor, axis 0, start 1."""
from __future__ import annotations

from opinfo import analyze, verify_op

from tests.fixture_util import fixture_func, replaced

import tir

MASK = "T_reshape[v_ax0, v_ax1, v_ax2] = T_logical_and[(v_ax0 + v_ax1 + v_ax2) % T.int64(4)]"


def test_unit_axis_slice_scatter_named():
    func = fixture_func("s50_slice_scatter_unit_axis")
    (op,) = analyze(func).ops
    assert op.name == "slice_scatter"
    assert dict(op.attrs) == {"axis": 0, "start": 1, "end": 4, "step": 1}
    assert [o.buffer for o in op.operands] == ["x", "y"]
    assert verify_op(func, op) is True


def test_mask_reading_another_axis_is_not_a_slice():
    # the mask indexed by the second axis (extent 4), not the first: no slice along axis 0
    (_, func), = tir.parse(replaced("s50_slice_scatter_unit_axis", MASK,
                                    MASK.replace("(v_ax0 + v_ax1 + v_ax2)", "(v_ax1 + v_ax2)"))).prim_funcs()
    assert analyze(func).ops == ()
