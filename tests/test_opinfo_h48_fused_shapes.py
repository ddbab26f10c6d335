"""Fused kernels of other graph shapes (TVM 0.27 LegalizeOps + FuseOps + FuseTIR output in
fixtures/h48_fused_*.py, from gen_variants OPINFO_WIDE_FUSED=2): an elementwise op is named
as its blocks' compute tags say when two readings compute the same values (greater(a, b)
is printed ``b < a``, multiply(x, -1) is negative's ``x * -1``), and an op computed in a
narrower type between two casts is astype, op, astype (TVM widens only float16 ops)."""
from __future__ import annotations

import opinfo

from fixture_util import fixture_func
from opinfo import ew_tags


def _ops(name):
    return opinfo.analyze(fixture_func(name)).ops


def test_comparisons_named_by_their_tags_with_relax_operand_order():
    ops = _ops("h48_fused_less_greater_negative")
    assert [op.name for op in ops] == ["less", "where", "greater", "where", "negative", "maximum", "minimum"]
    less, where, greater = ops[:3]
    assert [o.buffer for o in less.operands] == ["x", "x1"]  # x < x1
    # T_greater stores x1 < where: Relax's greater(where, x1)
    assert [o.buffer for o in greater.operands] == [where.output.buffer, "x1"]


def test_multiply_by_minus_one_in_a_t_multiply_block_is_not_negative():
    ops = _ops("h48_fused_less_where_multiply_m1")
    assert [op.name for op in ops] == ["less", "where", "multiply"]
    assert [o.role for o in ops[2].operands] == ["lhs"]  # the constant -1 on the right


def test_op_in_a_narrower_type_between_casts_is_three_ops():
    ops = _ops("h48_fused_divide_cast_f16_exp")
    assert [(op.name, dict(op.attrs)) for op in ops] == [
        ("divide", {}), ("astype", {"dtype": "float16"}), ("exp", {}), ("astype", {"dtype": "float32"})]


def test_float32_op_in_float64_between_casts_is_three_ops():
    ops = _ops("h48_fused_where_cast_f64_exp")
    assert [op.name for op in ops] == ["maximum", "minimum", "less", "where", "astype", "exp", "astype"]
    assert dict(ops[4].attrs) == {"dtype": "float64"} and dict(ops[6].attrs) == {"dtype": "float32"}


def test_tag_contradiction_rules():
    # only tags of a compute of its own (T_<op>) are evidence; ``compute`` is every unary op's
    assert ew_tags.contradicts("negative", {}, ["float32"], {"T_multiply"})
    assert not ew_tags.contradicts("negative", {}, ["float32"], {"compute"})
    assert ew_tags.contradicts("greater", {}, ["float32", "float32"], {"T_less"})
    assert not ew_tags.contradicts("where", {}, ["bool", "float32", "float32"], {"T_where1"})
    assert not ew_tags.contradicts("nn.gelu", {}, ["float32"], {"T_multiply", "compute", "T_add"})


def test_an_intermediate_added_to_itself_is_add_of_one_operand_twice():
    tanh, add = _ops("h48_fused_tanh_self_add")
    assert (tanh.name, add.name) == ("tanh", "add")
    assert [o.buffer for o in add.operands] == [tanh.output.buffer] * 2


def test_multiply_by_one_folded_to_a_copy_is_named_by_its_tag():
    # multiply(R.const(1.0), x): TVM folds x * 1 to x in block T_multiply (not a broadcast_to)
    ops = _ops("h48_fused_multiply_by_one")
    assert [op.name for op in ops] == ["multiply", "maximum", "minimum", "maximum", "minimum"]
    assert [(o.role, o.buffer) for o in ops[0].operands] == [("lhs", "x")]


def test_scalar_comparison_in_a_renamed_block_is_named():
    # the second not_equal's block is T_not_equal1 (FuseTIR's renaming of a repeated name)
    assert [op.name for op in _ops("h48_fused_not_equal_twice")] == [
        "maximum", "minimum", "not_equal", "where", "not_equal", "where"]
