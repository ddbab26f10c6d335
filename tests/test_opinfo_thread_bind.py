"""GPU-style schedules TVM 0.27 prints (tests/fixtures/bind_*): spatial loops fused, split and
bound to blockIdx.x/threadIdx.x, with the T.where predicates that split leaves -- on a
symbolic extent (``f < n * 3``), on a loop split twice (``(f % 6) // 2 * 2 + f % 2``), on
the outer part of an uneven split (``b * 32 + t < 3`` under ``2 * (b * 32 + t) + r < 5``),
and on threads over a block whose spatial variables are all constants (``b * 8 + t < 1``).
None drops an element of the block's domain, so the ops are named as unscheduled."""
import pytest

from tir.expr import IntImm, Var
from tir.dtype import dtype
from opinfo.api import analyze
from opinfo.affine import affine
from fixture_util import fixture_func

CASES = {
    "bind_acosh_symbolic": ("acosh", {}),
    "bind_asin_split_twice": ("asin", {}),
    "bind_mean_ceil_outer": ("mean", {"axis": [1, 2], "keepdims": False}),
    "bind_max_unit_spatial": ("max", {"axis": [0, 1], "keepdims": True}),
    # three loops fused and bound: (f % 48) // 12 * 2 + (f % 12) // 6 < 7 bounds v = (f % 48) // 6
    "bind_erf_three_fused": ("erf", {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bound_schedules_name_the_op(name):
    info = analyze(fixture_func(name))
    assert [(o.name, o.to_json()["attrs"]) for o in info.ops] == [CASES[name]]


def test_a_predicate_that_drops_elements_is_kept():
    # the same max with a guard on a loop the bindings read: v_k1 < 5 of 6 drops elements
    func = fixture_func("bind_max_unit_spatial", lambda t: t.replace(
        "T.where(ax0_ax1_fused_0 * T.int64(8) + ax0_ax1_fused_1 < T.int64(1))",
        "T.where(k1_0 * T.int64(3) + k1_1 < T.int64(5))"))
    assert analyze(func).ops == ()


def test_split_twice_folds_back():
    f = Var("f", dtype("int64"))
    two, six = IntImm(dtype("int64"), 2), IntImm(dtype("int64"), 6)
    e = (f % six) // two * two + f % two
    assert affine(e) == affine(f % six)


def test_nested_split_divisions_fold_back():
    f = Var("f", dtype("int64"))
    c = lambda v: IntImm(dtype("int64"), v)
    assert affine((f % c(48)) // c(12) * c(2) + (f % c(12)) // c(6)) == affine((f % c(48)) // c(6))
    assert affine(f // c(12) * c(2) + (f % c(12)) // c(6)) == affine(f // c(6))
    assert affine(f // c(12) * c(3) + (f % c(12)) // c(6)) != affine(f // c(6))  # not the identity
