"""Session 40: the ops of a fused answer are run one by one (:func:`opinfo.verify.verify_fused`).

Before, a fused answer (several ops) was only checked against the shapes of the buffers its
ops write; a wrong attribute that keeps the shapes (a clip bound) went unseen by ``analyze``,
by ``--verify`` and by the fuzzer. Now the function runs with its root allocations made
parameters, and each op built afresh runs on the values of the buffers it reads.

Fixtures (TVM 0.27): ``s39_fused_conv2d_clip_subtract`` (FuseOps + FuseTIR of conv2d, clip,
subtract) and ``s40_fused_add_slice_compute_at`` (add -> strided_slice -> tanh fused, the add
block moved under the slice's loops by ``compute_at``: it writes only the odd columns the slice
reads, the others keep whatever the storage held).
"""
from __future__ import annotations

import json

import attrs

import opinfo
from opinfo import api, verify
from tir.node import Map
from tests.fixture_util import FIXTURES, fixture_func, replaced

import tir

FUSED = "s39_fused_conv2d_clip_subtract"
PARTIAL = "s40_fused_add_slice_compute_at"


def _with(op, **changed):
    return attrs.evolve(op, attrs=Map({**dict(op.attrs), **changed}))


def test_right_fused_answer_is_confirmed_op_by_op():
    func = fixture_func(FUSED)
    ops = opinfo.analyze(func).ops
    assert [op.name for op in ops] == ["nn.conv2d", "clip", "subtract"]
    assert verify.verify_fused(func, ops) == [True, True, True]


def test_wrong_clip_bound_is_refuted_alone():
    func = fixture_func(FUSED)
    conv, clip, sub = opinfo.analyze(func).ops
    assert verify.verify_fused(func, [conv, _with(clip, max=5.0), sub]) == [True, False, True]


def test_wrong_stride_is_refuted_by_the_shape_it_makes():
    func = fixture_func(FUSED)
    conv, clip, sub = opinfo.analyze(func).ops
    assert verify.verify_fused(func, [_with(conv, strides=(1, 1)), clip, sub])[0] is False


def test_unwritten_elements_of_an_intermediate_are_not_compared(monkeypatch):
    func = fixture_func(PARTIAL)
    info = opinfo.analyze(func)
    reading = info.ops or info.undecided
    assert [op.name for op in reading] == ["add", "strided_slice", "tanh"]
    assert verify.verify_fused(func, reading) == [True, True, True]
    # with one fill only, the even columns the add never writes would refute it
    monkeypatch.setattr(verify, "OTHER_JUNK", verify.JUNK)
    assert verify.verify_fused(func, reading)[0] is False


def test_analyze_withdraws_a_fused_answer_that_computes_something_else(monkeypatch):
    func = fixture_func(FUSED)
    conv, clip, sub = opinfo.analyze(func).ops
    wrong = (conv, _with(clip, min=1.0), sub)
    monkeypatch.setattr(api, "recognize_ops", lambda f: wrong)
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == api.REFUSALS["refuted"]


def test_cli_verify_marks_each_fused_op(capsys):
    from opinfo.cli import main

    assert main(["analyze", "--json", "--verify", str(FIXTURES / f"{FUSED}.py")]) == 0
    (fn,) = json.loads(capsys.readouterr().out)["functions"]
    assert [op["verified"] for op in fn["ops"]] == [True, True, True]


def test_comparison_constant_is_the_threshold_in_the_loops():
    # T_less stores x < 0.5 and reads into a where: the constant was reported as 1/3 (the
    # inverse of an intermediate's extent 3), no sample lying between the two thresholds;
    # the fused check ran the less op with 1/3 and withdrew the whole answer
    func = fixture_func("h48_fused_less_where_multiply_m1")
    less, where, multiply = opinfo.analyze(func).ops
    assert less.name == "less" and less.constants == (("rhs", 0.5),)
    assert multiply.constants == (("rhs", -1.0),)
    assert verify.verify_fused(func, [less, where, multiply]) == [True, True, True]
    wrong = attrs.evolve(less, constants=(("rhs", 1 / 3),))
    assert verify.verify_fused(func, [wrong, where, multiply])[0] is False


# A fused conv3d + maximum (TVM 0.27, FuseOps + FuseTIR): its 5-D buffers could hold a packed
# layout (NCHW4c), so its answer came through the packed-layout reader -- which reads it on
# the buffers as declared -- and the fused checks were skipped for it. A mutant reading the
# padded rows with a stride of 1 was named strides (1, 1, 1) while the intermediate has the
# depth a stride of 2 makes.
CONV3D = "s40_fused_conv3d_maximum"
ROWS = "pad_temp[v_nn, v_rc, v_yy * T.int64(2) + v_ry, v_xx + v_rx, v_zz + v_rz] * x1"


def test_fused_conv3d_named_and_confirmed():
    func = fixture_func(CONV3D)
    ops = opinfo.analyze(func).ops
    assert [(op.name, dict(op.attrs).get("strides")) for op in ops] == [("nn.conv3d", (2, 1, 1)), ("maximum", None)]
    assert verify.verify_fused(func, ops) == [True, True]


def test_five_dimensional_fused_answer_is_checked():
    (_, func), = tir.parse(replaced(CONV3D, ROWS, ROWS.replace("v_yy * T.int64(2)", "v_yy * T.int64(1)"))).prim_funcs()
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused == api.REFUSALS["refuted_shape"]
