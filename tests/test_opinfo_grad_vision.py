"""grad.nll_loss_backward / grad.take_backward (opinfo/recognize/grad_ops.py, grad_take.py):
TVM-printed fixtures, edits that change the computation (must abstain), and generated take_backward
externs of TVM's ir_builder form for random shapes and axes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from fixture_util import fixture_func
from opinfo import analyze
from opinfo.recognize.vision_ops import recognize_get_valid_counts, valid_counts_reference
from opinfo.recognize.grad_ops import recognize_nll_loss_backward
from opinfo.recognize.grad_take import recognize_take_backward, take_backward_reference


@pytest.mark.parametrize("name, reduction, ignore", [
    ("grad_nll_backward_mean_ignore1", "mean", 1),
    ("grad_nll_backward_scheduled", "none", 1),   # cache_write + split, symbolic output_grad
])
def test_nll_backward_fixtures(name, reduction, ignore):
    op = recognize_nll_loss_backward(fixture_func(name))
    assert op.name == "grad.nll_loss_backward"
    assert dict(op.attrs) == {"reduction": reduction, "ignore_index": ignore}
    assert [o.role for o in op.operands] == ["output_grad", "predictions", "targets", "weights"]
    assert not op.assumed
    assert analyze(fixture_func(name)).ops[0].name == "grad.nll_loss_backward"


def test_nll_backward_negative_ignore_index_is_assumed():
    """A negative ignore_index leaves no trace: -100 is only Relax's default, reported as
    assumed, and a lone function abstains."""
    func = fixture_func("grad_nll_backward_none")
    op = recognize_nll_loss_backward(func)
    assert dict(op.attrs) == {"reduction": "none", "ignore_index": -100}
    assert op.assumed == ("ignore_index",)
    assert analyze(func).ops == ()
    assert analyze(func, conventions=True).ops[0].attrs["ignore_index"] == -100


@pytest.mark.parametrize("old, new", [
    ("T.float32(-1.0)", "T.float32(-2.0)"),                       # scaled gradient
    ("T.Select(v_i == T.int64(1)", "T.Select(v_i == T.int64(2)"),  # mask applied to class 2: still nll
])
def test_nll_backward_edits(old, new):
    func = fixture_func("grad_nll_backward_mean_ignore1", lambda t: t.replace(old, new))
    op = recognize_nll_loss_backward(func)
    if "int64(2)" in new:
        assert op.attrs["ignore_index"] == 2
    else:
        assert op is None


def test_nll_backward_wrong_mask_constant_abstains():
    """A mask on a class the weights do not have (ignore_index >= classes) cannot be
    checked by running: abstain rather than report -100."""
    func = fixture_func("grad_nll_backward_mean_ignore1",
                        lambda t: t.replace("v_i == T.int64(1)", "v_i == T.int64(9)"))
    assert recognize_nll_loss_backward(func) is None


@pytest.mark.parametrize("name, axis", [("grad_take_backward_axis2", 2), ("grad_take_backward_1d", 0)])
def test_take_backward_fixtures(name, axis):
    op = recognize_take_backward(fixture_func(name))
    assert op.name == "grad.take_backward"
    assert dict(op.attrs) == {"axis": axis, "mode": ""}
    assert [o.param for o in op.operands] == [0, 1, 2]


def test_take_backward_flat_form_is_axis_none():
    """``axis=None``: one loop ``out[idx[l]] += g[l]`` (same values as axis 0 on 1-D x)."""
    func = fixture_func("grad_take_backward_1d", lambda t: t.replace(
        "for v, v_1 in T.grid(T.int64(1), T.int64(9)):\n"
        "                out_buf[v * T.int64(3) + y2[v_1]] = out_buf[v * T.int64(3) + y2[v_1]] + x[v * T.int64(9) + v_1]",
        "for v_1 in range(T.int64(9)):\n"
        "                out_buf[y2[v_1]] = out_buf[y2[v_1]] + x[v_1]"))
    assert dict(recognize_take_backward(func).attrs) == {"axis": None, "mode": ""}


def test_take_backward_overwrite_is_not_take_backward():
    """Storing instead of accumulating loses repeated indices: not claimed."""
    func = fixture_func("grad_take_backward_axis2", lambda t: t.replace(
        "= out_buf[(v * T.int64(2) + y2[v_1]) // T.int64(2) // T.int64(6), (v * T.int64(2) + y2[v_1]) "
        "// T.int64(2) % T.int64(6), (v * T.int64(2) + y2[v_1]) % T.int64(2)] + x", "= x"))
    assert recognize_take_backward(func) is None


def _unflat(flat: str, shape) -> str:
    dims = []
    for k, d in enumerate(shape):
        inner = int(np.prod(shape[k + 1:])) if k + 1 < len(shape) else 1
        e = f"({flat}) // T.int64({inner})" if inner > 1 else f"({flat})"
        dims.append(e if k == 0 else f"{e} % T.int64({d})")
    return ", ".join(dims)


def _take_backward_text(shape, axis, n) -> str:
    """TVM's take_backward extern (flattened ir_builder loops) for x of ``shape``."""
    gshape = shape[:axis] + (n,) + shape[axis + 1:]
    pre, nxt = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    size = int(np.prod(shape))
    ty = lambda s: "(" + "".join(f"T.int64({d}), " for d in s) + ")"
    out_idx = f"v // T.int64({nxt}) * T.int64({nxt * shape[axis]}) + idx[v_1] * T.int64({nxt}) + v % T.int64({nxt})"
    g_idx = f"v // T.int64({nxt}) * T.int64({nxt * n}) + v_1 * T.int64({nxt}) + v % T.int64({nxt})"
    return f"""
@T.prim_func(private=True)
def take_backward(g: T.Buffer({ty(gshape)}, "float32"), x: T.Buffer({ty(shape)}, "float32"), idx: T.Buffer((T.int64({n}),), "int64"), out_buf: T.Buffer({ty(shape)}, "float32")):
    with T.block("take_backward"):
        T.reads()
        T.writes()
        T.attr({{"pragma_scope": "seq"}})
        for v in range(T.int64({size})):
            out_buf[{_unflat("v", shape)}] = T.float32(0.0)
        for v, v_1 in T.grid(T.int64({pre * nxt}), T.int64({n})):
            out_buf[{_unflat(out_idx, shape)}] = out_buf[{_unflat(out_idx, shape)}] + g[{_unflat(g_idx, gshape)}]
"""


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_take_backward_generated(shape, data):
    shape = tuple(shape)
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = data.draw(st.integers(1, 5))
    func = tir.parse(_take_backward_text(shape, axis, n))
    # the generated text is the op (checked against the reference) ...
    rng = np.random.default_rng(0)
    g = rng.uniform(-1, 1, shape[:axis] + (n,) + shape[axis + 1:]).astype("float32")
    idx = rng.integers(0, shape[axis], n)
    np.testing.assert_allclose(tir.run(func, g, np.zeros(shape, "float32"), idx),
                               take_backward_reference(g, idx, shape, axis), rtol=1e-5, atol=1e-6)
    # ... and it is recognised with its axis; only when another axis of extent 1 gives the
    # same function (one index, necessarily 0) does it abstain
    op = recognize_take_backward(func)
    ambiguous = n == 1 and shape[axis] == 1 and shape.count(1) > 1
    assert (op is None) if ambiguous else (op.attrs["axis"] == axis)


# ----------------------------------------------------------------------------- get_valid_counts

@pytest.mark.parametrize("name, threshold", [("vision_get_valid_counts_dyn", 0.0),   # symbolic batch
                                             ("vision_get_valid_counts_thr", 0.3)])
def test_get_valid_counts_fixtures(name, threshold):
    op = analyze(fixture_func(name)).ops[0]
    assert op.name == "vision.get_valid_counts"
    assert op.attrs["score_threshold"] == pytest.approx(threshold)
    assert (op.attrs["id_index"], op.attrs["score_index"]) == (0, 1)


@pytest.mark.parametrize("old, new, want", [
    ("data[v, v_1, T.int64(1)] >", "data[v, v_1, T.int64(3)] >", (0, 3)),   # score column 3
    ("data[v, v_1, T.int64(0)] >=", "data[v, v_1, T.int64(4)] >=", (4, 1)),  # class column 4
    ("T.int64(1)] > T.float32(0.29999999999999999)", "T.int64(1)] >= T.float32(0.29999999999999999)", None),
    ("T.float32(-1.0))", "T.float32(-2.0))", None),                          # other fill value
    ("valid_count[v] = valid_count[v] + 1", "valid_count[v] = valid_count[v] + 2", None),
])
def test_get_valid_counts_edits(old, new, want):
    func = fixture_func("vision_get_valid_counts_thr", lambda t: t.replace(old, new))
    op = recognize_get_valid_counts(func)
    if want is None:
        assert op is None
    else:
        assert (op.attrs["id_index"], op.attrs["score_index"]) == want


def test_valid_counts_reference_compacts_in_order():
    data = np.array([[[0, 0.5, 7], [1, 0.1, 8], [-1, 0.9, 9], [2, 0.3, 6]]], "float32")
    count, out, idx = valid_counts_reference(data, 0.2, 0, 1)
    assert count.tolist() == [2] and idx.tolist() == [[0, 3, -1, -1]]
    np.testing.assert_array_equal(out[0, :2], data[0, [0, 3]])
    assert (out[0, 2:] == -1).all()
