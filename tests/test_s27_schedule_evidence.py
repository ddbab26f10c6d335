"""Evidence a TVM schedule (TVM 0.27) moves or folds, and where opinfo now finds it.

* ``repeat`` with ``axis=None`` on a symbolic batch: the flattening block runs ``n * 18``
  points over a buffer of ``n * 6 * 3``; extents are compared as affine forms, not only
  as printed (:func:`opinfo.affine.equal_extents`).
* ``avg_pool2d`` blockized: TVM folded the width factor of the divisor to a constant over the
  inner block's range; the tie-break between ``count_include_pad`` readings widens only the
  dimensions whose variable the divisor still reads (:mod:`opinfo.recognize.pool_divisor`).
* ``group_norm`` with one channel per group after ``compute_inline`` removed the data's
  grouping reshape: gamma regrouped to (groups, channels / groups) still shows TVM's
  group_norm, which instance_norm's legalization never writes.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.affine import equal_extents
from tests.fixture_util import FIXTURES
from tir import dtype as dt
from tir.expr import IntImm, Mul, Var


def _func(name: str):
    text = (FIXTURES / f"{name}.py").read_text()
    (func,) = [f for _, f in tir.parse(text).prim_funcs()]
    return func


def _i64(v: int):
    return IntImm(dt.int64, v)


def test_equal_extents_compares_affine_forms():
    n = Var("n", dt.int64)
    assert equal_extents(Mul(n, _i64(18)), Mul(Mul(n, _i64(6)), _i64(3)))
    assert not equal_extents(Mul(n, _i64(18)), Mul(Mul(n, _i64(6)), _i64(2)))
    assert not equal_extents(Mul(n, _i64(18)), _i64(18))


def test_flat_repeat_with_a_symbolic_batch():
    (op,) = opinfo.analyze(_func("s27_repeat_flat_symbolic")).ops
    assert (op.name, op.attrs["repeats"], op.attrs["axis"]) == ("repeat", 3, None)


def test_blockized_avg_pool_with_a_folded_divisor_factor():
    (op,) = opinfo.analyze(_func("s27_blockize_avg_pool_folded_divisor")).ops
    assert op.name == "nn.avg_pool2d"
    assert op.attrs["count_include_pad"] is True
    assert list(op.attrs["pool_size"]) == [1, 2] and list(op.attrs["strides"]) == [2, 2]
    assert list(op.attrs["padding"]) == [0, 0, 0, 0] and op.attrs["ceil_mode"] is False


def test_group_norm_one_channel_per_group_shown_by_regrouped_gamma():
    (op,) = opinfo.analyze(_func("s27_group_norm_regrouped_gamma")).ops
    assert op.name == "nn.group_norm"
    assert (op.attrs["num_groups"], op.attrs["channel_axis"], list(op.attrs["axes"])) == (4, 1, [2])


def test_dilated_avg_pool_without_padding_counts_taps_inside():
    # count_include_pad=False with dilation: TVM counts the taps on the dilation grid inside
    # the data (start moved up to the first one), not the positions from 0; TVM 0.27's
    # numbers for this pool equal these (checked against its build when written)
    from tests import topi_reference as ref
    from tir import topi
    x = np.random.default_rng(5).standard_normal((2, 3, 5)).astype("float32")
    attrs = dict(pool_size=[4], strides=[1], dilation=[2], padding=[2, 1], ceil_mode=True,
                 count_include_pad=False, layout="NCW")
    func = topi.lower("nn.avg_pool1d", [(x.shape, "float32")], **attrs)
    want = ref.pool_nc(x, "avg", [4], [1], [2], [2], [1], True, False)
    np.testing.assert_allclose(tir.run(func, x), want, rtol=1e-5, atol=1e-6)
    # at the first output, taps -2, 0, 2, 4: three inside (the old count from 0 said 4)
    np.testing.assert_allclose(want[..., 0], (x[..., 0] + x[..., 2] + x[..., 4]) / 3, rtol=1e-5)


def test_flat_take_wrap_with_a_symbolic_extent():
    (op,) = opinfo.analyze(_func("s27_take_flat_wrap_symbolic")).ops
    assert (op.name, op.attrs["axis"], op.attrs["mode"]) == ("take", None, "wrap")


def test_decompose_padding_with_a_reindexed_interior_between():
    # fill, then reindex's staging copy of the interior, then the copy into the pad buffer
    (op,) = opinfo.analyze(_func("s27_decompose_padding_reindex_gap")).ops
    assert op.name == "nn.avg_pool3d"
    assert list(op.attrs["padding"]) == [0, 0, 1, 0, 2, 0] and list(op.attrs["pool_size"]) == [1, 4, 3]
    assert op.attrs["count_include_pad"] is True and op.attrs["layout"] == "NDHWC"


def test_adaptive_pool_over_a_symbolic_batch_split_onto_threads():
    # the batch split by 3 (not dividing n), fused and bound to threads: each block alone
    # under its loops is judged by its own domain and body
    (op,) = opinfo.analyze(_func("s27_adaptive_pool_symbolic_threads")).ops
    assert op.name == "nn.adaptive_avg_pool3d" and list(op.attrs["output_size"]) == [3, 10, 2]


def test_merged_pad_block_keeps_the_pad_name():
    # set_scope + reindex renamed the interior copy; the merged pad block takes the fill's
    # name without decompose_padding's suffix, and the gradient reads (its ceil_mode and
    # after-padding left open by the loops)
    from opinfo import api
    func = _func("s27_pool_grad_pad_renamed")
    assert api.analyze(func).ops == ()
    (op,) = api.analyze(func, conventions=True).ops
    assert op.name == "grad.max_pool2d_backward"
    assert list(op.attrs["pool_size"]) == [2, 2] and list(op.attrs["strides"]) == [1, 2]
    assert set(op.assumed) == {"ceil_mode", "padding"}


def test_store_at_a_mixed_radix_index_is_iterated_over_the_dimension():
    # reverse_compute_inline of the final reshape, then reindex: the output block stores
    # T_reshape[v0, v1 * 2 + v2, v3, v4]; one variable over channels reads it
    (op,) = opinfo.analyze(_func("s27_group_norm_radix_store")).ops
    assert op.name == "nn.group_norm"
    assert (op.attrs["num_groups"], op.attrs["channel_axis"], list(op.attrs["axes"])) == (4, 1, [2, 3])


_RADIX = """
@T.prim_func
def f(a: T.Buffer((4, 2, 3), "float32"), b: T.Buffer((ROWS, 3), "float32")):
    for i, j, k in T.grid(4, 2, 3):
        with T.block("b"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            b[INDEX, vk] = a[vi, vj, vk]
"""


def test_radix_stores_rewrites_only_an_exact_mixed_radix():
    from opinfo.radix_store import radix_stores
    func = tir.parse(_RADIX.replace("ROWS", "8").replace("INDEX", "vi * 2 + vj"))
    out = radix_stores(func)
    (block,) = [b for b in out.blocks() if b.name == "b"]
    assert len(block.iter_vars) == 2  # one variable over the 8 rows
    x = np.random.default_rng(0).standard_normal((4, 2, 3)).astype("float32")
    np.testing.assert_array_equal(tir.run(out, x), x.reshape(8, 3))
    np.testing.assert_array_equal(tir.run(func, x), x.reshape(8, 3))
    # no exact mixed radix: coefficients 1 and 1, or 2 * 4 short of 9 rows
    for rows, index in (("5", "vi + vj"), ("9", "vi * 2 + vj")):
        func = tir.parse(_RADIX.replace("ROWS", rows).replace("INDEX", index))
        assert radix_stores(func) is func


def test_loop_partition_merge_keeps_an_extern_block_wrapped():
    # loop_partition's scope blocks are unwrapped once their partitions merge; the extern
    # scatter_nd_generic block (no iteration variables either) must keep its loads inside
    # a block, or its transposed inputs' producers look dead
    (op,) = opinfo.analyze(_func("s27_loop_partition_extern_block")).ops
    assert (op.name, op.attrs["reduction"]) == ("scatter_nd", "update")
