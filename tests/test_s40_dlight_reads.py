"""Session 40: two dlight forms read (TVM 0.27, ``gen_dlight.py`` over a sample-like corpus).

- dlight's Fallback rule writes a symbolic concat's index as
  ``v0 + (0 - max(5 - (0 - n), 0)) + (0 - n - 5 + max(5 - (0 - n), 0))``: a ``max`` whose one arm
  is the larger for every non-negative size variable is that arm (:func:`opinfo.affine.affine`).
- dlight's Reduction rule fuses a reduction over axes 0 and 2 into one variable read as
  ``x[c // 8, i, c % 8]``: split into one variable per digit although the axes are not
  adjacent, when no buffer can be read as a packed layout (whose channel ``ic // 4``,
  ``ic % 4`` on axes far apart keeps TVM's form).
"""
from __future__ import annotations

import opinfo
import tir
from opinfo.affine import affine
from tests.fixture_util import fixture_ops
from tir import dtype as dt
from tir.expr import Add, IntImm, Max, Min, SizeVar, Var

N = SizeVar("n", dt.int64)
I64 = lambda v: IntImm(dt.int64, v)  # noqa: E731


def test_max_with_a_provably_larger_arm_is_that_arm():
    assert affine(Max(Add(N, I64(5)), I64(0))) == affine(Add(N, I64(5)))
    assert affine(Min(Add(N, I64(5)), I64(0))) == {}
    assert affine(Max(I64(0), N)) == affine(N)


def test_max_of_arms_either_of_which_may_be_larger_has_no_form():
    assert affine(Max(N, I64(5))) is None
    v = Var("v", dt.int64)  # a loop or block variable has no known sign
    assert affine(Max(v, I64(0))) is None


def test_dlight_symbolic_concat():
    assert fixture_ops("s40_dlight_concat_symbolic") == [("concat", {"axis": 0})]


def test_dlight_reduction_over_axes_apart():
    # collapse_sum_like: the PrimFunc sums axes 0 and 2 of (7, 7, 8) into (1, 7, 1); main
    # names the shape's source
    from tests.fixture_util import FIXTURES

    mod = tir.parse((FIXTURES / "s40_dlight_collapse_sum_apart.py").read_text())
    (info,) = opinfo.analyze_module(mod).values()
    assert [(op.name, dict(op.attrs)) for op in info.ops] == [("collapse_sum_like", {})]


SUM_APART = '''
@T.prim_func
def main(x: T.Buffer((7, 7, 8), "float32"), out: T.Buffer((7,), "float32")):
    for a, f in T.grid(7, 56):
        with T.block("x_red"):
            v0 = T.axis.spatial(7, a)
            vf = T.axis.reduce(56, f)
            with T.init():
                out[v0] = T.float32(0)
            out[v0] = out[v0] + x[vf // 8, v0, vf % 8]
'''


def test_fused_reduction_over_axes_apart_is_a_sum():
    info = opinfo.analyze(tir.parse(SUM_APART))
    assert [(op.name, dict(op.attrs)) for op in info.ops] == [("sum", {"axis": (0, 2), "keepdims": False})]


def test_split_whose_unit_piece_lost_its_variable():
    # dlight's Fallback rebuilt the last piece (1 of 8 rows) as T_split_2[0, i, j] = x[7, i, j]
    assert fixture_ops("s40_dlight_split_unit_piece") == [("split", {"axis": 0, "indices_or_sections": (5, 7)})]


def test_reduction_fused_over_a_symbolic_batch():
    # dlight fused the reduction over (n, 4, 3) into one variable over [0, n * 12), read as
    # c // 12, c % 12 // 3 and c % 3: one variable per digit, the top one over n
    assert fixture_ops("s40_dlight_mean_symbolic") == [("mean", {"axis": (0, 1, 2), "keepdims": False})]


def test_digit_written_as_a_remainder_divided():
    from opinfo.reduce_fuse import _digit

    c = Var("c", dt.int64)
    from tir.expr import FloorDiv, FloorMod
    assert _digit(FloorDiv(FloorMod(c, I64(12)), I64(3)), c) == (3, 4)
    assert _digit(FloorDiv(FloorMod(c, I64(10)), I64(3)), c) is None  # 3 does not divide 10


def test_packed_batch_norm_whose_batch_and_channel_block_lost_their_variables():
    # NCHW4c with N = 1 and C / 4 = 1, dlight-scheduled: both unit axes stored at 0, so the
    # block of 4 channels reads as packing axis 1 (axis=1) or axis 0 (axis=0); a batch of one
    # is no block of channels
    assert fixture_ops("s40_dlight_batch_norm_nchw4c") == [
        ("nn.batch_norm", {"axis": 1, "epsilon": 1e-05, "center": True, "scale": True})]

