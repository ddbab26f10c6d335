"""Session 52: ``pad_einsum`` followed by a cache of a padded buffer (``write_at``/``read_at``).

``pad_einsum`` pads an op's domain with a pad producer per input (``x_pad``) and a crop of
the padded output (``C = C_pad[...]``). A cache stage after it puts a copy between the op
and the crop (``C_pad_shared -> C_pad -> C``) or between a pad and the op (``x_pad ->
x_pad_local``); read through, the cache keeps the name of the block that wrote it (the pad
block ``x_pad`` then stores ``x_pad_local``). ``unpad_einsum`` takes the scope suffix TVM's
cache stages append as part of pad_einsum's names and undoes one copy per pass; the
normalizer unpads once more after the cache copies are read through; a lone copy op is
checked against the compute tags of the blocks that are no pad artifacts.

Fixtures (TVM 0.27, ``tools/tvm_oracle`` with OPINFO_SCHEDULE=pad_einsum,write_at,...):
``sin`` over a symbolic batch with the padded output written back through a shared cache,
``leakyrelu`` reading its padded input through a local cache, ``squeeze`` writing through a
local cache, ``astype`` over a symbolic batch writing through a shared cache.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.normalize import normalize
from tests.fixture_util import assert_same_values, fixture_func, fixture_ops, replaced
from tir import topi

SIN = "s52_pad_einsum_write_at_sin_symbolic"
LEAKY = "s52_pad_einsum_read_at_leakyrelu"
SQUEEZE = "s52_pad_einsum_write_at_squeeze"


def test_write_back_through_a_cache_named():
    assert fixture_ops(SIN) == [("sin", {})]


def test_write_back_through_a_cache_leaves_one_block():
    norm = normalize(fixture_func(SIN))
    assert [b.name for b in norm.blocks() if b is not norm.root_block] == ["compute"]


def test_padded_input_read_through_a_cache_named():
    assert fixture_ops(LEAKY) == [("nn.leakyrelu", {"alpha": 0.05})]


def test_leakyrelu_fixture_computes_the_op():
    plain = topi.lower("nn.leakyrelu", [((6, 8), "float32")], alpha=0.05)
    assert_same_values(fixture_func(LEAKY), plain)


def test_copy_op_named_past_its_pad_blocks():
    ops = fixture_ops(SQUEEZE)
    assert [(name, {k: list(v) for k, v in attrs.items()}) for name, attrs in ops] == [("squeeze", {"axis": [1, 3]})]


def test_crop_reading_past_the_unpadded_part_is_not_named():
    # the crop reads one column further: its last column is padding, no squeeze
    old = "T_squeeze[v0, v1] = T_squeeze_pad[v0, v1]"
    assert fixture_ops(SQUEEZE, old, "T_squeeze[v0, v1] = T_squeeze_pad[v0, v1 + T.int64(1)]") == []


def test_cache_of_another_name_is_no_pad():
    # a copy named like no cache of the padded buffer is not taken for pad_einsum's: the
    # pad and crop blocks stay, and the function (pad, squeeze, slice) is not named
    renamed = replaced(SQUEEZE).replace("T_squeeze_pad_local", "T_squeeze_padded_tmp")
    (_, func), = tir.parse(renamed).prim_funcs()
    assert opinfo.analyze(func).ops == ()


def test_symbolic_sin_runs_like_sin():
    func = fixture_func(SIN)
    x = np.random.default_rng(52).standard_normal((3, 3, 3, 2)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), np.sin(x), rtol=1e-5, atol=1e-6)


CAST = "s52_pad_einsum_write_at_cast_symbolic"


def test_symbolic_batch_restored_block_rebuilt():
    # the op restored over a symbolic batch keeps loops (n, 16) and a predicate on its
    # padded axis: its nest is rebuilt over (n, 9) (a symbolic extent equal to its loop's)
    assert fixture_ops(CAST) == [("astype", {"dtype": "uint8"})]
    norm = normalize(fixture_func(CAST))
    assert [b.name for b in norm.blocks() if b is not norm.root_block] == ["compute"]


TRANSPOSE = "s52_pad_einsum_cache_inlined_transpose"


def test_copy_op_in_a_block_named_after_an_input_cache():
    # the transpose was inlined into x's cache copy (block ``x_shared``), whose buffer
    # pad_einsum then replaced: no block carries the op's tag, its output buffer does
    assert fixture_ops(TRANSPOSE) == [("permute_dims", {"axes": (1, 0, 2)})]


def test_output_named_as_no_op_keeps_the_copy_unnamed():
    # the output buffer named as no compute: a transposing copy with no tag stays unnamed
    text = replaced(TRANSPOSE).replace("T_transpose", "out_buf")
    (_, func), = tir.parse(text).prim_funcs()
    assert opinfo.analyze(func).ops == ()


EXPAND = "s52_pad_einsum_expand_dims_symbolic"


def test_padded_op_storing_a_unit_axis_at_zero_restored():
    # expand_dims_pad[0, v0, v1] = x_pad[v0, v1]: the added axis is stored at 0, extent 1 in
    # the padded buffer and in the output
    assert fixture_ops(EXPAND) == [("expand_dims", {"axis": (0,)})]
    x = np.random.default_rng(53).standard_normal((5, 4)).astype("float32")
    np.testing.assert_array_equal(tir.run(fixture_func(EXPAND), x), x[None])


def test_unit_axis_at_one_is_not_restored():
    # an index 1 on the padded buffer's unit axis stores outside it: no expand_dims
    old = "expand_dims_pad[T.int64(0), v0, v1] = x_pad[v0, v1]"
    assert fixture_ops(EXPAND, old, old.replace("T.int64(0), v0", "T.int64(1), v0")) == []
