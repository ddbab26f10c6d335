"""median (fixtures printed by TVM 0.27): the interpreter runs TVM's argsort runtime call
(:mod:`tir.interp_packed`) and :mod:`opinfo.recognize.median` reads axis and keepdims by
running the function against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from tir.execute import prim_runner
from tir.interp import interpret
from tir.interp_data import InterpError
from fixture_util import fixture_func

ARGSORT_CALL = "1, T.bool(True))"


@pytest.mark.parametrize("engine", ["interp", "c"])
@pytest.mark.parametrize("ascending", [True, False])
def test_argsort_runtime_call_is_run_stably(ascending, engine):
    """The argsort result itself (read through the index output of median's gather at
    position 0 along axis 1 of extent 2): the first of the sorted order, equal values kept
    in order. The C engine sorts each row with an insertion sort of its own."""
    func = fixture_func("median_axis", lambda t: t if ascending else t.replace(ARGSORT_CALL, "1, T.bool(False))"))
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, (6, 2, 5)).astype("float32")  # many ties
    vals, idx = np.zeros((6, 5), "float32"), np.zeros((6, 5), "int64")
    if engine == "c":
        prim_runner(func, "c")(x, vals, idx)
    else:
        interpret(func, x, vals, idx)
    key = x if ascending else -x
    order = np.argsort(key, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, order[:, 0, :])
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1)[:, 0, :])


@pytest.mark.parametrize("name, attrs", [
    ("median_axis", {"axis": [1], "keepdims": False}),
    ("median_flat", {"axis": None, "keepdims": True}),
])
def test_median_recognised(name, attrs):
    (op,) = opinfo.analyze(fixture_func(name)).ops
    assert op.name == "median" and op.to_json()["attrs"] == attrs
    assert [o.role for o in op.operands] == ["data"]


@pytest.mark.parametrize("name, edit", [
    ("median_axis", ("T_full[v_ax0, v_ax1, v_ax2] = T.int64(0)", "T_full[v_ax0, v_ax1, v_ax2] = T.int64(1)")),
    ("median_flat", ("T_full[v_ax0] = T.int64(17)", "T_full[v_ax0] = T.int64(16)")),
])
def test_other_sorted_position_is_not_a_median(name, edit):
    """Gathering the element next to the lower median (the maximum of two, one below the
    middle of 35) is another op: not claimed."""
    func = fixture_func(name, lambda t: t.replace(*edit))
    assert opinfo.analyze(func).ops == ()


def test_other_runtime_calls_are_still_refused():
    func = fixture_func("median_flat", lambda t: t.replace("tvm.contrib.sort.argsort", "tvm.contrib.sort.topk"))
    with pytest.raises(InterpError, match="tvm.contrib.sort.topk"):
        tir.run(func, np.zeros((5, 7), "float32"))
    assert opinfo.analyze(func).ops == ()


@pytest.mark.parametrize("name", ["median_axis", "median_flat", "median_odd_axis", "s12_median_all_axes"])
def test_c_engine_sorts_as_the_interpreter_does(name):
    """Every median fixture (sorts along an axis of 2..n elements, or the flattened data) on
    data with many ties: the C engine's argsort gives the interpreter's outputs exactly."""
    func = fixture_func(name)
    n_in = 1
    rng = np.random.default_rng(5)
    bufs = [func.buffer_map[p] for p in func.params]
    shapes = [tuple(int(d.value) for d in b.shape) for b in bufs]
    x = rng.integers(0, 4, shapes[0]).astype(bufs[0].dtype.numpy)
    outs = {e: [np.zeros(s, b.dtype.numpy) for s, b in zip(shapes[n_in:], bufs[n_in:])] for e in ("interp", "c")}
    interpret(func, x, *outs["interp"])
    prim_runner(func, "c")(x, *outs["c"])
    for a, b in zip(outs["interp"], outs["c"]):
        np.testing.assert_array_equal(a, b)
