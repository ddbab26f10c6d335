"""Mutants of TVM-printed fixtures that no longer compute their op (adversarial review of the
session-9 recognition code: split predicates, opaque prefixes, compute-tag checks, the
leakyrelu select): each must abstain, or be named with what it does compute.

The main finding: the predicate rules (opinfo/predicates.py, opinfo/predicate_enum.py) only
say a predicate drops nothing *of what the loops run*; whether the loops run the block's
domain at all -- every reduction point once, every output point -- was assumed. A loop
extent changed by one (``k1_1`` over 3 where the split made it 2) added elements twice and
was still named ``sum``; opinfo/realize_check.py now enumerates the loops and refutes it.
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.realize_check import _bad_reduction, misrealized
from tests.fixture_util import FIXTURES, fixture_func


def _text(name: str) -> str:
    return (FIXTURES / f"{name}.py").read_text()


def _body_replace(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced on statement lines (not in T.reads/T.writes)."""
    assert old in text, old
    lines = [ln if ("T.reads(" in ln or "T.writes(" in ln) else ln.replace(old, new) for ln in text.split("\n")]
    out = "\n".join(lines)
    assert out != text
    return out


def _func(text: str):
    (_, func), = tir.parse(text).prim_funcs()
    return func


def _names(func) -> list:
    return [op.name for op in opinfo.analyze(func).ops]


# ------------------------------------------------------------------ loops vs block domain

RESPLIT_MUTANTS = {
    # k1_1 over 3: k = 2 and k = 4 are added twice (the predicate k1_0 * 2 + k1_1 < 5 is
    # still exactly "v_k1 < 5")
    "reduction point twice": ("T.grid(T.int64(3), T.int64(3), T.int64(2),", "T.grid(T.int64(3), T.int64(3), T.int64(3),"),
    # ax0_1 over 2 of 3: rows 2, 5, 8 of the output never written
    "output rows missed": ("T.grid(T.int64(3), T.int64(3), T.int64(2),", "T.grid(T.int64(3), T.int64(2), T.int64(2),"),
    # one loop variable in two bindings: ax0_1 unused, k1_1 feeds both
    "loop var reused": ("ax0_0_1_1) * T.int64(3) + ax0_1)", "ax0_0_1_1) * T.int64(3) + k1_1)"),
    # the predicate no longer bounds the binding: v_k1 reaches 5
    "binding past its domain": ("T.where(k1_0 * T.int64(2) + k1_1", "T.where(k1_0 * T.int64(1) + k1_1"),
    "conjunct dropped": ("T.where(k1_0 * T.int64(2) + k1_1 < T.int64(5) and ", "T.where("),
}


def test_resplit_sum_fixture_is_named():
    assert _names(fixture_func("resplit_sum")) == ["sum"]


@pytest.mark.parametrize("old, new", list(RESPLIT_MUTANTS.values()), ids=list(RESPLIT_MUTANTS))
def test_resplit_mutants_abstain(old, new):
    func = _func(_text("resplit_sum").replace(old, new))
    assert misrealized(func)
    assert _names(func) == []


@pytest.mark.parametrize("old, new", [
    # more outer iterations, all dropped by the predicate: the same points
    ("T.grid(T.int64(3), T.int64(3), T.int64(2),", "T.grid(T.int64(4), T.int64(3), T.int64(2),"),
    ("T.int64(1), T.int64(5), T.int64(1))", "T.int64(1), T.int64(6), T.int64(1))"),
])
def test_resplit_mutants_computing_the_same_stay_named(old, new):
    func = _func(_text("resplit_sum").replace(old, new))
    assert not misrealized(func)
    assert _names(func) == ["sum"]


def test_symbolic_split_with_too_few_outer_iterations_abstains():
    text = _text("symsplit_tan")
    assert _names(_func(text)) == ["tan"]
    # the outer loop of n split by 6 runs ceil(n / 7) times: the last elements are never written
    func = _func(text.replace("(n + T.int64(5)) // T.int64(6))", "(n + T.int64(5)) // T.int64(7))"))
    assert misrealized(func)
    assert _names(func) == []


PLAIN_SUM = """
@T.prim_func
def f(x: T.Buffer((T.int64(9), T.int64(4)), "float32"), x_red: T.Buffer((T.int64(9),), "float32")):
    for ax0, k1_0, k1_1 in T.grid(T.int64(9), T.int64(2), T.int64(2)):
        with T.block("x_red"):
            v_ax0 = T.axis.spatial(T.int64(9), ax0)
            v_k1 = T.axis.reduce(T.int64(4), k1_0 * T.int64(2) + k1_1)
            T.reads(x[v_ax0, v_k1])
            T.writes(x_red[v_ax0])
            with T.init():
                x_red[v_ax0] = T.float32(0.0)
            x_red[v_ax0] = x_red[v_ax0] + x[v_ax0, v_k1]
"""


@pytest.mark.parametrize("old, new", [
    ("k1_0 * T.int64(2) + k1_1)", "k1_0 + k1_1)"),  # overlapping digits: 1 and 2 twice, 3 never
    ("k1_0 * T.int64(2) + k1_1)", "k1_0 * T.int64(2) + k1_1 * T.int64(0))"),  # odd points never
    ("T.grid(T.int64(9), T.int64(2), T.int64(2))", "T.grid(T.int64(9), T.int64(2), T.int64(1))"),
])
def test_plain_reduction_over_wrong_points_abstains(old, new):
    assert _names(tir.parse(PLAIN_SUM)) == ["sum"]
    func = tir.parse(PLAIN_SUM.replace(old, new))
    assert misrealized(func)
    assert _names(func) == []


def test_reduction_recomputed_under_compute_at_is_named():
    # TVM's compute_at puts T_softmax_expsum under the consumer's row loops: the whole sum is
    # run again per row, each run starting at its init (v_k at 0)
    func = fixture_func("h49_softmax_expsum_recomputed")
    assert not misrealized(func)
    assert _names(func) == ["nn.softmax"]


def test_recomputed_reduction_whose_last_run_starts_late_abstains():
    # v_k rotated by the outer row: for odd rows a run restarts (v_k = 0) at ax1 = 6 and the
    # row's consumer, under the same loop, reads a sum of one element
    func = fixture_func("h49_softmax_expsum_recomputed", lambda t: t.replace(
        "v_k = T.axis.reduce(T.int64(7), ax1)", "v_k = T.axis.reduce(T.int64(7), (ax1 + i0_1) % T.int64(7))"))
    assert misrealized(func)
    assert _names(func) == []


def test_bad_reduction_orders():
    s = np.array([0, 0, 0, 1, 1, 1])
    assert not _bad_reduction(s, np.array([0, 1, 2, 0, 1, 2]), 3, True)
    # whole repeats: each restart at r = 0 wipes the earlier run
    s2 = np.concatenate([s, s])
    assert not _bad_reduction(s2, np.tile([0, 1, 2], 4), 3, True)
    assert _bad_reduction(s, np.array([0, 1, 1, 0, 1, 2]), 3, True)  # 1 twice, 2 never
    assert _bad_reduction(s, np.array([1, 2, 0, 0, 1, 2]), 3, True)  # added before the init
    # the last run is whole, an earlier one (read by a consumer between runs) is not
    assert _bad_reduction(s2, np.array([0, 1, 2, 0, 1, 0, 0, 1, 2, 0, 1, 2]), 3, True)
    assert _bad_reduction(np.array([0, 0]), np.array([1, 2]), 3, True)  # the init never runs
    assert not _bad_reduction(s2, np.tile([0, 1, 2], 4), 3, False)
    assert _bad_reduction(s, np.array([0, 1, 1, 0, 1, 2]), 3, False)  # without an init: 2 never


# ------------------------------------------------------------------ opaque prefix (adaptive pool)

POOL_LOAD = "adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] + x1[T.int64(0), v_ax1, v_ax2, v_ax3]"


@pytest.mark.parametrize("new", [
    # the rest reads the prefix's buffer at other indices
    "adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, T.int64(1) - v_ax3] + x1[T.int64(0), v_ax1, v_ax2, v_ax3]",
    "adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, T.int64(0)] + x1[T.int64(0), v_ax1, v_ax2, v_ax3]",
    # two intermediates cross the cut
    "adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] + adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3]",
])
def test_adaptive_pool_prefix_mutants_abstain(new):
    text = _text("fused_adaptive_avg_pool2d_add")
    assert _names(_func(text)) == ["nn.adaptive_avg_pool2d", "add"]
    assert _names(_func(_body_replace(text, POOL_LOAD, new))) == []


def test_adaptive_pool_rest_writing_the_intermediate_abstains():
    text = _body_replace(
        _text("fused_adaptive_avg_pool2d_add"),
        "T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_avg",
        "adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_avg_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] * T.float32(2)\n"
        "                T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_avg")
    assert _names(_func(text)) == []


# ------------------------------------------------------------------ compute tags

MUL_COPY = "T_multiply_intermediate[v_ax0, v_ax1, v_ax2] = x[v_ax0, v_ax1, v_ax2]"


@pytest.mark.parametrize("new", [
    MUL_COPY + " + T.float32(1.0)",  # a T_multiply block that adds
    MUL_COPY + " - T.float32(1.0)",
    "T_multiply_intermediate[v_ax0, v_ax1, v_ax2] = x[v_ax1, v_ax0, v_ax2]",  # a transpose
    "T_multiply_intermediate[v_ax0, v_ax1, v_ax2] = T.fabs(x[v_ax0, v_ax1, v_ax2])",
])
def test_multiply_copy_block_mutants_abstain(new):
    text = _text("h48_fused_multiply_by_one")
    assert _names(_func(text))[0] == "multiply"
    assert _names(_func(_body_replace(text, MUL_COPY, new))) == []


def _operands(func, k):
    op = opinfo.analyze(func).ops[k]
    return op.name, [o.buffer for o in op.operands]


def test_swapped_comparison_operands_are_reported_swapped():
    text = _text("h48_fused_less_greater_negative")
    assert _operands(_func(text), 0) == ("less", ["x", "x1"])
    less = _body_replace(text, "= x[v_ax0, v_ax1, v_ax2] < x1[v_ax0, v_ax1, v_ax2]",
                         "= x1[v_ax0, v_ax1, v_ax2] < x[v_ax0, v_ax1, v_ax2]")
    assert _operands(_func(less), 0) == ("less", ["x1", "x"])
    greater = _body_replace(text, "= x1[v_ax0, v_ax1, v_ax2] < T_where_intermediate[v_ax0, v_ax1, v_ax2]",
                            "= T_where_intermediate[v_ax0, v_ax1, v_ax2] < x1[v_ax0, v_ax1, v_ax2]")
    assert _operands(_func(greater), 2) == ("greater", ["x1", "T_where_intermediate"])
    # <= in a T_greater block: neither greater nor its mirror
    ge = _body_replace(text, "= x1[v_ax0, v_ax1, v_ax2] < T_where_intermediate[v_ax0, v_ax1, v_ax2]",
                       "= x1[v_ax0, v_ax1, v_ax2] <= T_where_intermediate[v_ax0, v_ax1, v_ax2]")
    assert _names(_func(ge)) == []


@pytest.mark.parametrize("new", [
    "compute_intermediate[v_ax0, v_ax1, v_ax2] * compute_intermediate[v_ax0, v_ax1, v_ax2]",
    "compute_intermediate[v_ax0, v_ax1, v_ax2] - compute_intermediate[v_ax0, v_ax1, v_ax2]",
    "compute_intermediate[v_ax0, v_ax1, v_ax2] + compute_intermediate[v_ax1, v_ax0, v_ax2]",
])
def test_self_add_mutants_abstain(new):
    text = _text("h48_fused_tanh_self_add")
    old = "compute_intermediate[v_ax0, v_ax1, v_ax2] + compute_intermediate[v_ax0, v_ax1, v_ax2]"
    assert _names(_func(text)) == ["tanh", "add"]
    assert _names(_func(_body_replace(text, old, new))) == []


@pytest.mark.parametrize("new", [
    "compute_intermediate[v_ax0, T.int64(3) - v_ax1]",  # the part reversed
    "compute_intermediate[T.int64(1) - v_ax0, v_ax1 - T.int64(1)]",
    "compute_intermediate[v_ax0, v_ax1 - T.int64(1)] * T.float32(-1)",
])
def test_fused_concat_mutants_abstain(new):
    text = _text("h45_fused_sqrt_concat")
    assert _names(_func(text)) == ["sqrt", "concat"]
    assert _names(_func(_body_replace(text, "compute_intermediate[v_ax0, v_ax1 - T.int64(1)]", new))) == []


# ------------------------------------------------------------------ leakyrelu(alpha=0) select

LEAKY = """
@T.prim_func
def f(x: T.Buffer((T.int64(3), T.int64(6)), "float32"), compute: T.Buffer((T.int64(3), T.int64(6)), "float32")):
    for i0, i1 in T.grid(T.int64(3), T.int64(6)):
        with T.block("compute"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            compute[v_i0, v_i1] = T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))
"""
SELECT = "T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))"


@pytest.mark.parametrize("new", [
    "T.Select(T.float32(0.0) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.5))",
    "T.Select(T.float32(0.5) < x[v_i0, v_i1], x[v_i0, v_i1], T.float32(0.0))",
    "T.Select(T.float32(0.0) < x[v_i0, v_i1], T.float32(0.0), x[v_i0, v_i1])",
    "T.Select(T.float32(0.0) < x[v_i0, T.int64(5) - v_i1], x[v_i0, v_i1], T.float32(0.0))",
])
def test_leaky_select_mutants_abstain(new):
    assert _names(tir.parse(LEAKY)) == ["nn.leakyrelu"]
    assert _names(tir.parse(LEAKY.replace(SELECT, new))) == []


def test_leaky_select_on_integers_is_not_leakyrelu():
    text = LEAKY.replace('"float32"', '"int32"').replace("T.float32(0.0)", "T.int32(0)")
    assert "nn.leakyrelu" not in _names(tir.parse(text))


def test_unguarded_cache_copy_of_a_guarded_producer_is_accepted():
    # TVM 0.27 conv2d_transpose with cache_read + compute_at: data_dilate_shared copies row
    # h + dh = 19 of a 19-row domain (its producer's guard was not copied); the consumer's own
    # guard never reads it. A spatial block filling an intermediate is not refuted for that.
    func = fixture_func("cache_read_unguarded_copy_conv2d_transpose")
    assert not misrealized(func)
    (op,) = opinfo.analyze(func).ops
    assert op.name == "nn.conv2d_transpose"
    assert dict(op.attrs)["padding"] == (2, 0, 1, 0) and dict(op.attrs)["strides"] == (2, 2)
