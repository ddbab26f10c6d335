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
