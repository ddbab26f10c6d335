"""Copies the readers read through (:mod:`opinfo.partial_copy`), on real TVM 0.27 output
(fixtures ``s16_*``):

- ``read_at`` copies, per tile of the consumer, only the elements it reads: a strided
  convolution's every other row, a pool's every other column, one element per reduction
  step inside the convolution's loops;
- ``reindex_cache_read`` gathers what a pool reads into a buffer indexed by the pool's own
  variables (``S[v, r] = P[v * 2 + r]``);
- ``cache_index`` stores the pad's guard in a ``bool`` buffer the pad reads.

Each is recognised; mutants in which a reader loads an element the copy never stores, or
the source changes after the copy ran, keep the copy (and abstain).
"""
from __future__ import annotations

import tir
from tir.expr import BufferLoad
from tir.functor import post_order_visit
from tir.topi import lower
from opinfo.normalize import normalize
from opinfo.partial_copy import read_through_copies
from opinfo.realized_domain import shrink_reductions

from tests.fixture_util import assert_same_values, fixture_func, fixture_ops

STRIDED = "s16_read_at_conv2d_strided"
ELEMENT = "s16_read_at_conv2d_element_symbolic"
GATHER = "s16_reindex_cache_max_pool3d"
INDEX = "s16_cache_index_avg_pool2d"
POOL1D = "s16_read_at_max_pool1d_symbolic"


def _loaded_names(func) -> set:
    found: set = set()
    for blk in func.blocks():
        post_order_visit(blk.body, lambda n: found.add(n.buffer.name) if isinstance(n, BufferLoad) else None)
    return found


def _alloc_names(func) -> set:
    return {b.name for blk in func.blocks() for b in blk.alloc_buffers}


def test_read_at_tiles_of_a_strided_convolution():
    assert fixture_ops(STRIDED) == [("nn.conv2d", {
        "strides": (2, 2), "padding": (0, 2, 0, 0), "dilation": (2, 1), "groups": 4,
        "data_layout": "NHWC", "kernel_layout": "OHWI", "out_layout": "NHWC"})]
    # two of the three columns a tile needs copied: the third is read but never stored
    assert fixture_ops(STRIDED, "T.grid(1, 1, 3, 2)", "T.grid(1, 1, 2, 2)") == []


def test_read_at_element_copies_inside_the_reduction():
    assert fixture_ops(ELEMENT) == [("nn.conv2d", {
        "strides": (1, 2), "padding": (0, 1, 0, 0), "dilation": (2, 1), "groups": 2,
        "data_layout": "NHWC", "kernel_layout": "HWIO", "out_layout": "NHWC"})]


def test_read_at_of_a_pool_copies_the_columns_it_reads():
    assert fixture_ops(POOL1D) == [("nn.max_pool1d", {
        "pool_size": (1,), "strides": (2,), "dilation": (1,), "padding": (0, 0), "ceil_mode": False,
        "count_include_pad": False, "layout": "NCW", "out_layout": "NCW"})]
    # the pool reads the odd columns, the copy stores columns 0..6: column 7 is garbage
    assert fixture_ops(POOL1D, "v_ax2 * T.int64(2) + v_rv0]", "v_ax2 * T.int64(2) + v_rv0 + T.int64(1)]") == []


def test_reindex_cache_gather_is_read_through():
    assert fixture_ops(GATHER) == [("nn.max_pool3d", {
        "pool_size": (1, 3, 3), "strides": (2, 2, 1), "dilation": (1, 2, 1), "padding": (0, 1, 1, 0, 1, 1),
        "ceil_mode": True, "count_include_pad": False, "layout": "NDHWC", "out_layout": "NDHWC"})]
    func = fixture_func(GATHER)
    norm = normalize(func)
    assert not any(name.startswith("pad_temp_local") for name in _alloc_names(norm))
    assert_same_values(func, norm, engine_a="c")


def test_cache_index_guard_is_inlined():
    # TVM's function copies ``x`` into the transposed cache ``x_local`` past the end of an
    # inner axis: flattened as its code runs, ``x_local[c, 10, 7, n]`` is ``x_local[c + 1, 0,
    # 0, n]``, which gets another element's value after the iteration that copies it. The
    # element lies in the padding nothing reads: no static rule shows it, running does
    # (:mod:`opinfo.copies_in_place`, since session 65: the function as its code runs and
    # with the copies read through leave the same outputs), so the op is named
    assert fixture_ops(INDEX) == [("nn.avg_pool2d", {
        "pool_size": (3, 2), "strides": (1, 2), "dilation": (1, 1), "padding": (1, 1, 1, 0), "ceil_mode": False,
        "count_include_pad": False, "layout": "NHWC", "out_layout": "NHWC"})]
    # the normalized function (index buffers read through) is still the op
    norm = normalize(fixture_func(INDEX))
    assert not any(name.startswith("index_var") for name in _loaded_names(norm))
    fresh = lower("nn.avg_pool2d", [((2, 9, 10, 7), "float32")], pool_size=(3, 2), strides=(1, 2),
                  dilation=(1, 1), padding=(1, 1, 1, 0), layout="NHWC")
    assert_same_values(fresh, norm)


_REWRITTEN = """
@T.prim_func
def main(x: T.Buffer((8,), "float32"), out: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((8,))
    B_local = T.alloc_buffer((8,), scope="local")
    for i in range(8):
        with T.block("B"):
            v = T.axis.spatial(8, i)
            B[v] = x[v] + T.float32(1)
    for i in range(4):
        with T.block("B_local"):
            v = T.axis.spatial(4, i)
            B_local[v * 2] = B[v * 2]
    for i in range(8):
        with T.block("B_again"):
            v = T.axis.spatial(8, i)
            B[v] = x[v] * T.float32(2)
    for i in range(4):
        with T.block("out"):
            v = T.axis.spatial(4, i)
            out[v] = B_local[v * 2] + B[v]
"""


def _parsed(text: str):
    return tir.parse("from tvm.script import tir as T\n" + text)


def test_a_copy_whose_source_changes_afterwards_stays():
    func = _parsed(_REWRITTEN)
    assert read_through_copies(func) is func
    # without the second write the readers may read B directly
    alone = _parsed(_REWRITTEN.replace("""    for i in range(8):
        with T.block("B_again"):
            v = T.axis.spatial(8, i)
            B[v] = x[v] * T.float32(2)
""", ""))
    through = read_through_copies(alone)
    assert through is not alone and "B_local" not in _alloc_names(through)
    assert_same_values(alone, through)


def test_a_copy_read_where_it_stored_nothing_stays():
    func = _parsed(_REWRITTEN.replace("out[v] = B_local[v * 2] + B[v]", "out[v] = B_local[v * 2 + 1] + B[v]"))
    assert read_through_copies(func) is func


# ---------------------------------------------------------------- realized reduction boxes

ARGMAX = "s16_pad_einsum_argmax_split"
MAX = "s16_pad_einsum_max_split"


def _domains(func) -> dict:
    return {blk.name: [int(iv.dom.extent.value) for iv in blk.iter_vars] for blk in func.blocks()
            if blk.iter_vars}


def test_reduction_split_by_the_unpadded_extent_gets_that_domain():
    func = fixture_func(ARGMAX)
    doms = _domains(shrink_reductions(func))
    # pad_einsum padded 6 to 8; the split loops run [0, 6): the domain says so now, and the
    # copy out of the scalar accumulator (bound T.axis.spatial(8, 0)) runs one point
    assert doms["x_red_temp"] == [6] and doms["x_red"] == [1]
    assert _domains(func)["x_red_temp"] == [8]
    assert_same_values(func, shrink_reductions(func))
    # the pad producer, read only where its guard holds, is read through
    assert "x_pad" not in _loaded_names(normalize(func))


def test_padded_reduction_read_through_its_pad():
    assert fixture_ops(MAX) == [("max", {"axis": (0,), "keepdims": False})]
    # the split reaches one padded element (0.0 joins the max): abstain
    assert fixture_ops(MAX, "< T.int64(6) and k0_1_0", "< T.int64(7) and k0_1_0") == []


def test_a_box_run_twice_or_with_holes_is_left_alone():
    func = fixture_func(ARGMAX, lambda t: t.replace("k0_0 * T.int64(3) + k0_1_0 * T.int64(3) + k0_1_1",
                                                    "k0_0 * T.int64(2) + k0_1_0 * T.int64(3) + k0_1_1"))
    assert _domains(shrink_reductions(func))["x_red_temp"] == [8]
    func = fixture_func(ARGMAX, lambda t: t.replace("k0_0 * T.int64(3) + k0_1_0 * T.int64(3) + k0_1_1",
                                                    "k0_0 * T.int64(4) + k0_1_0 * T.int64(3) + k0_1_1"))
    assert _domains(shrink_reductions(func))["x_red_temp"] == [8]


GATHER_SPLIT = "s16_reindex_cache_avg_pool3d_split"


def test_gather_read_by_a_split_reduction_within_its_domain():
    # the pool's non-divisible split runs past its domain; its predicate, dropped as
    # implied by the domain, kept it inside what the gather stored
    assert fixture_ops(GATHER_SPLIT) == [("nn.avg_pool3d", {
        "pool_size": (1, 3, 3), "strides": (2, 2, 1), "dilation": (1, 2, 1), "padding": (0, 1, 1, 0, 1, 1),
        "ceil_mode": True, "count_include_pad": True, "layout": "NDHWC", "out_layout": "NDHWC"})]
    # the gather skips the last kernel column the pool reads: the copy stays, abstain
    old = 'T.int64(2), T.int64(1), T.int64(3), T.int64(3)):\n            with T.block("pad_temp_shared")'
    assert fixture_ops(GATHER_SPLIT, old, old.replace("T.int64(3)):", "T.int64(2)):")) == []
