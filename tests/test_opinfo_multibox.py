"""vision.multibox_transform_loc (opinfo/recognize/vision_multibox.py): TVM-printed fixtures
(no softmax with clip; softmax with a threshold and background suppression), edits that change
the computation (must abstain) and an unobservable threshold (reported as assumed only)."""
from __future__ import annotations

import numpy as np
import pytest

from fixture_util import fixture_func
from opinfo import analyze
from opinfo.recognize.vision_multibox import (decode_reference, recognize_multibox_transform_loc,
                                              scores_reference)

VAR = [0.1, 0.1, 0.2, 0.2]


@pytest.mark.parametrize("name, want", [
    ("vision_multibox_clip", {"clip": True, "threshold": 0.0, "variances": VAR,
                              "keep_background": True, "apply_softmax": False}),
    ("vision_multibox_softmax_bg", {"clip": True, "threshold": 0.4, "variances": VAR,
                                    "keep_background": False, "apply_softmax": True}),
])
def test_multibox_fixtures(name, want):
    op = recognize_multibox_transform_loc(fixture_func(name))
    assert op.name == "vision.multibox_transform_loc"
    got = dict(op.attrs)
    got["variances"] = list(got["variances"])
    assert got == want
    assert not op.assumed
    assert [o.role for o in op.operands] == ["cls_pred", "loc_pred", "anchor"]
    assert analyze(fixture_func(name)).ops[0].name == "vision.multibox_transform_loc"


def test_multibox_threshold_edit_is_read():
    """A threshold is read from what the function does: 0.0 -> 0.5 is a different op, recognised."""
    func = fixture_func("vision_multibox_clip",
                        lambda t: t.replace("T.float32(0.0) <= x", "T.float32(0.5) <= x"))
    assert recognize_multibox_transform_loc(func).attrs["threshold"] == 0.5


@pytest.mark.parametrize("name, old, new", [
    # one ymin's y variance only: no variance pair explains all four coordinates
    ("vision_multibox_clip", "T_reshape[v_b, v_a, T.int64(1)] * T.float32(0.10000000000000001)",
     "T_reshape[v_b, v_a, T.int64(1)] * T.float32(0.15000000000000001)"),
    # the w variance of xmin only
    ("vision_multibox_softmax_bg", "T.float32(0.5) * T.exp(T_reshape[v_b, v_a, T.int64(2)] * T.float32(0.20000000000000001))",
     "T.float32(0.5) * T.exp(T_reshape[v_b, v_a, T.int64(2)] * T.float32(0.25))"),
    # the background class zeroed is class 1
    ("vision_multibox_softmax_bg", "v_c == T.int64(0)", "v_c == T.int64(1)"),
    # the softmax's sum seeded with 1
    ("vision_multibox_softmax_bg", "T_softmax_expsum[v_i0, v_i1] = T.float32(0.0)",
     "T_softmax_expsum[v_i0, v_i1] = T.float32(1.0)"),
])
def test_multibox_edits_abstain(name, old, new):
    def edit(text):
        assert old in text
        return text.replace(old, new, 1)
    assert recognize_multibox_transform_loc(fixture_func(name, edit)) is None


def test_multibox_softmax_threshold_at_or_below_zero():
    """After a softmax every threshold <= 0 keeps every score: running cannot tell them
    apart, the comparison TVM writes (``threshold <= score``, the constant as given) does;
    without such a comparison Relax's default 0.0 is only assumed and a lone function abstains."""
    for written in ("0.0", "-0.5"):
        func = fixture_func("vision_multibox_softmax_bg",
                            lambda t: t.replace("T.float32(0.40000000000000002) <=", f"T.float32({written}) <="))
        (op,) = analyze(func).ops
        assert op.attrs["threshold"] == float(written) and op.assumed == ()
    strict = fixture_func("vision_multibox_softmax_bg",
                          lambda t: t.replace("T.float32(0.40000000000000002) <=", "T.float32(-1.0) <"))
    op = recognize_multibox_transform_loc(strict)
    assert op.attrs["threshold"] == 0.0 and op.assumed == ("threshold",)
    assert analyze(strict).ops == ()
    above = fixture_func("vision_multibox_softmax_bg",
                         lambda t: t.replace("T.float32(0.40000000000000002) <=", "T.float32(1.5) <="))
    assert recognize_multibox_transform_loc(above) is None


def test_references():
    loc = np.array([[0.0, 0.0, 0.0, 0.0]], "float32")
    anchor = np.array([[[0.2, 0.1, 0.6, 0.5]]], "float32")
    np.testing.assert_allclose(decode_reference(loc, anchor, VAR, False, "float32")[0, 0], [0.1, 0.2, 0.5, 0.6],
                               rtol=1e-6)
    cls = np.array([[[0.5], [-1.0], [2.0]]], "float32")
    assert scores_reference(cls, 0.0, False, False, "float32")[0, :, 0].tolist() == [0.0, 0.0, 2.0]


SYMBOLIC = "s31_multibox_symbolic_batch_loc1"  # TVM-printed: cls_pred (n, 4, 3), loc_pred (1, 12)


def test_multibox_symbolic_batch_with_one_loc_row():
    """loc_pred of batch 1 beside cls_pred of batch n: TVM reads its one row for every batch,
    and the function is run at n = 1 and n = 3 (a batch of 1 alone would show nothing of the
    other batches)."""
    op = recognize_multibox_transform_loc(fixture_func(SYMBOLIC))
    assert op.name == "vision.multibox_transform_loc"
    assert dict(op.attrs, variances=list(op.attrs["variances"])) == {
        "clip": False, "threshold": 0.0, "variances": [0.5, 1.0, 2.0, 0.25],
        "keep_background": False, "apply_softmax": True}


def test_multibox_batch_index_edit_abstains():
    """The softmax's exp reading batch 0 for every batch agrees with the op at n = 1 only
    (a confident wrong answer found by tools/fuzz_soundness.py before the function was run
    at a batch of 3 too)."""
    old = "T.exp(x[v_i0, v_i1, v_i2] - T_softmax_maxelem"
    func = fixture_func(SYMBOLIC, lambda t: t.replace(old, "T.exp(x[T.int64(0), v_i1, v_i2] - T_softmax_maxelem", 1))
    assert recognize_multibox_transform_loc(func) is None
    assert analyze(func).ops == ()


def test_symbols_exercised_needs_a_batch_of_two():
    from opinfo.recognize.running import shape_bindings, signature, symbols_exercised

    bufs = signature(fixture_func(SYMBOLIC))
    ones = [s for s in shape_bindings(bufs) if s[0][0] == 1]
    assert ones and not symbols_exercised(bufs, ones)
    assert symbols_exercised(bufs, shape_bindings(bufs))
