"""Splits of split loops with factors that do not divide: the predicates bound parts of a
binding (``i_1_0 * 5 + i_1_1 < 4``), checked by enumeration (opinfo/predicate_enum.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import opinfo
import tir
from opinfo.predicate_enum import covers_exactly
from opinfo.coverage import block_realizes

from fixture_util import fixture_func
from roundtrip_check import check
from schedule_helpers import random_schedule


def _names(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def test_tvm_nested_splits_of_a_reduction():
    # TVM 0.27: the spatial loop of 9 split by 3 and its outer part by 5 (then 5 by 5): 3 * 5 > 3.
    assert _names(fixture_func("resplit_sum")) == [("sum", {"axis": (1,), "keepdims": False})]


def test_tvm_nested_splits_with_a_symbolic_batch():
    assert [n for n, _ in _names(fixture_func("resplit_abs_symbolic"))] == ["abs"]


def _block(func):
    (realize, loops), = [(r, lp) for r, lp in block_realizes(func.body) if r.block.name != "root"]
    return realize, loops


def test_a_bound_that_drops_a_point_is_refused():
    # 5 -> 4 in the inner guard: the digit then stops at 3 and rows 3..8 of every third are lost.
    def edit(text):
        return text.replace("ax0_0_1_1) < T.int64(3)", "ax0_0_1_1) < T.int64(2)")
    func = fixture_func("resplit_sum", edit)
    assert not covers_exactly(*_block(func))
    assert opinfo.analyze(func).ops == ()


def test_a_binding_leaving_the_domain_is_refused():
    # Without the guard on k1 the loops reach k1 = 5, outside the domain (TVM would not
    # accept that binding; the enumeration does not either).
    def edit(text):
        return text.replace("k1_0 * T.int64(2) + k1_1 < T.int64(5) and ", "")
    assert not covers_exactly(*_block(fixture_func("resplit_sum", edit)))


def test_the_tvm_predicates_cover_the_domain_exactly():
    assert covers_exactly(*_block(fixture_func("resplit_sum")))


def _twice(seed):
    return lambda f: random_schedule(random_schedule(f, seed), seed + 1)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["add", "sum", "max", "nn.softmax", "nn.conv2d", "nn.avg_pool2d"]),
       st.integers(0, 10_000))
def test_round_trip_after_nested_splits(op, seed):
    shape = (2, 3, 7, 5)
    if op == "add":
        inputs, attrs = [(shape, "float32"), ((5,), "float32")], {}
    elif op in ("sum", "max"):
        inputs, attrs = [(shape, "float32")], {"axis": [1, 3], "keepdims": False}
    elif op == "nn.softmax":
        inputs, attrs = [(shape, "float32")], {"axis": 2}
    elif op == "nn.conv2d":
        inputs, attrs = [(shape, "float32"), ((4, 3, 3, 2), "float32")], \
            {"strides": [2, 1], "padding": [1, 0, 1, 1], "dilation": [1, 1], "groups": 1}
    else:
        inputs, attrs = [(shape, "float32")], {"pool_size": [3, 2], "strides": [2, 2], "padding": [1, 0, 1, 0],
                                               "count_include_pad": True}
    try:
        func = _twice(seed)(tir.topi.lower(op, inputs, **attrs))
    except ValueError:
        assume(False)
    tir.verify(func)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype("float32") for s, _ in inputs]
    plain = tir.topi.lower(op, inputs, **attrs)
    np.testing.assert_allclose(tir.run(func, *args), tir.run(plain, *args), rtol=1e-5, atol=1e-6)
    check(op, inputs, attrs, func, transform=_twice(seed))


def test_symbolic_loop_split_three_times():
    # TVM 0.27: n split by 5, its inner loop by 4 and that again by 5: digits of digits of a
    # symbolic loop (opinfo/predicate_enum.py contracts the constant ones, the rules do the rest).
    assert [n for n, _ in _names(fixture_func("symsplit_left_shift"))] == ["left_shift"]


def test_symbolic_loop_split_with_an_inner_digit():
    assert [n for n, _ in _names(fixture_func("symsplit_tan"))] == ["tan"]


def test_a_digit_bound_that_drops_values_is_refused():
    # The inner digit i0_0_1_0 * 3 + i0_0_1_1 kept below 1 instead of 2: every other group of
    # three elements is skipped.
    def edit(text):
        return text.replace("i0_0_1_0 * T.int64(3) + i0_0_1_1 < T.int64(2))", "i0_0_1_0 * T.int64(3) + i0_0_1_1 < T.int64(1))")
    func = fixture_func("symsplit_tan", edit)
    assert opinfo.analyze(func).ops == ()


def test_digit_beside_a_bound_that_is_not_affine():
    # TVM 0.27 dynamic strided_slice over n, its loop split twice: the outer bound is
    # (min(6, n) + 1 - min(3, n)) // 2, the inner digit ax0_1_0 * 2 + ax0_1_1 < 3.
    assert _names(fixture_func("symsplit_dynamic_slice")) == [
        ("strided_slice", {"axes": (0,), "begin": (3,), "end": (6,), "strides": (2,)})]


def test_conjoined_constants_keep_their_meaning():
    # A constant true conjunct is left out; a constant false one, wherever it stands, makes
    # the whole predicate false (predicate_enum used to drop it when it came first).
    from opinfo.predicates import conjunction
    from tir import dtype as dt
    x = tir.Var("x", dt.int64)
    lt = x < 4
    boolean = dt.bool_
    assert conjunction([], boolean).value == 1 and conjunction([]).value == 1
    assert conjunction([tir.const(True), lt], boolean) is lt
    for terms in ([tir.const(False), lt], [lt, tir.const(False)]):
        out = conjunction(terms, boolean)
        assert isinstance(out, tir.IntImm) and out.value == 0
    both = conjunction([lt, x >= 1], boolean)
    assert isinstance(both, tir.expr.And) and both.a is lt
