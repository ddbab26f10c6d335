"""Session 38: ``decompose_padding`` with ``compute_at`` and symbolic splits (TVM 0.27 fixtures).

Each section has a TVM-printed fixture that is now named, the check that it computes the op,
and mutants that must abstain: a grouped conv1d whose batch is split four times (the fill
reruns under the convolution's loops), a conv2d_transpose whose interior copy sits inside the
convolution's reduction loops (moved only when every element read was copied by then), an
avg_pool3d whose fill writes only the rows read, a conv2d whose fill a predicate cut to the
columns read, an avg_pool3d whose pad block computes only the rows a strided pool reads, and
a symbolic conv2d whose mutant reads like a stride whose output rows do not match.

First fixture: a grouped ``conv1d`` (NWC, padding (0, 2), groups 2) whose batch ``n`` is
split into four loops (``(n + 149) // 150``, 3, 5, 2, 5: each split adds its own bound to
every predicate) and whose pad block was decomposed into a fill (``pad_temp_pad_const``)
and an interior copy, both placed under the convolution's loops. The fill then runs again
for the rows two output tiles share, and a channel split by 2 is cut to 3 by
``ax0_0 * 2 + ax0_1 < 3``. Running again is harmless: the fill stores a constant and the
interior copy that overwrites part of it is in the next nest of the root
(``predicates._recomputable``). A block placed under the batch loops that reads none of
them is bounded by ``n`` and the batch's split extents, each at least 1
(``predicates._least``).
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest

import opinfo
import tir
from opinfo import predicates
from tests.fixture_util import fixture_func, fixture_ops
from tir import topi
from tir.expr import Add, FloorDiv, const

NAME = "s38_conv1d_symbolic_fill_compute_at"
CONV = ("nn.conv1d", {"strides": (1,), "padding": (0, 2), "dilation": (1,), "groups": 2,
                      "data_layout": "NWC", "kernel_layout": "WIO", "out_layout": "NWC"})


def test_named_as_the_grouped_conv1d():
    assert fixture_ops(NAME) == [CONV]


def _assert_computes(name, op_name, shapes, seed, tol, engine="interp", **attrs_):
    """Fixture ``name`` run by ``engine`` on float32 inputs of ``shapes`` (drawn in order from
    ``seed``) equals ``op_name`` lowered with ``attrs_`` and interpreted."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype("float32") for shape in shapes]
    plain = topi.lower(op_name, [(shape, "float32") for shape in shapes], **attrs_)
    np.testing.assert_allclose(tir.run(fixture_func(name), *arrays, engine=engine), tir.run(plain, *arrays),
                               rtol=tol, atol=tol)


def test_fixture_computes_the_conv1d():
    _assert_computes(NAME, "nn.conv1d", [(5, 6, 6), (3, 3, 2)], 38, 1e-5, data_layout="NWC", kernel_layout="WIO",
                     groups=2, padding=[0, 2])


def test_fill_cut_short_is_not_named():
    # the fill leaves channels 2 and 5 of the padded rows unwritten: the convolution reads them
    old = ("T.where(ax0_0 * T.int64(2) + ax0_1 < T.int64(3) and nn_0_0_0_0 * T.int64(150) + nn_0_0_0_1 * "
           "T.int64(50) + nn_0_0_1 * T.int64(10) + nn_0_1 * T.int64(5) + nn_1 < n and")
    new = old.replace("< T.int64(3)", "< T.int64(2)")
    assert fixture_ops(NAME, old, new) == []


def test_fill_sharing_a_nest_with_another_writer_is_not_rerun():
    # with the interior copy moved into the fill's nest, a fill run again would overwrite it
    func = fixture_func(NAME)
    writers, nests = {}, predicates._root_nests(func)
    blocks = {b.name: b for b in func.blocks()}
    fill, copy = blocks["pad_temp_pad_const"], blocks["pad_temp"]
    key = id(fill.body.buffer)
    writers[key] = {id(fill), id(copy)}
    assert predicates._recomputable(fill, writers, nests)
    assert not predicates._recomputable(fill, writers, {**nests, id(copy): nests[id(fill)]})
    assert not predicates._recomputable(fill, writers)  # no nests known: the old rule


def test_least_value_of_size_forms():
    n = tir.SizeVar("n", tir.dtype.int64)
    ceil3 = FloorDiv(Add(n, const(2, "int64")), const(3, "int64"))
    assert predicates._least({n: 1}) == 1
    assert predicates._least({ceil3: 1}) == 1
    assert predicates._least({n: 2, predicates.ONE: 3}) == 5
    assert predicates._least({n: -1, predicates.ONE: 9}) is None  # n - 9 has no least value
    assert predicates._least({FloorDiv(n, const(3, "int64")): 1}) is None  # 0 at n = 1: no size


def test_analyze_reports_out_ewise_fusable():
    assert opinfo.analyze(fixture_func(NAME)).kind == "out_ewise_fusable"


# ---------------------------------------------------------------- the fill's copy moved
#
# A grouped conv2d_transpose (IOHW, padding (1, 0, 0, 0), groups 2) with a symbolic batch:
# decompose_padding's fill in a nest of its own, the interior copy placed by compute_at
# inside the convolution's reduction loops (``for dc, dh``), the kernel transform under the
# batch loops it does not read. The copy is moved to a nest of its own
# (:func:`opinfo.distribute._distributed`) only when every element the convolution reads of
# what it copies was copied by then: before, the fill's zero is what is read there.

TRANSPOSE = "s38_conv2d_transpose_fill_compute_at"
COPY_LOOPS = "for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(1), T.int64(1), T.int64(2)):"


def test_transpose_with_copy_at_reduction_loops_is_named():
    assert fixture_ops(TRANSPOSE) == [("nn.conv2d_transpose", {
        "strides": (1, 1), "padding": (1, 0, 0, 0), "output_padding": (0, 0), "dilation": (1, 1), "groups": 2,
        "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "NCHW"})]


def test_transpose_fixture_computes_the_op():
    # engine c: the interpreter walks compute_at nests slowly
    _assert_computes(TRANSPOSE, "nn.conv2d_transpose", [(2, 4, 9, 6), (4, 2, 3, 2)], 3, 1e-4, engine="c",
                     groups=2, padding=[1, 0, 0, 0])


def test_copy_of_one_column_per_iteration_is_read_before_it_is_copied():
    # the copy still covers the interior (column w at iteration w), but the convolution
    # reads column w + 1 at iteration w, where the fill's zero still stands
    text_old, text_new = COPY_LOOPS, COPY_LOOPS.replace("T.int64(2)):", "T.int64(1)):")
    mutant = fixture_func(TRANSPOSE, lambda t: t.replace(text_old, text_new))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 9, 6)).astype("float32")
    w = rng.standard_normal((4, 2, 3, 2)).astype("float32")
    assert not np.allclose(tir.run(mutant, x, w, engine="c"), tir.run(fixture_func(TRANSPOSE), x, w, engine="c"),
                           atol=1e-3)
    assert fixture_ops(TRANSPOSE, text_old, text_new) == []


# ---------------------------------------------------------------- a fill of what is read
#
# decompose_padding's fill of an avg_pool3d's pad buffer (9 x 10 padded rows) runs over the
# 9 rows the pool reads only; alone in its nest, it is given loops over its whole domain
# (the row added is read by nothing), and the fill and the interior copy then merge into
# one pad block whose shape gives the after-padding (1: with stride 2, 0 gives the same
# output extent).

POOL = "s38_avg_pool3d_partial_fill"


def test_pool_whose_fill_covers_what_is_read_is_named():
    assert fixture_ops(POOL) == [("nn.avg_pool3d", {
        "pool_size": (3, 3, 1), "strides": (1, 2, 2), "dilation": (2, 2, 1), "padding": (0, 0, 0, 1, 1, 0),
        "ceil_mode": False, "count_include_pad": True, "layout": "NCDHW", "out_layout": "NCDHW"})]


def test_fill_short_of_what_is_read_is_not_named():
    # the fill stops short of the padded depth row the pool reads: nothing writes that row
    old = "for u, ax0, ax1, ax0_1, ax1_1, ax2_0, ax2_1 in T.grid(1, T.int64(2), T.int64(5), T.int64(9), T.int64(9),"
    new = old.replace("T.int64(9), T.int64(9),", "T.int64(8), T.int64(9),")
    assert fixture_ops(POOL, old, new) == []


def test_fill_short_of_a_row_the_copy_writes_is_not_moved():
    # rows 0..8 of the height are copied from x and read; a fill of rows 0..7 only still
    # leaves everything read written, but what the fill skips is read: it is not moved
    # (and the pair is not merged), so the pool abstains
    old = "for u, ax0, ax1, ax0_1, ax1_1, ax2_0, ax2_1 in T.grid(1, T.int64(2), T.int64(5), T.int64(9), T.int64(9),"
    new = old.replace("T.int64(9), T.int64(9),", "T.int64(9), T.int64(8),")
    assert fixture_ops(POOL, old, new) == []


# ---------------------------------------------------------------- a fill cut to what is read
#
# A grouped NHWC conv2d (OHWI, strides (1, 2), dilation (2, 1), padding (0, 1, 0, 1)) whose
# pad buffer is 9 columns wide: with stride 2 and a kernel 2 wide the convolution reads
# columns 0..7 only, and decompose_padding's fill, placed under the convolution's loops,
# runs over those. Once the predicates go, the fill is a block over 8 of the 9 columns
# (:func:`opinfo.predicates.prefix_box`); merge_padding takes it as the fill of the whole
# intermediate (:func:`opinfo.padding._widened`: nothing reads column 8), and the pad block
# it builds has the buffer's shape, which gives the after-padding.

FILL_OF_READ = "s38_conv2d_fill_of_read_columns"


def test_fill_of_the_read_columns_is_merged_with_its_copy():
    assert fixture_ops(FILL_OF_READ) == [("nn.conv2d", {
        "strides": (1, 2), "padding": (0, 1, 0, 1), "dilation": (2, 1), "groups": 4,
        "data_layout": "NHWC", "kernel_layout": "OHWI", "out_layout": "NHWC"})]


def test_fill_of_the_read_columns_computes_the_conv():
    _assert_computes(FILL_OF_READ, "nn.conv2d", [(2, 9, 7, 4), (4, 1, 2, 1)], 6, 1e-5, engine="c",
                     data_layout="NHWC", kernel_layout="OHWI", groups=4, strides=[1, 2], dilation=[2, 1],
                     padding=[0, 1, 0, 1])


def test_fill_short_of_a_read_column_is_not_widened():
    # the fill cut to columns 0..5 of the 8 read: columns 6 and 7 are the copy's, but a fill
    # is widened only when nothing reads past it (what it would add must be unread), so the
    # pair stays apart and the convolution abstains
    old = "T.where(yy_1_0 * T.int64(5) + yy_0 * T.int64(4) + yy_1_1_0 * T.int64(3) + yy_1_1_1 < T.int64(9) and"
    new = old.replace("T.where(", "T.where(xx_0 * T.int64(4) + xx_1 * T.int64(2) + ax0 < T.int64(6) and ")
    assert fixture_ops(FILL_OF_READ, old, new) == []


# ---------------------------------------------------------------- a pad of the rows read
#
# An avg_pool3d with strides (2, 2, 1) whose pad block computes only the depth and height
# rows the pool reads (every other one) under a T.where bounding the pool's output columns:
# alone in its nest, it is given loops over its whole domain, as nothing reads a row it
# skipped (:func:`opinfo.distribute._distributed`, for an intermediate only).

STRIDED_PAD = "s38_avg_pool3d_strided_pad_region"


def test_pad_of_the_rows_a_strided_pool_reads_is_named():
    assert fixture_ops(STRIDED_PAD) == [("nn.avg_pool3d", {
        "pool_size": (1, 1, 2), "strides": (2, 2, 1), "dilation": (2, 1, 2), "padding": (0, 0, 1, 0, 0, 1),
        "ceil_mode": False, "count_include_pad": True, "layout": "NDHWC", "out_layout": "NDHWC"})]


def test_pad_skipping_a_row_the_pool_reads_is_not_named():
    # the pad block's T.where now drops the pool's last output column: read, never written
    old = "T.where((ax3_0_0 * T.int64(4) + (ax3_0_1_0 * T.int64(2) + ax3_0_1_1)) * T.int64(2) + ax3_1 < T.int64(7))"
    new = old.replace("< T.int64(7))", "< T.int64(6))")
    assert fixture_ops(STRIDED_PAD, old, new) == []


_SKIPPING = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"), z: T.Buffer((8,), "float32")):
    t = T.alloc_buffer((8,))
    for i0, i1 in T.grid(4, 2):
        with T.block("OUT"):
            v = T.axis.spatial(8, i0 * 2 + i1)
            T.where(i0 * 2 + i1 < 6)
            OUT[v] = x[v] + T.float32(1)
    for i in range(8):
        with T.block("z"):
            v = T.axis.spatial(8, i)
            z[v] = x[v]
"""


@pytest.mark.parametrize("out, moved", [("t", True), ("y", False)])
def test_block_skipping_unread_elements_is_moved_only_for_an_intermediate(out, moved):
    # a block alone in its nest whose T.where skips elements 6 and 7, which nothing reads:
    # rebuilt over its whole domain for an intermediate; for a parameter those elements are
    # the result (left unwritten), and the nest stays as it is
    from opinfo.distribute import distribute
    func = tir.parse(_SKIPPING.replace("OUT", out))
    assert (distribute(func) is not func) == moved


# ---------------------------------------------------------------- an output axis it cannot make
#
# A grouped conv2d over a symbolic batch (strides (3, 1), padding (0, 0, 2, 1), dilation
# (2, 1)); a mutant reading rows ``v_yy * 2`` instead of ``v_yy * 3`` reads like a stride of 2,
# but conv2d with stride 2 over the 8 padded rows makes 4 output rows, and the function has
# 3: the answer cannot be the function's. verify compares the output axes of constant
# extent at two bindings of the batch (a constant axis over a symbolic input may hold at
# one binding only).

SYMBOLIC_CONV = "s38_conv2d_symbolic_decomposed_pad"
ROWS_OLD = "pad_temp[v_nn, v_ff * T.int64(3) + v_rc, v_yy * T.int64(3) + v_ry * T.int64(2), v_xx + v_rx] * y"
ROWS_NEW = "pad_temp[v_nn, v_ff * T.int64(3) + v_rc, v_yy * T.int64(2) + v_ry * T.int64(2), v_xx + v_rx] * y"


def test_symbolic_conv_is_named_with_stride_3():
    (name, attrs), = fixture_ops(SYMBOLIC_CONV)
    assert (name, attrs["strides"], attrs["padding"]) == ("nn.conv2d", (3, 1), (0, 0, 2, 1))


def test_stride_whose_output_has_other_rows_is_refused():
    assert fixture_ops(SYMBOLIC_CONV, ROWS_OLD, ROWS_NEW) == []


def test_verify_refutes_an_answer_making_other_output_rows():
    from opinfo.verify import verify_op
    func = fixture_func(SYMBOLIC_CONV)
    (op,) = opinfo.analyze(func).ops
    stride2 = attrs.evolve(op, attrs={**dict(op.attrs), "strides": (2, 1)})
    mutant = fixture_func(SYMBOLIC_CONV, lambda t: t.replace(ROWS_OLD, ROWS_NEW))
    assert verify_op(mutant, stride2) is False
    assert verify_op(func, op) is True
