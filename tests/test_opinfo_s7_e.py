"""Generalisation probe (fresh TVM 0.27 corpora, new seeds): forms that broke opinfo.

* ``T.And`` / ``T.Or`` / ``T.Not`` node constructors in expressions (TVM prints them when an
  operand is a literal, e.g. slice_scatter's mask after ``decompose_padding,inline``);
* a clip on integers: TVM truncates the float bounds to the input's type, so the bounds
  are not recoverable and the op is left unnamed (a float clip keeps its bounds);
* an init/update block over spatial variables only (``reindex`` of a reduction whose
  reduction loop has extent 1 turns that loop spatial): no reduction is claimed.
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
import tir.topi as topi
from tir.expr import IntImm
from tir.functor import post_order_visit
from tir.stmt import BlockRealize
from tir.verifier import verify

import opinfo
from opinfo.affine import const_of
from opinfo.predicates import implied, loop_domain
from opinfo.recognize.guard import conjuncts

LOGIC = '''
@T.prim_func
def main(x: T.Buffer((T.int64(6),), "int64"), out: T.Buffer((T.int64(6),), "bool")):
    for i in range(T.int64(6)):
        with T.block("T_logical_and"):
            v = T.axis.spatial(T.int64(6), i)
            T.reads(x[v])
            T.writes(out[v])
            out[v] = T.Or(T.And(T.bool(True), T.int64(2) <= x[v]), T.Not(x[v] < T.int64(5)))
'''


def test_logic_node_constructors_parse_and_run():
    func = tir.parse(LOGIC)
    verify(func)
    x = np.arange(6, dtype="int64")
    got = tir.run(func, x)
    np.testing.assert_array_equal(got, (x >= 2) | ~(x < 5))


@pytest.mark.parametrize("text", ["T.And(T.bool(True))", "T.Not(x[v], x[v])"])
def test_logic_node_constructors_check_arity(text):
    with pytest.raises(tir.errors.ParseError):
        tir.parse(LOGIC.replace("T.Or(T.And(T.bool(True), T.int64(2) <= x[v]), T.Not(x[v] < T.int64(5)))", text))


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


@settings(max_examples=25, deadline=None)
@given(lo=st.sampled_from([-2.5, -1.0, 0.0, 0.5]), width=st.sampled_from([1.0, 3.0, 6.0]),
       dtype=st.sampled_from(["int32", "int64", "int8"]), rank=st.integers(1, 3))
def test_integer_clip_is_not_named(lo, width, dtype, rank):
    # TVM converts the bounds to the input's type, truncating (clip(x, -2.5, 0.5) on int32 is
    # max(min(x, 0), -2)); the lowering library wants them already converted
    func = topi.lower("clip", [((4,) * rank, dtype)], min=int(lo), max=int(lo + width))
    assert _ops(func) == []


@settings(max_examples=15, deadline=None)
@given(lo=st.sampled_from([-2.5, -1.0, 0.0, 0.5]), width=st.sampled_from([1.0, 3.0, 6.0]))
def test_float_clip_keeps_its_bounds(lo, width):
    func = topi.lower("clip", [((3, 5), "float32")], min=lo, max=lo + width)
    assert _ops(func) == [("clip", {"min": lo, "max": lo + width})]


SPATIAL_REDUCTION = '''
@T.prim_func
def main(x: T.Buffer((T.int64(2), T.int64(7), T.int64(11)), "float32"),
         out: T.Buffer((T.int64(2), T.int64(7), T.int64(11)), "float32")):
    acc_reindex = T.alloc_buffer((T.int64(11), T.int64(7), T.int64(2)))
    for ax0, ax1, ax2, ax3 in T.grid(T.int64(11), T.int64(7), T.int64(2), T.int64(1)):
        with T.block("adaptive_pool_sum"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(x[v2, v1, v0])
            T.writes(acc_reindex[v0, v1, v2])
            with T.init():
                acc_reindex[v0, v1, v2] = T.float32(0.0)
            acc_reindex[v0, v1, v2] = acc_reindex[v0, v1, v2] + x[v2, v1, v0]
    for ax0, ax1, ax2 in T.grid(T.int64(11), T.int64(7), T.int64(2)):
        with T.block("adaptive_pool_sum_reindex"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(acc_reindex[v0, v1, v2])
            T.writes(out[v2, v1, v0])
            out[v2, v1, v0] = acc_reindex[v0, v1, v2]
'''


def test_reduction_without_reduction_axes_is_not_named():
    func = tir.parse(SPATIAL_REDUCTION)
    x = np.random.default_rng(0).standard_normal((2, 7, 11)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), x)  # it computes a copy
    assert all(name not in ("sum", "mean") for name, _ in _ops(func))


@settings(max_examples=20, deadline=None)
@given(value=st.sampled_from([0, 1, -1]), dtype=st.sampled_from(["int32", "int8", "int64"]),
       width=st.lists(st.integers(0, 2), min_size=4, max_size=4).filter(any))
def test_integer_pad_is_not_named(value, dtype, width):
    """pad_value -1.5 on int8 is written -1, like pad_value -1: the value is not recoverable."""
    func = topi.lower("nn.pad", [((3, 4), dtype)], pad_width=width, pad_value=value)
    assert _ops(func) == []


def test_float_pad_keeps_its_value():
    func = topi.lower("nn.pad", [((3, 4), "float32")], pad_width=[1, 0, 0, 2], pad_value=-1.5)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.pad"
    assert op.to_json()["attrs"] == {"pad_width": [1, 0, 0, 2], "pad_value": -1.5, "pad_mode": "constant"}


# ---------------------------------------------------------------- reindex after block_layout
# Fixtures printed by TVM 0.27 (gen_ops.py, OPINFO_SCHEDULE=reindex,block_layout, seed 9105).
from fixture_util import assert_same_values, fixture_func  # noqa: E402
from opinfo.normalize import normalize  # noqa: E402
from tir.builder import Builder  # noqa: E402
from tir.stmt import IterKind  # noqa: E402


def _json_ops(func):
    return [(op.name, op.to_json()["attrs"]) for op in opinfo.analyze(func).ops]


@pytest.mark.parametrize("name, want", [
    # the block's iteration order permuted, then its output reindexed: the copy transposes
    ("s7e_reindex_power_transposed", ("power", {})),
    # the kernel's flip reindexed into a transposed buffer; its unit kernel axis folded to 0
    ("s7e_reindex_conv2d_transpose", ("nn.conv2d_transpose", {
        "strides": [2, 1], "padding": [0, 1, 0, 0], "output_padding": [0, 0], "dilation": [1, 1], "groups": 1,
        "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW"})),
    # the channel reduction (extent 1) made spatial by transform_block_layout
    ("s7e_block_layout_conv3d_transpose", ("nn.conv3d_transpose", {
        "strides": [1, 1, 1], "padding": [0, 2, 2, 0, 2, 1], "output_padding": [0, 0, 0], "dilation": [1, 1, 1],
        "groups": 1, "data_layout": "NCDHW", "kernel_layout": "IODHW", "out_layout": "NCDHW"})),
])
def test_transposed_reindex_recognised(name, want):
    func = fixture_func(name)
    flat = normalize(func)
    verify(flat)
    assert not any(b.name.endswith("_reindex") for b in flat.blocks())
    assert_same_values(func, flat)
    assert _json_ops(func) == [want]


def test_unit_spatial_variable_of_a_reduction_becomes_reduce():
    func = fixture_func("s7e_block_layout_conv3d_transpose")
    (compute,) = [b for b in func.blocks() if b.name == "compute"]
    assert sum(iv.kind == IterKind.REDUCE for iv in compute.iter_vars) == 3
    (flat,) = [b for b in normalize(func).blocks() if b.name == "compute"]
    assert sum(iv.kind == IterKind.REDUCE for iv in flat.iter_vars) == 4  # the input channel, extent 1


def test_transposing_copy_of_a_fused_kernel_stays_an_op():
    """add then permute_dims in one kernel: the transposing copy is permute_dims, not a reindex."""
    b = Builder()
    x, y = b.placeholder((3, 4, 5), "float32", "x"), b.placeholder((3, 4, 5), "float32", "y")
    s = topi.lower_into(b, "add", [x, y])
    out = topi.lower_into(b, "permute_dims", [s], axes=[2, 0, 1])
    func = b.build([x, y], [out])
    assert [n for n, _ in _json_ops(func)] == ["add", "permute_dims"]


# ---------------------------------------------------------------- fuse,cache (seed 9102)
def test_predicate_equal_to_a_non_affine_binding_is_dropped():
    """``o * 2 + f // n < 7`` (a symbolic loop fused, split): literally the binding of an
    iterator of extent 7, so the block's domain already says it."""
    func = fixture_func("s7e_cache_read_symbolic_split_transpose")
    flat = normalize(func)
    assert flat is not None
    assert _json_ops(func) == [("permute_dims", {"axes": [1, 0]})]


def test_predicate_not_equal_to_the_binding_is_kept():
    """The same bound on a different expression may drop elements: not normalized."""
    edit = lambda t: t.replace("T.where(ax0_0 * T.int64(2) + ax0_1_ax1_fused // n < T.int64(7))",
                               "T.where(ax0_0 * T.int64(2) + ax0_1_ax1_fused // n < T.int64(6))")
    func = fixture_func("s7e_cache_read_symbolic_split_transpose", edit)
    assert normalize(func) is None
    assert _json_ops(func) == []


def test_copy_chain_keeps_the_op_block():
    """x -> T_transpose_local (cache_write, scope local) -> T_transpose: either copy could be the
    cache; the one named after the cache buffer goes, the T_transpose block (its tag) stays."""
    func = fixture_func("s7e_cache_write_identity_transpose")
    assert [b.name for b in normalize(func).blocks()] == ["T_transpose"]
    assert _json_ops(func) == [("permute_dims", {"axes": [0, 1, 2, 3]})]


# ---------------------------------------------------------------- bind,storage (seed 9104)
def test_fused_symbolic_bound_predicate_is_dropped():
    """``f < n * 21`` over ``v = f // (n * 7)`` of extent 3: exactly ``v < 3``."""
    func = fixture_func("s7e_bind_symbolic_one_hot")
    assert normalize(func) is not None
    assert _json_ops(func) == [("one_hot", {"depth": 3, "axis": 0, "on_value": 1.0, "off_value": 0.0})]


@pytest.mark.parametrize("bound", ["n * T.int64(22)", "n * T.int64(14) + T.int64(1)", "n * T.int64(20)"])
def test_other_fused_symbolic_bounds_are_kept(bound):
    """A bound that is not the binding's extent times its divisor may drop (or add) elements."""
    edit = lambda t: t.replace("< n * T.int64(21))", f"< {bound})")
    func = fixture_func("s7e_bind_symbolic_one_hot", edit)
    assert normalize(func) is None
    assert _json_ops(func) == []


# ---------------------------------------------------------------- decompose_padding,inline (seed 9106)
def test_split_interior_copy_of_decompose_padding_merges():
    """The interior copy over split loops keeps ``2 <= o * 2 + i and o < 4`` for the binding
    ``o * 2 + i - 2`` of extent 6: a lower side and an offset split bound, no element dropped."""
    func = fixture_func("s7e_decompose_padding_split_interior")
    flat = normalize(func)
    assert "data_pad_pad_const" not in [b.name for b in flat.blocks()]
    assert _json_ops(func) == [("nn.conv2d_transpose", {
        "strides": [1, 1], "padding": [0, 0, 0, 0], "output_padding": [0, 0], "dilation": [1, 1], "groups": 2,
        "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW"})]


@pytest.mark.parametrize("pred, leading", [
    ("T.int64(2) <= i3_0 * T.int64(2) + i3_1 and i3_0 < T.int64(3)", True),
    ("T.int64(3) <= i3_0 * T.int64(2) + i3_1 and i3_0 < T.int64(4)", False)])
def test_interior_copy_dropping_elements_is_not_merged(pred, leading):
    """A copy of the interior's first 4 columns of 6 runs a leading part of its domain: since
    session 41 (symbolic batch left whole, ``predicates.prefix_box``) it is the copy over that
    part, as with a static batch, and the function normalizes to the same values; one
    dropping the first column does not normalize. Neither is a convolution of ``x``."""
    edit = lambda t: t.replace("T.int64(2) <= i3_0 * T.int64(2) + i3_1 and i3_0 < T.int64(4)", pred)
    func = fixture_func("s7e_decompose_padding_split_interior", edit)
    flat = normalize(func)
    if leading:
        rng = np.random.default_rng(0)
        args = [rng.normal(size=[2 if const_of(s) is None else const_of(s) for s in b.shape]).astype("float32")
                for b in func.buffers[:-1]]
        np.testing.assert_allclose(tir.run(flat, *args), tir.run(func, *args), rtol=1e-6)
    else:
        assert flat is None
    assert _json_ops(func) == []


def test_offset_split_bound_is_implied():
    """``o < 4`` over loops o (5) and i (2) for ``v = o * 2 + i - 2`` of extent 6, not ``o < 3``."""
    func = fixture_func("s7e_decompose_padding_split_interior")
    realizes = []
    post_order_visit(func.body, lambda n: realizes.append(n) if isinstance(n, BlockRealize) else None)
    (realize,) = [r for r in realizes if r.block.name == "data_pad"]
    dom = loop_domain(func)
    _, upper = conjuncts(realize.predicate)
    assert implied(upper, realize, dom)
    assert not implied(attrs.evolve(upper, b=IntImm(upper.b.dtype, 3)), realize, dom)
