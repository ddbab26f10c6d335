"""Adversarial review of this session's recognizers that run the function (median,
grad.nll_loss_backward / take_backward, vision.get_valid_counts, the pool gradients) and of
the rfactor merge: TVM-printed fixtures mutated so that the code keeps its shape but the
function differs from the op on some inputs -- often only on rare ones (ties, magnitudes
far from 1, an index never drawn, one symbolic extent). Each mutant must abstain; the
unmutated fixture must still be named. Where the mutant's difference is shown in the
interpreter, the test shows it too (so the mutant really is another function)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opinfo
import tir
from tir.interp import interpret
from fixture_util import fixture_func

FIXTURES = Path(__file__).parent / "fixtures"


def _ops(func) -> list:
    return [op.name for op in opinfo.analyze(func, conventions=True).ops]


def _edit(*pairs):
    def edit(text):
        for old, new in pairs:
            assert old in text, old
            text = text.replace(old, new)
        return text
    return edit


# --------------------------------------------------------------------------- median

MEDIAN_FLAT_SYM = """
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def median(x: T.Buffer((n,), "float32"), T_gather: T.Buffer((T.int64(1),), "float32")):
        T.func_attr({"tirx.noalias": True})
        T_full = T.sblock_alloc_buffer((T.int64(1),), "int64")
        out_buf = T.sblock_alloc_buffer((n,), "int64", align=8)
        for ax0 in range(T.int64(1)):
            with T.sblock("T_full"):
                v_ax0 = T.axis.spatial(T.int64(1), ax0)
                T_full[v_ax0] = POSITION
        with T.sblock("argsort_cpu"):
            T.call_packed("tvm.contrib.sort.argsort", T.tvm_stack_make_array(x.data, T.tvm_stack_make_shape(n), 0, 1, T.float32(0.0), T.int64(0)), T.tvm_stack_make_array(out_buf.data, T.tvm_stack_make_shape(n), 0, 1, T.int64(0), T.int64(0)), -1, T.bool(True))
        for ax0 in range(T.int64(1)):
            with T.sblock("T_gather_1"):
                v_ax0 = T.axis.spatial(T.int64(1), ax0)
                T_gather[v_ax0] = x[out_buf[T_full[v_ax0]]]
"""


def _median_flat(position: str):
    text = 'n = TypeVar("n")\n' + MEDIAN_FLAT_SYM.replace("POSITION", position)
    (_, func), = tir.parse(text).prim_funcs()
    return func


def test_median_symbolic_position_written_for_one_extent_abstains():
    """The lower-median position (n - 1) // 2 replaced by forms equal to it at n = 3 only:
    the recognizer used to bind every symbol to 3 and name them median."""
    assert _ops(_median_flat("(n - T.int64(1)) // T.int64(2)")) == ["median"]
    for wrong in ("T.int64(1)", "n // T.int64(3)"):
        func = _median_flat(wrong)
        x = np.arange(7, dtype="float32")
        out = np.zeros(1, "float32")
        interpret(func, x, out)
        assert out[0] != 3.0  # not the median of 0..6
        assert _ops(func) == []


def test_median_descending_sort_on_odd_axis_abstains():
    """A descending argsort gives the same value at the middle of an odd axis, but another
    index among equal elements: seen only on data with ties."""
    text = (FIXTURES / "median_odd_axis.py").read_text()
    (_, good), = tir.parse(text).prim_funcs()
    assert _ops(good) == ["median"]
    (_, func), = tir.parse(text.replace("1, T.bool(True))", "1, T.bool(False))")).prim_funcs()
    x = np.array([[0, 1, 1]] * 7, "float32")
    vals, idx = np.zeros((7, 1), "float32"), np.zeros((7, 1), "int64")
    interpret(func, x, vals, idx)
    assert idx[0, 0] != np.argsort(x[0], kind="stable")[1]
    assert _ops(func) == []


# --------------------------------------------------------------------------- nll_loss_backward

NLL = "grad_nll_backward_mean_ignore1"
NLL_NONE = "grad_nll_backward_none"
SELECT = "T.Select(v_i1 == y2[v_i0],"


@pytest.mark.parametrize("name, pairs", [
    # the predictions tested against a value they never reach in the plain trials
    (NLL, [(SELECT, "T.Select(v_i1 == y2[v_i0] and y1[v_i0, v_i1] < T.float32(100.0),")]),
    (NLL_NONE, [(SELECT, "T.Select(v_i1 == y2[v_i0] and y1[v_i0, v_i1] < T.float32(100.0),")]),
    # the output gradient tested or clamped far from 1
    (NLL, [(SELECT, "T.Select(v_i1 == y2[v_i0] and x[()] < T.float32(100.0),")]),
    (NLL_NONE, [("* x[v_i0]", "* T.min(x[v_i0], T.float32(100.0))")]),
    (NLL_NONE, [("* x[v_i0]", "* T.max(x[v_i0], T.float32(-3.0))")]),
    # the weights clamped inside the mean's sum
    (NLL, [("+ all_weights[v_k0]", "+ T.max(all_weights[v_k0], T.float32(-100))")]),
])
def test_nll_loss_backward_mutants_abstain(name, pairs):
    assert _ops(fixture_func(name)) == ["grad.nll_loss_backward"]
    assert _ops(fixture_func(name, _edit(*pairs))) == []


def test_nll_clamped_gradient_differs_from_the_op():
    func = fixture_func(NLL_NONE, _edit(("* x[v_i0]", "* T.min(x[v_i0], T.float32(100.0))")))
    g = np.full(4, 1000.0, "float32")
    t = np.array([0, 1, 2, 0], "int64")
    out = np.zeros((4, 3), "float32")
    interpret(func, g, np.zeros((4, 3), "float32"), t, np.ones(3, "float32"), out)
    assert out[0, 0] == -100.0  # the op gives -1000


# --------------------------------------------------------------------------- take_backward

TAKE = FIXTURES / "grad_take_backward_wide.py"
X_AT = ("x[(v // T.int64(7) * T.int64(7) * T.int64(7) + v_1 * T.int64(7) + v % T.int64(7)) // T.int64(7), "
        "(v // T.int64(7) * T.int64(7) * T.int64(7) + v_1 * T.int64(7) + v % T.int64(7)) % T.int64(7)]")


@pytest.mark.parametrize("pairs", [
    [("y2[v_1]", "T.min(y2[v_1], T.int64(4))")],  # positions 5..7 of the axis never drawn before
    [("+ x[(v", "+ T.Select(y2[v_1] == T.int64(6), T.float32(0), T.float32(1)) * x[(v")],
    [("+ x[(v", f"+ T.Select({X_AT} > T.float32(100), T.float32(0), T.float32(1)) * x[(v")],
])
def test_take_backward_mutants_abstain(pairs):
    text = TAKE.read_text()
    (_, good), = tir.parse(text).prim_funcs()
    assert _ops(good) == ["grad.take_backward"]
    (_, func), = tir.parse(_edit(*pairs)(text)).prim_funcs()
    assert _ops(func) == []


# --------------------------------------------------------------------------- get_valid_counts

def test_get_valid_counts_clamped_batch_abstains():
    """The batch loop clamped to 7: the same on the bindings 3 and 6 tried before; the
    function now also runs with the symbol above every constant."""
    name = "vision_get_valid_counts_dyn"
    assert _ops(fixture_func(name)) == ["vision.get_valid_counts"]
    func = fixture_func(name, _edit(("T.parallel(n)", "T.parallel(T.min(n, T.int64(7)))")))
    data = np.ones((9, 8, 6), "float32")
    outs = [np.full(9, 5, "int32"), np.zeros((9, 8, 6), "float32"), np.zeros((9, 8), "int32")]
    interpret(func, data, *outs)
    assert outs[0][8] == 5  # the last batch is never written
    assert _ops(func) == []


# --------------------------------------------------------------------------- pool gradients

AVG = "pool_grad_avg_include_pad"
AVG_TERM = "x[v_ax0, T.Div(v_ax1, T.int64(2)) - v_wh, v_ax2 + T.int64(1) - v_ww, v_ax3] / T.float32(6.0)"
MAX = "pool_grad_max_fused"
PAD_FILL = "y[v_ax0, v_ax1, v_ax2 - T.int64(1), v_ax3], T.float32(-340282346638528859811704183484516925440.0))"


@pytest.mark.parametrize("name, pairs", [
    (AVG, [(AVG_TERM, AVG_TERM.replace("x[v_ax0, T.Div(v_ax1, T.int64(2)) - v_wh, v_ax2 + T.int64(1) - v_ww, v_ax3]",
                                       "T.max(x[v_ax0, T.Div(v_ax1, T.int64(2)) - v_wh, v_ax2 + T.int64(1) - v_ww, v_ax3], T.float32(-100.0))"))]),
    # the max pool's padding filled with -100: wrong once a window's data all lie below it
    (MAX, [(PAD_FILL, PAD_FILL.replace("T.float32(-340282346638528859811704183484516925440.0)", "T.float32(-100.0)"))]),
    (MAX, [("+ T.if_then_else(", "+ T.min(T.float32(100.0), T.if_then_else("), ("T.float32(0.0))\n", "T.float32(0.0)))\n")]),
])
def test_pool_grad_mutants_abstain(name, pairs):
    assert _ops(fixture_func(name))[0].startswith("grad.")
    assert _ops(fixture_func(name, _edit(*pairs))) == []


# --------------------------------------------------------------------------- rfactor / distribute

RF_WHERE = "T.where(ax1_0 * T.int64(2) + ax1_1 < T.int64(7))\n                T.reads(x[vk0, v_ax1])"


def test_rfactor_partial_block_skipping_elements_abstains():
    """A T.where on the partial block that skips k0 = 2 (its rf element is never written):
    distribute used to move the block to a nest over its whole domain, dropping the
    predicate, and the merged reduction was named argmax."""
    assert _ops(fixture_func("rfactor_argmax")) == ["argmax"]
    func = fixture_func("rfactor_argmax", _edit(
        (RF_WHERE, RF_WHERE.replace("< T.int64(7))", "< T.int64(7) and k0 < T.int64(2))"))))
    x = np.zeros((3, 7), "float32")
    x[2] = 5.0
    assert not np.array_equal(tir.run(func, x).reshape(-1), np.argmax(x, 0))
    assert _ops(func) == []


@pytest.mark.parametrize("pairs", [
    [("x_red_temp_v0_rf[vk0, v_ax0, v_ax1] = vk0", "x_red_temp_v0_rf[vk0, v_ax0, v_ax1] = T.int64(2) - vk0")],
    [("x_red_temp_v1_rf[vk0, v_ax0, v_ax1] = x[vk0, v_ax1]", "x_red_temp_v1_rf[vk0, v_ax0, v_ax1] = x[vk0, v_ax1] * T.float32(-1)")],
    [("for ax0, ax1_0, ax1_1, k0 in T.grid(T.int64(1), T.int64(4), T.int64(2), T.int64(3)):",
      "for ax0, ax1_0, ax1_1, k0 in T.grid(T.int64(1), T.int64(4), T.int64(2), T.int64(2)):")],
])
def test_rfactor_tuple_mutants_abstain(pairs):
    assert _ops(fixture_func("rfactor_argmax", _edit(*pairs))) == []


# --------------------------------------------------------------------------- symbolic reshape

RESHAPE_IDX = "(v_ax0 * n * T.int64(18) + v_ax1) % T.int64(5)]"


def _reshape_names(pairs) -> list:
    text = _edit(*pairs)((Path(__file__).parent / "fixtures" / "reshape_symbolic_inner.py").read_text())
    return [op.name for _, f in tir.parse(text).prim_funcs() for op in opinfo.analyze(f).ops]


@pytest.mark.parametrize("pairs", [
    [(RESHAPE_IDX, "(v_ax0 * n * T.int64(18) + v_ax1 + T.int64(1)) % T.int64(5)]")],
    [("// T.int64(90) % n,", "// T.int64(45) % n,")],
])
def test_symbolic_reshape_mutants_are_not_reshape(pairs):
    assert "reshape" not in _reshape_names(pairs)


def test_symbolic_reshape_with_a_remainder_that_never_wraps_is_a_reshape():
    # the batch index (v0 * 18n + v1) // 90 stays below n: taken modulo n + 1 it is the same
    # index, and the copy is checked in row-major order at a few values of n
    assert "reshape" in _reshape_names([("// T.int64(90) % n,", "// T.int64(90) % (n + T.int64(1)),")])
