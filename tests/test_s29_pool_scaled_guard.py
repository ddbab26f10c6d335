"""Pad guards TVM divided through by a common factor: the inlined pad of a pool whose index
is ``2 * o + 2 * r`` is guarded ``o + r < 5`` (``2 * o + 2 * r < 10`` divided by 2).
:func:`opinfo.recognize.guard.guard_sides` reads such a conjunct as the bound it is on the
index (exact on the integers), and only when that bound is the buffer's over the domain."""
from __future__ import annotations

import numpy as np

import tir
import tir.topi as topi
from opinfo.affine import ONE
from opinfo.recognize.guard import Sides, _scaled_match, guard_sides
from tests.fixture_util import fixture_func, fixture_ops
from tir import dtype as dt
from tir.expr import Add, IntImm, LT, LE, Mul, Var

FIX = "s29_avg_pool2d_scaled_guard"
GUARD = "v_ax2_o + v_rv1_o < T.int64(5)"
WANT = {"pool_size": (3, 1), "strides": (1, 2), "dilation": (2, 2), "padding": (0, 0, 1, 0),
        "ceil_mode": True, "count_include_pad": False, "layout": "NHWC", "out_layout": "NHWC"}


def test_scheduled_avg_pool_with_divided_guard_is_recognized():
    assert fixture_ops(FIX) == [("nn.avg_pool2d", WANT)]


def test_the_recovered_attributes_compute_the_function():
    func = fixture_func(FIX)
    n = 2
    x = np.random.default_rng(0).uniform(-1, 1, (n, 5, 10, 8)).astype("float32")
    ref = topi.lower("nn.avg_pool2d", [((n, 5, 10, 8), "float32")], **{k: list(v) if isinstance(v, tuple) else v
                                                                         for k, v in WANT.items()})
    np.testing.assert_allclose(tir.run(func, x), tir.run(ref, x), rtol=1e-5, atol=1e-6)


def test_a_divided_guard_that_drops_data_is_not_a_pad():
    # o + r < 4 is 2 * o + 2 * r < 8: column 8 of the data would read as padding
    assert fixture_ops(FIX, GUARD, "v_ax2_o + v_rv1_o < T.int64(4)") == []


def _vars():
    return Var("o", dt.int64), Var("r", dt.int64)


def test_scaled_bounds_are_rounded_inwards():
    o, r = _vars()
    f = {o: 2, r: 2, ONE: -1}  # 2o + 2r - 1
    # o + r <= 3 (g = 3 - o - r): 2o + 2r - 1 <= 5, i.e. f < 6
    assert _scaled_match({o: -1, r: -1, ONE: 3}, f) == (False, 6)
    # o + r >= 1 (g = o + r - 1): f >= 1
    assert _scaled_match({o: 1, r: 1, ONE: -1}, f) == (True, 1)
    # 2o + 2r >= 3 (g = 2o + 2r - 3): o + r >= 2, f >= 3
    assert _scaled_match({o: 2, r: 2, ONE: -3}, {o: 1, r: 1}) == (True, 2)
    # not proportional: no bound
    assert _scaled_match({o: 1, r: 2, ONE: 0}, f) is None
    assert _scaled_match({o: 1, ONE: 0}, f) is None


def test_guard_sides_with_a_divided_upper_bound():
    o, r = _vars()
    i64 = dt.int64
    two = IntImm(i64, 2)
    index = Add(Mul(o, two), Mul(r, two))
    dom = {o: IntImm(i64, 5), r: IntImm(i64, 1)}
    shape = (IntImm(i64, 10),)
    assert guard_sides([LT(Add(o, r), IntImm(i64, 5))], [index], shape, dom) == (Sides(False, True),)
    assert guard_sides([LE(Add(o, r), IntImm(i64, 4))], [index], shape, dom) == (Sides(False, True),)
    assert guard_sides([LT(Add(o, r), IntImm(i64, 4))], [index], shape, dom) is None
