"""Comparisons with a scalar constant operand (named by their compute tag), image.grid_sample,
vision.roi_align and vision.roi_pool.

Fixtures (tests/fixtures/more3_*.py) were printed by TVM 0.27: the comparisons by a
BlockBuilder + LegalizeOps of ``op(x, const)`` and ``op(const, x)`` (and FuseOps + FuseTIR
for the fused one), the vision and image ops by tools/tvm_oracle/gen_ops.py.
"""
from __future__ import annotations

import pytest

import opinfo
from fixture_util import fixture_func


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _roles(func):
    return [(op.name, tuple(o.role for o in op.operands)) for op in opinfo.analyze(func).ops]


# ---------------------------------------------------------------- comparisons with a constant
@pytest.mark.parametrize("name, want", [
    ("more3_cmp_greater_float32_lhs", ("greater", ("lhs",))),          # greater(x, 0.5): 0.5 < x
    ("more3_cmp_greater_int64_rhs", ("greater", ("rhs",))),            # greater(3, x): x < 3
    ("more3_cmp_less_int64_lhs", ("less", ("lhs",))),                  # less(x, 3): x < 3
    ("more3_cmp_less_float32_rhs", ("less", ("rhs",))),                # less(0.5, x): 0.5 < x
    ("more3_cmp_greater_equal_int32_rhs", ("greater_equal", ("rhs",))),
    ("more3_cmp_less_equal_float16_rhs", ("less_equal", ("rhs",))),
    ("more3_cmp_equal_int64_rhs", ("equal", ("lhs",))),                # symmetric: the tensor is lhs
    ("more3_cmp_not_equal_float32_lhs", ("not_equal", ("lhs",))),
])
def test_scalar_comparison_named_by_tag(name, want):
    func = fixture_func(name)
    assert _ops(func) == [(want[0], {})]
    assert _roles(func) == [want]


def test_scalar_comparison_in_fused_kernel():
    func = fixture_func("more3_cmp_fused_less_equal_where")
    assert _roles(func) == [("less_equal", ("rhs",)), ("where", ("condition", "x1", "x2"))]


def test_tag_decides_between_same_values():
    """``0.5 < x`` is greater(x, 0.5) in a T_greater block, less(0.5, x) in a T_less one."""
    func = fixture_func("more3_cmp_greater_float32_lhs", lambda t: t.replace('"T_greater"', '"T_less"'))
    assert _roles(func) == [("less", ("rhs",))]


X = "x[v_ax0, v_ax1]"


@pytest.mark.parametrize("name, old, new", [
    ("more3_cmp_greater_float32_lhs", '"T_greater"', '"compute"'),              # no comparison's tag
    ("more3_cmp_greater_float32_lhs", '"T_greater"', '"T_add"'),                # another op's tag
    ("more3_cmp_less_int64_lhs", '"T_less"', '"T_equal"'),                      # tag and value disagree
    ("more3_cmp_greater_float32_lhs", f"< {X}", f"< {X} * T.float32(2.0)"),      # not the tensor itself
    ("more3_cmp_greater_float32_lhs", f"< {X}", "< x[v_ax0, T.int64(0)]"),      # a broadcast read
    ("more3_cmp_less_int64_lhs", "< T.int64(3)", "< x[v_ax0, T.int64(0)]"),     # no constant
])
def test_edited_comparison_unnamed(name, old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new)
    assert _ops(fixture_func(name, edit)) == []
