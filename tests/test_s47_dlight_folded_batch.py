"""dlight's Matmul rule over a batch it folds into the tile's rows or columns: the padded
copy reads its source through digits of one padded axis (``x[v // 5, v % 5, k]`` for 15 rows
padded to 32), the write-back stores through the same digits (:mod:`opinfo.pad_views`); the
op is restored over the logical extents and each digit given a variable of its own.

Fixtures: TVM 0.27 ``matmul`` legalized and scheduled by ``dlight.ApplyDefaultSchedule`` with
the CUDA pipeline's rules for target ``cuda``: (3, 5, 7) x (7, 6) (rows fuse the batch),
(2, 3, 5, 7) x (7, 6) (rows fuse two batch axes), (2, 3, 5, 7) x (2, 3, 7, 6) (the tile's
batch fuses two batch axes), (5, 7) x (3, 7, 6) (columns fuse the batch), and (2, 1, 6, 7) x
(3, 7, 4) (batches broadcast: rows fuse the first, read at 0 on its unit axis, columns the
second)."""
from __future__ import annotations

import pytest

import tir
from opinfo import analyze, verify_op
from opinfo.pad_views import apply_view, digit_view

from tests.fixture_util import FIXTURES


def _func(fixture):
    mod = tir.parse((FIXTURES / fixture).read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


@pytest.mark.parametrize("fixture", [
    "s47_dlight_matmul_rows_fuse_batch.py",
    "s47_dlight_matmul_rows_fuse_two_batch_axes.py",
    "s47_dlight_bmm_fused_batch_axes.py",
    "s47_dlight_matmul_columns_fuse_batch.py",
    "s47_dlight_matmul_broadcast_batch.py",
])
def test_folded_batch_named_and_confirmed(fixture):
    func = _func(fixture)
    (op,) = analyze(func).ops
    assert op.name == "matmul"
    assert [o.param for o in op.operands] == [0, 1] and op.output.param == 2
    assert verify_op(func, op) is True


def _vars(n):
    return [tir.Var(f"v{k}", tir.dtype.int64) for k in range(n)]


def _c(x):
    return tir.IntImm(tir.dtype.int64, x)


def test_digit_view_reads_mixed_radix_digits():
    v, k = _vars(2)
    view, logical = digit_view([tir.FloorDiv(v, _c(5)), tir.FloorMod(v, _c(5)), k], [v, k], [_c(3), _c(5), _c(7)])
    assert view == ((0, 5, None), (0, 1, 5), (1, 1, None)) and logical == [15, 7]
    again = apply_view([v, k], view)
    assert [type(e).__name__ for e in again] == ["FloorDiv", "FloorMod", "Var"]


@pytest.mark.parametrize("digits, shape", [
    (lambda v: [tir.FloorDiv(v, _c(4)), tir.FloorMod(v, _c(5))], (3, 5)),  # 4 is not the inner extent
    (lambda v: [tir.FloorMod(v, _c(5)), tir.FloorDiv(v, _c(5))], (5, 3)),  # least significant first
    (lambda v: [tir.FloorDiv(v, _c(5)), tir.FloorMod(v, _c(3))], (3, 5)),  # a remainder short of the axis
    (lambda v: [v, v], (3, 5)),                                            # the variable twice
])
def test_digit_view_refuses_what_is_no_bijection(digits, shape):
    v, k = _vars(2)
    assert digit_view(digits(v) + [k], [v, k], [_c(e) for e in shape] + [_c(7)]) is None


def test_unit_axis_read_at_zero():
    v, k = _vars(2)
    zero = _c(0)
    view, logical = digit_view([tir.FloorDiv(v, _c(6)), zero, tir.FloorMod(v, _c(6)), k], [v, k],
                               [_c(2), _c(1), _c(6), _c(7)])
    assert view[1] == (None, 0, None) and logical == [12, 7]
    assert digit_view([tir.FloorDiv(v, _c(6)), zero, tir.FloorMod(v, _c(6)), k], [v, k],
                      [_c(2), _c(3), _c(6), _c(7)]) is None  # 0 on an axis of 3: a slice


def test_plain_copy_is_no_view():
    v, k = _vars(2)
    assert digit_view([v, k], [v, k], [_c(15), _c(7)]) is None
