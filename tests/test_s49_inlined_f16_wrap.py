"""TVM computes a float16 op without a float16 form (``erf``) in float32 between a cast of
its input and a cast back; dlight inlines the three blocks into one,
``float16(erf(float32(x)))``, read as the op the three blocks are (``ew_tree``'s float16
wrapping, its blocks inlined). Fixture: TVM 0.27, erf of a (9, 9, 5, 3) float16 tensor under
dlight (target cuda)."""
from __future__ import annotations

from opinfo import analyze, verify_op

from tests.fixture_util import fixture_func, replaced

import tir

INNER = 'T.Cast("float16", T.erf(T.Cast("float32", x[v0, v1, v2, v3])))'


def test_inlined_float16_erf_named():
    func = fixture_func("s49_dlight_erf_f16")
    (op,) = analyze(func).ops
    assert op.name == "erf" and [o.buffer for o in op.operands] == ["x"]
    assert verify_op(func, op) is True


def _ops(new: str) -> list:
    (_, func), = tir.parse(replaced("s49_dlight_erf_f16", INNER, new)).prim_funcs()
    return [op.name for op in analyze(func).ops]


def test_other_inlined_forms_are_not_erf():
    # a cast there and back of the input alone is two astype ops, not one op
    assert "erf" not in _ops('T.Cast("float16", T.Cast("float32", x[v0, v1, v2, v3]))')
    # erf plus one is no op of its own
    assert _ops('T.Cast("float16", T.erf(T.Cast("float32", x[v0, v1, v2, v3])) + T.float32(1.0))') == []
    # the widened value of something computed (x * 2), not of the input
    assert "erf" not in _ops('T.Cast("float16", T.erf(T.Cast("float32", x[v0, v1, v2, v3] * T.float16(2.0))))')
