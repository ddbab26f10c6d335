"""Pad blocks split by TVM's decompose_padding (fixtures printed by TVM 0.27) are merged
back (:mod:`opinfo.padding`): same values, recognised as the unscheduled op."""
from __future__ import annotations

from hypothesis import given, strategies as st
import numpy as np
import pytest
import tir
from tir.verifier import verify

import opinfo
from opinfo.normalize import normalize
from opinfo.padding import merge_padding
from fixture_util import assert_same_values, fixture_func

CASES = [
    # fixture, op, attrs; what the fixture has besides the fill and the copy
    ("conv2d", "nn.conv2d", {"padding": [2, 1, 1, 2], "strides": [2, 2], "dilation": [1, 2], "groups": 4}),  # tirx
    ("max_pool2d", "nn.max_pool2d", {"padding": [1, 0, 1, 0], "pool_size": [3, 3], "strides": [2, 2],
                                     "dilation": [1, 2], "layout": "NHWC"}),  # tir; split loops
    ("conv3d_offset_where", "nn.conv3d", {"padding": [1, 0, 0, 1, 0, 0], "strides": [2, 1, 2],
                                          "dilation": [2, 1, 1]}),  # copy bound to f - 1 under 1 <= f < 9
    ("conv3d_transpose", "nn.conv3d_transpose", {"padding": [2, 1, 2, 0, 2, 2], "strides": [1, 1, 1],
                                                 "kernel_layout": "IODHW"}),  # fill under T.where; copy of an intermediate
    ("max_pool3d_symbolic", "nn.max_pool3d", {"padding": [1, 0, 1, 0, 0, 0], "pool_size": [2, 1, 2],
                                              "strides": [2, 1, 2], "dilation": [2, 1, 1]}),  # symbolic batch
    ("avg_pool2d_symbolic", "nn.avg_pool2d", {"padding": [1, 0, 1, 0], "pool_size": [2, 2], "strides": [2, 2],
                                              "count_include_pad": False}),  # symbolic batch, offset T.where
    ("conv1d_transpose_symbolic", "nn.conv1d_transpose", {"padding": [1, 0], "strides": [1]}),  # copy split by 4 of 7
    # fill's and copy's block variables permuted (reorder_block_iter_var), parallel and unit loops
    ("conv2d_permuted_vars", "nn.conv2d", {"padding": [1, 3, 3, 3], "strides": [3, 2], "dilation": [2, 2],
                                           "data_layout": "NHWC", "kernel_layout": "HWIO"}),
]


def _static(func) -> bool:
    return all(isinstance(s, tir.IntImm) for b in func.buffers for s in b.shape)


@pytest.mark.parametrize("name, op, attrs", CASES)
def test_decomposed_padding_undone(name, op, attrs):
    func = fixture_func(f"decomposed_pad_{name}")
    merged = merge_padding(func)
    verify(merged)
    assert len(list(merged.blocks())) == len(list(func.blocks())) - 1
    if _static(func):
        assert_same_values(func, merged)
    assert normalize(func) is not None
    (got,) = opinfo.analyze(func).ops
    assert got.name == op
    j = got.to_json()["attrs"]
    assert {k: j[k] for k in attrs} == attrs


def test_merge_is_idempotent_and_keeps_plain_functions():
    merged = merge_padding(fixture_func("decomposed_pad_conv2d"))
    assert merge_padding(merged) is merged
    plain = fixture_func("blockize_conv2d")
    assert merge_padding(plain) is plain


BEFORE = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((3, 5), "float32"), y: T.Buffer((6, 8), "float32")):
    for i, j in T.grid(6, 8):
        with T.block("PadInput_pad_const"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(y[v_i, v_j])
            y[v_i, v_j] = T.float32(1.5)
    for i, j_0, j_1 in T.grid(3, 3, 2):
        with T.block("PadInput"):
            v_i = T.axis.spatial(3, i)
            v_j = T.axis.spatial(5, j_0 * 2 + j_1)
            T.where(j_0 * 2 + j_1 < 5)
            T.reads(x[v_i, v_j])
            T.writes(y[v_i + 1, v_j + 2])
            y[v_i + 1, v_j + 2] = x[v_i, v_j]
"""

EXPECTED = """
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer((3, 5), "float32"), y: T.Buffer((6, 8), "float32")):
    for i, j in T.grid(6, 8):
        with T.block("PadInput"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(x[v_i - 1, v_j - 2])
            T.writes(y[v_i, v_j])
            y[v_i, v_j] = T.if_then_else(1 <= v_i and v_i < 4 and 2 <= v_j and v_j < 7, x[v_i - 1, v_j - 2], T.float32(1.5))
"""


def test_before_expected():
    func = tir.parse(BEFORE)
    tir.assert_structural_equal(merge_padding(func), tir.parse(EXPECTED))
    (got,) = opinfo.analyze(func).ops
    assert (got.name, got.to_json()["attrs"]["pad_width"]) == ("nn.pad", [1, 2, 2, 1])


LEFT_ALONE = [
    # (what, edit of BEFORE): each keeps the two blocks apart (the values may differ from a pad)
    ("fill misses a row", ("for i, j in T.grid(6, 8):", "for i, j in T.grid(5, 8):"),
     ("v_i, v_j = T.axis.remap(\"SS\", [i, j])\n            T.reads()", "v_i = T.axis.spatial(5, i)\n            v_j = T.axis.spatial(8, j)\n            T.reads()")),
    ("fill of a value read from x", ("y[v_i, v_j] = T.float32(1.5)", "y[v_i, v_j] = x[0, 0]")),
    ("copy predicate drops a column", ("T.where(j_0 * 2 + j_1 < 5)", "T.where(j_0 * 2 + j_1 < 4)")),
    ("interior past the end", ("y[v_i + 1, v_j + 2] = x", "y[v_i + 4, v_j + 2] = x")),
    ("copy interleaves (stride 2)", ("y[v_i + 1, v_j + 2] = x", "y[v_i * 2, v_j + 2] = x")),
    ("copy reads what it writes", ("= x[v_i, v_j]", "= x[v_i, v_j] + y[0, 0]")),
]


def _edited(edits) -> str:
    text = BEFORE
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("what, edits", [(c[0], c[1:]) for c in LEFT_ALONE])
def test_forms_left_alone(what, edits):
    func = tir.parse(_edited(edits))
    assert merge_padding(func) is func, what


def test_copy_before_fill_is_left_alone():
    head, fill, copy = BEFORE.split("    for ")
    func = tir.parse(head + "    for " + copy.rstrip() + "\n    for " + fill)
    assert merge_padding(func) is func


def test_third_writer_is_left_alone():
    func = tir.parse(BEFORE + """    for i in range(2):
        with T.block("y_again"):
            v_i = T.axis.spatial(2, i)
            y[v_i, 0] = T.float32(0)
""")
    assert merge_padding(func) is func


def _decomposed_pad(shape, before, after, factor, value) -> str:
    """TVM's nn.pad of a 2-D tensor after decompose_padding, the copy's last loop split by
    ``factor`` (a T.where when it does not divide)."""
    out = [s + b + a for s, b, a in zip(shape, before, after)]
    outer = -(-shape[1] // factor)
    where = f"T.where(j_0 * {factor} + j_1 < {shape[1]})" if shape[1] % factor else ""
    return f"""
from tvm.script import tir as T

@T.prim_func
def f(x: T.Buffer(({shape[0]}, {shape[1]}), "float32"), y: T.Buffer(({out[0]}, {out[1]}), "float32")):
    for i, j in T.grid({out[0]}, {out[1]}):
        with T.block("PadInput_pad_const"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            y[v_i, v_j] = T.float32({value})
    for i, j_0, j_1 in T.grid({shape[0]}, {outer}, {factor}):
        with T.block("PadInput"):
            v_i = T.axis.spatial({shape[0]}, i)
            v_j = T.axis.spatial({shape[1]}, j_0 * {factor} + j_1)
            {where}
            y[v_i + {before[0]}, v_j + {before[1]}] = x[v_i, v_j]
"""


@given(shape=st.tuples(st.integers(1, 4), st.integers(1, 6)), before=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       after=st.tuples(st.integers(0, 2), st.integers(0, 2)), factor=st.integers(1, 4),
       value=st.sampled_from([0.0, -1.0, 2.5]))
def test_decomposed_pad_property(shape, before, after, factor, value):
    """Any padding and split: the merged function gives numpy's pad, recognised as nn.pad with
    its widths; without any padding the two blocks are left alone."""
    func = tir.parse(_decomposed_pad(shape, before, after, factor, value))
    merged = merge_padding(func)
    if before == (0, 0) and after == (0, 0):
        assert merged is func
        return
    verify(merged)
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
    want = np.pad(x, list(zip(before, after)), constant_values=value)
    np.testing.assert_array_equal(tir.run(merged, x), want)
    np.testing.assert_array_equal(tir.run(func, x), want)
    (got,) = opinfo.analyze(func).ops
    j = got.to_json()["attrs"]
    assert (got.name, j["pad_width"], j["pad_value"]) == ("nn.pad", [before[0], after[0], before[1], after[1]], value)


def test_copy_under_a_split_digit_predicate_is_merged_after_the_predicates():
    """TVM 0.27 (decompose_padding then inline): the copy runs under ``1 <= f and ax2_0 < 3
    and f < 7`` for ``v = f - 1`` of extent 5, ``f = ax2_0 * 2 + ax2_1`` -- ``ax2_0 < 3`` is
    ``v < 5`` in digits of the split loop, which only drop_predicates reads; the lower bound
    ``1 <= f`` is ``v >= 0``. normalize merges the pair once the predicates are gone."""
    from opinfo.predicates import drop_predicates

    func = fixture_func("decomposed_pad_avg_pool1d_digit_where")
    assert merge_padding(func) is func
    dropped = drop_predicates(func)
    assert dropped is not None
    merged = normalize(func)
    assert len(list(merged.blocks())) == len(list(func.blocks())) - 1
    assert_same_values(func, merged)
    (got,) = opinfo.analyze(func, conventions=True).ops
    j = got.to_json()["attrs"]
    assert got.name == "nn.avg_pool1d" and j["dilation"] == [2] and j["pool_size"] == [2] and j["padding"][0] == 1


def test_lower_bound_that_drops_elements_is_kept():
    """``2 <= f`` for a variable bound to ``f - 1`` would skip v = 0: not a domain bound."""
    from opinfo.predicates import drop_predicates

    func = fixture_func("decomposed_pad_avg_pool1d_digit_where",
                        lambda t: t.replace("T.where(T.int64(1) <= ax2_0", "T.where(T.int64(2) <= ax2_0"))
    assert drop_predicates(func) is None
