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


# ---------------------------------------------------------------- vision.roi_align / roi_pool (run-based)
def _align(pooled, scale, ratio, aligned, layout, mode):
    return "vision.roi_align", {"pooled_size": pooled, "spatial_scale": scale, "sample_ratio": ratio,
                                "aligned": aligned, "layout": layout, "mode": mode}


def _listed(ops):
    return [(name, {k: list(v) if isinstance(v, tuple) else v for k, v in a.items()}) for name, a in ops]


@pytest.mark.parametrize("name, want", [
    ("more3_roi_align_71_2", _align([2, 2], 0.5, 2, True, "NCHW", "max")),
    ("more3_roi_align_71_5", _align([2, 2], 0.5, -1, True, "NHWC", "avg")),   # adaptive sampling grid
    ("more3_roi_pool_71_1", ("vision.roi_pool", {"pooled_size": [3, 2], "spatial_scale": 0.5, "layout": "NCHW"})),
    ("more3_roi_pool_71_3", ("vision.roi_pool", {"pooled_size": [1, 3], "spatial_scale": 1.0, "layout": "NCHW"})),
])
def test_roi_ops_recognised(name, want):
    func = fixture_func(name)
    assert _listed(_ops(func)) == [want]
    assert [o.role for o in opinfo.analyze(func).ops[0].operands] == ["data", "rois"]


def test_roi_align_one_sample_per_bin_mode_from_reduction():
    """sample_ratio 1: each bin's average is its maximum, the values cannot tell avg from max;
    the reduction's form (a sum) does."""
    (op,) = opinfo.analyze(fixture_func("more3_roi_align_71_6")).ops
    assert op.name == "vision.roi_align" and op.attrs["mode"] == "avg" and op.attrs["sample_ratio"] == 1


@pytest.mark.parametrize("name, old, new", [
    ("more3_roi_pool_71_1", "T.float32(0.5)", "T.float32(0.45)"),    # neither the scale nor the rounding
    ("more3_roi_align_71_2", "T.float32(0.5)", "T.float32(0.55)"),   # sample offsets moved
])
def test_edited_roi_unnamed(name, old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new)
    assert _ops(fixture_func(name, edit)) == []
